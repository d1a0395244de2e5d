"""Keyframe skills in YAML (any robot, canonical joint names) and the get-up choice.

The ``.skl`` language names Nao effectors (``EFF_LL3``), which the Booster robots do
not have, so T1/K1 skills are stored as YAML under ``skills/data/<robot>/``::

    name: GETUP_FRONT
    robot: T1
    kp: {laj1: 80}          # optional gain overrides while the skill runs
    kd: {}
    frames:                 # each: duration (s) and the joints it moves (degrees)
      - {t: 0.4, q: {llj1: -90, rlj1: -90}}
      - {t: 0.3, q: {llj4: 120, rlj4: 120}, kp: {llj4: 300}}  # optional: gains from this frame on
    mirror: GETUP_FRONT_M   # optional: also define this skill, the mirror image (left <-> right)
    balance:                # optional: IMU feedback added to the frames' targets while the skill runs
      pitch: {llj1: 0.8}    #   joint: deg per deg of torso pitch (forward lean positive) from ref_pitch_deg
      pitch_rate: {}        #   joint: deg per deg/s of pitch rate
      roll: {llj2: -0.5}    #   joint: deg per deg of torso roll (lean right positive)
      roll_rate: {}         #   joint: deg per deg/s of roll rate
      ref_pitch_deg: 0
      max_offset_deg: 15    #   each joint's offset is clamped to this
      from: 0.2             #   s from the skill's start: feedback before this and after ``until`` is off
      until: 1.5

A ``mirror`` skill swaps every left joint with its right twin and flips the sign of the
rotations about the x (roll) and z (yaw) axes (:func:`mirror_joint`); the T1/K1 joints turn
about the same axes on both sides, so pitch angles carry over unchanged.

Each frame moves its joints linearly from the command at the frame's start to its
targets over ``t``; joints a frame does not name keep their last target (as the
``settar`` semantics of the skill engine). :class:`KeyframePlayer` follows
:class:`~robocup3d_motion.skills.engine.SkillPlayer`'s protocol,
``execute(reset, t, joints) -> (targets, finished)``, so the motion node plays both
kinds alike. :data:`GETUP_SKILLS` names the skill per fall direction (the Nao's
are ``.skl`` files under ``skills/data/nao/``); a robot without one just reports
that it lies on the ground.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from robocup3d_bridge.config_files import ConfigError
from robocup3d_description.robots import RobotSpec
from robocup3d_motion.skills.player_base import PlayerBase

__all__ = [
    'DATA_DIR',
    'GETUP_SKILLS',
    'Keyframe',
    'KeyframePlayer',
    'KeyframeSkill',
    'SkillBalance',
    'blend_skills',
    'check_blend',
    'getup_skill_for',
    'load_keyframe_dir',
    'load_keyframe_skill',
    'load_keyframe_skills',
    'mirror_joint',
    'mirror_skill',
]

DATA_DIR = Path(__file__).resolve().parent / 'skills' / 'data'
_D2R = math.pi / 180.0

#: Skill to play per fall direction. A side get-up may just bring the robot onto its front or back and
#: end: the motion node then plays the get-up for the side it lies on (the Nao's ``getup_side.skl``).
#: A robot without a side get-up plays the back get-up after a side fall (:func:`getup_skill_for`).
GETUP_SKILLS = {'front': 'GETUP_FRONT', 'back': 'GETUP_BACK', 'left': 'GETUP_SIDE', 'right': 'GETUP_SIDE'}


#: sign of a joint's mirror image per joint (index after the side letter): roll (x) and yaw (z) flip
_MIRROR_SIGN = {
    'aj': {1: 1, 2: -1, 3: 1, 4: -1},  # shoulder pitch, shoulder roll, elbow pitch, elbow yaw
    'lj': {1: 1, 2: -1, 3: -1, 4: 1, 5: 1, 6: -1},  # hip pitch, roll, yaw, knee, ankle pitch, roll
}
_MIRROR_CENTRE = {'hj1': -1, 'hj2': 1, 'tj1': -1}  # head yaw, head pitch, waist yaw


def mirror_joint(name: str) -> tuple[str, int]:
    """The mirror twin of a T1/K1 joint and the sign its angle takes there (``laj2`` -> ``('raj2', -1)``)."""
    if name in _MIRROR_CENTRE:
        return name, _MIRROR_CENTRE[name]
    side, kind, index = name[:1], name[1:3], name[3:]
    if side in 'lr' and kind in _MIRROR_SIGN and index.isdigit() and int(index) in _MIRROR_SIGN[kind]:
        return ('r' if side == 'l' else 'l') + kind + index, _MIRROR_SIGN[kind][int(index)]
    raise ValueError(f'no mirror twin known for joint {name!r}')


@dataclass(frozen=True, slots=True)
class Keyframe:
    """Targets (rad) reached after ``duration`` seconds; ``kp``: gains from this frame on (over the skill's)."""

    duration: float
    targets: dict[str, float]
    kp: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SkillBalance:
    """IMU feedback a keyframe skill adds to its targets: per joint, rad per rad (rate gains: per rad/s).

    ``offsets`` gives, per joint, ``pitch * (pitch - ref_pitch) + pitch_rate * pitch rate + roll * roll +
    roll_rate * roll rate`` (torso pitch forward positive, roll to the right positive), clamped to
    ``max_offset``, between ``start`` and ``end`` s of the skill's time and nothing outside.
    """

    pitch: dict[str, float] = field(default_factory=dict)
    pitch_rate: dict[str, float] = field(default_factory=dict)
    roll: dict[str, float] = field(default_factory=dict)
    roll_rate: dict[str, float] = field(default_factory=dict)
    ref_pitch: float = 0.0  # rad
    max_offset: float = math.radians(15.0)
    start: float = 0.0  # s
    end: float = math.inf

    def offsets(self, t: float, pitch: float, roll: float, pitch_rate: float, roll_rate: float) -> dict[str, float]:
        """Offsets (rad) at ``t`` s into the skill for the torso's ``pitch``/``roll`` (rad) and their rates (rad/s)."""
        if not self.start <= t <= self.end:
            return {}
        if not all(math.isfinite(v) for v in (pitch, roll, pitch_rate, roll_rate)):
            return {}
        out: dict[str, float] = {}
        for gains, value in (
            (self.pitch, pitch - self.ref_pitch),
            (self.pitch_rate, pitch_rate),
            (self.roll, roll),
            (self.roll_rate, roll_rate),
        ):
            for j, k in gains.items():
                out[j] = out.get(j, 0.0) + k * value
        lim = self.max_offset
        return {j: min(max(v, -lim), lim) for j, v in out.items()}

    def mirrored(self) -> SkillBalance:
        """The feedback of the mirror skill: joints swapped, signs as :func:`mirror_joint` (a roll flips too)."""

        def swap(gains: Mapping[str, float], flip: float) -> dict[str, float]:
            out = {}
            for j, k in gains.items():
                twin, sign = mirror_joint(j)
                out[twin] = flip * sign * k
            return out

        return SkillBalance(
            swap(self.pitch, 1.0),
            swap(self.pitch_rate, 1.0),
            swap(self.roll, -1.0),
            swap(self.roll_rate, -1.0),
            self.ref_pitch,
            self.max_offset,
            self.start,
            self.end,
        )

    @property
    def joints(self) -> frozenset[str]:
        return frozenset(self.pitch) | frozenset(self.pitch_rate) | frozenset(self.roll) | frozenset(self.roll_rate)


@dataclass(frozen=True, slots=True)
class KeyframeSkill:
    """A resolved keyframe skill."""

    name: str
    frames: tuple[Keyframe, ...]
    kp: dict[str, float] = field(default_factory=dict)
    kd: dict[str, float] = field(default_factory=dict)
    source: str = ''
    balance: SkillBalance | None = None

    @property
    def duration(self) -> float:
        return sum(f.duration for f in self.frames)


def mirror_skill(skill: KeyframeSkill, name: str) -> KeyframeSkill:
    """``skill``'s mirror image (left and right swapped, see :func:`mirror_joint`), named ``name``."""

    def q(targets: Mapping[str, float]) -> dict[str, float]:
        out = {}
        for j, v in targets.items():
            twin, sign = mirror_joint(j)
            out[twin] = sign * v
        return out

    def gains(g: Mapping[str, float]) -> dict[str, float]:
        return {mirror_joint(j)[0]: v for j, v in g.items()}

    frames = tuple(Keyframe(f.duration, q(f.targets), gains(f.kp)) for f in skill.frames)
    balance = skill.balance.mirrored() if skill.balance is not None else None
    return KeyframeSkill(name, frames, gains(skill.kp), gains(skill.kd), skill.source, balance)


def blend_skills(soft: KeyframeSkill, hard: KeyframeSkill, power: float, name: str = '') -> KeyframeSkill:
    """The skill ``power`` of the way from ``soft`` (0) to ``hard`` (1): every duration, target and balance gain
    interpolated (a kick of chosen strength between its gentle and its full version). Both must move the same
    joints in the same frames; raises ValueError otherwise (:func:`check_blend` at load time)."""
    check_blend(soft, hard)
    p = min(max(float(power), 0.0), 1.0)

    def mix(a: float, b: float) -> float:
        return a + (b - a) * p

    def gains(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, float]:
        return {j: mix(a.get(j, 0.0), b.get(j, 0.0)) for j in {**a, **b}}

    frames = tuple(
        Keyframe(mix(fs.duration, fh.duration), {j: mix(v, fh.targets[j]) for j, v in fs.targets.items()}, dict(fh.kp))
        for fs, fh in zip(soft.frames, hard.frames, strict=True)
    )
    balance = None
    if soft.balance is not None and hard.balance is not None:
        bs, bh = soft.balance, hard.balance
        balance = SkillBalance(
            gains(bs.pitch, bh.pitch),
            gains(bs.pitch_rate, bh.pitch_rate),
            gains(bs.roll, bh.roll),
            gains(bs.roll_rate, bh.roll_rate),
            mix(bs.ref_pitch, bh.ref_pitch),
            mix(bs.max_offset, bh.max_offset),
            mix(bs.start, bh.start),
            mix(bs.end, bh.end),
        )
    return KeyframeSkill(name or f'{hard.name}@{p:.2f}', frames, dict(hard.kp), dict(hard.kd), hard.source, balance)


def check_blend(soft: KeyframeSkill, hard: KeyframeSkill) -> None:
    """Raises ValueError unless ``soft`` and ``hard`` can be blended (:func:`blend_skills`)."""
    if len(soft.frames) != len(hard.frames):
        raise ValueError(f'{soft.name} has {len(soft.frames)} frames, {hard.name} {len(hard.frames)}: no blend')
    for i, (fs, fh) in enumerate(zip(soft.frames, hard.frames, strict=True)):
        if set(fs.targets) != set(fh.targets):
            raise ValueError(f'{soft.name} and {hard.name} move other joints in frame {i}: no blend')
        if dict(fs.kp) != dict(fh.kp):
            raise ValueError(f'{soft.name} and {hard.name} have other gains in frame {i}: no blend')
    if (soft.balance is None) != (hard.balance is None):
        raise ValueError(f'one of {soft.name} and {hard.name} has balance feedback, the other not: no blend')
    if dict(soft.kp) != dict(hard.kp) or dict(soft.kd) != dict(hard.kd):
        raise ValueError(f'{soft.name} and {hard.name} have other gains (kp, kd): no blend')


def load_keyframe_skills(path: str | Path, robot: RobotSpec | None = None) -> list[KeyframeSkill]:
    """The skill of a YAML file and, when it names a ``mirror``, its mirror image (checked alike)."""
    skill = load_keyframe_skill(path, robot)
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f'{path}: {exc}') from None
    twin = data.get('mirror') if isinstance(data, Mapping) else None
    if not twin:
        return [skill]
    try:
        mirrored = mirror_skill(skill, str(twin))
    except ValueError as exc:
        raise ConfigError(f'{path}: mirror: {exc}') from None
    if robot is not None:
        for i, fr in enumerate(mirrored.frames):
            for j, v in fr.targets.items():
                spec = robot.by_name.get(j)
                if spec is None:
                    raise ConfigError(f'{path}: mirror {twin}: {robot.name} has no joint {j}')
                if not spec.lower - 1e-6 <= v <= spec.upper + 1e-6:
                    raise ConfigError(
                        f'{path}: mirror {twin}: frame {i}: {j}={v / _D2R:.1f} deg is outside '
                        f'[{spec.lower / _D2R:.1f}, {spec.upper / _D2R:.1f}]'
                    )
    return [skill, mirrored]


def load_keyframe_skill(path: str | Path, robot: RobotSpec | None = None) -> KeyframeSkill:
    """Read one YAML keyframe skill; with ``robot``, joint names and limits are checked."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f'{path}: {exc}') from None
    if not isinstance(data, Mapping) or not isinstance(data.get('frames'), list) or not data['frames']:
        raise ConfigError(f'{path}: a keyframe skill needs a name and a non-empty list of frames')
    name = str(data.get('name') or path.stem.upper())
    known = robot.by_name if robot else None

    def check(names: object, what: str) -> None:
        if known is not None:
            bad = sorted(set(names) - set(known))
            if bad:
                raise ConfigError(f'{path}: {what} names joints {robot.name} does not have: {bad}')

    frames = []
    for i, fr in enumerate(data['frames']):
        if not isinstance(fr, Mapping) or not isinstance(fr.get('q', {}) or {}, Mapping):
            raise ConfigError(f'{path}: frame {i} must be a mapping with t and q')
        t = float(fr.get('t', 0.0))
        if not math.isfinite(t) or t < 0:
            raise ConfigError(f'{path}: frame {i} duration {t} must be >= 0')
        q = {str(k): float(v) * _D2R for k, v in (fr.get('q') or {}).items()}
        check(q, f'frame {i}')
        if known is not None:
            for j, v in q.items():
                lo, hi = known[j].lower, known[j].upper
                if not lo - 1e-6 <= v <= hi + 1e-6:
                    raise ConfigError(
                        f'{path}: frame {i}: {j}={v / _D2R:.1f} deg is outside [{lo / _D2R:.1f}, {hi / _D2R:.1f}]'
                    )
        gains = fr.get('kp') or {}
        if not isinstance(gains, Mapping):
            raise ConfigError(f'{path}: frame {i}: kp must be a mapping of joint gains')
        fkp = {str(k): float(v) for k, v in gains.items()}
        check(fkp, f'frame {i} kp')
        frames.append(Keyframe(t, q, fkp))
    kp = {str(k): float(v) for k, v in (data.get('kp') or {}).items()}
    kd = {str(k): float(v) for k, v in (data.get('kd') or {}).items()}
    check(kp, 'kp')
    check(kd, 'kd')
    balance = _balance(data.get('balance'), path)
    if balance is not None:
        check(balance.joints, 'balance')
    return KeyframeSkill(name, tuple(frames), kp, kd, str(path), balance)


def _balance(section: object, path: Path) -> SkillBalance | None:
    """A skill's ``balance:`` mapping (gains in deg per deg, deg per deg/s) as a :class:`SkillBalance`."""
    if not section:
        return None
    if not isinstance(section, Mapping):
        raise ConfigError(f'{path}: balance must be a mapping')
    known = {'pitch', 'pitch_rate', 'roll', 'roll_rate', 'ref_pitch_deg', 'max_offset_deg', 'from', 'until'}
    unknown = sorted(set(section) - known)
    if unknown:
        raise ConfigError(f'{path}: balance: unknown keys {unknown}; known: {sorted(known)}')

    def gains(key: str) -> dict[str, float]:
        value = section.get(key) or {}
        if not isinstance(value, Mapping):
            raise ConfigError(f'{path}: balance.{key} must map joint names to gains')
        out = {str(j): float(k) for j, k in value.items()}
        if not all(math.isfinite(k) for k in out.values()):
            raise ConfigError(f'{path}: balance.{key}: gains must be finite')
        return out

    try:
        values = [float(section.get(k, d)) for k, d in (('ref_pitch_deg', 0.0), ('max_offset_deg', 15.0))]
        start, end = float(section.get('from', 0.0)), float(section.get('until', math.inf))
    except (TypeError, ValueError):
        raise ConfigError(f'{path}: balance: ref_pitch_deg, max_offset_deg, from and until must be numbers') from None
    if not (math.isfinite(values[0]) and values[1] >= 0.0 and start <= end):
        raise ConfigError(f'{path}: balance: needs a finite ref_pitch_deg, max_offset_deg >= 0 and from <= until')
    return SkillBalance(
        gains('pitch'),
        gains('pitch_rate'),
        gains('roll'),
        gains('roll_rate'),
        values[0] * _D2R,
        values[1] * _D2R,
        start,
        end,
    )


def load_keyframe_dir(robot: RobotSpec, base: Path = DATA_DIR) -> dict[str, KeyframeSkill]:
    """Every ``*.yaml`` skill under ``base/<robot name>/``, by skill name."""
    out: dict[str, KeyframeSkill] = {}
    folder = base / robot.name
    for path in sorted(folder.glob('*.yaml')) if folder.is_dir() else []:
        for skill in load_keyframe_skills(path, robot):
            if skill.name in out:
                raise ConfigError(f'skill {skill.name} defined twice ({out[skill.name].source}, {path})')
            out[skill.name] = skill
    return out


def getup_skill_for(direction: str, skills: Mapping[str, object]) -> str | None:
    """The get-up skill's name for a fall ``direction``, if the robot has one."""
    name = GETUP_SKILLS.get(direction)
    if name in skills:
        return name
    if direction in ('left', 'right') and 'GETUP_BACK' in skills:
        return 'GETUP_BACK'
    return None


class KeyframePlayer(PlayerBase):
    """Plays a :class:`KeyframeSkill`: ``execute(reset, t, joints) -> (targets, finished)``."""

    skill: KeyframeSkill

    def __init__(self, skill: KeyframeSkill, robot: RobotSpec | None = None) -> None:
        super().__init__(skill, robot)
        self._t0 = 0.0
        self._start: dict[str, float] = {}
        self._targets: dict[str, float] = {}
        self._last: dict[str, float] = {}
        self._began = 0.0
        self._kp: dict[str, float] = dict(skill.kp)

    @property
    def kp(self) -> dict[str, float]:
        """The skill's gain overrides in force: its ``kp`` and those of the frames played so far."""
        return self._kp

    def is_ready(self) -> bool:
        return True

    def elapsed(self, t: float) -> float:
        """s since the skill started (at the last reset)."""
        return t - self._began

    def execute(
        self, reset: bool, t: float, joints: Mapping[str, float], start: Mapping[str, float] | None = None
    ) -> tuple[dict[str, float], bool]:
        """Targets (rad) for time ``t``. ``start``: the commands in force when the skill
        begins (defaults to the measured ``joints``)."""
        frames = self.skill.frames
        if reset or self._index < 0:
            self._index, self._finished, self._t0, self._began = 0, False, t, t
            base = dict(joints)
            base.update(start or {})
            self._last = base
            self._kp = dict(self.skill.kp)
            self._enter(base)
        while not self._finished and t - self._t0 >= frames[self._index].duration - 1e-6:
            self._t0 += frames[self._index].duration
            self._last = dict(self._targets)
            if self._index + 1 < len(frames):
                self._index += 1
                self._enter(self._last)
            else:
                self._finished = True
        out = {}
        dur = frames[self._index].duration
        f = 1.0 if self._finished or dur <= 0 else min(max((t - self._t0) / dur, 0.0), 1.0)
        for j, target in self._targets.items():
            a = self._start.get(j, target)
            v = self._clamp(j, a + (target - a) * f)
            if v is not None:
                out[j] = v
        return out, self._finished

    def _enter(self, current: Mapping[str, float]) -> None:
        self._start = dict(current)
        gains = self.skill.frames[self._index].kp
        if gains:
            self._kp = {**self._kp, **gains}
        targets = dict(current)
        targets.update(self.skill.frames[self._index].targets)
        self._targets = targets
