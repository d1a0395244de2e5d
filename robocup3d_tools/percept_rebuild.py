"""A player's percept topics rebuilt from its ``raw/percept``, as its bridge builds them.

The recorder subscribes to a player's ``raw/percept`` (the server's message, one a cycle) instead of
its ``joint_states``, ``imu``, ``vision/*``, ``ground_truth/*``, ``foot_contacts/*`` and ``hear``
(:data:`robocup3d_bridge.percept_topics.PERCEPT_TOPICS`), and builds those here, in its own process,
with the bridge's own code: :func:`~robocup3d_bridge.perception.parse_percept`, the
:class:`~robocup3d_bridge.sanitize.PerceptSanitizer` and
:class:`~robocup3d_bridge.percept_topics.PerceptTopics`. A player then builds and sends two strings a
cycle for the recorder rather than some ten messages (issue #23).

The rebuilt messages equal the bridge's (``test/tools/test_record_rebuild.py`` compares them with a
player's live topics) with two limits: the sanitizer keeps state (the last server time and joint
values), which the recorder has from the first percept it receives, not from the player's first; and
rcssserver3d names the side once, after the init: a recorder that came later takes it from the
player's ``game_state`` (:meth:`PerceptRebuild.take_side`).
"""

from __future__ import annotations

from collections.abc import Callable

from robocup3d_bridge.percept import Dialect, Percept, Side
from robocup3d_bridge.percept_topics import PerceptTopics
from robocup3d_bridge.perception import PerceptParseError, parse_percept
from robocup3d_bridge.protocol import make_protocol
from robocup3d_bridge.sanitize import PerceptSanitizer
from robocup3d_description.guess import guess_robot, spec_for
from robocup3d_description.robots import RobotSpec

__all__ = ['PerceptRebuild', 'robot_of']


def robot_of(p: Percept) -> RobotSpec | None:
    """The robot of a percept, by :func:`~robocup3d_description.guess.guess_robot` from its joint names and
    whether it has joint velocities (RCSSServerMJ sends them, rcssserver3d does not; the T1, K1 and Nao share
    joint names). ``None``: no joints in the percept, or no robot has them.
    """
    guess = guess_robot(p.joint_positions, velocities=bool(p.joint_velocities))
    return spec_for(guess.name) if guess is not None else None


class PerceptRebuild:
    """One player's percept topics from its raw server messages.

    Args:
        namespace: the player's, ``/<team>/p<unum>`` (frames are ``<team>/p<unum>/...``, as the bridge's).
        robot: ``auto`` (from the first percept with joints: :func:`robot_of`), ``T1``, ``K1`` or ``nao0``..``nao4``.
    """

    def __init__(self, namespace: str, robot: str = 'auto') -> None:
        self.namespace = namespace.rstrip('/')
        self.prefix = self.namespace.strip('/') + '/'
        team, _, player = self.namespace.strip('/').partition('/')
        self.team = team
        self.unum = int(player[1:]) if player[1:].isdigit() else 0
        self.robot: RobotSpec | None = None if robot == 'auto' else spec_for(robot)
        self.side = Side.UNKNOWN
        self.parse_errors = 0
        self.time: float | None = None  # server time (s) of the latest percept rebuilt, as the bridge's /clock has it
        self._topics: PerceptTopics | None = None
        self._setup()

    def _setup(self) -> None:
        if self.robot is None:
            return
        self._topics = PerceptTopics(self.robot, self.prefix)
        self._sanitizer = PerceptSanitizer(self.robot.joint_names)
        self._protocol = make_protocol(self.robot, self.team, self.unum)
        self._dialect = Dialect.SIMSPARK if self.robot.server == 'simspark' else Dialect.MUJOCO

    def take_side(self, side: str) -> None:
        """The side the player's ``game_state`` names (rcssserver3d sends it once, after the init)."""
        if self.side is Side.UNKNOWN and side in (Side.LEFT.value, Side.RIGHT.value):
            self.side = Side(side)

    def messages(self, raw: str, wanted: Callable[[str], bool]) -> list[tuple[str, object]]:
        """The messages the bridge built from ``raw`` on the topics ``wanted`` (names in the namespace).

        Serialise them before the next call: ``joint_states`` and ``imu`` are refilled, as the bridge's.
        Nothing (an empty list) for a message that does not parse, or before the robot is known.
        """
        p = self._parse(raw)
        if p is None:
            return []
        if self._topics is None:
            self.robot = robot_of(p)
            if self.robot is None:
                return []
            self._setup()
            p = self._parse(raw)  # again, in the robot's dialect
            if p is None:
                return []
        self._sanitizer.clean(p)
        self.time = p.time
        self._protocol.observe(p)
        if self._protocol.side is not Side.UNKNOWN:
            self.side = self._protocol.side
        return self._topics.messages(p, self.side.value, wanted)

    def _parse(self, raw: str) -> Percept | None:
        try:
            return parse_percept(raw, self._dialect if self._topics is not None else None)
        except PerceptParseError:
            self.parse_errors += 1
            return None
