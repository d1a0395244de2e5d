"""Vision geometry: polar observations -> camera-frame points -> level-frame points.

A polar observation ``(d, az, el)`` (azimuth positive to the left, elevation positive
upwards, both relative to the camera's line of sight) is the camera-frame point
``d * (cos el cos az, cos el sin az, sin el)``. The camera pose in the torso frame
comes from forward kinematics over the neck joints (``robocup3d_description.kinematics``),
and the torso's roll and pitch from the orientation filter turn torso-frame points
into the ``level`` frame (z up, x along the torso heading) the locator works in.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from robocup3d_bridge.percept import Polar, Vision
from robocup3d_description.body import Body
from robocup3d_description.kinematics import camera_pose
from robocup3d_perception.representations import CameraObservations, LevelObservations, frozen_array

__all__ = [
    'CameraModel',
    'in_view',
    'observations_from_vision',
    'polar_to_camera',
    'polars_to_camera',
    'shift_level',
    'transform_level',
]

VIEW_HALF_ANGLE = math.radians(60.0)  # both servers' cameras: 120 deg across and 120 deg up and down
VIEW_NEAR, VIEW_FAR = 0.2, 12.0  # m: where a missing sighting says something (nearer: the feet; further: vague)


def polar_to_camera(distance: float, azimuth: float, elevation: float) -> tuple[float, float, float]:
    """Camera-frame point (m) of one polar observation (m, rad, rad)."""
    ce = math.cos(elevation)
    return (distance * ce * math.cos(azimuth), distance * ce * math.sin(azimuth), distance * math.sin(elevation))


def polars_to_camera(polar: np.ndarray) -> np.ndarray:
    """Vectorised :func:`polar_to_camera` over an (n, 3) array of ``d az el``."""
    p = np.asarray(polar, dtype=float).reshape(-1, 3)
    d, az, el = p[:, 0], p[:, 1], p[:, 2]
    ce = np.cos(el)
    return np.stack([d * ce * np.cos(az), d * ce * np.sin(az), d * np.sin(el)], axis=1)


def _pt(p: Polar) -> tuple[float, float, float]:
    """:func:`polar_to_camera` of ``p``, its arithmetic written out (a See has 30-60 of them)."""
    d, az, el = p.distance, p.azimuth, p.elevation
    ce = math.cos(el)
    return (d * ce * math.cos(az), d * ce * math.sin(az), d * math.sin(el))


def observations_from_vision(v: Vision) -> CameraObservations:
    """Camera-frame observations of a parsed ``See``; ground-truth fields are dropped."""
    lines = np.array([[_pt(a), _pt(b)] for a, b in v.lines], dtype=float).reshape(-1, 2, 3)
    return CameraObservations(
        landmarks={name: _pt(p) for name, p in v.landmarks.items()},
        ball=_pt(v.ball) if v.ball is not None else None,
        players=tuple((s.team, s.unum, {k: _pt(p) for k, p in s.parts.items()}) for s in v.players),
        lines=frozen_array(lines),
    )


class CameraModel:
    """Camera pose from the neck joints, and the camera -> level transform.

    Args:
        body: the robot's kinematic model (``robocup3d_description.body.body_for``).
    """

    requires = ('CameraObservations', 'tilt')
    provides = ('LevelObservations',)

    def __init__(self, body: Body) -> None:
        self.body = body
        self._cache_key: tuple[float, ...] | None = None
        self._cache_pose = np.eye(4)
        self._neck = tuple(j for j in ('hj1', 'hj2') if j in body.joint_names) or tuple(body.joint_names[:2])

    def camera_in_torso(self, joints: Mapping[str, float]) -> np.ndarray:
        """4x4 camera pose in the torso frame (cached while the neck angles stay the same)."""
        key = tuple(round(float(joints.get(j, 0.0)), 6) for j in self._neck)
        if key != self._cache_key:
            self._cache_pose = camera_pose(self.body, joints)
            self._cache_key = key
        return self._cache_pose

    def to_level(self, obs: CameraObservations, joints: Mapping[str, float], tilt: np.ndarray) -> LevelObservations:
        """Observations in the level frame, given neck angles (rad) and the torso tilt matrix.

        ``tilt`` is the 3x3 rotation from the torso frame to the level frame (roll and
        pitch only), as :class:`~robocup3d_perception.orientation.OrientationFilter` gives it.
        """
        t = self.camera_in_torso(joints)
        rot = tilt @ t[:3, :3]
        origin = tilt @ t[:3, 3]

        def level(points: np.ndarray) -> np.ndarray:
            return points @ rot.T + origin

        names = tuple(obs.landmarks)
        lm = level(np.array([obs.landmarks[n] for n in names], dtype=float).reshape(-1, 3))
        ball = level(np.array(obs.ball, dtype=float).reshape(1, 3))[0] if obs.ball is not None else None
        players = []
        for team, unum, parts in obs.players:
            if parts:
                pts = level(np.array(list(parts.values()), dtype=float).reshape(-1, 3))
                players.append((team, unum, np.add.reduce(pts, axis=0) / len(pts)))  # pts.mean(axis=0)'s own steps
        lines = obs.lines
        lines = level(lines.reshape(-1, 3)).reshape(-1, 2, 3) if len(lines) else np.zeros((0, 2, 3))
        axis = rot[:, 0]
        return LevelObservations(
            names, lm, ball, tuple(players), lines, math.atan2(axis[1], axis[0]), float(origin[2]), rot, origin
        )


def in_view(obs: LevelObservations, point: np.ndarray, margin: float = 0.0) -> bool:
    """Whether a level-frame point lies inside the camera's view when ``obs`` was seen, ``margin`` rad
    inside its edges (both servers' cameras see :data:`VIEW_HALF_ANGLE` either side of their axis,
    across and up and down), and neither nearer than :data:`VIEW_NEAR` nor beyond :data:`VIEW_FAR`."""
    if obs.camera_rot is None or obs.camera_origin is None:
        return False
    cam = obs.camera_rot.T @ (np.asarray(point, dtype=float) - obs.camera_origin)
    d = float(np.linalg.norm(cam))
    if not VIEW_NEAR < d < VIEW_FAR:
        return False
    limit = VIEW_HALF_ANGLE - margin
    return abs(math.atan2(cam[1], cam[0])) < limit and abs(math.asin(cam[2] / d)) < limit


def transform_level(
    obs: LevelObservations, move: Callable[[np.ndarray], np.ndarray], turn: np.ndarray, camera_yaw: float
) -> LevelObservations:
    """``obs`` with every point (landmarks, ball, players, lines, the camera's position) mapped by ``move``, the
    camera's axes turned by ``turn`` (the rotation part of ``move``), and its line of sight's yaw ``camera_yaw``."""
    lines = obs.lines
    origin = move(obs.camera_origin) if obs.camera_origin is not None else None
    return LevelObservations(
        obs.landmark_names,
        move(obs.landmarks),
        move(obs.ball) if obs.ball is not None else None,
        tuple((team, unum, move(xyz)) for team, unum, xyz in obs.players),
        move(lines.reshape(-1, 3)).reshape(-1, 2, 3) if len(lines) else lines,
        camera_yaw,
        float(origin[2]) if origin is not None else obs.camera_height,
        turn @ obs.camera_rot if obs.camera_rot is not None else None,
        origin,
    )


def shift_level(obs: LevelObservations, dx: float, dy: float, dyaw: float) -> LevelObservations:
    """``obs`` seen from a pose that has since moved by ``(dx, dy)`` m and turned ``dyaw`` rad
    (in the old level frame): the same observations in the new level frame.

    A ``See`` that reaches the world model a few cycles late is brought to the present this way.
    """
    c, s = math.cos(dyaw), math.sin(dyaw)
    rot = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])  # R(-dyaw)
    off = np.array([dx, dy, 0.0])

    def move(points: np.ndarray) -> np.ndarray:
        return (points - off) @ rot.T

    yaw = math.atan2(math.sin(obs.camera_yaw - dyaw), math.cos(obs.camera_yaw - dyaw))
    return transform_level(obs, move, rot, yaw)
