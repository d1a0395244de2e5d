"""Candidate evaluations per minute of ``robocup3d optimize``: Ray with 1 and 2 workers, and a thread pool.

Each evaluation is what a get-up generation runs per candidate (its own RCSSServerMJ in sync mode,
the real player process, ``--trials`` knock-downs of the T1's shipped back get-up). The thread pool
is the engine ``optimize`` had before Ray (threads of this process, each starting the same
evaluation process).

    python bench/bench_optimize.py [--evaluations 6] [--trials 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robocup3d_tools.getup_search import getup_space
from robocup3d_tools.optimize import _getup_candidate
from robocup3d_tools.ray_pool import RayPool, claim_domain


class ThreadPool:
    """``map(fn, args)`` on threads of this process, each evaluation in a domain of its own."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def map(self, fn, args: list) -> list:
        def one(arg: object) -> object:
            with claim_domain() as domain:
                return fn(arg, domain)

        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(one, args))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--evaluations', type=int, default=6)
    ap.add_argument('--trials', type=int, default=1)
    args = ap.parse_args()
    space = getup_space('getup-back', 'T1')
    jobs = [(space, space.x0(), 'getup-back', 'mujoco', 'T1', 0, args.trials, k + 1) for k in range(args.evaluations)]
    rows = []
    for name, workers in (('threads', 2), ('ray', 1), ('ray', 2)):
        pool = ThreadPool(workers) if name == 'threads' else RayPool(workers)
        start = time.monotonic()
        results = pool.map(_getup_candidate, jobs)
        took = time.monotonic() - start
        if isinstance(pool, RayPool):
            pool.close()
        ok = sum(len(r.get('times', ())) for r in results)
        rows.append((name, workers, took, 60.0 * len(jobs) / took, ok, sum('error' in r for r in results)))
    print(f'{args.evaluations} evaluations of {args.trials} T1 back get-up(s) each, RCSSServerMJ sync mode')
    print(f'{"engine":8} {"workers":>7} {"seconds":>8} {"eval/min":>9} {"up":>4} {"errors":>6}')
    for name, workers, took, rate, ok, errors in rows:
        print(f'{name:8} {workers:7d} {took:8.1f} {rate:9.1f} {ok:4d} {errors:6d}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
