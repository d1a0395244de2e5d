"""Representations of the perception area: plain frozen data, SI units, server-time stamps.

Frames:

* ``camera``: the camera (x along the line of sight, y left, z up), as the bridge's
  ``vision/objects`` markers give it.
* ``level``: origin at the torso, z straight up, x the torso's heading projected on
  the ground (the torso frame with roll and pitch taken out, yaw kept).
* ``absolute``: the server's field frame (+x towards the right goal). The core
  estimates everything here, because landmark names are absolute.
* ``field`` (published): our team's frame, +x towards the goal we attack. For the
  left team it is the absolute frame; for the right team it is turned by 180 degrees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robocup3d_bridge.team_talk import TeammateReport  # what a teammate said: defined with its wire format

__all__ = [
    'BallModel',
    'CameraObservations',
    'CycleInput',
    'LevelObservations',
    'Odometry',
    'PlayerEstimate',
    'RobotPose',
    'TeammateReport',
    'WorldState',
]


def frozen_array(values: object, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A read-only float array (copied)."""
    a = np.array(values, dtype=float)
    if shape is not None:
        a = a.reshape(shape)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, slots=True)
class CameraObservations:
    """What one ``See`` reported, as camera-frame points (m). Never carries ground truth.

    ``players`` holds ``(team, unum, {part: xyz})``; ``lines`` is (n, 2, 3).
    """

    landmarks: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    ball: tuple[float, float, float] | None = None
    players: tuple[tuple[str | None, int | None, dict[str, tuple[float, float, float]]], ...] = ()
    lines: np.ndarray = field(default_factory=lambda: frozen_array(np.zeros((0, 2, 3))))


@dataclass(frozen=True, slots=True)
class LevelObservations:
    """The same observations in the ``level`` frame (m), with the camera's yaw there (rad)."""

    landmark_names: tuple[str, ...]
    landmarks: np.ndarray  # (k, 3)
    ball: np.ndarray | None  # (3,)
    players: tuple[tuple[str | None, int | None, np.ndarray], ...]  # (team, unum, (3,) mean of parts)
    lines: np.ndarray  # (n, 2, 3)
    camera_yaw: float  # rad, line of sight relative to the torso heading
    camera_height: float  # m, camera above the torso origin
    camera_rot: np.ndarray | None = None  # (3, 3) camera axes in the level frame (x: line of sight)
    camera_origin: np.ndarray | None = None  # (3,) camera position in the level frame (m)


@dataclass(frozen=True, slots=True)
class Odometry:
    """Motion since the last cycle in the previous torso frame (m, rad), e.g. from the walk."""

    dx: float = 0.0
    dy: float = 0.0
    dyaw: float = 0.0


@dataclass(frozen=True, slots=True)
class CycleInput:
    """Everything the world model needs from one server cycle (no ground truth).

    ``side`` is ``'left'``/``'right'``; ``vision`` is ``None`` in cycles without ``See``.
    """

    time: float  # s, server time
    joints: dict[str, float] = field(default_factory=dict)  # rad
    gyro: tuple[float, float, float] | None = None  # rad/s, torso frame
    accel: tuple[float, float, float] | None = None  # m/s^2, torso frame
    vision: CameraObservations | None = None
    side: str = 'left'
    team: str = ''
    unum: int = 0
    play_mode: str | None = None
    odometry: Odometry | None = None
    reports: tuple[TeammateReport, ...] = ()


@dataclass(frozen=True, slots=True)
class RobotPose:
    """Torso pose estimate in the absolute frame.

    ``covariance`` is 3x3 over (x, y, yaw); ``confidence`` is 0..1 (spread and how well
    the last observations fit). ``camera_yaw`` is the camera's heading (rad).
    """

    time: float = 0.0  # s
    x: float = 0.0  # m
    y: float = 0.0  # m
    z: float = 0.0  # m, torso height estimate
    yaw: float = 0.0  # rad
    roll: float = 0.0  # rad, from the orientation filter
    pitch: float = 0.0  # rad
    camera_yaw: float = 0.0  # rad, absolute heading of the line of sight
    covariance: np.ndarray = field(default_factory=lambda: frozen_array(np.eye(3)))
    confidence: float = 0.0
    fallen: bool = False


@dataclass(frozen=True, slots=True)
class BallModel:
    """Ball estimate in the absolute frame (m, m/s); ``stop`` is where it will come to rest."""

    time: float = 0.0  # s
    position: np.ndarray = field(default_factory=lambda: frozen_array(np.zeros(3)))
    velocity: np.ndarray = field(default_factory=lambda: frozen_array(np.zeros(2)))
    stop: np.ndarray = field(default_factory=lambda: frozen_array(np.zeros(2)))
    covariance: np.ndarray = field(default_factory=lambda: frozen_array(np.eye(4) * 100.0))  # x y vx vy
    last_seen: float | None = None  # s, last own sighting
    last_update: float | None = None  # s, last sighting or teammate report
    valid: bool = False

    def age(self, now: float) -> float:
        """Seconds since the last update (inf if never)."""
        return now - self.last_update if self.last_update is not None else float('inf')


@dataclass(frozen=True, slots=True)
class PlayerEstimate:
    """A tracked robot in the absolute frame (m, m/s)."""

    team: str | None
    unum: int | None
    teammate: bool
    position: np.ndarray  # (2,)
    velocity: np.ndarray  # (2,)
    covariance: np.ndarray  # (4, 4) x y vx vy
    last_update: float  # s
    fallen: bool = False  # a teammate said it is down (team talk)
    intent: str = 'none'  # what a teammate said it is doing (team_talk.INTENTS)


@dataclass(frozen=True, slots=True)
class WorldState:
    """The world model's output for one cycle (absolute frame; ``side`` says which way we attack)."""

    time: float
    side: str
    pose: RobotPose
    ball: BallModel
    # as of the last cycle with a See or a teammate's report; built in cycles with a See (those that read it), so
    # in the cycles between it is the last See's
    players: tuple[PlayerEstimate, ...] = ()
