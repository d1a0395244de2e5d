"""Fall detection from the torso IMU (pure Python, robot-agnostic).

The gravity direction in the torso frame is tracked by a complementary filter: the
gyro rotates the estimate every cycle, and the accelerometer (which reads the
specific force, i.e. ``+g`` pointing *up* when the torso is at rest) pulls it back
whenever its magnitude is close to ``g``. From that "up" vector:

* tilt = angle between the torso's z axis and the world vertical;
* direction of a fall = which torso axis points to the sky: up along ``-x`` means the
  front faces the ground (``front``), ``+x`` the back (``back``), ``+y`` the right side
  lies on the ground (``right``), ``-y`` the left side (``left``).

A fall is declared when the tilt stays above ``fallen_deg`` for ``confirm_cycles``
cycles and is over when it stays below ``upright_deg`` as long. Everything here
takes plain tuples, so the same detector serves the Nao (SimSpark ``GYR``/``ACC``)
and the Booster robots (RCSSServerMJ ``gyro``/``accelerometer``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ['DIRECTIONS', 'FallDetector', 'FallState', 'fall_direction', 'tilt_of']

G = 9.81
DIRECTIONS = ('none', 'front', 'back', 'left', 'right')


@dataclass(frozen=True, slots=True)
class FallState:
    """What the detector concluded this cycle."""

    fallen: bool
    direction: str  # one of DIRECTIONS; 'none' when upright
    tilt: float  # rad, 0 = upright, pi/2 = lying
    pitch: float  # rad, forward lean positive (torso x towards the ground)
    roll: float  # rad, lean to the right positive
    up: tuple[float, float, float]  # world up in the torso frame (unit vector)


def all_finite(v: tuple[float, ...]) -> bool:
    """``all(math.isfinite(x) for x in v)`` without a generator (a few calls a cycle: here, and motion's IMU, pose
    and ball checks)."""
    for x in v:
        if not math.isfinite(x):
            return False
    return True


def _norm(v: tuple[float, float, float]) -> float:
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


def tilt_of(up: tuple[float, float, float]) -> float:
    """Angle (rad) between the torso z axis and the world vertical."""
    n = _norm(up) or 1.0
    return math.acos(max(-1.0, min(1.0, up[2] / n)))


def fall_direction(up: tuple[float, float, float]) -> str:
    """Which side faces the ground, from the up vector in the torso frame."""
    ux, uy = up[0], up[1]
    if abs(ux) >= abs(uy):
        return 'front' if ux < 0 else 'back'
    return 'right' if uy > 0 else 'left'


class FallDetector:
    """Complementary-filter tilt estimate plus hysteresis.

    Args:
        fallen_deg: tilt above which the robot counts as falling/fallen.
        upright_deg: tilt below which it counts as upright again.
        confirm_cycles: cycles a condition must hold before the state flips.
        accel_weight: per-cycle weight of the accelerometer in the filter (0..1).
    """

    def __init__(
        self,
        fallen_deg: float = 55.0,
        upright_deg: float = 30.0,
        confirm_cycles: int = 3,
        accel_weight: float = 0.05,
    ) -> None:
        if not 0.0 < upright_deg < fallen_deg < 180.0:
            raise ValueError(f'need 0 < upright_deg ({upright_deg}) < fallen_deg ({fallen_deg}) < 180')
        self.fallen_tilt = math.radians(fallen_deg)
        self.upright_tilt = math.radians(upright_deg)
        self.confirm_cycles = max(1, int(confirm_cycles))
        self.accel_weight = float(accel_weight)
        self.reset()

    def reset(self, up: tuple[float, float, float] | None = None) -> None:
        """Forget the estimate: start from ``up`` (the up vector in the torso frame) when the body's attitude is known,
        else from the next calm accelerometer reading."""
        self.up: tuple[float, float, float] | None = up
        self.fallen = False
        self.direction = 'none'
        self._count = 0

    def update(
        self,
        gyro: tuple[float, float, float] | None,
        accel: tuple[float, float, float] | None,
        dt: float = 0.02,
    ) -> FallState:
        """One cycle with the gyro (rad/s) and accelerometer (m/s^2) in the torso frame."""
        up = self.up
        if up is not None and gyro is not None and all_finite(gyro):
            # A world-fixed vector seen from a body turning at w changes as du/dt = u x w.
            wx, wy, wz = gyro
            ux, uy, uz = up
            up = (ux + (uy * wz - uz * wy) * dt, uy + (uz * wx - ux * wz) * dt, uz + (ux * wy - uy * wx) * dt)
        if accel is not None and all_finite(accel):
            n = _norm(accel)
            if n > 1e-6:
                meas = (accel[0] / n, accel[1] / n, accel[2] / n)
                if up is None:
                    # start from a calm reading: the first ones after a beam are the landing jolt
                    calm = gyro is None or sum(g * g for g in gyro) < 0.25
                    if abs(n - G) < 0.05 * G and calm:
                        up = meas
                elif abs(n - G) < 0.35 * G:  # trust it only when not accelerating hard
                    w = self.accel_weight
                    k = 1.0 - w  # the blend written out (up and meas are both 3 long): no generator
                    up = (up[0] * k + meas[0] * w, up[1] * k + meas[1] * w, up[2] * k + meas[2] * w)
        if up is None:
            return FallState(self.fallen, self.direction, 0.0, 0.0, 0.0, (0.0, 0.0, 1.0))
        n = _norm(up) or 1.0
        up = (up[0] / n, up[1] / n, up[2] / n)
        self.up = up
        tilt = tilt_of(up)
        if not self.fallen:
            self._count = self._count + 1 if tilt > self.fallen_tilt else 0
            if self._count >= self.confirm_cycles:
                self.fallen, self._count = True, 0
                self.direction = fall_direction(up)
        else:
            self._count = self._count + 1 if tilt < self.upright_tilt else 0
            if self._count >= self.confirm_cycles:
                self.fallen, self._count = False, 0
                self.direction = 'none'
        pitch = math.atan2(-up[0], up[2])
        roll = math.atan2(up[1], up[2])
        return FallState(self.fallen, self.direction, tilt, pitch, roll, up)
