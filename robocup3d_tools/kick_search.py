"""The kick tasks of ``robocup3d optimize``: a kick skill's values as a search vector, a candidate as a skill file.

The search space is data (``config/optimize.yaml``, section ``kick``), built by the same code as the
get-ups' (:mod:`robocup3d_tools.getup_search`):

* Nao (rcssserver3d): ``$parameters`` of ``kick_<long|quick>.skl``, listed or chosen by their
  prefix (``{prefix: kl_}``), bounded by their kind (the name's last ``_`` part); a candidate is a
  parameter file the player reads after the shipped ones;
* T1/K1 (RCSSServerMJ): ``FRAME.t`` and ``FRAME.JOINT`` of ``kick_<long|quick>.yaml`` (the
  right-foot kick; the left one is its mirror image, so it follows); a candidate is a whole skill
  file that replaces the shipped one (with its mirror);
* the in-walk kick (``kick-walk``, T1/K1/Nao): the swing and walk-up values of ``config/kicks.yaml``'s
  ``walk`` kick (:class:`WalkKickSpace`), each within its ``bounds``; a candidate is a whole kicks
  file the player reads (``--kicks-config``), and its trials are walk-ups from 0.8-1.4 m.

Each candidate runs :mod:`robocup3d_tools.kick_tasks` in a process of its own (its own server and
player) and scores :func:`~robocup3d_tools.kick_tasks.kick_score` over its trials: minus the
distance along the wanted direction, plus penalties for falls, touching the ball before the swing,
backward or missed kicks and angle errors (as UT Austin Villa's kick optimization). How the trials
run (ball scatter, a walk before each kick, the wanted direction) and the fall penalty are a
:class:`KickTrials`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from robocup3d_bridge.config_files import ConfigError, config_path
from robocup3d_motion.getup import DATA_DIR
from robocup3d_motion.skills.params import load_type_params
from robocup3d_tools.getup_search import SkillSpace, keyframe_space, nao_space, run_task
from robocup3d_tools.kick_tasks import FALL_PENALTY, kick_score
from robocup3d_tools.optimize_config import load_optimize_config

__all__ = [
    'KICK_TASKS',
    'KickTrials',
    'KicksFileSpace',
    'WalkKickSpace',
    'kick_score',
    'kick_space',
    'run_kick_candidate',
    'walk_kick_space',
]

KICK_TASKS = ('kick-long', 'kick-quick', 'kick-walk')
#: the in-walk kick's searchable values and where they live in its ``kicks.yaml`` entry
WALK_VALUES = {
    **{n: ('walk', n) for n in ('reach', 'back', 'at', 'lift', 'slow', 'land', 'sway', 'speed')},
    'ball_x': ('ball', 0),
    'ball_y': ('ball', 1),
    'near': ('window', 0),
    'far': ('window', 1),
    'angle_deg': ('kick', 'angle_deg'),
}


@dataclass(frozen=True)
class KicksFileSpace:
    """Searched values of a robot's entry in ``config/kicks.yaml``, each within [lo, hi]; a candidate is the whole
    file with them (the search vector scales each to [0, 1])."""

    robot: str
    names: tuple[str, ...]
    start: tuple[float, ...]
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    doc: dict  # the whole kicks file

    def x0(self) -> list[float]:
        return [(s - a) / (b - a) for s, a, b in zip(self.start, self.lo, self.hi, strict=True)]

    def values(self, x: Sequence[float]) -> dict[str, float]:
        return {
            n: round(a + (b - a) * min(1.0, max(0.0, float(xi))), 4)
            for n, xi, a, b in zip(self.names, x, self.lo, self.hi, strict=True)
        }


@dataclass(frozen=True)
class WalkKickSpace(KicksFileSpace):
    """The searched values of a robot's in-walk kick (``config/kicks.yaml``, ``robots.<robot>.kicks.walk``)."""

    skill = 'walk'

    def write(self, x: Sequence[float], path: Path, comment: str = '') -> Path:
        """The candidate ``x`` as a whole kicks file (``--kicks-config``)."""
        doc = copy.deepcopy(self.doc)
        kick = doc['robots'][self.robot]['kicks']['walk']
        for n, v in self.values(x).items():
            where, key = WALK_VALUES[n]
            if where == 'walk':
                kick['walk'][key] = v
            elif where == 'ball':
                kick['ball'][key] = v
            elif where == 'kick':
                kick[key] = v
            else:
                window = kick['walk'].setdefault('window', [0.0, 1.0])
                window[key] = v
        window = kick['walk'].get('window')
        if window and window[0] >= window[1]:  # an empty window: the far end just beyond the near one
            window[1] = round(window[0] + 0.01, 4)
        head = ''.join(f'# {line}\n' for line in comment.splitlines())
        path = path.with_suffix('.yaml')
        path.write_text(head + yaml.safe_dump(doc, sort_keys=False), encoding='utf-8')
        return path


def walk_kick_space(robot: str, names: Sequence[str], space: dict, kicks: str = 'kicks.yaml') -> WalkKickSpace:
    """The in-walk kick of ``robot`` in ``kicks`` (the shipped file), its ``names`` within ``space['bounds']``."""
    path = config_path(kicks)
    doc = yaml.safe_load(path.read_text(encoding='utf-8'))
    kick = ((doc.get('robots') or {}).get(robot) or {}).get('kicks', {}).get('walk')
    if not kick or not isinstance(kick.get('walk'), dict):
        raise ConfigError(f'{path.name}: {robot} has no in-walk kick (kicks.walk with a walk: swing) to search')
    bounds = space.get('bounds', {})
    start, lo, hi = [], [], []
    for n in names:
        if n not in WALK_VALUES:
            raise ConfigError(f'{n}: not an in-walk kick value; known: {", ".join(WALK_VALUES)}')
        if n not in bounds:
            raise ConfigError(f'kick.{robot}.bounds has no range for {n}')
        where, key = WALK_VALUES[n]
        if where in ('walk', 'kick'):
            value = (kick['walk'] if where == 'walk' else kick).get(key)
        else:
            pair = kick['ball'] if where == 'ball' else kick['walk'].get('window')
            value = pair[key] if pair else None
        a, b = bounds[n]
        v = float(value) if value is not None else 0.5 * (a + b)
        start.append(min(max(v, a), b))
        lo.append(float(a))
        hi.append(float(b))
    return WalkKickSpace(robot, tuple(names), tuple(start), tuple(lo), tuple(hi), doc)


@dataclass(frozen=True)
class KickTrials:
    """How a kick candidate's trials run (the options of :mod:`robocup3d_tools.kick_tasks`) and are scored."""

    noise: float = 0.0  # m: the ball within +-noise of its spot in x and y
    walk_in: float = 0.0  # s the robot walks forward and stops before each kick (0: from a stand)
    direction: float = 0.0  # deg left of the heading: the wanted direction
    fall_penalty: float = FALL_PENALTY  # m added to a kick's score for a fall or not standing afterwards
    fall_grace: float = 0.0  # m off a fall's penalty per s the robot stood before it (kick_tasks.trial_score)

    def score(self, result: dict) -> float:
        """The candidate's score (lower is better): :func:`kick_score` with this fall penalty and grace."""
        return kick_score(result, self.fall_penalty, self.fall_grace)

    def args(self) -> list[str]:
        """The kick_tasks options that run trials this way."""
        return ['--noise', str(self.noise), '--walk-in', str(self.walk_in), '--direction', str(self.direction)]


def kick_space(
    task: str, robot: str, robot_type: int = 0, names: Sequence[str] = (), config: str = 'optimize.yaml'
) -> SkillSpace | WalkKickSpace:
    """The search space of ``task`` for ``robot`` (``nao`` on rcssserver3d), from ``config``."""
    if task not in KICK_TASKS:
        raise ConfigError(f'unknown kick task {task!r}; tasks: {", ".join(KICK_TASKS)}')
    kick = task.removeprefix('kick-')
    model = load_optimize_config(config).kick.get(robot)
    if kick == 'walk':
        walk_space = model.model_dump() if model is not None else {}
        if not (names or walk_space.get('walk')):
            raise ConfigError(f'{config}: no in-walk kick search space for {robot} (kick.{robot}.walk)')
        return walk_kick_space(robot, tuple(names) or tuple(walk_space['walk']), walk_space)
    space = model.model_dump() if model is not None else {}
    if not space.get(kick):
        raise ConfigError(f'{config}: no kick search space for {robot} {kick} (kick.{robot}.{kick})')
    listed = space[kick]
    if not names and isinstance(listed, dict) and 'prefix' in listed:
        if robot != 'nao':
            raise ConfigError(f'{config}: kick.{robot}.{kick}: a prefix selects Nao $parameters only')
        params = load_type_params(DATA_DIR / 'nao', robot_type)
        names = sorted(n for n in params if n.startswith(str(listed['prefix'])))
        if not names:
            raise ConfigError(f'no Nao $parameters start with {listed["prefix"]!r} (is kick_{kick}.skl shipped?)')
    names = tuple(names) or tuple(listed)
    if robot == 'nao':
        return nao_space(kick, robot_type, names, space)
    path = DATA_DIR / robot / f'kick_{kick}.yaml'
    if not path.is_file():
        raise ConfigError(f'{robot} has no {path.name} to search')
    return keyframe_space(robot, kick, path, names, space)


def run_kick_candidate(
    skill_file: Path,
    task: str,
    server: str,
    robot: str,
    robot_type: int,
    trials: int,
    seed: int,
    domain: int,
    how: KickTrials = KickTrials(),
) -> dict:
    """Run a candidate's kicks in a process of its own (``how``: see :class:`KickTrials`); its JSON
    result, or ``{'error': ...}``."""
    args = ['--server', server, '--robot', robot, '--type', str(robot_type), '--kick', task.removeprefix('kick-')]
    args += ['--trials', str(trials), '--seed', str(seed), *how.args()]
    timeout = 120 + trials * (40 + 5 * how.walk_in)
    flag = '--kicks-config' if task == 'kick-walk' else '--skill-params'
    return run_task('robocup3d_tools.kick_tasks', args, skill_file, domain, timeout, 'kicks', flag)
