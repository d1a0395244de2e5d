"""CPU per player-cycle through the whole graph: one player process standing, then walking a random course.

For each robot: a server in sync mode and the real ``robocup3d player`` process (bridge, motion,
strategy; ``--world-model`` adds the world model), driven like ``bench/bench_walk.py`` does. The
player's CPU time comes from ``/proc/<pid>/stat`` (user + system) over each phase, divided by the
server cycles of that phase:

* ``stand``: zero ``cmd_vel`` for ``--seconds`` of server time (the robot stands in its stand pose; until
  session 44 the keep-alives, counted in wall s, lapsed in sync mode and rocked a T1 between the stand and
  the walk's stance until it fell);
* ``walk``: random commands (seeded, forward -0.3..1 m/s, sideways +-0.3 m/s, turn +-1 rad/s,
  each held 1-3 s) for ``--seconds`` of server time; after a fall the trainer puts the robot
  upright again, and those cycles are left out of the figure.

The commands go out as a strategy asks for a walk: when they change and again every :data:`KEEP_ALIVE` s of server time
(``--every-cycle``: with every pose and every 10 ms while one is awaited, 50-100 messages a second, the
bench's way before session 38; each one woke the player's executor and DDS threads, which a player in a
match, its strategy in the same process, does not pay).

RCSSServerMJ's torso truth comes from the monitor stream (``--truth monitor``, the default), so the
player sends nothing per cycle for this bench, as in a match; ``--truth player`` reads the player's
``ground_truth/pose`` instead (the benches' way before 2026-11-28: a PoseStamped built and sent each
cycle for this observer, a fifth of a standing T1's GIL samples, ``bench/bench_profile.py --gil``).
Likewise this process does not subscribe to the player's ``motion_state`` and ``strategy_state`` while it
measures (``SimSession.unwatched``), as nobody does in a match; ``--watched`` does (the way before session 39:
the player then built the state for it, and asked the DDS graph each cycle whether it still listened).

It also prints the bridge's ``/diagnostics``: perceive-to-act latency p50/p99 (percept received
-> action sent, over the bridge's last 3000 cycles when the phase ends) and late replies (sent at
the deadline without a fresh joint command) during the phase. Each figure is also given as a
ratio to the standing player of the same run, so noisy machines compare fairly.

    PYTHONPATH=. python bench/bench_cycle.py [--robots T1 K1] [--seconds 30]
    PYTHONPATH=. python bench/bench_cycle.py --server simspark --types 0 1 2 3 4 [--realtime]

RCSSServerMJ runs the T1/K1; rcssserver3d (``--server simspark``, when it is on PATH) the Nao types.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robocup3d_tools.servers import cpu_seconds
from robocup3d_tools.sim_session import CYCLE, SERVERS, SimSession

START = (0.0, 0.0, 0.0)  # where the trainer puts the robot (field centre, facing the opponent goal)
KEEP_ALIVE = 0.5  # server s between two sends of an unchanged command (the bench's player: --cmd-timeout 2)


@dataclass
class Phase:
    """What one phase of one run measured."""

    cycles: int = 0
    cpu_s: float = 0.0
    late: int = 0
    replies: int = 0
    p50_ms: float = float('nan')
    p99_ms: float = float('nan')
    falls: int = 0

    @property
    def ms_per_cycle(self) -> float:
        return 1e3 * self.cpu_s / self.cycles if self.cycles else float('nan')


class _Diagnostics:
    """The latest bridge ``/diagnostics`` values, read on the session's own node."""

    def __init__(self, session: SimSession) -> None:
        from diagnostic_msgs.msg import DiagnosticArray  # noqa: PLC0415 - after the session set the domain

        self.values: dict[str, str] = {}
        ns = f'/{session.team}/p{session.unum}/bridge'
        session.node.create_subscription(DiagnosticArray, '/diagnostics', lambda m: self._on(m, ns), 10)

    def _on(self, msg: object, name: str) -> None:
        for status in msg.status:
            if status.name == name:
                self.values = {kv.key: kv.value for kv in status.values}

    def counter(self, key: str) -> int:
        return int(self.values.get(key, 0))

    def number(self, key: str) -> float:
        return float(self.values.get(key, 'nan'))


class _Meter:
    """Adds CPU time, cycles and late replies over the stretches between ``start`` and ``stop``."""

    def __init__(self, session: SimSession, diag: _Diagnostics) -> None:
        self.s, self.diag, self.phase = session, diag, Phase()

    def start(self) -> None:
        self._c0 = (cpu_seconds(self.s.player.pid), self.s.cycles)
        self._d0 = (self.diag.counter('replies_fallback'), self.diag.counter('replies_on_time'))

    def stop(self) -> None:
        cpu, cycles = self._c0
        self.phase.cpu_s += cpu_seconds(self.s.player.pid) - cpu
        self.phase.cycles += self.s.cycles - cycles
        self.phase.late += self.diag.counter('replies_fallback') - self._d0[0]
        self.phase.replies += self.diag.counter('replies_on_time') - self._d0[1]

    def finish(self) -> Phase:
        self.s.wait_cycles(60)  # the bridge publishes diagnostics once a wall second
        self.phase.p50_ms, self.phase.p99_ms = self.diag.number('latency_p50_ms'), self.diag.number('latency_p99_ms')
        return self.phase


def _unwatched(s: SimSession, watched: bool) -> contextlib.AbstractContextManager:
    """The measured stretches without this process's subscriptions to the player's state (as in a match), unless
    ``watched`` (the bench's way before session 39)."""
    return contextlib.nullcontext() if watched else s.unwatched()


def _stand(
    s: SimSession, diag: _Diagnostics, seconds: float, keep_alive: float = KEEP_ALIVE, watched: bool = False
) -> Phase:
    """Zero ``cmd_vel`` for ``seconds`` of server time; a fall is counted and the robot placed again, so the
    phase runs its whole time (it used to end at the first fall and print none: a T1 fell in 3 of 5, session 43)."""
    s.place(*START)
    meter, t = _Meter(s, diag), 0.0
    while t < seconds:
        with _unwatched(s, watched):
            c0 = s.cycles
            meter.start()
            part = s.drive(seconds - t, lambda t: (0.0, 0.0, 0.0), keep_alive=keep_alive)
            meter.stop()
            t += max(s.cycles - c0, 1) * CYCLE
        if part and part[-1].up < 0.5:
            meter.phase.falls += 1
            s.place(*START)
    return meter.finish()


def _walk(
    s: SimSession,
    diag: _Diagnostics,
    seconds: float,
    seed: int,
    keep_alive: float = KEEP_ALIVE,
    watched: bool = False,
) -> Phase:
    rng = random.Random(seed)
    s.place(*START)
    meter, t = _Meter(s, diag), 0.0
    while t < seconds:
        fell = False
        with _unwatched(s, watched):  # until a fall: placing the robot again watches its state
            while t < seconds and not fell:
                hold = min(rng.uniform(1.0, 3.0), seconds - t)
                cmd = (rng.uniform(-0.3, 1.0), rng.uniform(-0.3, 0.3), rng.uniform(-1.0, 1.0))
                c0 = s.cycles
                meter.start()
                part = s.drive(hold, lambda t, cmd=cmd: cmd, keep_alive=keep_alive)
                meter.stop()
                t += (s.cycles - c0) * CYCLE
                fell = bool(part) and part[-1].up < 0.5
        if fell:
            meter.phase.falls += 1
            s.place(*START)
    return meter.finish()


def bench(
    robot: str,
    seconds: float,
    seed: int,
    server: str,
    robot_type: int,
    world_model: bool,
    realtime: bool = False,
    truth: str = 'monitor',
    every_cycle: bool = False,
    watched: bool = False,
) -> dict[str, Phase]:
    """Standing, then walking, in one session."""
    args = ('--world-model',) if world_model else ()
    fast = not realtime
    with SimSession(robot, server=server, robot_type=robot_type, player_args=args, fast=fast, truth=truth) as s:
        diag = _Diagnostics(s)
        keep = 0.0 if every_cycle else KEEP_ALIVE
        return {
            'stand': _stand(s, diag, seconds, keep, watched),
            'walk': _walk(s, diag, seconds, seed, keep, watched),
        }


def _row(robot: str, name: str, p: Phase, ref: Phase) -> str:
    ratio = p.ms_per_cycle / ref.ms_per_cycle
    return (
        f'{robot} | {name} | {p.cycles} | {p.ms_per_cycle:.3f} | {ratio:.2f} | {p.p50_ms:.3f} | {p.p99_ms:.3f} | '
        f'{p.p99_ms / ref.p99_ms:.2f} | {p.late} | {p.falls}'
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--server', choices=SERVERS, default='mujoco')
    ap.add_argument('--robots', nargs='+', default=['T1', 'K1'], help='robots on mujoco')
    ap.add_argument('--types', nargs='+', type=int, default=[0, 1, 2, 3, 4], help='Nao types on simspark')
    ap.add_argument('--seconds', type=float, default=30.0, help='server seconds of each phase')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--world-model', action='store_true', help='run the world model in the player too')
    ap.add_argument(
        '--realtime',
        action='store_true',
        help="the server at a match's pace (default: sync mode, as fast as the player answers, which spreads "
        'the per-second costs of the executor and diagnostics over more cycles)',
    )
    ap.add_argument(
        '--truth',
        choices=('monitor', 'player'),
        default='monitor',
        help="RCSSServerMJ: the torso truth from the monitor stream (as in a match) or the player's ground_truth/pose",
    )
    ap.add_argument(
        '--every-cycle',
        action='store_true',
        help='send the walk command with every pose (the way before session 38), not on change and every '
        f'{KEEP_ALIVE:g} s',
    )
    ap.add_argument(
        '--watched',
        action='store_true',
        help="subscribe to the player's motion_state and strategy_state while measuring (the way before session 39): "
        'the player then builds and sends them for this process, which no one does in a match',
    )
    args = ap.parse_args(argv)
    if args.server == 'simspark' and shutil.which('rcssserver3d') is None:
        print('rcssserver3d is not on PATH: nothing to measure')
        return 0
    runs = [(f'nao{t}', t) for t in args.types] if args.server == 'simspark' else [(r, 0) for r in args.robots]
    rows = []
    for robot, robot_type in runs:
        t0 = time.monotonic()
        phases = bench(
            robot,
            args.seconds,
            args.seed,
            args.server,
            robot_type,
            args.world_model,
            args.realtime,
            args.truth,
            args.every_cycle,
            args.watched,
        )
        rows.append((robot, phases))
        print(f'{robot}: done in {time.monotonic() - t0:.0f} s wall', flush=True)
    print('server in real time' if args.realtime else 'server in sync mode, as fast as the player answers')
    print('walk commands: ' + ('with every pose' if args.every_cycle else f'on change and every {KEEP_ALIVE:g} s'))
    print("the player's state " + ('watched (motion_state, strategy_state)' if args.watched else 'not watched'))
    if args.server == 'mujoco':
        print(f'torso truth from the {args.truth}')
    print(
        'robot | phase | cycles | player CPU ms/cycle | x stand | latency p50 ms | p99 ms | p99 x stand '
        '| late replies | falls'
    )
    for robot, phases in rows:
        for name, p in phases.items():
            print(_row(robot, name, p, phases['stand']))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
