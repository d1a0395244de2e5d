"""``robocup3d optimize``: tune walk, get-up, kick and dribble parameters with CMA-ES on the real server.

Every candidate runs in a process of its own with its own server in sync mode (running as fast
as it goes), the real player process and the server's ground truth for the score: RCSSServerMJ
for the T1/K1 or, with ``--server simspark --type N``, rcssserver3d for a Nao. ``--workers``
evaluations run at once as tasks on Ray (a local Ray, or a cluster with ``--address``), each with its
own server, player and ROS domain; a task lost with its worker is run again. What is searched, and over which range,
is data: ``config/optimize.yaml`` (``--space FILE`` for another).

Walk tasks (``forward``, ``sideways``, ``turn``, ``square``, ``random``, ``lineup``, ``goto``) search a walk set
of ``config/walk.yaml``; a candidate's score is the sum over its tasks: the speed from standstill,
with penalties for a fall (and how early it came) and for drift; a random course
(``--course-seconds`` long, one per ``--course-seeds``) scores its falls, a lining-up course (as many) its
falls and creep, a go-to course (as many) minus the metres per second gained on its targets, and
:data:`GOTO_FALL` per fall. The best set so far is
written to ``--out`` after every generation as a walk file (``robocup3d player --walk-config FILE``).

Get-up tasks (``getup-front``, ``getup-back``, ``getup-side``) search the get-up skill (the Nao's
``$parameters``, the T1/K1 keyframes): ``--trials`` knock-downs per candidate, scored by the time
to upright with penalties for failures and for falling again. The best is written to ``--out`` as
a skill file (``robocup3d player --skill-params FILE``).

Kick tasks (``kick-long``, ``kick-quick``) search a kick skill the same way (the Nao's
``$parameters``, the T1/K1 keyframes of the right-foot kick, whose mirror image follows): ``--trials``
kicks per candidate from the kick's ball spot (``--noise`` m of scatter; ``--walk-in S``: each after a
walk of S s, as in play), scored as UT Austin Villa's kick optimization
(:func:`~robocup3d_tools.kick_tasks.kick_score`): the distance along the wanted direction
(``--direction``), with penalties for falls (``--fall-penalty`` m), touching the ball before the swing,
backward or missed kicks and angle errors. The best is written to ``--out`` as a skill file.

The dribble task (``dribble``) searches a robot's dribble in ``config/kicks.yaml`` (where the ball sits before the
feet, the walk's speed through it, how far it may stray): ``--trials`` dribbles per candidate from 1 m behind the
ball to a target 5 m beyond, scored by the ball's speed towards it with penalties for falls and for a ball more
than 1 m away (:mod:`robocup3d_tools.dribble_search`). The best is written to ``--out`` as a kicks file
(``robocup3d player --kicks-config FILE``).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from pathlib import Path

import yaml

from robocup3d_bridge.config_files import ConfigError
from robocup3d_motion.motion_config import load_walk_config
from robocup3d_motion.walk import ANGLE_PARAMS, WalkParams, walk_sets
from robocup3d_tools.dribble_search import DRIBBLE_TASKS, dribble_score, dribble_space, run_dribble_candidate
from robocup3d_tools.getup_search import GETUP_TASKS, GETUP_UNTIL, getup_score, getup_space, run_candidate
from robocup3d_tools.kick_search import KICK_TASKS, KickTrials, kick_space, run_kick_candidate
from robocup3d_tools.kick_tasks import FALL_PENALTY
from robocup3d_tools.optimize_config import load_optimize_config
from robocup3d_tools.ray_pool import DOMAINS, RayPool

__all__ = [
    'TASKS',
    'WALK_TASKS',
    'cma_search',
    'decode',
    'encode',
    'main',
    'optimize',
    'score',
    'search_space',
    'task_jobs',
    'total_score',
    'write_walk_file',
]


def search_space(server: str, config: str = 'optimize.yaml') -> dict[str, tuple[str, float, float]]:
    """The walk parameters searched on ``server`` and their ranges (``config``'s ``walk.<server>``)."""
    space = load_optimize_config(config).walk.get(server)
    if not space:
        raise ConfigError(f'{config}: no walk search space for {server} (walk.{server})')
    return dict(space)


WALK_TASKS = ('forward', 'sideways', 'turn', 'square', 'random', 'lineup', 'goto')
GOTO_FALL = 0.1  # score per fall on a go-to course, on top of the time its get-up took (m/s)
TASKS = WALK_TASKS + GETUP_TASKS + KICK_TASKS + DRIBBLE_TASKS
DRIBBLE_DISTANCE = 5.0  # m from the ball to a dribble trial's target
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
    kind, lo, hi = (space or search_space('mujoco'))[name]
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
    A random course scores 1 per fall and nothing else; a lining-up course 1 per fall, 10 per m/s of creep
    and 2 per rad/s of the turn's (``extra``).
    """
    if 'error' in result:
        return 10.0
    task = result.get('task', 'forward')
    if task == 'random':
        return float(result['falls'])
    if task == 'goto':  # minus the metres gained on the targets per second; a fall costs its get-up and GOTO_FALL
        return -result['forward'] / max(result['seconds'], 1e-6) + GOTO_FALL * float(result['falls'])
    if task == 'lineup':
        extra = result.get('extra', {})
        return float(result['falls']) + 10.0 * (extra.get('creep') or 0.0) + 2.0 * (extra.get('creep_turn') or 0.0)
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
    brake = out.pop('brake')  # a fast part's value only (walk.py refuses it on a set)
    if fast is not None:  # only what differs from the set itself
        own = _yaml_values(fast)
        own['brake'] = round(fast.brake, 5)
        out['fast'] = {k: v for k, v in own.items() if v != out.get(k, brake)}
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
    """The runs that score a candidate: each task once, a random or lining-up course once per seed."""
    jobs: list[Job] = []
    for task in tasks:
        if task in ('random', 'lineup', 'goto'):
            jobs += [(task, course_seconds, seed) for seed in course_seeds]
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


def _evaluate(job: tuple, domain: int) -> list[list[dict]]:
    """Run every run for each candidate of a batch (one session per run) in ROS ``domain``; results per candidate."""
    params, robot, runs, speed, server, robot_type = job
    names = [f'c{i}' for i in range(len(params))]
    sets = {n: _yaml_values(c) for n, c in zip(names, params, strict=True)}
    doc = {walk_key(robot, server, robot_type): {'default': names[0], 'sets': sets}}
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    per_job = []
    with tempfile.TemporaryDirectory(prefix='r3d_walk_') as tmp:  # on the machine the task runs on
        path = Path(tmp) / 'candidates.yaml'
        path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding='utf-8')
        for task, seconds, seed in runs:
            cmd = [sys.executable, '-m', 'robocup3d_tools.walk_tasks', '--robot', robot, '--task', task]
            cmd += ['--speed', str(speed), '--seconds', str(seconds), '--seed', str(seed), '--walk-config', str(path)]
            cmd += ['--server', server, '--type', str(robot_type), '--walk-set', *names]
            per_job.append(_run_task(cmd, env, names, seconds))
    return [list(rs) for rs in zip(*per_job, strict=True)]


def cma_search(
    x0: Sequence[float],
    sigma: float,
    popsize: int,
    generations: int,
    evaluate: Callable[[int, list[list[float]]], list[float]],
    improved: Callable[[int, int, float], None],
) -> tuple[float, list[float]]:
    """CMA-ES in [0, 1]^n: ``evaluate(generation, xs)`` scores a population (lower is better);
    ``improved(generation, i, score)`` is called when candidate ``i`` beats every one before it."""
    with warnings.catch_warnings():  # cma warns that it cannot plot without matplotlib: we never plot
        warnings.filterwarnings('ignore', message='Could not import matplotlib')
        import cma  # noqa: PLC0415 - only this command needs it

    es = cma.CMAEvolutionStrategy(list(x0), sigma, {'bounds': [0.0, 1.0], 'popsize': popsize, 'verbose': -9, 'seed': 1})
    best: tuple[float, list[float]] = (math.inf, list(x0))
    for gen in range(generations):
        xs = [list(map(float, x)) for x in es.ask()]
        scores = evaluate(gen, xs)
        es.tell(xs, scores)
        i = min(range(len(scores)), key=scores.__getitem__)
        if scores[i] < best[0]:
            best = (scores[i], xs[i])
            improved(gen, i, scores[i])
    return best


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
    log: Callable[[str], object] = print,
    server: str = 'mujoco',
    robot_type: int = 0,
    domain_base: int = 0,
    batch: int = 1,
    trace_file: bool = False,
    course_seconds: float = 20.0,
    course_seeds: Sequence[int] = (1, 2),
    space_config: str = 'optimize.yaml',
    address: str | None = None,
    domain_last: int = 0,
) -> tuple[float, WalkParams]:
    """Tune a walk set; returns the best score and parameter set (also written to ``out``).

    ``names``: the parameters searched (default: all of the server's search space);
    ``workers``: evaluations at once on a local Ray (``address`` None), else the Ray cluster at ``address``;
    ``domain_base``/``domain_last``: the first/last ROS domain evaluations may claim (0: those of
    :data:`~robocup3d_tools.ray_pool.DOMAINS`);
    ``batch``: candidates run one after the other in one session (saves the start-up);
    ``trace_file``: append every candidate and its result to ``out`` with suffix ``.jsonl``;
    ``tasks``: what each candidate runs (see the module doc); ``course_seconds``/``course_seeds``: the
    random courses of the ``random`` task.
    """
    space = search_space(server, space_config)
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
    batch = max(1, batch)
    trace = open(Path(out).with_suffix('.jsonl'), 'a', encoding='utf-8') if trace_file else None
    runs = task_jobs(tasks, seconds, course_seconds, course_seeds)
    last: dict = {}  # the generation's candidates and results, for ``improved``

    def evaluate(gen: int, xs: list[list[float]]) -> list[float]:
        cands = [decode(x, start, names, space) for x in xs]
        # batches of up to `batch` candidates, one session each
        chunks = [cands[i : i + batch] for i in range(0, len(cands), batch)]
        jobs = [(chunk, robot, runs, speed, server, robot_type) for chunk in chunks]
        results: list[list[dict]] = [r for batch_results in pool.map(_evaluate, jobs) for r in batch_results]
        scores = [total_score(r, runs) for r in results]
        if trace is not None:
            for c, r, f in zip(cands, results, scores, strict=True):
                trace.write(json.dumps({'generation': gen, 'score': f, 'params': _yaml_values(c), 'result': r}) + '\n')
            trace.flush()
        flat = [r for rs in results for r in rs]
        log(
            f'generation {gen}: best {min(scores):.3f}, falls {sum(r.get("falls", 0) for r in flat)} '
            f'in {len(flat)} runs, errors {sum("error" in r for r in flat)}, retried so far {pool.retried}'
        )
        last.update(cands=cands, results=results)
        return scores

    def improved(gen: int, i: int, f: float) -> None:
        what = f'--server simspark --type {robot_type}' if server == 'simspark' else f'--robot {robot}'
        measured = [
            {'task': t, 'seed': seed, **{k: r.get(k) for k in ('forward', 'lateral', 'turned', 'falls')}}
            for r, (t, _, seed) in zip(last['results'][i], runs, strict=True)
        ]
        comment = f'robocup3d optimize {what} --task {" ".join(tasks)}: generation {gen}, score {f:.3f}\n'
        write_walk_file(out, key, last['cands'][i], name, comment + f'measured: {json.dumps(measured)}')

    try:
        with RayPool(workers, address, domains=_domains(domain_base, domain_last)) as pool:
            best, x = cma_search(encode(start, start, names, space), sigma, popsize, generations, evaluate, improved)
    finally:
        if trace is not None:
            trace.close()
    return best, decode(x, start, names, space)


def optimize_skill(
    task: str,
    out: Path,
    server: str = 'mujoco',
    robot: str = 'T1',
    robot_type: int = 0,
    trials: int = 3,
    generations: int = 20,
    popsize: int = 8,
    workers: int = 2,
    sigma: float = 0.15,
    names: Sequence[str] = (),
    domain_base: int = 0,
    log: Callable[[str], object] = print,
    space_config: str = 'optimize.yaml',
    address: str | None = None,
    kick_trials: KickTrials | None = None,
    domain_last: int = 0,
    trace_file: bool = False,
    getup_until: str = 'stand',
) -> tuple[float, Path]:
    """Tune a get-up, a kick or the dribble (see the module doc); returns the best score and the skill file written.

    ``kick_trials``: kick tasks only, how each candidate's kicks run and score (None: :class:`KickTrials`'s defaults);
    ``domain_base``/``domain_last``: the ROS domains evaluations may claim (see :func:`_domains`);
    ``trace_file``: append every candidate (generation, score, values, result) to ``out`` with suffix ``.jsonl``;
    ``getup_until``: get-ups only, time each trial to standing with the get-up over or to the torso up
    (:func:`~robocup3d_tools.getup_search.getup_score`).
    """
    who = 'nao' if server == 'simspark' else robot
    kick, dribble = task in KICK_TASKS, task in DRIBBLE_TASKS
    kick_trials = kick_trials or KickTrials()
    if dribble:
        space = dribble_space(who, names, space_config)
        score_of = dribble_score
    else:
        space = (kick_space if kick else getup_space)(task, who, robot_type, names, space_config)
        score_of = kick_trials.score if kick else functools.partial(getup_score, until=getup_until)
    written: list[Path] = [Path(out)]

    def evaluate(gen: int, xs: list[list[float]]) -> list[float]:
        jobs = [(space, x, task, server, robot, robot_type, trials, gen + 1, kick_trials) for x in xs]
        results = pool.map(_skill_candidate, jobs)
        scores = [score_of(r) for r in results]
        last[:] = results
        if trace_file:
            with open(Path(out).with_suffix('.jsonl'), 'a', encoding='utf-8') as trace:
                for x, r, f in zip(xs, results, scores, strict=True):
                    row = {'generation': gen, 'score': f, 'params': space.values(x), 'result': r}
                    trace.write(json.dumps(row) + '\n')
        errors = [r['error'] for r in results if 'error' in r]
        why = f' (first: {errors[0]})' if errors else ''
        best_r = results[min(range(len(scores)), key=scores.__getitem__)]
        if dribble:
            what = f'its mean speed {best_r.get("speed_mean")} m/s, falls {best_r.get("falls")}'
        elif kick:
            what = (
                f'its median {best_r.get("distance_median")} m, angle {best_r.get("angle_err_median")} deg, '
                f'falls {best_r.get("falls")}; falls {sum(r.get("falls", 0) for r in results)} in all'
            )
        else:
            ok = sum(len(r.get('times', ())) for r in results)
            counted = sum(r.get('trials', 0) - r.get('not_knocked', 0) for r in results)
            what = f'up {ok} of {counted} trials'
        tail = f'errors {len(errors)}{why}, retried so far {pool.retried}'
        log(f'generation {gen}: best {min(scores):.2f}, {what}, {tail}')
        return scores

    def improved(gen: int, i: int, f: float) -> None:
        what = f'--server simspark --type {robot_type}' if server == 'simspark' else f'--robot {robot}'
        measured = {k: v for k, v in last[i].items() if k != 'kicks'} if kick else last[i]
        comment = f'robocup3d optimize {what} --task {task}: generation {gen}, score {f:.2f}\n'
        comment += f'measured: {json.dumps(measured)}'
        written[0] = space.write(best_x[gen][i], Path(out), comment)

    last: list[dict] = []
    best_x: dict[int, list[list[float]]] = {}

    def remember(gen: int, xs: list[list[float]]) -> list[float]:
        best_x[gen] = xs
        return evaluate(gen, xs)

    with RayPool(workers, address, domains=_domains(domain_base, domain_last)) as pool:
        best, _ = cma_search(space.x0(), sigma, popsize, generations, remember, improved)
    return best, written[0]


def _skill_candidate(job: tuple, domain: int) -> dict:
    """One skill candidate's trials in ROS ``domain`` (a Ray task: the skill file lives on its machine)."""
    space, x, task, server, robot, robot_type, trials, seed, kick_trials = job
    with tempfile.TemporaryDirectory(prefix='r3d_skill_') as tmp:
        path = space.write(x, Path(tmp) / 'candidate')
        if task in DRIBBLE_TASKS:
            return run_dribble_candidate(path, server, robot, robot_type, trials, seed, domain, DRIBBLE_DISTANCE)
        if task in KICK_TASKS:
            return run_kick_candidate(path, task, server, robot, robot_type, trials, seed, domain, kick_trials)
        return run_candidate(path, task, server, robot, robot_type, trials, seed, domain)


def _getup_candidate(job: tuple, domain: int) -> dict:
    """One get-up candidate's trials (``job`` without the kick's trials; see :func:`_skill_candidate`)."""
    return _skill_candidate((*job, KickTrials()), domain)


def _tuned(task: str) -> str:
    """The default result file (a suffix follows) of a skill task."""
    return 'kick_tuned' if task in KICK_TASKS else 'dribble_tuned' if task in DRIBBLE_TASKS else 'getup_tuned'


def _domains(first: int, last: int = 0) -> range:
    """The ROS domains evaluations may claim: ``first`` to ``last`` (0: the default range's first / last)."""
    start = first or DOMAINS.start
    stop = last + 1 if last else DOMAINS.stop
    if start >= stop:
        raise ConfigError(f'no ROS domain from {start} to {stop - 1}')
    return range(start, stop)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d optimize``."""
    p = argparse.ArgumentParser(
        prog='robocup3d optimize',
        description=__doc__.split('\n')[0],
        epilog=f'tasks on both servers: walk {", ".join(WALK_TASKS)}; get-up {", ".join(GETUP_TASKS)}; '
        f'kick {", ".join(KICK_TASKS)}; {", ".join(DRIBBLE_TASKS)}',
    )
    p.add_argument('--server', default='mujoco', choices=('mujoco', 'simspark'))
    p.add_argument('--robot', default='T1', choices=('T1', 'K1'), help='on mujoco (simspark: the Nao)')
    p.add_argument('--type', dest='robot_type', type=int, default=0, choices=range(5), help='Nao type (simspark)')
    p.add_argument(
        '--task',
        nargs='+',
        default=['forward'],
        choices=TASKS,
        help='walk tasks (the score is their sum; random: the falls on courses), or one get-up or kick task',
    )
    p.add_argument('--generations', type=int, default=20)
    p.add_argument('--popsize', type=int, default=8)
    p.add_argument('--workers', type=int, default=2, help='evaluations at once on the local Ray')
    p.add_argument('--address', default=None, help="a Ray cluster to run on (ray://HOST:10001, or 'auto')")
    p.add_argument('--sigma', type=float, default=0.15, help='initial step size (parameters scaled to [0, 1])')
    p.add_argument(
        '--params',
        nargs='+',
        default=[],
        help="what to search (default: the task's space in --space); walk: fast.NAME is the set's fast part",
    )
    p.add_argument('--space', default='optimize.yaml', help='search spaces (name in config/ or a path)')
    p.add_argument('--domain-base', type=int, default=0, help='first ROS domain evaluations may claim (0: 120)')
    p.add_argument('--domain-last', type=int, default=0, help='last ROS domain evaluations may claim (0: 231)')
    p.add_argument('--out', type=Path, default=None, help='result file (default: walk_tuned.yaml or getup_tuned.*)')
    walk = p.add_argument_group('walk tasks')
    walk.add_argument('--set', default='', help='walk set to start from (default: the robot default)')
    walk.add_argument('--walk-config', default='walk.yaml')
    walk.add_argument('--speed', type=float, default=0.0, help='commanded speed (0: the set maximum)')
    walk.add_argument('--seconds', type=float, default=10.0)
    walk.add_argument('--course-seconds', type=float, default=20.0, help='length of each random course')
    walk.add_argument('--course-seeds', type=int, nargs='+', default=[1, 2], help='one random course per seed')
    walk.add_argument('--batch', type=int, default=1, help='candidates run one after the other in one session')
    walk.add_argument('--trace', action='store_true', help='log every candidate to OUT with suffix .jsonl (all tasks)')
    getup = p.add_argument_group('get-up, kick and dribble tasks')
    getup.add_argument('--trials', type=int, default=3, help='knock-downs, kicks or dribbles per candidate')
    getup.add_argument(
        '--until',
        choices=GETUP_UNTIL,
        default='stand',
        help='get-ups: time to standing with the skill over, or to the torso up (as bench_getup.py)',
    )
    getup.add_argument('--noise', type=float, default=0.0, help='kicks: the ball within +-NOISE m of its spot')
    getup.add_argument('--walk-in', type=float, default=0.0, help='kicks: s the robot walks forward before each')
    getup.add_argument('--direction', type=float, default=0.0, help='kicks: wanted direction, deg left of the heading')
    getup.add_argument(
        '--fall-penalty', type=float, default=FALL_PENALTY, help='kicks: m added to a kick that falls or does not stand'
    )
    getup.add_argument(
        '--fall-grace', type=float, default=0.0, help="kicks: m off a fall's penalty per s stood before it (<= 3 s)"
    )
    args = p.parse_args(argv)
    skills = [t for t in args.task if t in GETUP_TASKS or t in KICK_TASKS or t in DRIBBLE_TASKS]
    if skills and (len(args.task) > 1):
        p.error('a get-up, kick or dribble task runs alone (one skill at a time)')
    try:
        if skills:
            best, path = optimize_skill(
                skills[0],
                args.out or Path(_tuned(skills[0])),
                args.server,
                args.robot,
                args.robot_type,
                args.trials,
                args.generations,
                args.popsize,
                args.workers,
                args.sigma,
                args.params,
                args.domain_base,
                space_config=args.space,
                address=args.address,
                kick_trials=KickTrials(args.noise, args.walk_in, args.direction, args.fall_penalty, args.fall_grace),
                domain_last=args.domain_last,
                trace_file=args.trace,
                getup_until=args.until,
            )
        else:
            path = args.out or Path('walk_tuned.yaml')
            best, _ = optimize(
                args.robot,
                path,
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
                space_config=args.space,
                address=args.address,
                domain_last=args.domain_last,
            )
    except (ConfigError, RuntimeError) as exc:
        print(f'robocup3d optimize: {exc}', file=sys.stderr)
        return 2
    print(f'best score {best:.3f}; written to {path}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
