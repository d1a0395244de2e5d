"""Long walks of one T1 on RCSSServerMJ, or a Nao on rcssserver3d (sync mode, its world model): go-tos 12 m away and
walk-ups to a kick from 14 m, timed and their falls counted from ground truth. For the walk's gear (config/walk.yaml
``gear``): run it with ``--walk-config FILE`` for another walk file, e.g. one without the gear.

    PYTHONPATH=. python bench/bench_far_walk.py [--walk-ups 5] [--seed 1] [--walk-config FILE]
    PYTHONPATH=. python bench/bench_far_walk.py --server simspark --type 2

Prints one row per task: what it was, its outcome, server seconds to the goal (a go-to's end, a walk-up's first stop at
the kick spot), falls; then the medians.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robocup3d_motion.requests import GoTo, Kick, MotionRequest
from robocup3d_tools.ball_tasks import BALL_Z, FALLEN_UP, place_ball
from robocup3d_tools.sim_session import CYCLE, SimSession

START = (-14.0, 0.0)
GOALS = ((-2.0, 0.0), (-4.0, 6.0))  # 12 m straight ahead, and 11.7 m 31 degrees off
GOALS_AT = {'mujoco': (27.5, 0.0), 'simspark': (15.0, 0.0)}  # their goal, where the walk-ups kick
SECONDS = 60.0
AT_SPOT = ('settling', 'kicking', 'done', 'failed')


def follow(s: SimSession, request: MotionRequest, ends: tuple[str, ...]) -> tuple[str, float, int]:
    """Send ``request``; its phase, the server seconds, and the falls, once its phase is one of ``ends``."""
    s.request(request.to_text())
    start, falls, fallen, phase = s.cycles, 0, False, 'sent'
    while (t := (s.cycles - start) * CYCLE) < SECONDS:
        s.wait_cycles(5)
        p = s.pose
        if p is not None:
            down = p.up < FALLEN_UP
            falls += down and not fallen
            fallen = down
        task = s.state.get('task') or {}
        if task.get('id') == request.id:
            phase = task.get('phase', phase)
            if phase in ends:
                break
    return phase, t, falls


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--go-tos', type=int, default=1, help='rounds of the two go-tos')
    ap.add_argument('--walk-ups', type=int, default=5, help='walk-ups to a kick from 14 m')
    ap.add_argument('--seed', type=int, default=1, help='where the walk-ups put the ball and turn the robot')
    ap.add_argument('--walk-config', default='', help='another walk file for the player')
    ap.add_argument('--server', choices=('mujoco', 'simspark'), default='mujoco', help='simspark: a Nao')
    ap.add_argument('--type', dest='robot_type', type=int, default=0, help='the Nao type (simspark)')
    args = ap.parse_args(argv)
    robot, goal = ('T1' if args.server == 'mujoco' else 'nao'), GOALS_AT[args.server]
    extra = ('--walk-config', args.walk_config) if args.walk_config else ()
    rng = random.Random(args.seed)
    rows: list[tuple[str, str, float, int]] = []
    print(f'{"task":<37}{"outcome":<12}{"s":>7}{"falls":>7}')
    kind = {'server': args.server, 'robot_type': args.robot_type}
    with SimSession(robot, unum=2, player_args=('--world-model', *extra), **kind) as s:
        n = 0
        for gx, gy in GOALS * args.go_tos:
            n += 1
            s.place(*START, 0.0)
            s.wait_cycles(50)
            off = math.degrees(math.atan2(gy - START[1], gx - START[0]))
            row = (
                f'go-to {math.dist(START, (gx, gy)):.1f} m, {off:.0f} deg off',
                *follow(s, GoTo(x=gx, y=gy, id=n), ('done', 'failed')),
            )
            rows.append(row)
            print(f'{row[0]:<37}{row[1]:<12}{row[2]:>7.1f}{row[3]:>7}', flush=True)
        for _ in range(args.walk_ups):
            n += 1
            by, yaw = rng.uniform(-3.0, 3.0), rng.uniform(-0.6, 0.6)
            s.place(*START, yaw, ball=(0.0, by, BALL_Z[args.server]))
            if args.server == 'simspark':  # its trainer places the robot only
                place_ball(s, 0.0, by)
            s.wait_cycles(50)
            what = f'walk-up 14 m, ball {by:+.1f} m, {math.degrees(yaw):+.0f} deg'
            row = (what, *follow(s, Kick(target=goal, kick='long', id=n), AT_SPOT))
            rows.append(row)
            print(f'{row[0]:<37}{row[1]:<12}{row[2]:>7.1f}{row[3]:>7}', flush=True)
    for kind in ('go-to', 'walk-up'):
        mine = [r for r in rows if r[0].startswith(kind)]
        reached = [r[2] for r in mine if r[1] not in ('failed', 'sent', 'approaching')]
        med = f'{statistics.median(reached):.1f} s' if reached else '-'
        print(f'{kind}: {len(reached)} of {len(mine)} there, median {med}, {sum(r[3] for r in mine)} falls')
    return 0


if __name__ == '__main__':
    sys.exit(main())
