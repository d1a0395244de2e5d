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

It runs every cycle, so it works on plain floats (a rotation is 9 of them, row by row): numpy's
per-call cost on 3-vectors was most of its time.

REQUIRES: gyro, accelerometer (CycleInput). PROVIDES: tilt (roll, pitch), yaw change.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ['OrientationFilter', 'tilt_matrix']

GRAVITY = 9.81  # m/s^2
MAX_RATE = 100.0  # rad/s; a gyro reading beyond it (or not finite) is not a body rate and is left out
MAX_ACCEL = 1000.0  # m/s^2; the same for the accelerometer
MAX_DT = 0.5  # s; over a longer gap the gyro is not integrated (its rate says nothing about the gap)


def _sane(v: tuple[float, float, float] | None, limit: float) -> bool:
    """Whether ``v`` is given, finite and within ``limit`` (a loop: ``all()`` of a generator cost more, 4 a cycle)."""
    if v is None:
        return False
    for x in v:
        if not (math.isfinite(x) and abs(x) <= limit):
            return False
    return True


Mat = tuple[float, float, float, float, float, float, float, float, float]  # row-major 3x3
Vec = tuple[float, float, float]
_EYE: Mat = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


def _rodrigues(x: float, y: float, z: float) -> Mat:
    """Rotation matrix of the rotation vector ``(x, y, z)`` (rad)."""
    angle = math.sqrt(x * x + y * y + z * z)
    if angle < 1e-12:
        return _EYE
    x, y, z = x / angle, y / angle, z / angle
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    return (
        t * x * x + c, t * x * y - s * z, t * x * z + s * y,
        t * x * y + s * z, t * y * y + c, t * y * z - s * x,
        t * x * z - s * y, t * y * z + s * x, t * z * z + c,
    )  # fmt: skip


def _mul(a: Mat, b: Mat) -> Mat:
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = a
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = b
    return (
        a0 * b0 + a1 * b3 + a2 * b6, a0 * b1 + a1 * b4 + a2 * b7, a0 * b2 + a1 * b5 + a2 * b8,
        a3 * b0 + a4 * b3 + a5 * b6, a3 * b1 + a4 * b4 + a5 * b7, a3 * b2 + a4 * b5 + a5 * b8,
        a6 * b0 + a7 * b3 + a8 * b6, a6 * b1 + a7 * b4 + a8 * b7, a6 * b2 + a7 * b5 + a8 * b8,
    )  # fmt: skip


def _apply(m: Mat, v: Vec) -> Vec:
    x, y, z = v
    return (m[0] * x + m[1] * y + m[2] * z, m[3] * x + m[4] * y + m[5] * z, m[6] * x + m[7] * y + m[8] * z)


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
        self._r: Mat = _EYE  # torso -> gravity-aligned frame (yaw: integrated gyro)
        self._up: Vec = (0.0, 0.0, 1.0)  # averaged measured up direction, aligned frame
        self._initialised = False
        self.rate = 0.0  # rad/s, magnitude of the last gyro reading
        self.rejected = 0  # readings left out: not finite or beyond MAX_RATE / MAX_ACCEL

    def reset(self) -> None:
        """Forget the estimate (the next accelerometer reading close to 1 g sets the tilt)."""
        self._r = _EYE
        self._up = (0.0, 0.0, 1.0)
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
            self._r = _orthonormalise(_mul(self._r, _rodrigues(gyro[0] * dt, gyro[1] * dt, gyro[2] * dt)))
        if accel is not None:
            self._correct((float(accel[0]), float(accel[1]), float(accel[2])), walking)
        return _wrap(self.yaw - yaw_before)

    def _correct(self, a: Vec, walking: bool) -> None:
        norm = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
        deviation = abs(norm - GRAVITY)
        if not self._initialised:
            if deviation > 0.5 or self.rate > 0.5:
                return
            self._turn(_apply(self._r, (a[0] / norm, a[1] / norm, a[2] / norm)), 1.0)
            self._up = (0.0, 0.0, GRAVITY)
            self._initialised = True
            return
        self.shaking += 0.03 * ((deviation > 2.0) - self.shaking)
        if walking or self.shaking > self.shaking_walk:
            limit, weight = self.max_deviation_walking, self.average_walking
        else:
            limit, weight = self.max_deviation, self.average
        if deviation > limit:
            return
        ra = _apply(self._r, a)
        u = self._up
        u = (u[0] + weight * (ra[0] - u[0]), u[1] + weight * (ra[1] - u[1]), u[2] + weight * (ra[2] - u[2]))
        self._up = u
        n = math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
        avg = (u[0] / n, u[1] / n, u[2] / n)
        if deviation < 0.5 and self.rate < 0.3:
            self._turn(avg, self.gain_still)
        elif math.acos(min(1.0, avg[2])) > self.fast_error:
            self._turn(avg, self.gain_fast)
        else:
            self._turn(avg, self.gain_moving)

    def _turn(self, up: Vec, gain: float) -> None:
        """Turn the estimate by ``gain`` of the angle between ``up`` and the vertical."""
        ax, ay = up[1], -up[0]  # up x (0, 0, 1): a horizontal axis
        s = math.hypot(ax, ay)
        if gain <= 0 or s < 1e-9:
            return
        k = math.atan2(s, up[2]) * gain / s
        turn = _rodrigues(ax * k, ay * k, 0.0)
        self._r = _mul(turn, self._r)
        self._up = _apply(turn, self._up)

    @property
    def rotation(self) -> np.ndarray:
        """Torso frame -> gravity-aligned frame (3, 3); its yaw is the integrated gyro's."""
        return np.array(self._r).reshape(3, 3)

    @rotation.setter
    def rotation(self, r: np.ndarray) -> None:
        self._r = tuple(float(v) for v in np.asarray(r, dtype=float).reshape(9))

    @property
    def yaw(self) -> float:
        """Integrated yaw (rad; relative, drifts)."""
        return math.atan2(self._r[3], self._r[0])

    @property
    def roll(self) -> float:
        """Roll (rad) of the ZYX decomposition."""
        return math.atan2(self._r[7], self._r[8])

    @property
    def pitch(self) -> float:
        """Pitch (rad) of the ZYX decomposition."""
        return math.asin(max(-1.0, min(1.0, -self._r[6])))

    @property
    def tilt(self) -> np.ndarray:
        """Torso frame -> level frame (the rotation with the yaw taken out)."""
        r = self._r
        yaw = math.atan2(r[3], r[0])
        c, s = math.cos(yaw), math.sin(yaw)
        return np.array(
            [
                [c * r[0] + s * r[3], c * r[1] + s * r[4], c * r[2] + s * r[5]],
                [c * r[3] - s * r[0], c * r[4] - s * r[1], c * r[5] - s * r[2]],
                [r[6], r[7], r[8]],
            ]
        )

    @property
    def upright(self) -> float:
        """Cosine of the angle between the torso's z axis and up (1 = upright)."""
        return self._r[8]


def _orthonormalise(r: Mat) -> Mat:
    """The rotation matrix nearest ``r`` that Gram-Schmidt on its columns gives (cheap; removes drift)."""
    x0, x1, x2 = r[0], r[3], r[6]
    n = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    x0, x1, x2 = x0 / n, x1 / n, x2 / n
    d = x0 * r[1] + x1 * r[4] + x2 * r[7]
    y0, y1, y2 = r[1] - d * x0, r[4] - d * x1, r[7] - d * x2
    n = math.sqrt(y0 * y0 + y1 * y1 + y2 * y2)
    y0, y1, y2 = y0 / n, y1 / n, y2 / n
    return (
        x0, y0, x1 * y2 - x2 * y1,
        x1, y1, x2 * y0 - x0 * y2,
        x2, y2, x0 * y1 - x1 * y0,
    )  # fmt: skip


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi
