"""Offline T1 lining-up walk: the kick's step-in near the ball, scored in RCSSServerMJ's own simulation.

An experiment tool, not a measurement (the verdict is ``bench_walkup.py`` and ``walk_tasks`` on the real
server). The simulation is ``mj_offline``'s. A trial restores a settled stand and plays a seeded course of
lining-up commands (``robocup3d_tools.lineup``: an arrival, then small steps each way, turns, stops and
steps in place, as the kick's fine steps send) through the set; another trial steps in place for 4 s.
It scores (lower is better, see :func:`score`): a graded fall penalty (as ``kick_offline``: later falls
score better), the creep (the torso's drift from the commanded displacement, m/s, and the turn's, rad/s)
and the torso's pitch and roll excursions from the stand's (deg).

``--search OUT`` runs CMA-ES over ``--params`` of the walk set ``--set`` (ranges: ``config/optimize.yaml``
``walk.mujoco``, as ``robocup3d optimize``), each candidate on ``--courses`` courses (new seeds each
generation) and the step in place; the best is written as a walk file ``OUT.yaml`` (the set only) and every
candidate to ``OUT.jsonl``. ``--eval`` scores the shipped set (or ``--walk-config FILE``, ``--values`` over
it) on ``--courses`` courses from ``--first`` on, and a step in place.

    PYTHONPATH=. python bench/walk_offline.py --eval --courses 6
    PYTHONPATH=. python bench/walk_offline.py --search /tmp/lineup --generations 12 --popsize 8 --courses 2
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mj_offline import CYCLE, Offline, Snapshot, stand

from robocup3d_motion.motion_config import load_walk_config
from robocup3d_motion.walk import WalkParams, walk_sets
from robocup3d_tools.lineup import ARRIVE, Segment, course, drift, in_place
from robocup3d_tools.optimize import decode, encode, search_space, write_walk_file

#: the values searched by default: the lean's feedback, where the weight sits over the feet, the step back
PARAMS = ('tilt_pitch', 'sole_x', 'torso_pitch', 'gyro_pitch', 'sole_x_back', 'min_vx')


@dataclass
class Result:
    """What a trial measured (after the arrival): fall time, creep and torso excursions."""

    seconds: float
    fell_t: float | None = None
    creep: float = 0.0  # m/s: mean drift from the commanded displacement
    creep_turn: float = 0.0  # rad/s: the same for the heading
    pitch_max: float = 0.0  # deg from the stand's, largest
    roll_max: float = 0.0
    pitch_rms: float = 0.0
    roll_rms: float = 0.0
    drift: list[float] = field(default_factory=list)  # m per segment


def _tilt(o: Offline) -> tuple[float, float]:
    """Torso pitch (forward positive) and roll (deg)."""
    r = o.sim.mj_data.xmat[o.torso]
    return math.degrees(-math.asin(max(-1.0, min(1.0, r[6])))), math.degrees(math.atan2(r[7], r[8]))


class Bench:
    """A settled T1 stand saved once; :meth:`trial` plays segments through a walk set from it."""

    def __init__(self, set_name: str = 'positioning', delay: int = 0) -> None:
        self.set_name = set_name
        o = stand()
        o.delay = delay
        tilts = []
        for _ in range(25):
            o.cycle()
            tilts.append(_tilt(o))
        self.level = (statistics.fmean(t[0] for t in tilts), statistics.fmean(t[1] for t in tilts))
        self.snapshot = Snapshot(o)

    @staticmethod
    def _pose(o: Offline) -> tuple[float, float, float]:
        x, y = o.sim.mj_data.xpos[o.torso][:2]
        return float(x), float(y), o.yaw()

    def trial(self, params: WalkParams, segments: list[Segment]) -> Result:
        """Play ``segments`` (the first ones: :data:`ARRIVE`, not scored) with the set ``params``."""
        o = self.snapshot.restore()
        o.core.walk_sets[self.set_name] = params
        o.core.walk_set = self.set_name
        o.core.walk.set_params(params)
        res, t, err, err_w, pitch, roll = Result(0.0), 0.0, 0.0, 0.0, [], []
        for k, (cmd, hold) in enumerate(segments):
            poses = [self._pose(o)]
            for _ in range(round(hold / CYCLE)):
                o.core.set_velocity(*cmd)
                o.cycle()
                poses.append(self._pose(o))
                if k >= len(ARRIVE):
                    t += CYCLE
                    p, r = _tilt(o)
                    pitch.append(p - self.level[0])
                    roll.append(r - self.level[1])
                if o.up() < 0.5:  # a fall in the arrival counts as at once
                    res.fell_t = round(t, 2)
                    break
            if k < len(ARRIVE) and res.fell_t is None:
                continue
            d, dw = drift(poses, cmd, CYCLE)
            res.drift.append(round(d, 3))
            err, err_w = err + d, err_w + dw
            if res.fell_t is not None:
                break
        res.seconds = round(t, 2)
        if t > 0.0:
            res.creep, res.creep_turn = round(err / t, 4), round(err_w / t, 4)
        if pitch:
            res.pitch_max, res.roll_max = round(max(map(abs, pitch)), 2), round(max(map(abs, roll)), 2)
            res.pitch_rms = round(math.sqrt(statistics.fmean(x * x for x in pitch)), 2)
            res.roll_rms = round(math.sqrt(statistics.fmean(x * x for x in roll)), 2)
        return res


def score(r: Result, planned: float) -> float:
    """Lower is better: a fall 20 plus up to 20 the earlier it came (of ``planned`` s), 10 per m/s of creep,
    2 per rad/s of the turn's, the torso's pitch and roll rms (deg, x0.2) and peaks beyond 6 deg (x0.1)."""
    s = 10.0 * r.creep + 2.0 * r.creep_turn + 0.2 * (r.pitch_rms + r.roll_rms)
    s += 0.1 * (max(0.0, r.pitch_max - 6.0) + max(0.0, r.roll_max - 6.0))
    if r.fell_t is not None:
        s += 20.0 + 20.0 * max(0.0, 1.0 - r.fell_t / planned)
    return s


def candidate_score(
    bench: Bench, params: WalkParams, seeds: list[int], seconds: float = 10.0
) -> tuple[float, list[dict]]:
    """The mean score over the courses ``seeds`` (``seconds`` long) and a step in place, and each trial's result."""
    plans = [course(s, seconds) for s in seeds] + [in_place(min(4.0, seconds))]
    res = [bench.trial(params, plan) for plan in plans]
    planned = [sum(h for _, h in plan[len(ARRIVE) :]) for plan in plans]
    return statistics.fmean(score(r, p) for r, p in zip(res, planned, strict=True)), [asdict(r) for r in res]


def shipped_set(name: str, walk_config: str = 'walk.yaml') -> WalkParams:
    """The T1's walk set ``name`` of ``walk_config``."""
    return walk_sets(load_walk_config(walk_config), 'T1')[0][name]


def evaluate(args: argparse.Namespace) -> None:
    bench = Bench(args.set, args.delay)
    params = replace(shipped_set(args.set, args.walk_config), **json.loads(args.values or '{}'))
    total, falls, creep = [], 0, []
    for seed in range(args.first, args.first + args.courses):
        plan = course(seed, args.seconds)
        r = bench.trial(params, plan)
        total.append(score(r, sum(h for _, h in plan[len(ARRIVE) :])))
        falls, creep = falls + (r.fell_t is not None), [*creep, r.creep]
        print(f'course {seed}', json.dumps({k: v for k, v in asdict(r).items() if k != 'drift'}), flush=True)
    r = bench.trial(params, in_place())
    total.append(score(r, 4.0))
    print('in place', json.dumps({k: v for k, v in asdict(r).items() if k != 'drift'}), flush=True)
    print(f'falls {falls} of {args.courses} courses; creep {statistics.median(creep):.3f} m/s (median), in place '
          f'{r.creep:.3f}; mean score {statistics.fmean(total):.3f}')  # fmt: skip


_BENCH: Bench | None = None  # a search worker's own


def _worker(set_name: str, delay: int) -> None:
    global _BENCH  # noqa: PLW0603 - one per worker process
    _BENCH = Bench(set_name, delay)


def _score_job(job: tuple[WalkParams, list[int], float]) -> tuple[float, list[dict]]:
    assert _BENCH is not None
    return candidate_score(_BENCH, *job)


def search(args: argparse.Namespace) -> None:
    import multiprocessing  # noqa: PLC0415

    import cma  # noqa: PLC0415

    start = shipped_set(args.set, args.walk_config)
    space = search_space('mujoco', args.optimize_config)
    names = list(args.params)
    x0 = encode(start, start, names, space)
    es = cma.CMAEvolutionStrategy(x0, args.sigma, {'popsize': args.popsize, 'seed': args.seed, 'bounds': [0, 1]})
    out, best = Path(args.search), math.inf
    fixed = [1000 + s for s in range(args.courses)]  # the CMA mean's courses
    # spawn, not fork: a forked worker can inherit a lock held by a thread of the parent (pytest's DDS) and hang
    pool = multiprocessing.get_context('spawn').Pool(args.workers, _worker, (args.set, args.delay))
    base, _ = pool.apply(_score_job, ((start, fixed, args.seconds),))
    print(f'start: {base:.3f} (courses 1000..)', flush=True)
    with pool, out.with_suffix('.jsonl').open('a') as log:
        for g in range(args.generations):
            seeds = [args.seed * 1000 + g * args.courses + k for k in range(args.courses)]
            xs = es.ask()
            cands = [decode(x, start, names, space) for x in xs]
            mean = decode(es.mean, start, names, space)  # the mean these were drawn round
            jobs = [(c, seeds, args.seconds) for c in cands] + [(mean, fixed, args.seconds)]
            *scored, (f_mean, _) = pool.map(_score_job, jobs, chunksize=1)
            fs = [f for f, _ in scored]
            for c, (f, res) in zip(cands, scored, strict=True):
                values = {n: round(float(getattr(c, n)), 5) for n in names}
                log.write(json.dumps({'g': g, 'score': f, 'values': values, 'res': res}) + '\n')
            log.flush()
            es.tell(xs, fs)
            if f_mean < best:
                best = f_mean
                note = f'walk_offline.py generation {g} CMA mean, score {f_mean:.3f} (start {base:.3f})'
                write_walk_file(out.with_suffix('.yaml'), 'T1', mean, args.set, note)
            print(f'generation {g}: best {min(fs):.3f}, mean {statistics.fmean(fs):.3f}, CMA mean {f_mean:.3f}'
                  f' (best {best:.3f})', flush=True)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--eval', action='store_true', help='score the set on courses 1..--courses and in place')
    ap.add_argument('--search', metavar='OUT', help='CMA-ES; writes OUT.jsonl and OUT.yaml (the best CMA mean)')
    ap.add_argument('--set', default='positioning', help="the T1's walk set (the kick task's: positioning)")
    ap.add_argument('--walk-config', default='walk.yaml')
    ap.add_argument('--values', help='eval: JSON of set values over it (as the search logs them: m, rad)')
    ap.add_argument('--optimize-config', default='optimize.yaml')
    ap.add_argument('--params', nargs='+', default=PARAMS)
    ap.add_argument('--courses', type=int, default=2, help='courses per candidate (plus the step in place)')
    ap.add_argument('--seconds', type=float, default=10.0, help='s of each course after its arrival')
    ap.add_argument('--generations', type=int, default=12)
    ap.add_argument('--popsize', type=int, default=8)
    ap.add_argument('--sigma', type=float, default=0.1, help='CMA step in units of each range')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--first', type=int, default=1, help='eval: the first course seed')
    ap.add_argument('--delay', type=int, default=0, help='cycles of extra action delay (a loaded player)')
    ap.add_argument('--workers', type=int, default=1, help='search: processes scoring candidates')
    args = ap.parse_args(argv)
    if args.search:
        search(args)
    elif args.eval:
        evaluate(args)
    else:
        ap.error('--eval or --search OUT')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
