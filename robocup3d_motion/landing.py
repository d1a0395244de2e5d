"""When a fallen body has landed: the start trigger of a get-up (pure Python, server seconds).

A Nao knocked onto its back is reported fallen anywhere from 0.25 s before the impact to the impact
itself (the detector's tilt crosses its threshold while the torso still falls, or as it hits), and
after the impact it bounces for about 0.15 s (the accelerometer reads near free fall while the
torso is in the air) before it lies still. A get-up started at a fixed time after the report thus
starts at a different phase of that bounce every time (docs/getup.md, Nao sessions 36 and 37).
:class:`LandingWatch` gives the phase instead, from the IMU of each cycle:

* the *rebound*: the torso's pitch rate, after falling backwards faster than ``rebound`` rad/s, turns
  forward (the cycle of the impact);
* the *calm*: the gyro below ``calm_rate`` rad/s and the accelerometer within ``calm_acc`` m/s^2 of g,
  both for ``calm_s`` s (the bounce is over and the body lies on the ground);

and ``max_s`` s after the fall report at the latest, whatever the IMU says. The rule per skill is
data: ``$<skill>_land_*`` in the Nao's skill parameter files (:meth:`LandingRule.from_params`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ['G', 'LandingRule', 'LandingWatch']

G = 9.81  # m/s^2

Vec3 = tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class LandingRule:
    """What counts as landed. A zero ``rebound`` and ``calm_rate`` switch the wait off (start at once)."""

    rebound: float = 0.0  # rad/s: start at the rebound after the torso pitched back faster than this
    calm_rate: float = 0.0  # rad/s: start when |gyro| stays below this ...
    calm_acc: float = math.inf  # m/s^2: ... and | |accel| - g | below this ...
    calm_s: float = 0.0  # s: ... for this long
    max_s: float = 1.0  # s after the fall report: start then at the latest

    def __post_init__(self) -> None:
        if min(self.rebound, self.calm_rate, self.calm_acc, self.calm_s, self.max_s) < 0.0:
            raise ValueError(f'landing rule values must not be negative: {self}')

    @property
    def active(self) -> bool:
        """Whether the get-up waits for the landing at all."""
        return self.rebound > 0.0 or self.calm_rate > 0.0

    @classmethod
    def from_params(cls, param: Callable[[str, float], float], skill: str) -> LandingRule:
        """The rule of ``skill`` (e.g. ``getup_back``) from its ``$<skill>_land_*`` parameters.

        ``param(name, default)``: a parameter's value, e.g. :meth:`SkillRegistry.param
        <robocup3d_motion.skills.engine.SkillRegistry.param>`. Unset values keep the defaults
        above, so a skill without any starts at once.
        """
        d = cls()
        acc = param(f'{skill}_land_calm_acc', 0.0)
        return cls(
            rebound=param(f'{skill}_land_rebound', d.rebound),
            calm_rate=param(f'{skill}_land_calm_rate', d.calm_rate),
            calm_acc=acc if acc > 0.0 else d.calm_acc,  # 0: the accelerometer is not asked
            calm_s=param(f'{skill}_land_calm_s', d.calm_s),
            max_s=param(f'{skill}_land_max', d.max_s),
        )


class LandingWatch:
    """Watches one fall for its landing, per :class:`LandingRule`; once landed it stays landed.

    Made (or ``start(t)``) at the fall report, ``update(t, gyro, accel)`` every IMU cycle after it (REP-103 torso
    axes: the pitch rate is ``gyro[1]``, negative while the torso falls onto its back), and
    ``ready(t)`` says whether the get-up may start.
    """

    def __init__(self, rule: LandingRule, t: float = 0.0) -> None:
        self.rule = rule
        self.start(t)

    def start(self, t: float) -> None:
        """A new fall, reported at ``t``."""
        self.t0 = t
        self.landed_at: float | None = None  # when the rule fired (None: not yet)
        self.how = ''  # 'rebound', 'calm' or 'timeout'
        self._falling = False  # the pitch rate has been below -rebound
        self._calm_since: float | None = None

    def update(self, t: float, gyro: Vec3, accel: Vec3 | None) -> bool:
        """One IMU cycle; whether the body has landed (by now)."""
        if self.landed_at is not None:
            return True
        rule = self.rule
        if rule.rebound > 0.0:
            if gyro[1] < -rule.rebound:
                self._falling = True
            elif self._falling and gyro[1] >= 0.0:
                return self._fire(t, 'rebound')
        if rule.calm_rate > 0.0:
            rate = math.sqrt(gyro[0] * gyro[0] + gyro[1] * gyro[1] + gyro[2] * gyro[2])
            acc_ok = accel is None or not math.isfinite(rule.calm_acc)
            if not acc_ok:
                n = math.sqrt(accel[0] * accel[0] + accel[1] * accel[1] + accel[2] * accel[2])
                acc_ok = abs(n - G) < rule.calm_acc
            if rate < rule.calm_rate and acc_ok:
                if self._calm_since is None:
                    self._calm_since = t
                if t - self._calm_since >= rule.calm_s - 1e-9:
                    return self._fire(t, 'calm')
            else:
                self._calm_since = None
        return False

    def ready(self, t: float) -> bool:
        """Whether the get-up may start at ``t``: landed, or ``max_s`` after the report (or no rule)."""
        if self.landed_at is not None or not self.rule.active:
            return True
        if t - self.t0 >= self.rule.max_s - 1e-9:
            self._fire(t, 'timeout')
            return True
        return False

    def _fire(self, t: float, how: str) -> bool:
        self.landed_at, self.how = t, how
        return True
