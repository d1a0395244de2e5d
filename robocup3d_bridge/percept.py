"""Typed perception snapshot: what one server message says, in SI units.

Plain data only (B-Human's representations, our STYLE.md): the parser in
``perception.py`` fills these; nodes convert them to ROS messages in ``conversions.py``.

Units: metres, radians, seconds, newtons, m/s^2, rad/s. Angles the servers send in
degrees are converted when parsed. Vision is polar, relative to the camera:
``azimuth`` is positive to the left, ``elevation`` positive upwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

__all__ = [
    'Dialect',
    'ForceResistance',
    'GameStateInfo',
    'Hear',
    'Percept',
    'PlayerSighting',
    'Polar',
    'Side',
    'Vision',
]


class Dialect(str, Enum):
    """Which server protocol a message belongs to."""

    SIMSPARK = 'simspark'  # rcssserver3d
    MUJOCO = 'mujoco'  # RCSSServerMJ (PyPI rcsssmj)


class Side(str, Enum):
    """Team side as the server assigns it."""

    LEFT = 'left'
    RIGHT = 'right'
    UNKNOWN = 'unknown'


@dataclass(slots=True)
class Polar:
    """A polar observation relative to the camera: distance (m), azimuth and elevation (rad)."""

    distance: float
    azimuth: float
    elevation: float


@dataclass(slots=True)
class GameStateInfo:
    """Fields of the ``GS`` perceptor; ``None`` where this message did not carry them."""

    play_mode: str | None = None
    game_time: float | None = None  # s
    score_left: int | None = None
    score_right: int | None = None
    unum: int | None = None  # SimSpark: once, right after init
    side: Side | None = None  # SimSpark: once, right after init
    team_left: str | None = None  # MJ: ``tl``
    team_right: str | None = None  # MJ: ``tr``


@dataclass(slots=True)
class ForceResistance:
    """``FRP``: centre of pressure ``c`` (m, in the foot frame) and total force ``f`` (N)."""

    c: tuple[float, float, float]
    f: tuple[float, float, float]


@dataclass(slots=True)
class PlayerSighting:
    """A seen robot: team name, player number and the body parts that were seen."""

    team: str | None
    unum: int | None
    parts: dict[str, Polar] = field(default_factory=dict)


@dataclass(slots=True)
class Vision:
    """Contents of one ``See`` perceptor."""

    landmarks: dict[str, Polar] = field(default_factory=dict)  # flags, goal posts, MJ points
    ball: Polar | None = None
    players: list[PlayerSighting] = field(default_factory=list)
    lines: list[tuple[Polar, Polar]] = field(default_factory=list)
    # Ground truth some SimSpark configurations add (field frame, m / rad):
    my_position: tuple[float, float, float] | None = None
    my_orientation: float | None = None  # heading of the camera, 0 = +x
    ball_position: tuple[float, float, float] | None = None


@dataclass(slots=True)
class Hear:
    """A heard message.

    ``direction`` is the horizontal direction of the speaker (rad, relative to the
    head), ``None`` when the speaker is ourselves (``self``). RCSSServerMJ sends no
    team or time and base64 payloads; ``data`` holds the decoded bytes.
    """

    data: bytes
    team: str | None = None
    time: float | None = None
    direction: float | None = None
    is_self: bool = False

    @property
    def text(self) -> str:
        """The message as text (non-ASCII bytes replaced)."""
        return self.data.decode('ascii', 'replace')


@dataclass(slots=True)
class Percept:
    """Everything one server message reported.

    ``joint_positions`` (rad) and ``joint_velocities`` (rad/s, MJ only) are keyed by
    canonical joint name (the SimSpark perceptor name, e.g. ``hj1``; MJ's ``q_``
    prefix is removed). ``unknown`` keeps perceptors the parser does not know, and
    ``errors`` describes parts that were malformed; neither is ever fatal.
    """

    time: float | None = None  # server time (s)
    game: GameStateInfo | None = None
    gyro: tuple[float, float, float] | None = None  # rad/s, torso frame (REP-103 when parsed with a dialect)
    accel: tuple[float, float, float] | None = None  # m/s^2, torso frame (REP-103 when parsed with a dialect)
    joint_positions: dict[str, float] = field(default_factory=dict)
    joint_velocities: dict[str, float] = field(default_factory=dict)
    universal_joints: dict[str, tuple[float, float]] = field(default_factory=dict)  # rad
    touch: dict[str, bool] = field(default_factory=dict)
    forces: dict[str, ForceResistance] = field(default_factory=dict)
    agent_state: dict[str, float] = field(default_factory=dict)  # temp, battery
    vision: Vision | None = None
    hear: list[Hear] = field(default_factory=list)
    torso_position: tuple[float, float, float] | None = None  # MJ ground truth, field frame (m)
    torso_orientation: tuple[float, float, float, float] | None = None  # MJ ground truth (w, x, y, z)
    unknown: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)  # perceptor kinds seen (HJ first, then the rest in order)
