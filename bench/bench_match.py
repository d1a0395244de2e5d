"""Whole matches: every half's score and the total goal difference, with the real-time factor.

Run (from the repo root, venv active):

* rcssserver3d, our 11 Nao against another team given by its start command (rcssserver3d on PATH)::

    python bench/bench_match.py --server simspark --halves 2 --half-time 300 \\
        --opponent-cmd '/path/to/start_other_team.sh {host} {port}'

* RCSSServerMJ, 7 T1 against ours keeping formation places::

    python bench/bench_match.py --server mujoco --players 7 --opponent formation --halves 2 --half-time 60

Plays ``robocup3d match`` (rcssserver3d plays 1 or 2 halves a match, so ``--halves N`` there
is as many matches of 2 halves as it takes) and prints one row per half: goals for us (left)
and for them, game seconds, wall seconds and the real-time factor of the match it belongs to.
``--sync`` runs the server in sync mode. Sets its own ``ROS_DOMAIN_ID`` unless one is given.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robocup3d_tools.match import MatchResult, format_result, match_parser, run_match  # noqa: E402


def _match_argv(opts: argparse.Namespace, halves: int, run_dir: str) -> list[str]:
    argv = ['--server', opts.server, '--halves', str(halves), '--half-time', str(opts.half_time)]
    argv += ['--run-dir', run_dir]
    if opts.players is not None:
        argv += ['--players', str(opts.players)]
    if opts.sync:
        argv.append('--sync')
    if opts.server == 'simspark' and opts.opponent_cmd:
        argv += ['--opponent-cmd', opts.opponent_cmd]
    elif opts.server == 'mujoco':
        argv += ['--opponent', opts.opponent, '--robot', opts.robot]
    return argv


def _rows(results: list[MatchResult]) -> list[tuple]:
    rows = []
    for m, r in enumerate(results, 1):
        before = (0, 0)
        rtf = r.game_time / max(r.play_wall_time, 1e-9)
        for h, (left, right) in enumerate(r.half_scores, 1):
            rows.append((m, h, left - before[0], right - before[1], rtf))
            before = (left, right)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--server', choices=('mujoco', 'simspark'), default='mujoco')
    ap.add_argument('--halves', type=int, default=2, help='halves in all')
    ap.add_argument('--half-time', type=float, default=60.0, help='game seconds per half')
    ap.add_argument('--players', type=int, default=None, help='our players (mujoco default 7, simspark 11)')
    ap.add_argument('--robot', default='T1', help='mujoco: T1 or K1')
    ap.add_argument('--opponent', choices=('ours', 'formation'), default='formation', help='mujoco: the right team')
    ap.add_argument('--opponent-cmd', default=None, help="simspark: the right team's start command ({host} {port})")
    ap.add_argument('--sync', action='store_true', help='the server waits for every agent each cycle')
    opts = ap.parse_args()
    if opts.server == 'mujoco' and opts.players is None:
        opts.players = 7
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))
    per_match = 2 if opts.server == 'simspark' else opts.halves
    results: list[MatchResult] = []
    left = opts.halves
    while left > 0:
        halves = min(per_match, left)
        args = match_parser().parse_args(_match_argv(opts, halves, f'/tmp/bench_match/{len(results) + 1}'))
        result = run_match(args, log=lambda line: print(line, flush=True))
        print(format_result(result), flush=True)
        results.append(result)
        left -= max(1, len(result.half_scores))
    r0 = results[0]
    print(f'\n{r0.teams[0]} (left) v {r0.teams[1]} (right) on {r0.server}, {r0.mode} mode, {opts.half_time:g} s halves')
    print(f'{"match":>5}{"half":>6}{"for":>6}{"against":>9}{"real-time factor":>18}')
    rows = _rows(results)
    for m, h, f, a, rtf in rows:
        print(f'{m:>5}{h:>6}{f:>6}{a:>9}{rtf:>18.2f}')
    goals_for, goals_against = sum(r[2] for r in rows), sum(r[3] for r in rows)
    print(f'total: {goals_for} : {goals_against} in {len(rows)} halves, goal difference {goals_for - goals_against:+d}')


if __name__ == '__main__':
    main()
