"""``robocup3d optimize``: tune walk parameters with CMA-ES on the real server.

Each candidate parameter set is written as a walk file and evaluated by a separate
process (``python -m robocup3d_tools.walk_tasks``: its own server in sync mode running
as fast as it goes, RCSSServerMJ for the T1/K1 or, with ``--server simspark --type N``,
rcssserver3d for a Nao; the real player process; ground truth from the server);
``--workers`` candidates run side by side, each in its own ROS domain. A candidate's
score is the sum over its tasks (``--task forward random``): forward, sideways and turn
score the speed from standstill, with penalties for a fall (and how early it came) and
for drift; a random course (``--course-seconds`` long, one per ``--course-seeds``) scores
its falls, so that a fast set does not buy its speed with falls when the commands change.
The best set so far is written to
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
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields, replace
from pathlib import Path

import yaml

from robocup3d_bridge.config_files import ConfigError
from robocup3d_motion.motion_config import load_walk_config
from robocup3d_motion.walk import ANGLE_PARAMS, WalkParams, walk_sets

__all__ = [
    'NAO_SEARCH_SPACE',
    'SEARCH_SPACE',
    'decode',
    'encode',
    'main',
    'optimize',
    'score',
    'task_jobs',
    'total_score',
    'write_walk_file',
]

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
    'sole_x_fwd': ('abs', -0.05, 0.1),
    'max_vx': ('abs', 0.4, 1.0),
    'accel_x': ('abs', 0.02, 0.15),
}

#: The Nao on rcssserver3d: a smaller robot with quicker steps; its joints take velocities from
#: a P controller, so ``kp_legs`` is that gain (1/s) and ``kd_legs`` is not searched; the top speed is.
NAO_SEARCH_SPACE: dict[str, tuple[str, float, float]] = {
    **{k: v for k, v in SEARCH_SPACE.items() if k not in ('kd_legs', 'sole_x_fwd')},
    'period': ('abs', 0.06, 0.4),
    'kp_legs': ('abs', 8.0, 40.0),
    'step_height': ('abs', 0.005, 0.05),
    'sway': ('abs', 0.0, 0.04),
    'sole_x': ('abs', -0.03, 0.06),
    'swing_x_lead': ('abs', -0.1, 0.3),
    'max_vx': ('abs', 0.2, 1.4),
    'accel_x': ('abs', 0.03, 0.3),
    'toe_push': ('abs', 0.0, 0.15),  # type 4 (toes)
    'toe_from': ('abs', 0.2, 0.9),
}


def search_space(server: str) -> dict[str, tuple[str, float, float]]:
    """The searched parameters and ranges for a server's robots."""
    return NAO_SEARCH_SPACE if server == 'simspark' else SEARCH_SPACE


FAST = 'fast.'  # a searched name with this prefix is a value of the set's fast part (speed scheduling)


def _part(params: WalkParams, name: str) -> tuple[WalkParams, str]:
    """The set a searched name belongs to (the set, or its fast part) and the bare name."""
    if not name.startswith(FAST):
        return params, name
    if params.fast is None:
        raise ConfigError(f'cannot search {name}: the set has no fast part (walk.yaml: fast, boost_from, boost_to)')
    return params.fast, name.removeprefix(FAST)


def _range(name: str, start: WalkParams, space: dict | None = None) -> tuple[float, float]:
    start, name = _part(start, name)
    kind, lo, hi = (space or SEARCH_SPACE)[name]
    if kind == 'rel':
        a, b = lo * getattr(start, name), hi * getattr(start, name)
        return min(a, b), max(a, b)
    return lo, hi


def encode(params: WalkParams, start: WalkParams, names: Sequence[str], space: dict | None = None) -> list[float]:
    """Parameters as a vector in [0, 1] per searched name (``fast.NAME``: the fast part's)."""
    out = []
    for n in names:
        lo, hi = _range(n, start, space)
        part, bare = _part(params, n)
        out.append(min(1.0, max(0.0, (getattr(part, bare) - lo) / (hi - lo))))
    return out


def decode(x: Sequence[float], start: WalkParams, names: Sequence[str], space: dict | None = None) -> WalkParams:
    """The parameter set for a vector in [0, 1] (clipped)."""
    values: dict[str, float] = {}
    fast: dict[str, float] = {}
    for n, xi in zip(names, x, strict=True):
        lo, hi = _range(n, start, space)
        value = lo + (hi - lo) * min(1.0, max(0.0, float(xi)))
        if n.startswith(FAST):
            fast[n.removeprefix(FAST)] = value
        else:
            values[n] = value
    if start.fast is not None:  # a set value the fast part inherits (not its own) goes along with the set's
        inherited = {n: v for n, v in values.items() if getattr(start.fast, n) == getattr(start, n)}
        if fast or inherited:
            values['fast'] = replace(start.fast, **{**inherited, **fast})
    return replace(start, **values)


def score(result: dict, seconds: float) -> float:
    """Lower is better: minus the speed, plus penalties for falling and drifting.

    The speed is along the task's own axis (``task`` in ``result``; forward when absent): the
    distance forward or sideways, or the turn, per second; drift is motion off that axis.
    A random course scores 1 per fall and nothing else.
    """
    if 'error' in result:
        return 10.0
    task = result.get('task', 'forward')
    if task == 'random':
        return float(result['falls'])
    fwd, lat, turned = result['forward'] / seconds, result['lateral'] / seconds, result['turned']
    if task == 'sideways':
        f = -abs(lat) + 0.3 * abs(fwd) + 0.3 * abs(turned)
    elif task == 'turn':
        f = -abs(turned) / seconds + 0.3 * math.hypot(fwd, lat)
    else:
        f = -fwd + 0.3 * abs(lat) + 0.3 * abs(turned)
    if result['falls']:
        f += 1.0 + max(0.0, seconds - result['seconds']) / seconds
    return f


def _yaml_values(params: WalkParams) -> dict:
    out = {f.name: getattr(params, f.name) for f in fields(WalkParams)}
    fast = out.pop('fast')
    out = {k: round(math.degrees(v) if k in ANGLE_PARAMS else v, 5) for k, v in out.items()}
    if fast is not None:  # only what differs from the set itself
        own = _yaml_values(fast)
        out['fast'] = {k: v for k, v in own.items() if v != out[k]}
    return out


def write_walk_file(path: Path, robot: str, params: WalkParams, set_name: str, comment: str = '') -> None:
    """A walk file with one robot section whose set ``set_name`` (the default) is ``params``."""
    doc = {robot: {'default': set_name, 'sets': {set_name: _yaml_values(params)}}}
    text = ''.join(f'# {line}\n' for line in comment.splitlines()) + yaml.safe_dump(doc, sort_keys=False)
    Path(path).write_text(text, encoding='utf-8')


def walk_key(robot: str, server: str = 'mujoco', robot_type: int = 0) -> str:
    """The robot's section in walk files: ``T1``/``K1``, or ``nao<type>`` on rcssserver3d."""
    return f'nao{robot_type}' if server == 'simspark' else robot


Job = tuple[str, float, int]  # task, seconds, seed


def task_jobs(tasks: Sequence[str], seconds: float, course_seconds: float, course_seeds: Sequence[int]) -> list[Job]:
    """The runs that score a candidate: each task once, a random course once per seed."""
    jobs: list[Job] = []
    for task in tasks:
        if task == 'random':
            jobs += [('random', course_seconds, seed) for seed in course_seeds]
        else:
            jobs.append((task, seconds, 1))
    return jobs


def total_score(results: Sequence[dict], jobs: Sequence[Job]) -> float:
    """A candidate's score: the sum of its runs' scores (lower is better)."""
    return sum(score(r, seconds) for r, (_, seconds, _) in zip(results, jobs, strict=True))


def _run_task(cmd: list[str], env: dict, names: list[str], seconds: float) -> list[dict]:
    """One walk_tasks session over the sets ``names``: a result per set (``error`` when missing)."""
    timeout = 120 + len(names) * (10 + 10 * seconds)
    found: dict[str, dict] = {}
    error = 'no result'
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        stdout = out.stdout
        error = f'exit {out.returncode}: {out.stderr.strip().splitlines()[-1:]}'
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ''
        error = f'TimeoutExpired after {timeout} s'
    for line in stdout.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and r.get('set') in names:
            found[r['set']] = r
    return [found.get(n, {'error': error}) for n in names]


def _evaluate(args: tuple) -> list[list[dict]]:
    """Run every job for each candidate of a batch (one session per job); results per candidate."""
    params, robot, jobs, speed, domain, tmp, server, robot_type = args
    path = Path(tmp) / f'candidate_{domain}.yaml'
    names = [f'c{i}' for i in range(len(params))]
    sets = {n: _yaml_values(c) for n, c in zip(names, params, strict=True)}
    doc = {walk_key(robot, server, robot_type): {'default': names[0], 'sets': sets}}
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding='utf-8')
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    per_job = []
    for task, seconds, seed in jobs:
        cmd = [sys.executable, '-m', 'robocup3d_tools.walk_tasks', '--robot', robot, '--task', task]
        cmd += ['--speed', str(speed), '--seconds', str(seconds), '--seed', str(seed), '--walk-config', str(path)]
        cmd += ['--server', server, '--type', str(robot_type), '--walk-set', *names]
        per_job.append(_run_task(cmd, env, names, seconds))
    return [list(rs) for rs in zip(*per_job, strict=True)]


def optimize(
    robot: str,
    out: Path,
    set_name: str = '',
    tasks: Sequence[str] = ('forward',),
    speed: float = 0.0,
    seconds: float = 10.0,
    generations: int = 20,
    popsize: int = 8,
    workers: int = 2,
    sigma: float = 0.15,
    names: Sequence[str] = (),
    walk_config: str = 'walk.yaml',
    log: object = print,
    server: str = 'mujoco',
    robot_type: int = 0,
    domain_base: int = 0,
    batch: int = 1,
    trace_file: bool = False,
    course_seconds: float = 20.0,
    course_seeds: Sequence[int] = (1, 2),
) -> tuple[float, WalkParams]:
    """Run CMA-ES; returns the best score and parameter set (also written to ``out``).

    ``names``: the parameters searched (default: all of the server's search space);
    ``domain_base``: the first ROS domain of the workers (0: one derived from the process id);
    ``batch``: candidates run one after the other in one session (saves the start-up);
    ``trace_file``: append every candidate and its result to ``out`` with suffix ``.jsonl``;
    ``tasks``: what each candidate runs (see the module doc); ``course_seconds``/``course_seeds``: the
    random courses of the ``random`` task.
    """
    with warnings.catch_warnings():  # cma warns that it cannot plot without matplotlib: we never plot
        warnings.filterwarnings('ignore', message='Could not import matplotlib')
        import cma  # noqa: PLC0415 - only this command needs it

    space = search_space(server)
    names = tuple(names) or tuple(space)
    key = walk_key(robot, server, robot_type)
    sets, default = walk_sets(load_walk_config(walk_config), key)
    if not sets:
        raise ConfigError(f'{walk_config} has no walk parameters for {key}')
    name = set_name or default
    if name not in sets:
        raise ConfigError(f'{robot} has no walk set {name!r}; sets: {sorted(sets)}')
    start = sets[name]
    unknown = sorted({n.removeprefix(FAST) for n in names} - set(space))
    if unknown:
        raise ConfigError(f'cannot search {unknown}; searchable: {sorted(space)}')
    es = cma.CMAEvolutionStrategy(
        encode(start, start, names, space),
        sigma,
        {'bounds': [0.0, 1.0], 'popsize': popsize, 'verbose': -9, 'seed': 1},
    )
    best: tuple[float, WalkParams] = (math.inf, start)
    base_domain = domain_base or 100 + (os.getpid() % 50) * 2
    batch = max(1, batch)
    trace = open(Path(out).with_suffix('.jsonl'), 'a', encoding='utf-8') if trace_file else None
    runs = task_jobs(tasks, seconds, course_seconds, course_seeds)
    with tempfile.TemporaryDirectory(prefix='r3d_opt_') as tmp, ThreadPoolExecutor(workers) as pool:
        for gen in range(generations):
            xs = es.ask()
            cands = [decode(x, start, names, space) for x in xs]
            # batches of up to `batch` candidates, one session each; one domain per concurrent worker
            chunks = [list(range(i, min(i + batch, len(cands)))) for i in range(0, len(cands), batch)]
            jobs = [
                (
                    [cands[k] for k in ks],
                    robot,
                    runs,
                    speed,
                    base_domain + j % workers,
                    tmp,
                    server,
                    robot_type,
                )
                for j, ks in enumerate(chunks)
            ]
            results: list[list[dict]] = []  # per candidate, a result per run
            for j in range(0, len(jobs), workers):
                for batch_results in pool.map(_evaluate, jobs[j : j + workers]):
                    results += batch_results
            scores = [total_score(r, runs) for r in results]
            if trace is not None:
                for c, r, f in zip(cands, results, scores, strict=True):
                    trace.write(json.dumps({'generation': gen, 'score': f, 'params': _yaml_values(c), 'result': r}))
                    trace.write('\n')
                trace.flush()
            es.tell(xs, scores)
            i = min(range(len(scores)), key=scores.__getitem__)
            if scores[i] < best[0]:
                best = (scores[i], cands[i])
                what = f'--server simspark --type {robot_type}' if server == 'simspark' else f'--robot {robot}'
                measured = [
                    {'task': t, 'seed': seed, **{k: r.get(k) for k in ('forward', 'lateral', 'turned', 'falls')}}
                    for r, (t, _, seed) in zip(results[i], runs, strict=True)
                ]
                write_walk_file(
                    out,
                    key,
                    cands[i],
                    name,
                    f'robocup3d optimize {what} --task {" ".join(tasks)}: generation {gen}, score {scores[i]:.3f}\n'
                    f'measured: {json.dumps(measured)}',
                )
            flat = [r for rs in results for r in rs]
            errors = sum('error' in r for r in flat)
            log(
                f'generation {gen}: best {min(scores):.3f} (overall {best[0]:.3f}), '
                f'falls {sum(r.get("falls", 0) for r in flat)} in {len(flat)} runs, errors {errors}'
            )
    if trace is not None:
        trace.close()
    return best


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d optimize``."""
    p = argparse.ArgumentParser(prog='robocup3d optimize', description=__doc__.split('\n')[0])
    p.add_argument('--server', default='mujoco', choices=('mujoco', 'simspark'))
    p.add_argument('--robot', default='T1', choices=('T1', 'K1'), help='on mujoco (simspark: the Nao)')
    p.add_argument('--type', dest='robot_type', type=int, default=0, choices=range(5), help='Nao type (simspark)')
    p.add_argument('--batch', type=int, default=1, help='candidates run one after the other in one session')
    p.add_argument('--trace', action='store_true', help='log every candidate to OUT with suffix .jsonl')
    p.add_argument('--domain-base', type=int, default=0, help='first ROS domain of the workers (0: from the pid)')
    p.add_argument('--set', default='', help='walk set to start from (default: the robot default)')
    p.add_argument(
        '--task',
        nargs='+',
        default=['forward'],
        choices=('forward', 'sideways', 'turn', 'square', 'random'),
        help='what each candidate runs; the score is the sum (random: the falls on courses)',
    )
    p.add_argument('--course-seconds', type=float, default=20.0, help='length of each random course')
    p.add_argument('--course-seeds', type=int, nargs='+', default=[1, 2], help='one random course per seed')
    p.add_argument('--speed', type=float, default=0.0, help='commanded speed (0: the set maximum)')
    p.add_argument('--seconds', type=float, default=10.0)
    p.add_argument('--generations', type=int, default=20)
    p.add_argument('--popsize', type=int, default=8)
    p.add_argument('--workers', type=int, default=2, help='candidates evaluated side by side')
    p.add_argument('--sigma', type=float, default=0.15, help='initial step size (parameters scaled to [0, 1])')
    p.add_argument(
        '--params',
        nargs='+',
        default=[],
        help="which parameters to search (default: the server's space); fast.NAME: the set's fast part",
    )
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
            server=args.server,
            robot_type=args.robot_type,
            domain_base=args.domain_base,
            batch=args.batch,
            trace_file=args.trace,
            course_seconds=args.course_seconds,
            course_seeds=args.course_seeds,
        )
    except ConfigError as exc:
        print(f'robocup3d optimize: {exc}', file=sys.stderr)
        return 2
    print(f'best score {best:.3f}; written to {args.out}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
