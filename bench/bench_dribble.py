"""Dribble bench (issue #20): a 10 m course to a target, through the whole graph on the real server.

``python bench/bench_dribble.py [--robot T1] [--runs 5] [--distance 10]`` places the robot 1 m behind
the ball, asks motion to dribble it to a target ``--distance`` m beyond (a ``dribble`` task on
``motion_request``, as strategy sends it), and prints per run and in all: the ball's progress towards
the target, its mean speed from the first touch, the largest distance between ball and robot from
then on, falls, and how the task ended. Sync mode (``--realtime`` for a real-time server).
Targets: >= 0.4 m/s (Nao, T1), the ball never more than 1 m away, 0 falls in 5 runs.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robocup3d_motion.requests import Dribble
from robocup3d_tools.ball_tasks import dribble_figures, place_ball, run_request
from robocup3d_tools.sim_session import SimSession


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--robot', default='T1')
    ap.add_argument('--server', choices=('mujoco', 'simspark'), default='mujoco')
    ap.add_argument('--type', dest='robot_type', type=int, default=0)
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--distance', type=float, default=10.0)
    ap.add_argument('--realtime', action='store_true')
    ap.add_argument('--player-arg', action='append', default=[], help='one more player argument (repeatable)')
    args = ap.parse_args(argv)
    rows = []
    kind = {'server': args.server, 'robot_type': args.robot_type, 'fast': not args.realtime}
    session = SimSession(args.robot, player_args=('--world-model', *args.player_arg), **kind)
    with session as s:
        for i in range(args.runs):
            y = 1.5 * (i - args.runs // 2)
            s.place(-6.0, y, 0.0)
            place_ball(s, -5.0, y)
            target = (-5.0 + args.distance, y)
            run = run_request(s, Dribble(target=target, id=i + 1), 6.0 * args.distance + 30.0)
            rows.append(dribble_figures(run, target))
            print(f'run {i + 1}: {rows[-1]}', flush=True)
    who = args.robot if args.server == 'mujoco' else f'Nao type {args.robot_type}'
    print(f'\n{who}: dribble {args.distance:g} m, {args.runs} runs')
    print('| run | progress m | speed m/s | ball apart max m | falls | end | s |')
    print('|---|---|---|---|---|---|---|')
    for i, r in enumerate(rows, 1):
        row = (r['progress_m'], r['speed_mps'], r['max_apart_m'], r['falls'], r['phase'], r['seconds'])
        print(f'| {i} | ' + ' | '.join(map(str, row)) + ' |')
    speeds = [r['speed_mps'] for r in rows]
    apart = [r['max_apart_m'] for r in rows if not math.isnan(r['max_apart_m'])]
    print(
        f'| all | {statistics.mean(r["progress_m"] for r in rows):.2f} | {statistics.mean(speeds):.3f} | '
        f'{max(apart, default=math.nan):.2f} | {sum(r["falls"] for r in rows)} | '
        f'{sum(r["phase"] == "done" for r in rows)} done | |'
    )
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
