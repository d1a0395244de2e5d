"""Walk up to the ball and kick it: a ``Kick`` task from 1-3 m, as strategy sends it, scored from ground truth.

For each trial the trainer puts the standing robot 1-3 m from the ball (at (10, 0); a Nao on rcssserver3d:
(5, 0)) in a random direction (within +-70 deg of behind it) and heading; the task aims at the opponents' goal
centre, or, with ``--target-distance D``, at a point D m beyond the ball (towards the goal; for a kick of chosen
length, whose strength the distance sets).
The server's ground truth says how far the ball was pushed before the kick (the walk touching it),
where it went, and how long it took.

    PYTHONPATH=. python bench/bench_walkup.py [--robot T1] [--kick long] [--trials 5] [--seed 3] [--slack 1.5]
    PYTHONPATH=. python bench/bench_walkup.py --kick pass --target-distance 3 12 --trials 10 [--behind]

Prints per trial: start distance and bearing, the task's outcome, when the kick started (server
seconds), where the ball lay then (m, robot frame, ground truth) and how fast it rolled, the ball pushed before the
kick (m), the ball's travel after it (m), its direction off the line to the goal centre (deg, + left: from where it
lay at the kick to where it was as the task ended, 1 m or more on, before it could reach the goal line), falls, and
why the task failed; with ``--target-distance`` also the kick's strength (a kick of chosen length), the ball's travel
from the kick to where it came to rest and its miss (m from the target); then the kicks, the direction error's median
and p90 (abs), the time to the kick (median), the falls and, with targets, the misses (median, p90) and the robots
standing at the end.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robocup3d_motion.requests import Kick
from robocup3d_tools.ball_tasks import FALLEN_UP, await_ball_rest, place_ball, run_request
from robocup3d_tools.sim_session import SimSession

BALL = {'mujoco': (10.0, 0.0), 'simspark': (5.0, 0.0)}
GOAL = {'mujoco': (27.5, 0.0), 'simspark': (15.0, 0.0)}  # the goal centre of each server's field


def _p90(values: list[float]) -> float:
    return values[min(len(values) - 1, round(0.9 * (len(values) - 1)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--robot', default='T1', help='T1 or K1 (RCSSServerMJ), or nao (rcssserver3d, --type)')
    ap.add_argument('--kick', default='long')
    ap.add_argument('--trials', type=int, default=5)
    ap.add_argument('--seed', type=int, default=3)
    ap.add_argument('--seconds', type=float, default=40.0, help='server seconds a trial may take')
    ap.add_argument('--slack', type=float, default=0.0, help='m either side of the goal centre the kick may aim')
    ap.add_argument('--behind', action='store_true', help='the robot starts right behind the ball, facing it')
    ap.add_argument(
        '--target-distance',
        type=float,
        nargs=2,
        default=None,
        metavar=('MIN', 'MAX'),
        help='m: a target this far beyond the ball (uniform in MIN-MAX, towards the goal) instead of the goal centre',
    )
    ap.add_argument('--type', dest='robot_type', type=int, default=0, help='the Nao type (rcssserver3d)')
    ap.add_argument('--player-arg', action='append', default=[], help='one more player argument (repeatable)')
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    head = f'{"start m":>8}{"bearing":>8}  {"outcome":<12}{"kick at s":>10}{"ball at kick":>14}{"m/s":>6}'
    head += f'{"pushed m":>9}{"ball m":>8}{"dir":>6}{"falls":>6}'
    if args.target_distance:
        head += f'{"foot":>6}{"target m":>9}{"strength":>9}{"rest m":>8}{"miss m":>8}{"up":>4}'
    print(f'{head}  reason')
    kicked, dirs, times, falls, misses, up = 0, [], [], 0, [], 0
    server = 'simspark' if args.robot == 'nao' else 'mujoco'
    ball_at, goal_at = BALL[server], GOAL[server]
    extra = {'robot_type': args.robot_type} if server == 'simspark' else {}
    with SimSession(args.robot, server=server, player_args=('--world-model', *args.player_arg), **extra) as s:
        for i in range(args.trials):
            d, a = rng.uniform(1.0, 3.0), rng.uniform(-1.2, 1.2)
            yaw = rng.uniform(-0.5, 0.5)
            if args.behind:
                a = yaw = 0.0
            goal = goal_at
            if args.target_distance:
                want = rng.uniform(*args.target_distance)
                goal = (ball_at[0] + want, ball_at[1])
            s.place(ball_at[0] - d * math.cos(a), ball_at[1] + d * math.sin(a), yaw)
            place_ball(s, *ball_at)
            run = run_request(s, Kick(target=goal, kick=args.kick, slack=args.slack, id=100 + i), args.seconds)
            start = next((r for r in run.trace if r[5] == 'kicking'), None)
            before = [r for r in run.trace if start is None or r[0] < start[0]]
            pushed = max((math.hypot(r[3] - ball_at[0], r[4] - ball_at[1]) for r in before), default=0.0)
            after = math.hypot(run.ball_end[0] - start[3], run.ball_end[1] - start[4]) if start else 0.0
            kicked += start is not None
            falls += run.falls
            direction = '-'
            end = run.trace[-1] if start else None
            if start and math.hypot(end[3] - start[3], end[4] - start[4]) >= 1.0:
                went = math.atan2(end[4] - start[4], end[3] - start[3])
                off = went - math.atan2(goal[1] - start[4], goal[0] - start[3])
                dirs.append(math.degrees(math.atan2(math.sin(off), math.cos(off))))
                direction = f'{dirs[-1]:+.0f}'
            if start:
                times.append(start[0])
            at = f'{start[0]:.1f}' if start else '-'
            spot, rolling = '-', '-'
            if start:  # the ball in the robot's ground frame (truth) as the kick started, and its speed
                c, sn = math.cos(start[6]), math.sin(start[6])
                dx, dy = start[3] - start[1], start[4] - start[2]
                spot = f'{c * dx + sn * dy:.2f} {-sn * dx + c * dy:+.2f}'
                k = run.trace.index(start)
                if k > 0:
                    prev = run.trace[k - 1]
                    rolling = f'{math.hypot(start[3] - prev[3], start[4] - prev[4]) / (start[0] - prev[0]):.2f}'
            row = f'{d:>8.1f}{math.degrees(a):>8.0f}  {run.phase:<12}{at:>10}{spot:>14}{rolling:>6}'
            row += f'{pushed:>9.2f}{after:>8.2f}{direction:>6}{run.falls:>6}'
            if args.target_distance:
                task = s.state.get('task') or {}
                strength, foot = task.get('strength'), task.get('foot') or '-'
                rest = await_ball_rest(s) or run.ball_end
                s.wait_cycles(50)  # standing 1 s after the ball came to rest
                standing = s.pose is not None and s.pose.up >= FALLEN_UP
                up += standing
                miss = math.hypot(rest[0] - goal[0], rest[1] - goal[1])
                misses.append(miss)
                travel = math.hypot(rest[0] - start[3], rest[1] - start[4]) if start else 0.0
                st = f'{strength:.2f}' if strength is not None else '-'
                row += f'{foot:>6}{goal[0] - ball_at[0]:>9.1f}{st:>9}{travel:>8.2f}{miss:>8.2f}'
                row += f'{"yes" if standing else "no":>4}'
            print(f'{row}  {run.reason}', flush=True)
    print(f'kicked in {kicked} of {args.trials} walk-ups')
    if dirs:
        err = sorted(abs(d) for d in dirs)
        med = statistics.median(err)
        print(f'direction off the target (abs, deg): median {med:.1f}, p90 {_p90(err):.1f} of {len(err)}')
    if times:
        print(f'kick started (s): median {statistics.median(times):.1f}; falls {falls}')
    if misses:
        m = sorted(misses)
        med = statistics.median(m)
        print(f'miss (m from the target): median {med:.2f}, p90 {_p90(m):.2f}; standing at the end {up}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
