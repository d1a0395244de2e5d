"""What reading rcssserver3d's ground truth costs the recorder: CPU ms per monitor message.

Per message, what ``robocup3d record`` does: the game-state header (``parse_monitor_message``),
the scene (``SimsparkTracker.update``: the full tree, or a diff applied to it) and the world poses
(``truth``). Over the real capture (``match_monitor_port3200.txt``: 3 Nao, only heads and arms
moving), and over a made-up stream of 22 Nao in which every diff moves every transform of every
robot (the worst case): the capture's agent copied 22 times into its full scene, and each diff
the same tree with all its SLTs. Run from the repo root with the venv active:

    python bench/bench_simspark_truth.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robocup3d_bridge.sexp import parse_sexp, to_sexp  # noqa: E402
from robocup3d_bridge.trainer import MonitorState, parse_monitor_message  # noqa: E402
from robocup3d_tools.simspark_truth import SimsparkTracker  # noqa: E402

CAPTURE = ROOT / '..' / 'shared' / 'captures' / 'simspark' / 'match_monitor_port3200.txt'
_SCENE = re.compile(r'\((RSG|RDS) \d+ \d+\)')


def top_nodes(scene: str) -> list[str]:
    """The top-level ``(nd ...)`` texts of a scene ``((nd ..)(nd ..)...)``."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(scene):
        if c == '(':
            depth += 1
            if depth == 2:
                start = i
        elif c == ')':
            depth -= 1
            if depth == 1:
                out.append(scene[start : i + 1])
    return out


def as_diff(node: str, slt: bool = True) -> str:
    """A full node as a diff: only its ``nd`` and (``slt``: every transform changed) ``SLT`` items."""

    def render(expr: list) -> str:
        inner = ''.join(
            render(c) if c[0] == 'nd' else to_sexp(c)
            for c in expr
            if isinstance(c, list) and c and (c[0] == 'nd' or (slt and c[0] == 'SLT'))
        )
        return f'(nd{inner})'

    (expr,) = parse_sexp(node)
    return render(expr)


def synthetic(lines: list[str], robots: int = 22, diffs: int = 100) -> list[str]:
    """A full scene with ``robots`` copies of the capture's first agent, then ``diffs`` worst-case diffs."""
    full = lines[12]  # message 13: the full scene with both teams' names
    m = _SCENE.search(full)
    header, scene = full[: m.end()], full[m.end() :]
    nodes = top_nodes(scene)
    agent = next(n for n in nodes if 'naobody' in n)
    fixed = [n for n in nodes if 'naobody' not in n]
    copies = []
    for k in range(robots):
        side, unum = ('matLeft', 'matRight')[k % 2], k // 2 + 1
        copies.append(agent.replace('matNum1', f'matNum{unum}').replace('matLeft', side))
    full_text = header + '(' + ''.join(fixed + copies) + ')'
    diff_nodes = [as_diff(n, slt=False) for n in fixed] + [as_diff(c) for c in copies]
    out = [full_text]
    for i in range(diffs):
        out.append(f'((time {i * 0.04:.2f}))(RDS 0 1)(' + ''.join(diff_nodes) + ')')
    return out


def run(lines: list[str], repeat: int) -> dict[str, list[float]]:
    """CPU ms per message (this process only: other load on the machine does not count), by kind."""
    times: dict[str, list[float]] = {'full': [], 'diff': []}
    for _ in range(repeat):
        tracker, state = SimsparkTracker(), MonitorState()
        for line in lines:
            t0 = time.process_time()
            parse_monitor_message(line, 'simspark', state)
            ok = tracker.update(line)
            truth = tracker.truth(state.team_left, state.team_right)
            dt = (time.process_time() - t0) * 1e3
            assert ok, 'a message did not fit'
            times['full' if '(RSG ' in line[:20000] else 'diff'].append(dt)
    assert truth.robots or repeat == 0
    return times


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--repeat', type=int, default=5)
    args = p.parse_args()
    lines = CAPTURE.read_text().splitlines()
    print(f'{"stream":<34}{"kind":<6}{"msgs":>6}{"kB":>7}{"mean ms":>9}{"p50 ms":>8}{"p99 ms":>8}{"max ms":>8}')
    for name, stream in (('capture (3 Nao)', lines), ('22 Nao, every transform moving', synthetic(lines))):
        times = run(stream, args.repeat)
        for kind, ms in times.items():
            size = statistics.mean(len(m) for m in stream if ('(RSG ' in m[:20000]) == (kind == 'full')) / 1000
            p99 = statistics.quantiles(ms, n=100, method='inclusive')[98] if len(ms) > 1 else ms[0]
            print(
                f'{name:<34}{kind:<6}{len(ms) // args.repeat:>6}{size:>7.1f}{statistics.mean(ms):>9.2f}'
                f'{statistics.median(ms):>8.2f}{p99:>8.2f}{max(ms):>8.2f}'
            )


if __name__ == '__main__':
    main()
