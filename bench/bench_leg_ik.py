"""The leg IK on the foot poses a walk asks for: CPU per ``legs_ik`` call and closed-form passes per leg.

A :class:`~robocup3d_motion.walk.WalkEngine` with the shipped parameters walks 12 s offline (forward,
turning, sideways, a blend; 600 cycles) and every ``legs_ik`` call it makes is kept; the calls are then
timed again (best of ``--repeat``), and each leg's solve is counted in closed-form passes (``_branch_at``,
and ``_nao_branch`` where the tree has it: T1 and K1 find their first hip angle by secant steps; the Nao's
is one pass). Deterministic but for the timing, so two trees compare by the passes and by the time measured
in one run each, alternated.

    python bench/bench_leg_ik.py [--robots T1 K1 nao0] [--repeat 5]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robocup3d_bridge.config_files import load_config
from robocup3d_description import kinematics as kin
from robocup3d_description.body import body_for
from robocup3d_motion import walk as walk_module

COMMANDS = ((0.5, 0.0, 0.0), (0.2, 0.0, 0.6), (0.0, 0.2, 0.0), (0.3, -0.1, -0.4))  # vx m/s, vy m/s, wz rad/s


def walk_calls(robot: str, cycles: int = 600) -> list[tuple]:
    """The ``legs_ik`` calls of a walk of ``cycles`` cycles, 150 per command of :data:`COMMANDS`."""
    body = body_for(robot[:3] if robot.startswith('nao') else robot, int(robot[3:]) if robot.startswith('nao') else 0)
    sets, default = walk_module.walk_sets(load_config('walk.yaml'), 'nao' if robot.startswith('nao') else robot)
    calls, real = [], walk_module.legs_ik

    def keep(b: object, left: object, right: object, joints: object = None, check_limits: bool = True) -> dict:
        calls.append((b, np.array(left, dtype=float), np.array(right, dtype=float), dict(joints or {}), check_limits))
        return real(b, left, right, joints, check_limits)

    walk_module.legs_ik = keep
    try:
        engine = walk_module.WalkEngine(body, sets[default])
        for i in range(cycles):
            engine.set_command(*COMMANDS[(i // 150) % len(COMMANDS)])
            engine.step(0.02)
    finally:
        walk_module.legs_ik = real
    return calls


def passes_per_leg(calls: list[tuple]) -> collections.Counter:
    """How many closed-form passes each leg's solve took, over the calls (solved one leg at a time)."""
    counts: collections.Counter = collections.Counter()
    names = [name for name in ('_branch_at', '_nao_branch') if hasattr(kin, name)]
    real, n = {name: getattr(kin, name) for name in names}, [0]

    def counting(fn: Callable[..., tuple]) -> Callable[..., tuple]:
        def counted(*args: object) -> tuple:
            n[0] += 1
            return fn(*args)

        return counted

    for name in names:
        setattr(kin, name, counting(real[name]))
    kin._HINTS.clear()
    try:
        for body, left, right, joints, check in calls:
            for side, target in (('l', left), ('r', right)):
                leg = kin._leg(body, side)
                pf, rows = kin._in_base(body, leg, target, joints)
                n[0] = 0
                kin._solve(leg, pf, rows, check)
                counts[n[0]] += 1
    finally:
        for name in names:
            setattr(kin, name, real[name])
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--robots', nargs='+', default=['T1', 'K1', 'nao0'])
    ap.add_argument('--repeat', type=int, default=5)
    args = ap.parse_args()
    head = f'robot | legs_ik calls | us per call (best of {args.repeat}) | closed-form passes per leg (mean) | passes'
    print(head + ': legs')
    for robot in args.robots:
        calls = walk_calls(robot)
        best = float('inf')
        for _ in range(args.repeat):
            kin._HINTS.clear()
            t0 = time.process_time()
            for body, left, right, joints, check in calls:
                kin.legs_ik(body, left, right, joints, check)
            best = min(best, time.process_time() - t0)
        counts = passes_per_leg(calls)
        mean = sum(k * v for k, v in counts.items()) / max(1, sum(counts.values()))
        spread = ' '.join(f'{k}:{v}' for k, v in sorted(counts.items()))
        print(f'{robot} | {len(calls)} | {1e6 * best / len(calls):.1f} | {mean:.2f} | {spread}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
