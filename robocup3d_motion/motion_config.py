"""Schemas of ``config/robots.yaml`` and ``config/walk.yaml``, and their checked loaders.

Each loader reads a file (by name or path), checks it against its schema (unknown keys,
types, ranges, joint names) and then the walk's own rules for every robot in it, and
returns the mapping the motion code reads. A bad file raises one
:class:`~robocup3d_bridge.config_files.ConfigError` that names the file, the key and
what is allowed.
"""

from __future__ import annotations

import math
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, PlainValidator, create_model, model_validator

from robocup3d_bridge.config_files import ConfigError, config_path, load_config
from robocup3d_bridge.config_schema import Finite, Section, Text, ranged_int, validate
from robocup3d_description.robots import MUJOCO_ROBOTS, NAO_TYPES, robot_spec
from robocup3d_motion.walk import WalkParams, walk_sets

__all__ = ['RobotsFile', 'WalkFile', 'load_robots_config', 'load_walk_config']


def _sign(v: object) -> float:
    if isinstance(v, bool) or v not in (-1, 1):
        raise ValueError(f'must be 1 or -1, got {v!r}')
    return float(v)


#: A joint's sign in a feedback loop.
Sign = Annotated[float, PlainValidator(_sign)]


def _gains(v: object) -> float | dict[str, float]:
    if isinstance(v, dict):
        for joint, gain in v.items():
            if isinstance(gain, bool) or not isinstance(gain, int | float) or not math.isfinite(gain):
                raise ValueError(f'{joint}: must be a finite number, got {gain!r}')
        return {str(k): float(g) for k, g in v.items()}
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise ValueError(f'must be a finite number or a mapping joint -> number (default: the others), got {v!r}')
    return float(v)


#: One gain for every joint, or a joint -> gain mapping (``default``: the joints not named).
Gains = Annotated[float | dict[str, float], PlainValidator(_gains)]


class Controller(Section):
    """Joint controller gains: one number for every joint, or per joint."""

    kp: Gains = 0.0
    kd: Gains = 0.0


class Balance(Section):
    """IMU feedback on the ankles (``robocup3d_motion/balance.py``)."""

    pitch_joints: dict[str, Sign] = Field(default_factory=dict)
    roll_joints: dict[str, Sign] = Field(default_factory=dict)
    kp_pitch: Finite = 0.0
    kd_pitch: Finite = 0.0
    kp_roll: Finite = 0.0
    kd_roll: Finite = 0.0
    ref_pitch_deg: Finite = 0.0
    max_offset_deg: Finite = 10.0


class Fall(Section):
    """Fall detection thresholds (degrees, cycles, rad/s, s)."""

    fallen_deg: Finite = 55.0
    upright_deg: Finite = 30.0
    confirm_cycles: ranged_int(1, 1000, 'a number of cycles') = 3
    calm_rate: Finite | None = None
    calm_s: Finite | None = None
    calm_max: Finite | None = None
    #: the fall directions (as first reported) whose get-up waits for the calm; default the sides
    calm_for: tuple[Literal['front', 'back', 'left', 'right'], ...] = ('left', 'right')


class RobotSection(Section):
    """One robot's motion settings."""

    controller: Controller = Field(default_factory=Controller)
    hold_pose: dict[str, Finite] = Field(default_factory=dict)  # degrees
    balance: Balance | None = None
    fall: Fall = Field(default_factory=Fall)


@cache
def _joint_names(section: str) -> tuple[str, ...] | None:
    """Canonical joint names of a ``robots.yaml`` section (``None``: the robot is not installed)."""
    try:
        if section == 'nao':
            return tuple(dict.fromkeys(n for t in NAO_TYPES for n in robot_spec('simspark', 'nao', t).joint_names))
        return robot_spec('mujoco', section).joint_names
    except (ImportError, OSError, ValueError):  # the MJ robots come with the rcsssmj package
        return None


class RobotsFile(Section):
    """``config/robots.yaml``: one section per robot (``nao`` is every Nao type)."""

    nao: RobotSection | None = None
    T1: RobotSection | None = None
    K1: RobotSection | None = None

    @model_validator(mode='after')
    def _joints_exist(self) -> RobotsFile:
        for key in ('nao', *MUJOCO_ROBOTS):
            section, names = getattr(self, key), _joint_names(key)
            if section is None or names is None:
                continue
            ctrl, bal = section.controller, section.balance
            named = {
                'hold_pose': section.hold_pose,
                'controller.kp': ctrl.kp if isinstance(ctrl.kp, dict) else {},
                'controller.kd': ctrl.kd if isinstance(ctrl.kd, dict) else {},
                'balance.pitch_joints': bal.pitch_joints if bal else {},
                'balance.roll_joints': bal.roll_joints if bal else {},
            }
            for where, joints in named.items():
                extra = {'default'} if where.startswith('controller') else set()
                bad = sorted(set(joints) - set(names) - extra)
                if bad:
                    raise ValueError(f'{key}.{where}: unknown joint {bad[0]!r}; joints: {", ".join(names)}')
        return self


_WALK_KEYS = [f.name for f in fields(WalkParams) if f.name != 'fast']
#: The values of a walk set's ``fast`` part: any walk parameter.
FastValues = create_model('FastValues', __base__=Section, **{k: (Finite | None, None) for k in _WALK_KEYS})
#: A walk parameter set: any walk parameter, and a ``fast`` part.
WalkValues = create_model(
    'WalkValues', __base__=Section, fast=(FastValues | None, None), **{k: (Finite | None, None) for k in _WALK_KEYS}
)


class GearValues(Section):
    """When the walk shifts to a faster set (``robocup3d_motion.gear``): ``fast`` on a walk to a target further
    than ``far`` m within ``ahead_deg`` of straight ahead, at ``top`` m/s at most; back nearer than ``near`` or
    further aside than ``aside_deg``, first slowing to ``shift_speed`` m/s turning at ``shift_turn`` rad/s at most."""

    fast: Text
    far: Finite = Field(3.0, gt=0.0)
    ahead_deg: Finite = Field(11.0, gt=0.0, le=90.0)
    near: Finite = Field(2.0, ge=0.0)
    aside_deg: Finite = Field(26.0, gt=0.0, le=180.0)
    shift_speed: Finite = Field(0.3, gt=0.0)
    shift_turn: Finite = Field(0.15, ge=0.0)
    top: Finite = Field(math.inf, gt=0.0)  # below the fast set's own max_vx: a margin where it turns and looks

    @model_validator(mode='after')
    def _bands(self) -> GearValues:
        if self.near >= self.far or self.aside_deg < self.ahead_deg:
            raise ValueError('a gear shifts down nearer (near < far) and further aside (aside_deg >= ahead_deg)')
        return self


class WalkSection(Section):
    """One robot's walk: a base, named sets over it, the default set's name, and a gear."""

    default: Text | None = None
    base: WalkValues | None = None
    sets: dict[str, WalkValues] = Field(min_length=1)
    gear: GearValues | None = None

    @model_validator(mode='after')
    def _gear_set(self) -> WalkSection:
        if self.gear is not None and self.gear.fast not in self.sets:
            raise ValueError(f'gear.fast names unknown set {self.gear.fast!r}; sets: {sorted(self.sets)}')
        return self


class WalkFile(Section):
    """``config/walk.yaml``: one section per robot (``nao`` for Nao types without their own)."""

    T1: WalkSection | None = None
    K1: WalkSection | None = None
    nao: WalkSection | None = None
    nao0: WalkSection | None = None
    nao1: WalkSection | None = None
    nao2: WalkSection | None = None
    nao3: WalkSection | None = None
    nao4: WalkSection | None = None


def load_robots_config(name_or_path: str | Path) -> dict:
    """``robots.yaml`` (by name or path), checked against :class:`RobotsFile`."""
    path = config_path(name_or_path)
    data = load_config(path)
    validate(RobotsFile, data, str(path))
    return data


def load_walk_config(name_or_path: str | Path) -> dict:
    """``walk.yaml`` (by name or path), checked against :class:`WalkFile` and the walk's rules for every robot."""
    path = config_path(name_or_path)
    data = load_config(path)
    validate(WalkFile, data, str(path))
    for key in data:
        try:
            walk_sets(data, key)
        except ConfigError as exc:
            raise ConfigError(f'{path}: {str(exc).removeprefix("walk.yaml: ")}') from None
    return data
