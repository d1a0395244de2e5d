"""Standing balance from IMU feedback (pure Python, robot-agnostic).

An ankle strategy: the torso's pitch and roll (from :class:`~robocup3d_motion.fall.FallDetector`)
and the gyro rates shift the ankle pitch and roll targets of the hold pose,

    d_pitch = kp_pitch * (pitch - ref_pitch) + kd_pitch * pitch_rate
    d_roll  = kp_roll  * roll                + kd_roll  * roll_rate

clamped to ``max_offset``. With both feet flat on the ground, a positive ankle-pitch
offset turns the shanks (and the body) backwards on both robots we measured (T1, K1),
so a forward lean is answered by leaning back; signs per joint come from the config
so that other robots (the Nao's ankle pitch is mirrored) can use the same code.

The stiff ankle PD (gains in ``config/robots.yaml``) does most of the work; this loop
trims the lean towards ``ref_pitch`` and damps sway.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from robocup3d_bridge.config_files import ConfigError

__all__ = ['BalanceController', 'BalanceSettings', 'balance_settings']


@dataclass(frozen=True, slots=True)
class BalanceSettings:
    """Gains (rad per rad, rad per rad/s) and the joints they act on, with signs."""

    pitch_joints: dict[str, float] = field(default_factory=dict)  # joint -> sign
    roll_joints: dict[str, float] = field(default_factory=dict)
    kp_pitch: float = 0.0
    kd_pitch: float = 0.0
    kp_roll: float = 0.0
    kd_roll: float = 0.0
    ref_pitch: float = 0.0  # rad
    max_offset: float = math.radians(10.0)

    @property
    def enabled(self) -> bool:
        return bool(self.pitch_joints or self.roll_joints)


def balance_settings(section: Mapping | None, joint_names: tuple[str, ...]) -> BalanceSettings:
    """Read a ``balance:`` mapping from a robot's section of ``robots.yaml`` (angles in degrees)."""
    if not section:
        return BalanceSettings()
    if not isinstance(section, Mapping):
        raise ConfigError('balance must be a mapping')

    def joints(key: str) -> dict[str, float]:
        value = section.get(key, {}) or {}
        if not isinstance(value, Mapping):
            raise ConfigError(f'balance.{key} must map joint names to +1/-1')
        unknown = set(value) - set(joint_names)
        if unknown:
            raise ConfigError(f'balance.{key} names unknown joints {sorted(unknown)}')
        return {str(k): float(v) for k, v in value.items()}

    return BalanceSettings(
        pitch_joints=joints('pitch_joints'),
        roll_joints=joints('roll_joints'),
        kp_pitch=float(section.get('kp_pitch', 0.0)),
        kd_pitch=float(section.get('kd_pitch', 0.0)),
        kp_roll=float(section.get('kp_roll', 0.0)),
        kd_roll=float(section.get('kd_roll', 0.0)),
        ref_pitch=math.radians(float(section.get('ref_pitch_deg', 0.0))),
        max_offset=math.radians(float(section.get('max_offset_deg', 10.0))),
    )


class BalanceController:
    """Adds IMU-feedback offsets to a standing pose."""

    def __init__(self, settings: BalanceSettings) -> None:
        self.settings = settings

    def offsets(self, pitch: float, roll: float, gyro: tuple[float, float, float] | None) -> dict[str, float]:
        """Ankle offsets (rad) for the torso ``pitch``/``roll`` (rad) and the gyro (rad/s)."""
        s = self.settings
        if not s.enabled:
            return {}
        gx, gy = (gyro[0], gyro[1]) if gyro is not None else (0.0, 0.0)
        if not (math.isfinite(pitch) and math.isfinite(roll) and math.isfinite(gx) and math.isfinite(gy)):
            return {}
        lim = s.max_offset
        dp = min(max(s.kp_pitch * (pitch - s.ref_pitch) + s.kd_pitch * gy, -lim), lim)
        # roll (lean right positive) grows with a negative rate about x
        dr = min(max(s.kp_roll * roll - s.kd_roll * gx, -lim), lim)
        out = {j: sign * dp for j, sign in s.pitch_joints.items()}
        for j, sign in s.roll_joints.items():
            out[j] = out.get(j, 0.0) + sign * dr
        return out

    def apply(
        self, pose: Mapping[str, float], pitch: float, roll: float, gyro: tuple[float, float, float] | None
    ) -> dict[str, float]:
        """``pose`` with the balance offsets added."""
        out = dict(pose)
        for j, d in self.offsets(pitch, roll, gyro).items():
            if j in out:
                out[j] += d
        return out
