"""Keyframe skill player and registry (pure Python).

A :class:`SkillPlayer` plays one resolved :class:`~robocup3d_motion.skills.skl.Skill`
with FCP's protocol: ``execute(reset, t, joints) -> (targets, finished)`` and
``is_ready()``.

Per keyframe, as in UT Austin Villa, the commands run once in order when it starts:
``settar``/``inctar``/``reset`` change joint *targets* (which persist from keyframe to
keyframe, ``inctar`` adds to the target, not to the measured angle) and ``setscale``
changes per-joint speed factors (which persist too). Each cycle the commanded angle
moves linearly from the angle measured when the keyframe started to the target, over
the keyframe's wait divided by the joint's scale (UT scales a PD gain instead; a
negative scale, which UT's type-3 kick parameters produce, is taken by magnitude).
A keyframe is over once its wait has passed (one cycle without a wait); the skill is
finished when the last one is.

``setfoot``, curves and ``stabilize`` need inverse kinematics and the ball, so they go
to a :class:`LegSolver`; without one, a skill that uses them is not ready.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Protocol

from robocup3d_description.robots import RobotSpec
from robocup3d_motion.skills.params import load_type_params
from robocup3d_motion.skills.player_base import PlayerBase
from robocup3d_motion.skills.skl import (
    RESET_POSE,
    BodyPart,
    Curve,
    IncTarget,
    KeyFrame,
    Pose6,
    Reset,
    SetFoot,
    SetScale,
    SetTarget,
    Skill,
    SkillFile,
    Stabilize,
    load_skill_file,
    resolve_files,
)

__all__ = ['DATA_DIR', 'LegSolver', 'SkillPlayer', 'SkillRegistry', 'load_nao_registry', 'load_registry']

#: Our own skills, in the skill language (see data/README.md).
DATA_DIR = Path(__file__).resolve().parent / 'data'

_EPS = 1e-4  # s: a keyframe is over this close to its wait (as UT)


class LegSolver(Protocol):
    """Inverse kinematics for the foot commands; answers leg joint targets (rad) or ``None``."""

    def foot(self, leg: BodyPart, pose: Pose6[float], joints: Mapping[str, float]) -> Mapping[str, float] | None:
        """Joint targets that put the ``leg``'s foot at ``pose`` (position relative to the ball)."""

    def stabilize(
        self, leg: BodyPart, zmp_x: float, zmp_y: float, joints: Mapping[str, float]
    ) -> Mapping[str, float] | None:
        """Joint targets that put the centre of mass over the ``leg``'s foot at the ZMP (m)."""


def _lerp(a: float, b: float, f: float) -> float:
    return a + (b - a) * f


def curve_pose(curve: Curve[float], s: float) -> Pose6[float]:
    """The curve's foot pose at ``s`` in [0, 1], relative to the ball.

    Piecewise linear through the control points (UT uses a Hermite spline); as in UT,
    points after the first are offsets from the first.
    """
    p0 = curve.points[0]
    pts = [Pose6(0.0, 0.0, 0.0, p0.roll, p0.pitch, p0.yaw), *curve.points[1:]]
    if len(pts) == 1:
        a = b = pts[0]
        f = 0.0
    else:
        u = min(max(s, 0.0), 1.0) * (len(pts) - 1)
        i = min(int(u), len(pts) - 2)
        a, b, f = pts[i], pts[i + 1], u - i
    return Pose6(
        p0.x + _lerp(a.x, b.x, f),
        p0.y + _lerp(a.y, b.y, f),
        p0.z + _lerp(a.z, b.z, f),
        _lerp(a.roll, b.roll, f),
        _lerp(a.pitch, b.pitch, f),
        _lerp(a.yaw, b.yaw, f),
    )


class SkillPlayer(PlayerBase):
    """Plays one skill; joint angles in rad, time in s (server time).

    Args:
        skill: a resolved skill.
        robot: if given, targets are limited to its joints and clamped to their ranges.
        solver: inverse kinematics for setfoot/curve/stabilize.
    """

    skill: Skill[float]

    def __init__(self, skill: Skill[float], robot: RobotSpec | None = None, solver: LegSolver | None = None) -> None:
        if not skill.states:
            raise ValueError(f'skill {skill.name} has no keyframes')
        super().__init__(skill, robot)
        self._solver = solver
        self._start_t = 0.0
        self._start: dict[str, float] = {}
        self._targets: dict[str, float] = {}
        self._scales: dict[str, float] = {}
        self._curves: tuple[Curve[float], ...] = ()

    def is_ready(self) -> bool:
        """Whether the skill can start: it needs a solver if it uses foot commands."""
        return self._solver is not None or not self.skill.needs_ik

    def execute(self, reset: bool, t: float, joints: Mapping[str, float]) -> tuple[dict[str, float], bool]:
        """One cycle: joint targets (rad) for time ``t`` and whether the skill is finished.

        Args:
            reset: start from the first keyframe (set when the skill was not the last one played).
            t: current time (s).
            joints: measured joint angles (rad); only these joints get targets.

        Raises:
            RuntimeError: if the skill needs a :class:`LegSolver` and has none.
        """
        if not self.is_ready():
            raise RuntimeError(f'skill {self.name} uses setfoot/curve/stabilize and needs a LegSolver')
        if reset or self._index < 0:
            self._index, self._finished = 0, False
            self._targets, self._scales = dict(joints), {}
            self._enter(t, joints)
        elif not self._finished and self._over(t):
            if self._index + 1 < len(self.skill.states):
                self._index += 1
                self._enter(t, joints)
            else:
                self._finished = True
        return self._command(t, joints), self._finished

    # ------------------------------------------------------------------ internals

    @property
    def _state(self) -> KeyFrame[float]:
        return self.skill.states[self._index]

    def _over(self, t: float) -> bool:
        wait = self._state.wait
        return wait is None or t - self._start_t >= wait - _EPS

    def _enter(self, t: float, joints: Mapping[str, float]) -> None:
        self._start_t, self._start = t, dict(joints)
        self._curves = ()
        for cmd in self._state.commands:
            if isinstance(cmd, SetTarget):
                self._targets.update(cmd.targets)
            elif isinstance(cmd, IncTarget):
                for j, d in cmd.increments:
                    self._targets[j] = self._targets.get(j, joints.get(j, 0.0)) + d
            elif isinstance(cmd, SetScale):
                self._scales.update(cmd.scales)
            elif isinstance(cmd, Reset):
                for part in cmd.parts:
                    self._targets.update(RESET_POSE[part])
            elif isinstance(cmd, SetFoot):
                self._apply(self._ik().foot(cmd.leg, cmd.pose, joints))
            elif isinstance(cmd, Stabilize):
                self._apply(self._ik().stabilize(cmd.leg, cmd.zmp_x, cmd.zmp_y, joints))
            elif isinstance(cmd, Curve):
                self._curves += (cmd,)
                self._apply(self._ik().foot(cmd.leg, curve_pose(cmd, 0.0), joints))

    def _ik(self) -> LegSolver:
        assert self._solver is not None  # checked by is_ready
        return self._solver

    def _apply(self, targets: Mapping[str, float] | None) -> None:
        if targets:  # an unreachable pose leaves the targets as they were (as UT)
            self._targets.update(targets)

    def _command(self, t: float, joints: Mapping[str, float]) -> dict[str, float]:
        elapsed = t - self._start_t
        wait = self._state.wait or 0.0
        if self._curves and not self._finished and wait > 0.0:
            s = min(max(elapsed / wait, 0.0), 1.0)
            for curve in self._curves:
                self._apply(self._ik().foot(curve.leg, curve_pose(curve, s), joints))
        out: dict[str, float] = {}
        for j in joints:
            target = self._targets.get(j)
            if target is None:
                continue
            start = self._start.get(j, target)
            if self._finished or wait <= 0.0:
                f = 1.0
            else:
                f = min(max(abs(self._scales.get(j, 1.0)) * elapsed / wait, 0.0), 1.0)
            value = self._clamp(j, _lerp(start, target, f))
            if value is not None:
                out[j] = value
        return out


class SkillRegistry(Mapping[str, Skill[float]]):
    """Resolved skills by name; adding a name twice is an error.

    A registry made by :func:`load_registry` keeps its parsed files and parameters, so that
    :meth:`player` can start a skill with some ``$parameters`` overridden (e.g. a kick's strength).
    """

    def __init__(self, skills: Iterable[Skill[float]] = ()) -> None:
        self._skills: dict[str, Skill[float]] = {}
        self._files: tuple[SkillFile, ...] = ()
        self._params: dict[str, float] = {}
        self._overridden: dict[tuple[str, tuple[tuple[str, float], ...]], Skill[float]] = {}
        for skill in skills:
            self.add(skill)

    def param(self, name: str, default: float) -> float:
        """The value of ``$name`` the skills were resolved with (``default`` if no parameter file sets it)."""
        return self._params.get(name, default)

    def played(self, name: str) -> str:
        """The skill played for ``name``: its variant ``<NAME>_FAST`` where ``$<name>_fast`` is 1 and it exists.

        One skill file serves every type, so a type that gets up another way (e.g. type 0's fast back
        get-up, docs/getup.md session 37) names that skill's variant in its parameter file.
        """
        fast = f'{name}_FAST'
        return fast if fast in self._skills and self.param(f'{name.lower()}_fast', 0.0) > 0.0 else name

    def add(self, skill: Skill[float]) -> Skill[float]:
        """Register ``skill``.

        Raises:
            ValueError: if a skill of that name is registered already.
        """
        if skill.name in self._skills:
            old = self._skills[skill.name]
            raise ValueError(f'skill {skill.name} is already registered (from {old.source}; again from {skill.source})')
        self._skills[skill.name] = skill
        return skill

    def player(
        self,
        name: str,
        robot: RobotSpec | None = None,
        solver: LegSolver | None = None,
        overrides: Mapping[str, float] | None = None,
    ) -> SkillPlayer:
        """A new player for the skill called ``name``.

        ``overrides``: ``$parameter`` values that replace the registry's for this player only,
        e.g. ``{'kick_strength': 0.6}``.

        Raises:
            KeyError: no skill ``name``.
            ValueError: an override names a parameter that none of the registry's files uses, or
                is not a finite number, or the registry was not made by :func:`load_registry`.
        """
        if name not in self._skills:
            raise KeyError(f'no skill {name!r}; known: {sorted(self._skills)}')
        if not overrides:
            return SkillPlayer(self._skills[name], robot, solver)
        return SkillPlayer(self.with_overrides(name, overrides), robot, solver)

    def with_overrides(self, name: str, overrides: Mapping[str, float]) -> Skill[float]:
        """The skill ``name`` resolved again with ``overrides`` replacing parameters (cached)."""
        if not self._files:
            raise ValueError('this registry has no skill files to resolve again (use load_registry)')
        known = frozenset().union(*(f.parameters() for f in self._files))
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f'unknown skill parameter(s) {unknown}; the skill files use {sorted(known)}')
        values = {k: float(v) for k, v in overrides.items()}
        if not all(math.isfinite(v) for v in values.values()):
            raise ValueError(f'override values must be finite numbers, got {dict(overrides)}')
        key = (name, tuple(sorted(values.items())))
        skill = self._overridden.get(key)
        if skill is None:
            if len(self._overridden) >= 256:
                self._overridden.clear()
            skill = resolve_files(self._files, {**self._params, **values})[name]
            self._overridden[key] = skill
        return skill

    def __getitem__(self, name: str) -> Skill[float]:
        return self._skills[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._skills)

    def __len__(self) -> int:
        return len(self._skills)


def load_registry(paths: Iterable[str | Path], params: Mapping[str, float] | None = None) -> SkillRegistry:
    """Parse ``.skl`` files (in order), resolve them against ``params`` and register every skill.

    A directory stands for its ``*.skl`` files in name order.
    """
    files = []
    for path in paths:
        path = Path(path)
        found = sorted(path.glob('*.skl')) if path.is_dir() else [path]
        files += [load_skill_file(p) for p in found]
    registry = SkillRegistry(resolve_files(files, params or {}).values())
    registry._files, registry._params = tuple(files), dict(params or {})
    return registry


def load_nao_registry(robot_type: int, extra_params: Iterable[str | Path] = ()) -> SkillRegistry:
    """The shipped Nao skills (``data/*.skl``, ``data/nao/*.skl``) resolved for heterogeneous ``robot_type``.

    Parameters come from ``data/nao/defaultParams.txt``, then ``defaultParams_t<robot_type>.txt``,
    then ``extra_params`` (a later file overrides an earlier one).
    """
    params = load_type_params(DATA_DIR / 'nao', robot_type, extra_params)
    return load_registry([DATA_DIR, DATA_DIR / 'nao'], params)
