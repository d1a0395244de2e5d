"""A forged ball report against the world model, on a real capture (issue 24, item 7).

Run: ``python bench/bench_forged_report.py [--offset 7 5] [--liars 1]``. Replays
``simspark/type0_single_agent.txt`` through a :class:`WorldModel`; during the longest stretch in
which the robot does not see the ball (0.9 s), ``--liars`` forged teammates say every cycle that
the ball is ``--offset`` m from the estimate. Prints, for the tracker as it is and with
``corroborating_reports=1`` (a lone far report is adopted at once, as before issue 24), how far
the estimate moved and for how long it was more than 1 m off.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robocup3d_bridge.perception import parse_percept  # noqa: E402
from robocup3d_bridge.team_talk import TeammateReport  # noqa: E402
from robocup3d_description.body import body_for  # noqa: E402
from robocup3d_perception.ball_tracker import BallTrackerParameters  # noqa: E402
from robocup3d_perception.field import field_for  # noqa: E402
from robocup3d_perception.inputs import cycle_input  # noqa: E402
from robocup3d_perception.world_model import WorldModel  # noqa: E402

CAPTURE = ROOT / '..' / 'shared' / 'captures' / 'simspark' / 'type0_single_agent.txt'


def replay(lines: list[str], said: dict[int, list[TeammateReport]], ball: BallTrackerParameters) -> list[tuple]:
    """(time, ball estimate xy, ball seen) per cycle."""
    wm = WorldModel(body_for('nao0'), field_for('simspark'), use_lines=True, ball=ball)
    out = []
    for i, line in enumerate(lines):
        p = parse_percept(line, 'simspark')
        state = wm.update(replace(cycle_input(p, 'left', 'Alpha', 1), reports=tuple(said.get(i, ()))))
        out.append((p.time, np.array(state.ball.position[:2]), p.vision is not None and p.vision.ball is not None))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--offset', type=float, nargs=2, default=(7.0, 5.0), help='m from the estimate')
    ap.add_argument('--liars', type=int, default=1, help='forged teammates (different shirt numbers)')
    args = ap.parse_args()
    lines = CAPTURE.read_text().splitlines()
    rows = []
    for label, params in (
        ('now', BallTrackerParameters()),
        ('adopt at once', BallTrackerParameters(corroborating_reports=1)),
    ):
        plain = replay(lines, {}, params)
        sees = [i for i, r in enumerate(plain) if r[2]]
        a, b = max(pairwise(sees), key=lambda g: g[1] - g[0])
        first, last = a + 1, b - 1
        xy = tuple(plain[first - 1][1] + np.array(args.offset))
        said = {
            i: [TeammateReport(plain[i][0], 2 + k, ball=xy) for k in range(args.liars)] for i in range(first, last + 1)
        }
        forged = replay(lines, said, params)
        dev = [float(np.linalg.norm(f[1] - p[1])) for f, p in zip(forged, plain, strict=True)]
        off = [plain[i][0] for i, d in enumerate(dev) if d > 1.0]
        rows.append(
            (label, math.hypot(*args.offset), plain[last][0] - plain[first][0] + 0.02, max(dev), len(off) * 0.02)
        )
    print(
        f'{"tracker":<14} {"forged m":>8} {"unseen s":>8} {"moved m":>8} {"> 1 m off s":>11}   ({args.liars} liar(s))'
    )
    for label, dist, unseen, moved, off in rows:
        print(f'{label:<14} {dist:8.2f} {unseen:8.2f} {moved:8.2f} {off:11.2f}')


if __name__ == '__main__':
    main()
