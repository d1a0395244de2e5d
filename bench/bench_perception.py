"""Per-cycle CPU time of the world model (localization + tracking) and its accuracy.

Runs the captures offline through ``robocup3d_perception.world_model.WorldModel``
(ground truth removed from the input, used only for scoring) and prints, per capture,
the update's CPU time (this thread's, so other processes on a busy machine count
less) over all cycles and over ``See`` cycles (p50/p99, ms) and the error statistics
after convergence (position, heading, ball while seen, recovery after each jump).

    PYTHONPATH=. python bench/bench_perception.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from robocup3d_bridge.perception import parse_percept
from robocup3d_description.body import body_for
from robocup3d_perception.field import field_for
from robocup3d_perception.inputs import cycle_input
from robocup3d_perception.world_model import WorldModel
from robocup3d_tools.localize import _detect, run_capture, summarize

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / 'shared' / 'captures'
CAPTURES = (
    SHARED / 'simspark/groundtruth_type0_single_agent.txt',
    SHARED / 'simspark/match_A1_Alpha1_type0.txt',
    SHARED / 'rcssservermj/capture_T1.txt',
    SHARED / 'rcssservermj/capture_K1.txt',
    REPO / 'test/data/t1_walk_forward.txt',  # our recording of a T1 walking 10 s (no walk odometry offline)
)


def cpu_times(lines: list[str], repeat: int) -> tuple[np.ndarray, np.ndarray]:
    """Update CPU times (s) over all cycles and over See cycles (parsing excluded)."""
    server, robot = _detect(lines)
    percepts = [parse_percept(ln) for ln in lines if ln.strip()]
    inputs = [cycle_input(p) for p in percepts if p.time is not None]
    all_t, see_t = [], []
    for _ in range(repeat):
        wm = WorldModel(body_for(robot), field_for(server), use_lines=server == 'simspark')
        for inp in inputs:
            t0 = time.thread_time()
            wm.update(inp)
            dt = time.thread_time() - t0
            all_t.append(dt)
            if inp.vision is not None:
                see_t.append(dt)
    return np.array(all_t), np.array(see_t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--repeat', type=int, default=3)
    args = ap.parse_args()
    for path in CAPTURES:
        if not path.exists():
            print(f'{path.name}: missing')
            continue
        lines = path.read_text().splitlines()
        all_t, see_t = cpu_times(lines, args.repeat)
        ms = lambda a, q: np.percentile(a, q) * 1e3  # noqa: E731
        print(f'{path.name}: {len(all_t) // args.repeat} cycles')
        print(f'  update all cycles  p50 {ms(all_t, 50):.3f} ms  p99 {ms(all_t, 99):.3f} ms')
        print(f'  update See cycles  p50 {ms(see_t, 50):.3f} ms  p99 {ms(see_t, 99):.3f} ms')
        s = summarize(list(run_capture(lines)))
        if s.scored:
            print(
                f'  position error median {s.pos_median:.3f} m p95 {s.pos_p95:.3f} m; '
                f'heading median {s.heading_median:.2f} deg p95 {s.heading_p95:.2f} deg ({s.scored} See cycles)'
            )
            if s.ball_scored:
                print(f'  ball error while seen median {s.ball_median:.3f} m p95 {s.ball_p95:.3f} m')
            rec = [r for _, r in s.recoveries[1:]]
            if rec:
                print('  recovery after jumps (s): ' + ', '.join('never' if r is None else f'{r:.2f}' for r in rec))


if __name__ == '__main__':
    main()
