"""Kick benchmark through the running graph (server + player process + trainer).

For each robot and kick, ``--trials`` kicks (:mod:`robocup3d_tools.kick_tasks`): the trainer puts
the standing robot on the field facing a random way (+-17 deg), the ball at the kick's spot relative
to it (within +-``--noise`` m), and the kick is requested on ``motion_request``; the server's ground
truth (torso, and the ball from the monitor stream) scores it. Until the walk-up approach exists the
robot starts at its kick spot, so this measures the kick alone.

    PYTHONPATH=. python bench/bench_kick.py --trials 20 [--robots T1 K1] [--kicks long quick] [--foot both]
    PYTHONPATH=. python bench/bench_kick.py --server simspark --types 0 2 --trials 20

Prints per robot and kick: the ball's travel (median, p10; a kick that did not happen counts 0 m),
the angle between its travel and the robot's heading (median, p90), the time from the request to
the ball's first motion (median, p90), falls (fell, or not standing 1 s after the kick), kicks that
did not happen within 15 s, and touches before the swing. The server runs in sync mode (flat out)
unless ``--realtime``. ``--json FILE`` appends each result.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from robocup3d_tools.kick_tasks import KICKS, run_kicks  # noqa: E402
from robocup3d_tools.sim_session import SimSession  # noqa: E402

HEAD = (
    f'{"robot":<7}{"kick":<7}{"trials":>7}{"dist med":>10}{"p10":>7}{"angle med":>11}{"p90":>7}'
    f'{"contact med":>13}{"p90":>7}{"falls":>7}{"no kick":>9}{"early":>7}{"wall s":>8}'
)


def _f(v: float | None, width: int, digits: int = 2) -> str:
    return f'{"-":>{width}}' if v is None else f'{v:>{width}.{digits}f}'


def row(robot: str, kick: str, r: dict, wall: float) -> str:
    return (
        f'{robot:<7}{kick:<7}{r["trials"]:>7}{_f(r["distance_median"], 10)}{_f(r["distance_p10"], 7)}'
        f'{_f(r["angle_err_median"], 11, 1)}{_f(r["angle_err_p90"], 7, 1)}{_f(r["contact_median_s"], 13)}'
        f'{_f(r["contact_p90_s"], 7)}{r["not_standing"]:>7}'
        f'{r["no_kick"]:>9}{r["early"]:>7}{wall:>8.0f}'
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--server', choices=('mujoco', 'simspark'), default='mujoco')
    ap.add_argument('--robots', nargs='+', default=['T1', 'K1'], help='mujoco robots')
    ap.add_argument('--types', nargs='+', type=int, default=[0], help='Nao types (simspark)')
    ap.add_argument('--kicks', nargs='+', choices=KICKS, default=list(KICKS))
    ap.add_argument('--foot', choices=('right', 'left', 'both'), default='both', help='both: by turns')
    ap.add_argument('--trials', type=int, default=20)
    ap.add_argument('--noise', type=float, default=0.02, help='m: the ball within +-noise of its spot')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--realtime', action='store_true')
    ap.add_argument('--json', type=Path, default=None, help='append each result as a JSON line')
    args = ap.parse_args(argv)
    who = [('nao', t) for t in args.types] if args.server == 'simspark' else [(r, 0) for r in args.robots]
    print(HEAD, flush=True)
    for robot, robot_type in who:
        for kick in args.kicks:
            start = time.monotonic()
            with SimSession(robot, server=args.server, robot_type=robot_type, fast=not args.realtime) as session:
                result = run_kicks(session, kick, args.trials, args.seed, args.foot, args.noise).as_dict()
            name = f'nao{robot_type}' if robot == 'nao' else robot
            print(row(name, kick, result, time.monotonic() - start), flush=True)
            if args.json:
                with open(args.json, 'a', encoding='utf-8') as out:
                    out.write(json.dumps({'robot': name, 'kick': kick, 'foot': args.foot, **result}) + '\n')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
