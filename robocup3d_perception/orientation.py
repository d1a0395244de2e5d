"""Torso orientation from the gyro and the accelerometer (a complementary filter).

The filter keeps the rotation ``R`` from the torso frame to a gravity-aligned frame.
Each cycle it integrates the gyro (rad/s, torso frame), then turns ``R`` a little so
that the measured specific force (the accelerometer reads about +9.81 m/s^2 along
the up axis at rest) points up. The correction gain is high while the robot is still
(|a| close to g, small rates), so a trainer move or a get-up settles within about
0.2 s, and low while it moves. Yaw comes from the gyro alone: it drifts and is only
used as relative odometry; the absolute heading is the locator's job.

REQUIRES: gyro, accelerometer (CycleInput). PROVIDES: tilt (roll, pitch), yaw change.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ['OrientationFilter', 'tilt_matrix']

GRAVITY = 9.81  # m/s^2


def _rodrigues(v: np.ndarray) -> np.ndarray:
    """Rotation matrix of the rotation vector ``v`` (rad)."""
    angle = float(np.linalg.norm(v))
    if angle < 1e-12:
        return np.eye(3)
    k = v / angle
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * (kx @ kx)


def tilt_matrix(roll: float, pitch: float) -> np.ndarray:
    """``Ry(pitch) @ Rx(roll)``: torso frame -> level frame."""
    cr, sr, cp, sp = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch)
    return np.array([[cp, sp * sr, sp * cr], [0.0, cr, -sr], [-sp, cp * sr, cp * cr]])


class OrientationFilter:
    """Complementary filter on gyro and accelerometer.

    Args:
        gain_still: fraction of the tilt error corrected per update while still.
        gain_moving: the same while moving.
    """

    requires = ('gyro', 'accel')
    provides = ('tilt', 'yaw_delta')

    def __init__(self, gain_still: float = 0.15, gain_moving: float = 0.01) -> None:
        self.gain_still = gain_still
        self.gain_moving = gain_moving
        self.rotation = np.eye(3)  # torso -> gravity-aligned frame (yaw: integrated gyro)
        self._initialised = False
        self.rate = 0.0  # rad/s, magnitude of the last gyro reading

    def reset(self) -> None:
        """Forget the estimate (the next accelerometer reading sets the tilt)."""
        self.rotation = np.eye(3)
        self._initialised = False

    def update(
        self, gyro: tuple[float, float, float] | None, accel: tuple[float, float, float] | None, dt: float
    ) -> float:
        """Advance by ``dt`` seconds; return the change of yaw (rad) in this step."""
        yaw_before = self.yaw
        if gyro is not None and dt > 0:
            w = np.asarray(gyro, dtype=float)
            self.rate = float(np.linalg.norm(w))
            self.rotation = self.rotation @ _rodrigues(w * dt)
        if accel is not None:
            a = np.asarray(accel, dtype=float)
            norm = float(np.linalg.norm(a))
            if norm > 1.0:
                up = self.rotation @ (a / norm)  # measured up direction in the aligned frame
                if not self._initialised:
                    gain = 1.0
                    self._initialised = True
                elif abs(norm - GRAVITY) < 0.5 and self.rate < 0.3:
                    gain = self.gain_still
                elif abs(norm - GRAVITY) < 3.0:
                    gain = self.gain_moving
                else:
                    gain = 0.0
                axis = np.cross(up, (0.0, 0.0, 1.0))
                s = float(np.linalg.norm(axis))
                if gain > 0 and s > 1e-9:
                    angle = math.atan2(s, float(up[2])) * gain
                    self.rotation = _rodrigues(axis / s * angle) @ self.rotation
        # keep R orthonormal
        u, _, vt = np.linalg.svd(self.rotation)
        self.rotation = u @ vt
        return _wrap(self.yaw - yaw_before)

    @property
    def yaw(self) -> float:
        """Integrated yaw (rad; relative, drifts)."""
        r = self.rotation
        return math.atan2(r[1, 0], r[0, 0])

    @property
    def roll(self) -> float:
        """Roll (rad) of the ZYX decomposition."""
        r = self.rotation
        return math.atan2(r[2, 1], r[2, 2])

    @property
    def pitch(self) -> float:
        """Pitch (rad) of the ZYX decomposition."""
        r = self.rotation
        return math.asin(max(-1.0, min(1.0, -r[2, 0])))

    @property
    def tilt(self) -> np.ndarray:
        """Torso frame -> level frame (the rotation with the yaw taken out)."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]]) @ self.rotation

    @property
    def upright(self) -> float:
        """Cosine of the angle between the torso's z axis and up (1 = upright)."""
        return float(self.rotation[2, 2])


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi
