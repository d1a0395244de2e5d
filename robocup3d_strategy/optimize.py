"""``robocup3d optimize``: tune walk parameters with CMA-ES on the real server.

Each candidate parameter set is written as a walk file and evaluated by a separate
process (``python -m robocup3d_strategy.walk_tasks``: its own RCSSServerMJ in sync
mode running as fast as it goes, the real player process, ground truth from the
server); ``--workers`` candidates run side by side, each in its own ROS domain. The
score is the task's speed from standstill, with penalties for a fall (and how early
it came), sideways drift and heading drift. The best set so far is written to
``--out`` after every generation, as a walk file the player loads
(``robocup3d player --walk-config FILE``) or whose values go into ``config/walk.yaml``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path

import yaml

from robocup3d_bridge.config_files import ConfigError, load_config
from robocup3d_motion.walk import ANGLE_PARAMS, WalkParams, walk_sets

__all__ = ['SEARCH_SPACE', 'decode', 'encode', 'main', 'optimize', 'score', 'write_walk_file']

#: Parameters searched and their ranges. Lengths scale with the robot (relative to the
#: starting set: ('rel', lo, hi) multiplies it); the rest are absolute (angles in rad).
SEARCH_SPACE: dict[str, tuple[str, float, float]] = {
    'period': ('abs', 0.18, 0.5),
    'sole_z': ('rel', 0.85, 1.1),
    'sole_x': ('abs', -0.04, 0.08),
    'foot_y': ('rel', 0.7, 1.4),
    'step_height': ('abs', 0.01, 0.08),
    'sway': ('abs', 0.0, 0.07),
    'double_support': ('abs', 0.0, 0.4),
    'torso_pitch': ('abs', -0.1, 0.3),
    'gyro_pitch': ('abs', -0.15, 0.15),
    'gyro_roll': ('abs', -0.15, 0.15),
    'lipm_x': ('abs', 0.0, 1.0),
    'swing_x_lead': ('abs', -0.1, 0.2),
    'com_height': ('rel', 0.6, 1.6),
    'arm_swing': ('abs', -3.0, 3.0),
    'kp_legs': ('abs', 100.0, 600.0),
    'kd_legs': ('abs', 0.5, 8.0),
}


def _range(name: str, start: WalkParams) -> tuple[float, float]:
    kind, lo, hi = SEARCH_SPACE[name]
    if kind == 'rel':
        a, b = lo * getattr(start, name), hi * getattr(start, name)
        return min(a, b), max(a, b)
    return lo, hi


def encode(params: WalkParams, start: WalkParams, names: Sequence[str]) -> list[float]:
    """Parameters as a vector in [0, 1] per searched name."""
    out = []
    for n in names:
        lo, hi = _range(n, start)
        out.append(min(1.0, max(0.0, (getattr(params, n) - lo) / (hi - lo))))
    return out


def decode(x: Sequence[float], start: WalkParams, names: Sequence[str]) -> WalkParams:
    """The parameter set for a vector in [0, 1] (clipped)."""
    values = {}
    for n, xi in zip(names, x, strict=True):
        lo, hi = _range(n, start)
        values[n] = lo + (hi - lo) * min(1.0, max(0.0, float(xi)))
    return replace(start, **values)


def score(result: dict, seconds: float) -> float:
    """Lower is better: minus the speed, plus penalties for falling and drifting."""
    if 'error' in result:
        return 10.0
    f = -result['forward'] / seconds + 0.3 * abs(result['lateral']) / seconds + 0.3 * abs(result['turned'])
    if result['falls']:
        f += 1.0 + max(0.0, seconds - result['seconds']) / seconds
    return f


def _yaml_values(params: WalkParams) -> dict:
    return {k: round(math.degrees(v) if k in ANGLE_PARAMS else v, 5) for k, v in asdict(params).items()}


def write_walk_file(path: Path, robot: str, params: WalkParams, set_name: str, comment: str = '') -> None:
    """A walk file with one robot section whose set ``set_name`` (the default) is ``params``."""
    doc = {robot: {'default': set_name, 'sets': {set_name: _yaml_values(params)}}}
    text = ''.join(f'# {line}\n' for line in comment.splitlines()) + yaml.safe_dump(doc, sort_keys=False)
    Path(path).write_text(text, encoding='utf-8')


def _evaluate(args: tuple) -> dict:
    params, robot, task, speed, seconds, domain, tmp = args
    path = Path(tmp) / f'candidate_{domain}.yaml'
    write_walk_file(path, robot, params, 'candidate')
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    cmd = [sys.executable, '-m', 'robocup3d_strategy.walk_tasks', '--robot', robot, '--task', task]
    cmd += ['--speed', str(speed), '--seconds', str(seconds), '--walk-config', str(path)]
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120 + 10 * seconds, check=False)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        return {'error': f'{type(exc).__name__}: {exc}'}


def optimize(
    robot: str,
    out: Path,
    set_name: str = '',
    task: str = 'forward',
    speed: float = 0.0,
    seconds: float = 10.0,
    generations: int = 20,
    popsize: int = 8,
    workers: int = 2,
    sigma: float = 0.15,
    names: Sequence[str] = tuple(SEARCH_SPACE),
    walk_config: str = 'walk.yaml',
    log: object = print,
) -> tuple[float, WalkParams]:
    """Run CMA-ES; returns the best score and parameter set (also written to ``out``)."""
    import cma  # noqa: PLC0415 - only this command needs it

    sets, default = walk_sets(load_config(walk_config), robot)
    if not sets:
        raise ConfigError(f'{walk_config} has no walk parameters for {robot}')
    name = set_name or default
    if name not in sets:
        raise ConfigError(f'{robot} has no walk set {name!r}; sets: {sorted(sets)}')
    start = sets[name]
    unknown = sorted(set(names) - set(SEARCH_SPACE))
    if unknown:
        raise ConfigError(f'cannot search {unknown}; searchable: {sorted(SEARCH_SPACE)}')
    es = cma.CMAEvolutionStrategy(
        encode(start, start, names), sigma, {'bounds': [0.0, 1.0], 'popsize': popsize, 'verbose': -9, 'seed': 1}
    )
    best: tuple[float, WalkParams] = (math.inf, start)
    base_domain = 100 + (os.getpid() % 50) * 2
    with tempfile.TemporaryDirectory(prefix='r3d_opt_') as tmp, ThreadPoolExecutor(workers) as pool:
        for gen in range(generations):
            xs = es.ask()
            cands = [decode(x, start, names) for x in xs]
            jobs = [(c, robot, task, speed, seconds, base_domain + i % workers, tmp) for i, c in enumerate(cands)]
            # one domain per concurrent worker: map over chunks of `workers`
            results: list[dict] = []
            for i in range(0, len(jobs), workers):
                results += list(pool.map(_evaluate, jobs[i : i + workers]))
            scores = [score(r, seconds) for r in results]
            es.tell(xs, scores)
            i = min(range(len(scores)), key=scores.__getitem__)
            if scores[i] < best[0]:
                best = (scores[i], cands[i])
                r = results[i]
                write_walk_file(
                    out,
                    robot,
                    cands[i],
                    name,
                    f'robocup3d optimize --robot {robot} --task {task}: generation {gen}, score {scores[i]:.3f}\n'
                    f'measured: {json.dumps({k: r.get(k) for k in ("forward", "lateral", "turned", "falls")})}',
                )
            errors = sum('error' in r for r in results)
            log(
                f'generation {gen}: best {min(scores):.3f} (overall {best[0]:.3f}), '
                f'falls {sum(r.get("falls", 0) for r in results)}/{len(results)}, errors {errors}'
            )
    return best


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d optimize``."""
    p = argparse.ArgumentParser(prog='robocup3d optimize', description=__doc__.split('\n')[0])
    p.add_argument('--robot', default='T1', choices=('T1', 'K1'))
    p.add_argument('--set', default='', help='walk set to start from (default: the robot default)')
    p.add_argument('--task', default='forward', choices=('forward', 'sideways', 'turn', 'square', 'random'))
    p.add_argument('--speed', type=float, default=0.0, help='commanded speed (0: the set maximum)')
    p.add_argument('--seconds', type=float, default=10.0)
    p.add_argument('--generations', type=int, default=20)
    p.add_argument('--popsize', type=int, default=8)
    p.add_argument('--workers', type=int, default=2, help='candidates evaluated side by side')
    p.add_argument('--sigma', type=float, default=0.15, help='initial step size (parameters scaled to [0, 1])')
    p.add_argument('--params', nargs='+', default=list(SEARCH_SPACE), help='which parameters to search')
    p.add_argument('--walk-config', default='walk.yaml')
    p.add_argument('--out', type=Path, default=Path('walk_tuned.yaml'))
    args = p.parse_args(argv)
    try:
        best, _ = optimize(
            args.robot,
            args.out,
            args.set,
            args.task,
            args.speed,
            args.seconds,
            args.generations,
            args.popsize,
            args.workers,
            args.sigma,
            args.params,
            args.walk_config,
        )
    except ConfigError as exc:
        print(f'robocup3d optimize: {exc}', file=sys.stderr)
        return 2
    print(f'best score {best:.3f}; written to {args.out}')
    return 0
