"""Keyframe skills in YAML (any robot, canonical joint names) and the get-up choice.

The ``.skl`` language names Nao effectors (``EFF_LL3``), which the Booster robots do
not have, so T1/K1 skills are stored as YAML under ``skills/data/<robot>/``::

    name: GETUP_FRONT
    robot: T1
    kp: {laj1: 80}          # optional gain overrides while the skill runs
    kd: {}
    frames:                 # each: duration (s) and the joints it moves (degrees)
      - {t: 0.4, q: {llj1: -90, rlj1: -90}}
      - {t: 0.3, q: {llj4: 120, rlj4: 120}}

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
    'getup_skill_for',
    'load_keyframe_dir',
    'load_keyframe_skill',
]

DATA_DIR = Path(__file__).resolve().parent / 'skills' / 'data'
_D2R = math.pi / 180.0

#: Skill to play per fall direction; side falls use the back get-up (its first frames roll the robot).
GETUP_SKILLS = {'front': 'GETUP_FRONT', 'back': 'GETUP_BACK', 'left': 'GETUP_SIDE', 'right': 'GETUP_SIDE'}


@dataclass(frozen=True, slots=True)
class Keyframe:
    """Targets (rad) reached after ``duration`` seconds."""

    duration: float
    targets: dict[str, float]


@dataclass(frozen=True, slots=True)
class KeyframeSkill:
    """A resolved keyframe skill."""

    name: str
    frames: tuple[Keyframe, ...]
    kp: dict[str, float] = field(default_factory=dict)
    kd: dict[str, float] = field(default_factory=dict)
    source: str = ''

    @property
    def duration(self) -> float:
        return sum(f.duration for f in self.frames)


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
        frames.append(Keyframe(t, q))
    kp = {str(k): float(v) for k, v in (data.get('kp') or {}).items()}
    kd = {str(k): float(v) for k, v in (data.get('kd') or {}).items()}
    check(kp, 'kp')
    check(kd, 'kd')
    return KeyframeSkill(name, tuple(frames), kp, kd, str(path))


def load_keyframe_dir(robot: RobotSpec, base: Path = DATA_DIR) -> dict[str, KeyframeSkill]:
    """Every ``*.yaml`` skill under ``base/<robot name>/``, by skill name."""
    out: dict[str, KeyframeSkill] = {}
    folder = base / robot.name
    for path in sorted(folder.glob('*.yaml')) if folder.is_dir() else []:
        skill = load_keyframe_skill(path, robot)
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

    def is_ready(self) -> bool:
        return True

    def execute(
        self, reset: bool, t: float, joints: Mapping[str, float], start: Mapping[str, float] | None = None
    ) -> tuple[dict[str, float], bool]:
        """Targets (rad) for time ``t``. ``start``: the commands in force when the skill
        begins (defaults to the measured ``joints``)."""
        frames = self.skill.frames
        if reset or self._index < 0:
            self._index, self._finished, self._t0 = 0, False, t
            base = dict(joints)
            base.update(start or {})
            self._last = base
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
        targets = dict(current)
        targets.update(self.skill.frames[self._index].targets)
        self._targets = targets
