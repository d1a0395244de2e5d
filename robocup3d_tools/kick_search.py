"""The kick tasks of ``robocup3d optimize``: a kick skill's values as a search vector, a candidate as a skill file.

The search space is data (``config/optimize.yaml``, section ``kick``), built by the same code as the
get-ups' (:mod:`robocup3d_tools.getup_search`):

* Nao (rcssserver3d): ``$parameters`` of ``kick_<long|quick>.skl``, listed or chosen by their
  prefix (``{prefix: kl_}``), bounded by their kind (the name's last ``_`` part); a candidate is a
  parameter file the player reads after the shipped ones;
* T1/K1 (RCSSServerMJ): ``FRAME.t`` and ``FRAME.JOINT`` of ``kick_<long|quick>.yaml`` (the
  right-foot kick; the left one is its mirror image, so it follows); a candidate is a whole skill
  file that replaces the shipped one (with its mirror).

Each candidate runs :mod:`robocup3d_tools.kick_tasks` in a process of its own (its own server and
player) and scores :func:`~robocup3d_tools.kick_tasks.kick_score` over its trials: minus the
distance along the wanted direction, plus penalties for falls, touching the ball before the swing,
backward or missed kicks and angle errors (as UT Austin Villa's kick optimization). How the trials
run (ball scatter, a walk before each kick, the wanted direction) and the fall penalty are a
:class:`KickTrials`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from robocup3d_bridge.config_files import ConfigError
from robocup3d_motion.getup import DATA_DIR
from robocup3d_motion.skills.params import load_type_params
from robocup3d_tools.getup_search import SkillSpace, keyframe_space, nao_space, run_task
from robocup3d_tools.kick_tasks import FALL_PENALTY, kick_score
from robocup3d_tools.optimize_config import load_optimize_config

__all__ = ['KICK_TASKS', 'KickTrials', 'kick_score', 'kick_space', 'run_kick_candidate']

KICK_TASKS = ('kick-long', 'kick-quick')


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
) -> SkillSpace:
    """The search space of ``task`` for ``robot`` (``nao`` on rcssserver3d), from ``config``."""
    if task not in KICK_TASKS:
        raise ConfigError(f'unknown kick task {task!r}; tasks: {", ".join(KICK_TASKS)}')
    kick = task.removeprefix('kick-')
    model = load_optimize_config(config).kick.get(robot)
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
    return run_task('robocup3d_tools.kick_tasks', args, skill_file, domain, timeout, 'kicks')
