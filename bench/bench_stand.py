"""Stand benchmark through the running graph: does the robot stand, and how much does it sway?

    PYTHONPATH=. python bench/bench_stand.py --seconds 60 [--robots T1 K1] [--fast]

The trainer puts the player upright at (-3, 0); we watch ``ground_truth/pose`` for
``--seconds`` of server time and print: fell or not, torso tilt mean / standard
deviation / max (deg) and horizontal drift (m).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_getup import Graph


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--robots', nargs='+', default=['T1', 'K1'])
    ap.add_argument('--seconds', type=float, default=60.0)
    ap.add_argument('--fast', action='store_true', help='server in --sync --no-realtime mode')
    args = ap.parse_args(argv)
    lines = []
    for robot in args.robots:
        g = Graph(robot, args.fast).start()
        try:
            r = g.stand_trial(args.seconds)
        finally:
            g.close()
        lines.append(
            f'{robot:3s} stand {r["seconds"]:.1f} s: {"FELL" if r["fell"] else "stood"}; torso tilt '
            f'mean {r["tilt_mean_deg"]:.2f} deg, sd {r["tilt_sd_deg"]:.3f} deg, '
            f'max {r["tilt_max_deg"]:.2f} deg; '
            f'drift {r["drift_m"] * 100:.1f} cm; get-ups started {r["getups_started"]}'
        )
        print(lines[-1], flush=True)
    print('\n'.join(lines))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
