"""Torso orientation from the gyro and the accelerometer (a complementary filter).

The filter keeps the rotation ``R`` from the torso frame to a gravity-aligned frame.
Each cycle it integrates the gyro (rad/s, torso frame), then turns ``R`` a little so
that the measured specific force (the accelerometer reads about +9.81 m/s^2 along
the up axis at rest), averaged in the aligned frame over about a second (a few
steps of a walk), points up. The tilt starts from the first reading close to 1 g:
RCSSServerMJ's first readings after a beam are the landing jolt, and starting from
one of them put the tilt 40-80 degrees off for seconds (the 0.35-0.8 m ball errors
and 3 s "kidnap" recoveries measured live came from that). Yaw comes from the gyro alone: it drifts
and is only used as relative odometry; the absolute heading is the locator's job.

Readings that are not finite or beyond any body's range (``MAX_RATE``, ``MAX_ACCEL``) are
left out and counted; the gyro is not integrated over a gap longer than ``MAX_DT``.

REQUIRES: gyro, accelerometer (CycleInput). PROVIDES: tilt (roll, pitch), yaw change.
"""

from __future__ import annotations

import math

import numpy as np

from robocup3d_description.kinematics import rotation_matrix

__all__ = ['OrientationFilter', 'tilt_matrix']

GRAVITY = 9.81  # m/s^2
MAX_RATE = 100.0  # rad/s; a gyro reading beyond it (or not finite) is not a body rate and is left out
MAX_ACCEL = 1000.0  # m/s^2; the same for the accelerometer
MAX_DT = 0.5  # s; over a longer gap the gyro is not integrated (its rate says nothing about the gap)


def _sane(v: tuple[float, float, float] | None, limit: float) -> bool:
    return v is not None and all(math.isfinite(x) and abs(x) <= limit for x in v)


def _rodrigues(v: np.ndarray | tuple[float, float, float]) -> np.ndarray:
    """Rotation matrix of the rotation vector ``v`` (rad)."""
    x, y, z = float(v[0]), float(v[1]), float(v[2])
    angle = math.sqrt(x * x + y * y + z * z)
    if angle < 1e-12:
        return np.eye(3)
    return rotation_matrix((x / angle, y / angle, z / angle), angle)


def tilt_matrix(roll: float, pitch: float) -> np.ndarray:
    """``Ry(pitch) @ Rx(roll)``: torso frame -> level frame."""
    cr, sr, cp, sp = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch)
    return np.array([[cp, sp * sr, sp * cr], [0.0, cr, -sr], [-sp, cp * sr, cp * cr]])


class OrientationFilter:
    """Complementary filter on gyro and accelerometer.

    The tilt is set from the first accelerometer reading close to 1 g (a reading taken
    while landing from a beam would tilt it by tens of degrees). After that the gyro
    drives it, and accelerometer readings are rotated into the aligned frame and
    averaged; the estimate turns a fraction of the way towards that averaged up
    direction: ``gain_still`` while still, ``gain_fast`` while it is off by more than
    ``fast_error`` (a wrong start, a trainer move), ``gain_moving`` otherwise.

    Which readings are averaged depends on whether the robot walks (told by the caller,
    or seen: more than ``shaking_walk`` of the recent readings are over 2 m/s^2 from
    1 g). Standing, swaying or landing from a beam, only readings within
    ``max_deviation`` of 1 g count (``average``): an impact would tip the estimate.
    Walking, every reading within ``max_deviation_walking`` counts, over a longer
    average (``average_walking``): a walk's readings swing by +-10 m/s^2 and only their
    mean points up; keeping the ones close to 1 g keeps mostly one phase of the step,
    which tipped the estimate 30 degrees forward within seconds of walking.

    Args:
        gain_still: fraction of the tilt error corrected per update while still.
        gain_moving: the same while moving.
        gain_fast: the same while the averaged error is large.
    """

    requires = ('gyro', 'accel')
    provides = ('tilt', 'yaw_delta')

    def __init__(
        self,
        gain_still: float = 0.05,
        gain_moving: float = 0.02,
        gain_fast: float = 0.05,
        fast_error: float = 0.07,
        average: float = 0.05,
        max_deviation: float = 3.0,
        average_walking: float = 0.02,
        max_deviation_walking: float = 30.0,
        shaking_walk: float = 0.45,
    ) -> None:
        self.gain_still = gain_still
        self.gain_moving = gain_moving
        self.gain_fast = gain_fast
        self.fast_error = fast_error  # rad
        self.average = average  # weight of the newest reading in the averaged up direction
        self.max_deviation = max_deviation  # m/s^2 from g beyond which a reading is not used
        self.average_walking = average_walking  # the same two while walking
        self.max_deviation_walking = max_deviation_walking
        self.shaking_walk = shaking_walk  # share of shaken readings that means "walking"
        self.shaking = 0.0  # running share of readings more than 2 m/s^2 from 1 g
        self.rotation = np.eye(3)  # torso -> gravity-aligned frame (yaw: integrated gyro)
        self._up = np.array([0.0, 0.0, 1.0])  # averaged measured up direction, aligned frame
        self._initialised = False
        self.rate = 0.0  # rad/s, magnitude of the last gyro reading
        self.rejected = 0  # readings left out: not finite or beyond MAX_RATE / MAX_ACCEL

    def reset(self) -> None:
        """Forget the estimate (the next accelerometer reading close to 1 g sets the tilt)."""
        self.rotation = np.eye(3)
        self._up = np.array([0.0, 0.0, 1.0])
        self._initialised = False

    def update(
        self,
        gyro: tuple[float, float, float] | None,
        accel: tuple[float, float, float] | None,
        dt: float,
        walking: bool = False,
    ) -> float:
        """Advance by ``dt`` seconds (``walking``: the walk is running); return the change of yaw (rad)."""
        yaw_before = self.yaw
        for reading, limit in ((gyro, MAX_RATE), (accel, MAX_ACCEL)):
            self.rejected += reading is not None and not _sane(reading, limit)
        gyro = gyro if _sane(gyro, MAX_RATE) else None
        accel = accel if _sane(accel, MAX_ACCEL) else None
        if gyro is not None and 0 < dt <= MAX_DT:
            self.rate = math.sqrt(gyro[0] ** 2 + gyro[1] ** 2 + gyro[2] ** 2)
            self.rotation = self.rotation @ _rodrigues((gyro[0] * dt, gyro[1] * dt, gyro[2] * dt))
            _orthonormalise(self.rotation)
        if accel is not None:
            self._correct(np.asarray(accel, dtype=float), walking)
        return _wrap(self.yaw - yaw_before)

    def _correct(self, a: np.ndarray, walking: bool) -> None:
        norm = _norm(a)
        deviation = abs(norm - GRAVITY)
        if not self._initialised:
            if deviation > 0.5 or self.rate > 0.5:
                return
            self._turn(self.rotation @ (a / norm), 1.0)
            self._up = np.array([0.0, 0.0, GRAVITY])
            self._initialised = True
            return
        self.shaking += 0.03 * ((deviation > 2.0) - self.shaking)
        if walking or self.shaking > self.shaking_walk:
            limit, weight = self.max_deviation_walking, self.average_walking
        else:
            limit, weight = self.max_deviation, self.average
        if deviation > limit:
            return
        self._up += weight * (self.rotation @ a - self._up)
        avg = self._up / _norm(self._up)
        if deviation < 0.5 and self.rate < 0.3:
            self._turn(avg, self.gain_still)
        elif math.acos(min(1.0, float(avg[2]))) > self.fast_error:
            self._turn(avg, self.gain_fast)
        else:
            self._turn(avg, self.gain_moving)

    def _turn(self, up: np.ndarray, gain: float) -> None:
        """Turn the estimate by ``gain`` of the angle between ``up`` and the vertical."""
        ax, ay = float(up[1]), -float(up[0])  # up x (0, 0, 1): a horizontal axis
        s = math.hypot(ax, ay)
        if gain <= 0 or s < 1e-9:
            return
        k = math.atan2(s, float(up[2])) * gain / s
        turn = _rodrigues((ax * k, ay * k, 0.0))
        self.rotation = turn @ self.rotation
        self._up = turn @ self._up

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


def _norm(v: np.ndarray) -> float:
    """Length of a 3-vector: ``np.linalg.norm``'s value to the bit (the square root of the same BLAS dot
    product ``v @ v``; a sum in Python rounds differently), without its overhead."""
    return math.sqrt(float(v @ v))


def _orthonormalise(r: np.ndarray) -> None:
    """Re-orthonormalise a rotation matrix in place (Gram-Schmidt on the columns; cheap)."""
    x = r[:, 0] / math.sqrt(float(r[:, 0] @ r[:, 0]))
    y = r[:, 1] - float(x @ r[:, 1]) * x
    y /= math.sqrt(float(y @ y))
    r[:, 0], r[:, 1] = x, y
    r[0, 2] = x[1] * y[2] - x[2] * y[1]
    r[1, 2] = x[2] * y[0] - x[0] * y[2]
    r[2, 2] = x[0] * y[1] - x[1] * y[0]


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi
