"""Fuzz the real player process with mutated real captures, on both dialects (issue #24).

``python bench/bench_fuzz.py`` sends 10^6 messages (half per dialect; ``--messages`` for fewer)
from a lockstep fake server (``robocup3d_tools.fuzz``) to one real ``robocup3d player`` each, and
prints per dialect: messages, how many were mutated, cycles answered as the server needs
(``(syn)`` on rcssserver3d, a full joint command on RCSSServerMJ), non-finite values sent and
published, link deaths (reconnections), whether the player lived, and its memory at start and end.
``--player-src DIR`` runs the player from another source tree (e.g. an older commit) for a
before/after comparison.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robocup3d_tools.fuzz import (  # noqa: E402
    FakeServer,
    FuzzFigures,
    Mutator,
    TopicWatch,
    load_lines,
    rss_mb,
    start_player,
    stop_player,
)

CAPTURES = ROOT.parent / 'shared' / 'captures'


def run(
    dialect: str, messages: int, seed: int, rate: float, log_dir: Path, player_src: Path | None, progress: int = 0
) -> dict:
    """Fuzz one player on one dialect; return the figures as a dict."""
    server = FakeServer(dialect, load_lines(CAPTURES, dialect), Mutator(random.Random(seed), rate))
    log = log_dir / f'player_{dialect}.log'
    extra = ['--no-raw']
    if player_src is not None:
        os.environ['PYTHONPATH'] = str(player_src)
    proc = start_player(dialect, server.port, log, extra, cwd=player_src)
    watch = TopicWatch('/Fuzz/p1')
    figures = FuzzFigures(dialect)
    rss: list[float] = []
    try:
        marks = (min(200, messages - 1), messages - 1)

        def on_message(i: int) -> None:
            if i in marks:
                rss.append(rss_mb(proc.pid))
            if progress and i and i % progress == 0:  # a long run shows how it goes
                print(
                    f'{dialect}: {i} messages, answered {100.0 * figures.answered_ratio:.3f} %, '
                    f'link deaths {figures.link_deaths}, bad values sent {figures.bad_values_sent}, '
                    f'{rss_mb(proc.pid):.1f} MB, {i / (time.monotonic() - started):.0f} messages/s',
                    flush=True,
                )

        started = time.monotonic()
        server.run(messages, figures, on_message=on_message)
        time.sleep(0.5)
        alive = proc.poll() is None
    finally:
        status = stop_player(proc)
        watch.close()
        server.close()
    return {
        'dialect': dialect,
        'messages': figures.messages,
        'mutated': sum(figures.mutated.values()),
        'broken_frames': figures.broken_frames,
        'answered_%': 100.0 * figures.answered_ratio,
        'any_reply_%': 100.0 * figures.any_reply / max(1, figures.checked),
        'bad_sent': figures.bad_values_sent,
        'bad_published': sum(watch.non_finite.values()),
        'published': sum(watch.messages.values()),
        'link_deaths': figures.link_deaths + (figures.gave_up_at is not None),
        'gave_up_at': figures.gave_up_at,
        'alive': alive,
        'exit': status,
        'rss_start_MB': rss[0] if rss else float('nan'),
        'rss_end_MB': rss[-1] if len(rss) > 1 else float('nan'),
        'msg_per_s': figures.messages / figures.seconds if figures.seconds else 0.0,
        'examples': figures.examples,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--messages', type=int, default=1_000_000, help='in all, split over the dialects')
    ap.add_argument('--dialect', choices=('both', 'mujoco', 'simspark'), default='both')
    ap.add_argument('--seed', type=int, default=24)
    ap.add_argument('--rate', type=float, default=0.5, help='share of messages mutated')
    ap.add_argument('--player-src', type=Path, help='run the player from this source tree')
    ap.add_argument('--log-dir', type=Path, default=Path('/tmp/robocup3d_bench_fuzz'))
    ap.add_argument('--progress', type=int, default=10000, help='print the figures every N messages (0: never)')
    args = ap.parse_args(argv)
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    args.log_dir.mkdir(parents=True, exist_ok=True)
    dialects = ['mujoco', 'simspark'] if args.dialect == 'both' else [args.dialect]
    each = args.messages // len(dialects)
    rows = [run(d, each, args.seed, args.rate, args.log_dir, args.player_src, args.progress) for d in dialects]
    cols = ['dialect', 'messages', 'mutated', 'broken_frames', 'answered_%', 'any_reply_%', 'bad_sent',
            'bad_published', 'published', 'link_deaths', 'gave_up_at', 'alive', 'exit', 'rss_start_MB', 'rss_end_MB',
            'msg_per_s']  # fmt: skip
    print(' | '.join(cols))
    for r in rows:
        print(' | '.join(f'{r[c]:.2f}' if isinstance(r[c], float) else str(r[c]) for c in cols))
    for r in rows:
        for e in r['examples']:
            print(f'{r["dialect"]} sent: {e}')
    print(f'player logs: {args.log_dir}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
