"""The bridge's per-cycle topics: the ROS messages one server message (a percept) becomes.

REQUIRES: one sanitized :class:`~robocup3d_bridge.percept.Percept`, the team's side.
PROVIDES: ``(topic, message)`` pairs, topics relative to the player's namespace, in the order
the bridge publishes them. State kept between cycles: the reused ``joint_states`` and ``imu``
messages only, so the same percept always gives the same messages.

The bridge node publishes these; the recorder (``robocup3d record``) builds the same messages
from a player's ``raw/percept`` in its own process, so that a recording costs the player nothing
(issue #23). Both call :meth:`PerceptTopics.messages`, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable

from robocup3d_bridge import conversions as conv
from robocup3d_bridge.percept import Percept
from robocup3d_description.robots import RobotSpec

__all__ = ['PERCEPT_TOPICS', 'PerceptTopics']

#: Topics (in the player's namespace, shell patterns) made from the percept alone, nothing else:
#: what a recorder can rebuild from ``raw/percept``. ``game_state`` is not among them: the bridge
#: throttles it with state of its own (on a change and every 50 cycles).
PERCEPT_TOPICS = (
    'joint_states',
    'imu',
    'foot_contacts/*',
    'vision/objects',
    'vision/ball',
    'ground_truth/pose',
    'ground_truth/ball',
    'hear',
)


class PerceptTopics:
    """Builds one player's percept topics (see :data:`PERCEPT_TOPICS`).

    Args:
        robot: the player's robot (joint order, feet).
        prefix: the frame prefix, ``<team>/p<unum>/`` (the bridge's namespace) or ``''``.
    """

    def __init__(self, robot: RobotSpec, prefix: str) -> None:
        self.joint_names = robot.joint_names
        self.torso_frame = f'{prefix}torso'
        self.camera_frame = f'{prefix}camera'
        self.foot_topics = {f: (f'foot_contacts/{f}', f'{prefix}{f}') for f in robot.feet}
        self._js = None  # reused every cycle (publishing serialises at once)
        self._imu = None

    def messages(self, p: Percept, side: str, wanted: Callable[[str], bool]) -> list[tuple[str, object]]:
        """The messages of ``p`` on the topics ``wanted`` (a topic name -> whether to build it).

        ``side``: ``left`` or ``right`` (SimSpark's ground truth is sent in the team's frame).
        The stamps are the percept's server time (0 when it has none).
        """
        out: list[tuple[str, object]] = []
        stamp = conv.stamp_from_seconds(p.time if p.time is not None else 0.0)
        if p.joint_positions and wanted('joint_states'):
            self._js = conv.joint_state_msg(p, stamp, self.joint_names, self._js)
            out.append(('joint_states', self._js))
        if (p.gyro is not None or p.accel is not None) and wanted('imu'):
            self._imu = conv.imu_msg(p, stamp, self.torso_frame, self._imu)
            out.append(('imu', self._imu))
        for foot, (topic, frame) in self.foot_topics.items():
            if wanted(topic):
                out.append((topic, conv.wrench_msg(p.forces.get(foot), stamp, frame)))
        v = p.vision
        if v is not None:
            if wanted('vision/objects'):
                out.append(('vision/objects', conv.vision_markers(v, stamp, self.camera_frame)))
            if v.ball is not None and wanted('vision/ball'):
                out.append(('vision/ball', conv.ball_point(v, stamp, self.camera_frame)))
            if v.ball_position is not None and wanted('ground_truth/ball'):
                out.append(('ground_truth/ball', conv.ground_truth_ball(p, stamp, side)))
        if wanted('ground_truth/pose'):
            gt = conv.ground_truth_pose(p, stamp, side)
            if gt is not None:
                out.append(('ground_truth/pose', gt))
        if p.hear and wanted('hear'):
            out.extend(('hear', msg) for msg in conv.hear_msgs(p))
        return out
