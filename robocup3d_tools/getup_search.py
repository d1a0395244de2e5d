"""The get-up tasks of ``robocup3d optimize``: a skill's values as a search vector, a candidate as a skill file.

The search space is data (``config/optimize.yaml``, section ``getup``):

* Nao (rcssserver3d): ``$parameters`` of ``getup_<front|back>.skl``; a candidate is a parameter
  file the player reads after the shipped ones (``robocup3d player --skill-params FILE``);
* T1/K1 (RCSSServerMJ): ``FRAME.t`` and ``FRAME.JOINT`` of the YAML keyframe skill, and ``kp.JOINT``,
  the skill's own PD gain of a joint while it plays (its ``kp:`` map; N m/rad); a candidate is a whole
  skill file that replaces the shipped one of its name (same option).

A vector holds one value in [0, 1] per searched name; 0.5 is the shipped value (Nao: clipped to
the bounds of its kind). Each candidate runs :mod:`robocup3d_tools.getup_tasks` in a process of its
own (its own server and player) and scores the mean of its trials: the time to upright, or
:data:`FAIL_S` for a failure, plus :data:`REFALL_S` for a fall within 2 s of standing.
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from robocup3d_bridge.config_files import ConfigError, load_config
from robocup3d_description.robots import robot_spec
from robocup3d_motion.getup import DATA_DIR
from robocup3d_motion.joint_control import control_settings
from robocup3d_motion.skills.params import load_type_params
from robocup3d_tools.optimize_config import load_optimize_config

__all__ = [
    'FAIL_S',
    'GETUP_TASKS',
    'GETUP_UNTIL',
    'GetupSpace',
    'SkillSpace',
    'getup_score',
    'getup_space',
    'keyframe_space',
    'nao_space',
    'run_candidate',
    'run_task',
]

GETUP_TASKS = ('getup-front', 'getup-back', 'getup-side')
FAIL_S = 20.0  # s a failed trial scores (twice the timeout)
REFALL_S = 5.0  # s added for a fall within 2 s of standing


def _skill_of(task: str) -> str:
    """The skill a get-up task tunes: side falls end in the back get-up (the Nao's GETUP_SIDE hands over to it)."""
    return 'front' if task == 'getup-front' else 'back'


@dataclass(frozen=True)
class SkillSpace:
    """The searched values of one skill (a get-up, a kick), their shipped values and their ranges."""

    robot: str  # 'nao', 'T1' or 'K1'
    skill: str  # get-ups: 'front' or 'back'; kicks: 'long' or 'quick'
    names: tuple[str, ...]
    start: tuple[float, ...]
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    doc: dict  # Nao: all parameters; T1/K1: the shipped skill file's YAML
    mirror: dict

    def x0(self) -> list[float]:
        return [(s - a) / (b - a) for s, a, b in zip(self.start, self.lo, self.hi, strict=True)]

    def values(self, x: Sequence[float]) -> dict[str, float]:
        out = {}
        for n, xi, a, b in zip(self.names, x, self.lo, self.hi, strict=True):
            v = a + (b - a) * min(1.0, max(0.0, float(xi)))
            out[n] = (
                round(v, 4) if n.endswith(('_x', '_y')) else round(v, 3) if n.endswith(('wait', '.t')) else round(v, 1)
            )
        return out

    def write(self, x: Sequence[float], path: Path, comment: str = '') -> Path:
        """The candidate ``x`` as a file the player loads (``--skill-params``)."""
        values = self.values(x)
        head = ''.join(f'# {line}\n' for line in comment.splitlines())
        if self.robot == 'nao':
            path = path.with_suffix('.txt')
            path.write_text(head + ''.join(f'{n}\t{v}\n' for n, v in values.items()), encoding='utf-8')
            return path
        doc = copy.deepcopy(self.doc)
        for n, v in values.items():
            gain = _gain_name(n)
            if gain is not None:  # the skill's or a frame's own gain; a twin gets the same
                at, key = gain
                gains = (doc if at is None else doc['frames'][at]).setdefault('kp', {})
                gains[key] = v
                if key in self.mirror:
                    gains[self.mirror[key][0]] = v
                continue
            frame, key, solo = _joint_name(n)
            entry = doc['frames'][int(frame)]
            if key == 't':
                entry['t'] = max(0.02, v)
                continue
            entry['q'][key] = v
            if key in self.mirror and not solo:  # the robot is symmetric: the twin's range is the mirror image
                twin, sign = self.mirror[key]
                entry['q'][twin] = round(sign * v, 1)
        path = path.with_suffix('.yaml')
        path.write_text(head + yaml.safe_dump(doc, sort_keys=False), encoding='utf-8')
        return path


GetupSpace = SkillSpace  # the name it had when only get-ups were searched


SOLO = '.solo'  # FRAME.JOINT.solo: the joint alone in that frame, without its mirror twin


def _joint_name(name: str) -> tuple[str, str, bool]:
    """``FRAME.KEY`` -> (FRAME, KEY, False); ``FRAME.JOINT.solo`` -> (FRAME, JOINT, True): a left joint that
    does not carry its right twin (an asymmetric frame, such as the T1 front get-up's roll)."""
    frame, _, key = name.partition('.')
    if key.endswith(SOLO):
        return frame, key.removesuffix(SOLO), True
    return frame, key, False


def _gain_name(name: str) -> tuple[int | None, str] | None:
    """``kp.JOINT`` -> (None, JOINT) (the skill's gain), ``FRAME.kp.JOINT`` -> (FRAME, JOINT), else None."""
    parts = name.split('.')
    if len(parts) == 2 and parts[0] == 'kp':
        return None, parts[1]
    if len(parts) == 3 and parts[1] == 'kp' and parts[0].isdigit():
        return int(parts[0]), parts[2]
    return None


def getup_space(
    task: str, robot: str, robot_type: int = 0, names: Sequence[str] = (), config: str = 'optimize.yaml'
) -> GetupSpace:
    """The search space of ``task`` for ``robot`` (``nao`` on rcssserver3d), from ``config``."""
    if task not in GETUP_TASKS:
        raise ConfigError(f'unknown get-up task {task!r}; tasks: {", ".join(GETUP_TASKS)}')
    skill = _skill_of(task)
    model = load_optimize_config(config).getup.get(robot)
    space = model.model_dump() if model is not None else {}
    if not space.get(skill):
        raise ConfigError(f'{config}: no getup search space for {robot} {skill} (getup.{robot}.{skill})')
    names = tuple(names) or tuple(space[skill])
    if robot == 'nao':
        return nao_space(skill, robot_type, names, space)
    return keyframe_space(robot, skill, DATA_DIR / robot / f'getup_{skill}.yaml', names, space)


def nao_space(skill: str, robot_type: int, names: Sequence[str], space: dict) -> SkillSpace:
    """A Nao skill's ``$parameters`` ``names``: each bounded by its kind (the name's last ``_`` part,
    ``space['bounds']``) and moving by up to two steps of its kind (``space['step']``), a wait down
    to its bound."""
    step = space.get('step', {})
    params = load_type_params(DATA_DIR / 'nao', robot_type)
    bounds = space.get('bounds', {})
    unknown = [n for n in names if n not in params]
    if unknown:
        raise ConfigError(f'not $parameters of the Nao skills: {unknown}')
    lo, hi, start = [], [], []
    for n in names:
        kind = n.rsplit('_', 1)[1]
        a, b = bounds.get(kind, (-math.inf, math.inf))
        d = float(step.get(kind, step.get('default', 10.0))) * 2.0
        v = min(max(params[n], a), b)
        start.append(v)
        lo.append(a if kind == 'wait' else max(a, v - d))  # a wait may shrink all the way: that is the point
        hi.append(min(b, v + d))
    return SkillSpace('nao', skill, tuple(names), tuple(start), tuple(lo), tuple(hi), params, {})


def keyframe_space(robot: str, skill: str, path: Path, names: Sequence[str], space: dict) -> SkillSpace:
    """A T1/K1 YAML keyframe skill's ``FRAME.t``/``FRAME.JOINT``/``kp.JOINT`` ``names``: each within +-step of
    the file's value (``space['step']``: by the name itself, else by ``t``, ``kp`` or the joint, else ``default``)
    and the joint's range, a ``t`` within ``space['t_scale']`` times the file's if given; a gain, ``kp.JOINT`` (the
    skill's) or ``FRAME.kp.JOINT`` (from that frame on), starts from the one in force there (the file's, else the
    robot's own in ``robots.yaml``) and stays within ``space['kp_scale']`` times the robot's own if given;
    ``space['mirror']`` couples twins: a left joint carries its right twin, unless named ``FRAME.JOINT.solo`` (then
    it moves alone in that frame, and its twin may be named on its own too)."""
    step = space.get('step', {})
    doc = yaml.safe_load(path.read_text(encoding='utf-8'))
    frames = doc['frames']
    joints = robot_spec('mujoco', robot).by_name
    robot_kp = control_settings(robot_spec('mujoco', robot), load_config('robots.yaml')).kp
    start = []
    for n in names:
        frame, key, solo = _joint_name(n)
        gain = _gain_name(n)
        if gain is not None:
            at, key = gain
            if key not in joints:
                raise ConfigError(f'{n}: {robot} has no joint {key}')
            if at is not None and at >= len(frames):
                raise ConfigError(f'{n}: {path.name} has frames 0-{len(frames) - 1}')
            value = (doc.get('kp') or {}).get(key, robot_kp[key])
            for entry in frames[: 0 if at is None else at + 1]:  # the gain in force at that frame
                value = (entry.get('kp') or {}).get(key, value)
            start.append(float(value))
            continue
        if not frame.isdigit() or int(frame) >= len(frames):
            raise ConfigError(f'{n}: {path.name} has frames 0-{len(frames) - 1}')
        entry = frames[int(frame)]
        value = entry.get('t') if key == 't' else entry.get('q', {}).get(key)
        if value is None or (solo and key == 't'):
            raise ConfigError(f'{n}: frame {frame} of {path.name} does not move {key}')
        start.append(float(value))
    t_scale, kp_scale = space.get('t_scale'), space.get('kp_scale')
    lo, hi = [], []
    for n, v in zip(names, start, strict=True):  # within the joint's range (deg, rounded inwards)
        gain = _gain_name(n)
        key = _joint_name(n)[1] if gain is None else gain[1]
        if gain is not None:  # a gain: within kp_scale of the robot's own (and taking in the file's), else +-step
            if kp_scale:
                lo.append(min(v, round(robot_kp[key] * kp_scale[0], 1)))
                hi.append(max(v, round(robot_kp[key] * kp_scale[1], 1)))
            else:
                d = float(step.get(n, step.get('kp', step.get('default', 10.0))))
                lo.append(max(1.0, v - d))
                hi.append(v + d)
            continue
        d = float(step.get(n, step.get(key, step.get('default', 10.0))))
        j = joints.get(key)
        a, b = (
            (0.02, math.inf)
            if j is None
            else (math.ceil(math.degrees(j.lower) * 10) / 10, math.floor(math.degrees(j.upper) * 10) / 10)
        )
        if key == 't' and t_scale:  # durations scale: a 1.6 s rise may halve, a 0.05 s kick stays short
            lo.append(max(a, round(v * t_scale[0], 3)))
            hi.append(max(lo[-1] + 0.01, round(v * t_scale[1], 3)))
            continue
        lo.append(max(a, v - d))
        hi.append(min(b, v + d))
    mirror = {k: (v[0], int(v[1])) for k, v in (space.get('mirror') or {}).items()}
    return SkillSpace(robot, skill, tuple(names), tuple(start), tuple(lo), tuple(hi), doc, mirror)


GETUP_UNTIL = ('stand', 'upright')


def getup_score(result: dict, until: str = 'stand') -> float:
    """Lower is better: the mean over trials of the time to upright (:data:`FAIL_S` a failure), plus refalls.

    ``until``: ``stand`` times to standing with the get-up over (``times``), ``upright`` to the torso up in the
    stretch that ended so, the get-up maybe still playing (``upright_times``, as the bench counts)."""
    if 'error' in result:
        return FAIL_S + REFALL_S
    counted = result['trials'] - result['not_knocked']
    if counted <= 0:
        return FAIL_S + REFALL_S
    times = result['upright_times'] if until == 'upright' else result['times']
    failures = counted - len(times)
    return (sum(times) + FAIL_S * failures + REFALL_S * result['refalls']) / counted


def run_task(
    module: str, args: list[str], skill_file: Path, domain: int, timeout: float, key: str, flag: str = '--skill-params'
) -> dict:
    """Run ``python -m module args --skill-params skill_file`` (or another ``flag``) in ROS ``domain``; the last
    JSON line of its output holding ``key``, or ``{'error': ...}``."""
    cmd = [sys.executable, '-m', module, *args, flag, str(skill_file)]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {'error': f'TimeoutExpired after {timeout} s'}
    for line in reversed(out.stdout.splitlines()):
        try:
            result = json.loads(line)
        except ValueError:
            continue
        if isinstance(result, dict) and key in result:
            return result
    return {'error': f'exit {out.returncode}: {out.stderr.strip().splitlines()[-1:]}'}


def run_candidate(
    skill_file: Path, task: str, server: str, robot: str, robot_type: int, trials: int, seed: int, domain: int
) -> dict:
    """Run a candidate's trials in a process of its own; its JSON result, or ``{'error': ...}``."""
    direction = task.removeprefix('getup-')
    args = ['--server', server, '--robot', robot, '--type', str(robot_type), '--direction', direction]
    args += ['--trials', str(trials), '--seed', str(seed)]
    return run_task('robocup3d_tools.getup_tasks', args, skill_file, domain, 120 + trials * 30, 'times')
