"""The dribble task of ``robocup3d optimize``: the dribble's values of ``config/kicks.yaml`` as a search vector.

A candidate is a whole kicks file (the player's ``--kicks-config``) whose ``robots.<robot>.dribble`` holds its
values: where the ball sits before the feet (``ball_x``, ``ball_y``), the walk's ``speed`` through it, and how far
the ball may stray ``lateral``-ly or ``ahead`` before the robot lines up again; each within its bound in
``config/optimize.yaml`` (``dribble.<robot>.bounds``), the search over ``dribble.<robot>.values``.

Each candidate's trials run in a process of their own (``python -m robocup3d_tools.dribble_search``, its own
server and player): the robot stands 1 m behind the ball, up to 0.3 m aside and turned up to 30 degrees (seeded),
and is asked to dribble it to a target ``--distance`` m beyond, for up to 6 s a metre plus 15 s of server time.
:func:`dribble_score` scores them as issue #20's dribble bench measures a dribble (lower is better): minus the
ball's mean speed towards the target from its first touch, plus :data:`FALL_COST` per fall and
:data:`APART_COST` per metre the ball got further than 1 m from the robot.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from robocup3d_bridge.config_files import ConfigError, config_path
from robocup3d_tools.getup_search import run_task
from robocup3d_tools.kick_search import KicksFileSpace
from robocup3d_tools.optimize_config import load_optimize_config

__all__ = ['DRIBBLE_TASKS', 'DribbleSpace', 'dribble_score', 'dribble_space', 'run_dribble_candidate']

DRIBBLE_TASKS = ('dribble',)
#: the searchable values and where they live in a robot's ``dribble`` entry (a key, or the ball spot's index)
VALUES = {'ball_x': ('ball', 0), 'ball_y': ('ball', 1), 'speed': 'speed', 'lateral': 'lateral', 'ahead': 'ahead'}
FALL_COST = 0.1  # m/s of speed a fall costs (the bar: 0.4 m/s and no fall)
APART_COST = 0.1  # m/s per metre the ball got beyond 1 m from the robot (the bar: never more than 1 m)


@dataclass(frozen=True)
class DribbleSpace(KicksFileSpace):
    """The searched dribble values of one robot (``config/kicks.yaml``, ``robots.<robot>.dribble``)."""

    def write(self, x: Sequence[float], path: Path, comment: str = '') -> Path:
        """The candidate ``x`` as a whole kicks file (``--kicks-config``)."""
        doc = copy.deepcopy(self.doc)
        dribble = doc['robots'][self.robot]['dribble']
        for n, v in self.values(x).items():
            where = VALUES[n]
            if isinstance(where, tuple):
                dribble[where[0]][where[1]] = v
            else:
                dribble[where] = v
        head = ''.join(f'# {line}\n' for line in comment.splitlines())
        path = path.with_suffix('.yaml')
        path.write_text(head + yaml.safe_dump(doc, sort_keys=False), encoding='utf-8')
        return path


def dribble_space(
    robot: str, names: Sequence[str] = (), config: str = 'optimize.yaml', kicks: str = 'kicks.yaml'
) -> DribbleSpace:
    """The dribble of ``robot`` (``nao`` on rcssserver3d) in ``kicks``, its ``names`` (default: the space's
    ``values``) within the bounds of ``config``."""
    space = load_optimize_config(config).dribble.get(robot)
    if space is None:
        raise ConfigError(f'{config}: no dribble search space for {robot} (dribble.{robot})')
    names = tuple(names) or tuple(space.values)
    path = config_path(kicks)
    doc = yaml.safe_load(path.read_text(encoding='utf-8'))
    dribble = ((doc.get('robots') or {}).get(robot) or {}).get('dribble')
    if not isinstance(dribble, dict):
        raise ConfigError(f'{path.name}: {robot} has no dribble to search')
    start, lo, hi = [], [], []
    for n in names:
        if n not in VALUES:
            raise ConfigError(f'{n}: not a dribble value; known: {", ".join(VALUES)}')
        if n not in space.bounds:
            raise ConfigError(f'{config}: dribble.{robot}.bounds has no range for {n}')
        where = VALUES[n]
        value = dribble[where[0]][where[1]] if isinstance(where, tuple) else dribble.get(where)
        a, b = space.bounds[n]
        start.append(min(max(float(value), a), b) if value is not None else 0.5 * (a + b))
        lo.append(float(a))
        hi.append(float(b))
    return DribbleSpace(robot, names, tuple(start), tuple(lo), tuple(hi), doc)


def dribble_score(result: dict) -> float:
    """A candidate's score from its trials (lower is better; see the module doc); a failed run scores 1."""
    runs = result.get('dribbles') or []
    return statistics.mean(_trial_cost(r) for r in runs) if runs else 1.0


def _trial_cost(r: dict) -> float:
    apart = r['max_apart_m']  # NaN: the ball never moved
    beyond = 0.0 if apart is None or math.isnan(apart) else max(0.0, apart - 1.0)
    return -r['speed_mps'] + FALL_COST * r['falls'] + APART_COST * beyond


def run_dribble_candidate(
    kicks_file: Path, server: str, robot: str, robot_type: int, trials: int, seed: int, domain: int, distance: float
) -> dict:
    """Run a candidate's dribbles in a process of its own; its JSON result, or ``{'error': ...}``."""
    args = ['--server', server, '--robot', robot, '--type', str(robot_type), '--trials', str(trials)]
    args += ['--seed', str(seed), '--distance', str(distance)]
    timeout = 120 + trials * (6.0 * distance + 40.0)
    return run_task('robocup3d_tools.dribble_search', args, kicks_file, domain, timeout, 'dribbles', '--kicks-config')


def _trials(args: argparse.Namespace) -> dict:
    # late: the search process itself needs no ROS, only the candidate's
    from robocup3d_motion.requests import Dribble  # noqa: PLC0415
    from robocup3d_tools.ball_tasks import dribble_figures, place_ball, run_request  # noqa: PLC0415
    from robocup3d_tools.sim_session import SimSession  # noqa: PLC0415

    rng = random.Random(args.seed)
    rows = []
    player_args = ('--world-model', *(['--kicks-config', args.kicks_config] if args.kicks_config else []))
    with SimSession(args.robot, server=args.server, robot_type=args.robot_type, player_args=player_args) as s:
        for i in range(args.trials):
            y = 1.5 * (i % 3 - 1)
            aside, turn = rng.uniform(-0.3, 0.3), math.radians(rng.uniform(-30.0, 30.0))
            s.place(-6.0, y + aside, turn)
            place_ball(s, -5.0, y)
            target = (-5.0 + args.distance, y)
            run = run_request(s, Dribble(target=target, id=i + 1), 6.0 * args.distance + 15.0)
            rows.append(dribble_figures(run, target))
    speeds = [r['speed_mps'] for r in rows]
    return {'dribbles': rows, 'speed_mean': round(statistics.mean(speeds), 3), 'falls': sum(r['falls'] for r in rows)}


def main(argv: list[str] | None = None) -> int:
    """One candidate's dribbles on a fresh server and player, printed as one JSON line."""
    from robocup3d_tools.servers import end_with_parent  # noqa: PLC0415

    ap = argparse.ArgumentParser(description='dribbles from 1 m behind the ball, scored from ground truth')
    ap.add_argument('--server', choices=('mujoco', 'simspark'), default='mujoco')
    ap.add_argument('--robot', default='T1')
    ap.add_argument('--type', dest='robot_type', type=int, default=0)
    ap.add_argument('--trials', type=int, default=3)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--distance', type=float, default=5.0, help='m from the ball to the target')
    ap.add_argument('--kicks-config', default='', help='the kicks file the player reads (default: shipped)')
    args = ap.parse_args(argv)
    end_with_parent()
    print(json.dumps(_trials(args)))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
