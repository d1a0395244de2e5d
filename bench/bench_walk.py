"""Walk benchmark through the running graph (a server in sync mode + the player process).

For each robot and walk set: forward speed over 10 s from standstill, backward and
sideways speed, turn rate, falls per 100 m over a 60 s random-command course, falls in walk
starts from a fresh stand (``--starts`` rounds of five: forward, each side, each turn; 5 s each),
and a 60 s go-to course (``--goto``: seeded targets 1-4 m apart with any heading, as positioning asks in a
match; the metres gained on them per second, targets reached, falls), all from the server's ground truth
(the player never sees it). Prints a table.

    PYTHONPATH=. python bench/bench_walk.py [--robots T1 K1] [--set sprint] [--course 60]
    PYTHONPATH=. python bench/bench_walk.py --server simspark --types 0 1 2 3 4

RCSSServerMJ runs the T1/K1 (``--robots``); rcssserver3d (``--server simspark``) the Nao of
each ``--types`` entry, one server after the other.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robocup3d_tools.servers import cpu_seconds
from robocup3d_tools.sim_session import SERVERS, SimSession
from robocup3d_tools.walk_tasks import STARTS, run_task


def bench(
    robot: str,
    walk_set: str,
    seconds: float,
    course: float,
    seed: int,
    server: str = 'mujoco',
    robot_type: int = 0,
    starts: int = 2,
    goto: float = 60.0,
) -> dict:
    """All tasks for one robot in one session."""
    with SimSession(robot, server=server, robot_type=robot_type) as s:
        if walk_set:
            s.request(f'walk_set {walk_set}')
        cpu0, cycles0 = cpu_seconds(s.player.pid), s.cycles
        fwd = run_task(s, 'forward', 0.0, seconds)
        cpu_ms = 1e3 * (cpu_seconds(s.player.pid) - cpu0) / max(1, s.cycles - cycles0)
        back = run_task(s, 'backward', 0.0, seconds)
        side = run_task(s, 'sideways', 0.0, seconds)
        turn = run_task(s, 'turn', 0.0, seconds)
        rnd = run_task(s, 'random', 0.0, course, seed)
        rounds = [run_task(s, 'starts', 0.0, 5.0, seed + k) for k in range(starts)]
        go = run_task(s, 'goto', 0.0, goto, seed) if goto > 0.0 else None
    return {
        'player CPU ms/cycle (walking)': cpu_ms,
        'forward m/s': fwd.speed,
        'forward falls': fwd.falls,
        'backward m/s': 0.0 - back.speed,
        'backward falls': back.falls,
        'sideways m/s': side.lateral / side.seconds,
        'sideways falls': side.falls,
        'turn deg/s': math.degrees(turn.turned) / turn.seconds,
        'turn falls': turn.falls,
        'course m': rnd.path,
        'course falls': rnd.falls,
        'falls/100 m': 100.0 * rnd.falls / rnd.path if rnd.path > 0 else float('nan'),
        'start falls': f'{sum(r.falls for r in rounds)} of {len(STARTS) * starts}',
        'go-to m/s': go.speed if go else float('nan'),
        'go-to reached': go.extra['reached'] if go else '-',
        'go-to falls': go.falls if go else '-',
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--server', choices=SERVERS, default='mujoco')
    ap.add_argument('--robots', nargs='+', default=['T1', 'K1'], help='robots on mujoco')
    ap.add_argument('--types', nargs='+', type=int, default=[0, 1, 2, 3, 4], help='Nao types on simspark')
    ap.add_argument('--set', default='sprint', help='walk set for the speed tasks and the course')
    ap.add_argument('--seconds', type=float, default=10.0)
    ap.add_argument('--course', type=float, default=60.0, help='random course length (s)')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--starts', type=int, default=2, help='rounds of walk starts (five each; 0: none)')
    ap.add_argument('--goto', type=float, default=60.0, help='go-to course length (s; 0: none)')
    args = ap.parse_args(argv)
    rows = []
    runs = [(f'nao{t}', t) for t in args.types] if args.server == 'simspark' else [(r, 0) for r in args.robots]
    for robot, robot_type in runs:
        t0 = time.monotonic()
        r = bench(
            robot, args.set, args.seconds, args.course, args.seed, args.server, robot_type, args.starts, args.goto
        )
        rows.append((robot, r))
        print(f'{robot}: done in {time.monotonic() - t0:.0f} s wall', flush=True)
    keys = list(rows[0][1])
    print('robot | set | ' + ' | '.join(keys))
    for robot, r in rows:
        print(
            f'{robot} | {args.set} | '
            + ' | '.join(f'{r[k]:.2f}' if isinstance(r[k], float) else str(r[k]) for k in keys)
        )
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
