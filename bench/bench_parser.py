"""Parser throughput on the real server captures: ``parse_percept`` and the S-expression reader alone.

Run: ``python bench/bench_parser.py [--seconds 0.5]``. Prints messages/s and µs/message for every
agent capture in ``../shared/captures`` (monitor streams are skipped: they are not agent messages).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robocup3d_bridge.perception import parse_percept  # noqa: E402
from robocup3d_bridge.sexp import parse_sexp  # noqa: E402

CAPTURES = ROOT / '..' / 'shared' / 'captures'


def agent_captures() -> list[Path]:
    """Every agent capture file (one server message per line)."""
    return sorted(p for p in CAPTURES.glob('*/*.txt') if 'monitor' not in p.name)


def load(path: Path) -> list[str]:
    """The messages of one capture."""
    return [line for line in path.read_text(encoding='ascii').split('\n') if line]


def throughput(fn: Callable[[str], object], messages: list[str], seconds: float) -> float:
    """Seconds per message: repeat whole passes over ``messages`` for at least ``seconds``; best pass wins."""
    best = float('inf')
    spent = 0.0
    while spent < seconds or best == float('inf'):
        t0 = time.perf_counter()
        for m in messages:
            fn(m)
        dt = time.perf_counter() - t0
        spent += dt
        best = min(best, dt / len(messages))
    return best


def main() -> int:
    """Measure every capture and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--seconds', type=float, default=0.5, help='time per capture and function (default 0.5)')
    args = ap.parse_args()
    files = agent_captures()
    if not files:
        print(f'no captures found in {CAPTURES.resolve()}', file=sys.stderr)
        return 1
    print(f'{"capture":<50} {"msgs":>5} {"bytes/msg":>9} | {"parse_percept":>22} | {"parse_sexp only":>22}')
    print(f'{"":<50} {"":>5} {"":>9} | {"msg/s":>10} {"µs/msg":>11} | {"msg/s":>10} {"µs/msg":>11}')
    total = {'percept': 0.0, 'sexp': 0.0, 'n': 0}
    for path in files:
        msgs = load(path)
        size = sum(map(len, msgs)) / len(msgs)
        t_percept = throughput(parse_percept, msgs, args.seconds)
        t_sexp = throughput(parse_sexp, msgs, args.seconds)
        total['percept'] += t_percept * len(msgs)
        total['sexp'] += t_sexp * len(msgs)
        total['n'] += len(msgs)
        name = f'{path.parent.name}/{path.name}'
        print(
            f'{name:<50} {len(msgs):>5} {size:>9.0f} | {1 / t_percept:>10,.0f} {t_percept * 1e6:>11.1f} |'
            f' {1 / t_sexp:>10,.0f} {t_sexp * 1e6:>11.1f}'
        )
    n = total['n']
    tp, ts = total['percept'] / n, total['sexp'] / n
    print(
        f'{"all (weighted by messages)":<50} {n:>5} {"":>9} | {1 / tp:>10,.0f} {tp * 1e6:>11.1f} |'
        f' {1 / ts:>10,.0f} {ts * 1e6:>11.1f}'
    )
    print('A player cycle is 20 ms (20,000 µs).')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
