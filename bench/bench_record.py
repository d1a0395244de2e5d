"""What recording costs the players: CPU per player-cycle with and without ``robocup3d record``.

One team of T1 on RCSSServerMJ in sync mode (the server waits for every player, so the figures do
not depend on keeping real time), run for ``--seconds`` of server time, interleaved, ``--repeat``
times each: without a recorder (``off``); recorded as ``match --record`` does (``rebuilt``: the
recorder builds the players' percept topics from their ``raw/percept``, takes ``raw/percept``,
``raw/action``, ``pose``, ``ball``, ``players``, ``odom``, ``motion_request`` and ``say`` from each player's
``record/cycle`` through its local sink, and subscribes best effort to most of the rest); the same with
``record/cycle`` over DDS (``dds``, ``robocup3d record --no-sink``: the way before session 39); the same
with a subscription per topic instead of
``record/cycle`` (``per-topic``, ``robocup3d record --per-topic``: the way before it); and recorded the
old way (``subscribed``, ``robocup3d record --no-rebuild --reliable``: the recorder subscribes reliably
to every topic, so the players build and send them all). Players publish ``raw/percept`` and
``raw/action`` in every kind (as under ``match --record``). ``busy`` records nothing but runs a process
that burns ``--busy`` ms of CPU a wall second (default: what the ``rebuilt`` runs' recorder used so far in
this bench, else 350) beside the players: on a machine with few cores, how much of a recorded player's
extra CPU is the recorder's competition for the cores rather than work on the player's own path.
``--kinds`` picks some of them; each ``--variant NAME=TOPIC,...`` adds a ``per-topic`` kind that also
leaves those topics out (where the cost goes: ``--kinds off per-topic --variant nobelief=pose,ball,players,odom``).
Prints per player CPU ms per server second and per cycle, its ratio to ``off``, the recorder's own CPU
(``busy``: the burner's), and the bag's size; the median run of each kind, and with ``--repeat`` > 1 every run's ms per
cycle (the spread). ``--exclude`` defaults to what ``match --record`` leaves out
(``recorder.COSTLY``). Run from the repo root with the venv active:

    python bench/bench_record.py --players 2 --seconds 20 --repeat 3 [--realtime]

``--realtime`` runs the server in real time instead: every kind then runs at 50 cycles a wall second,
so a cost per wall second (a sync-mode server runs faster without a recorder than with one) weighs the
same in each.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from robocup3d_bridge.percept import Dialect
from robocup3d_tools.recorder import COSTLY, start_recorder
from robocup3d_tools.ros_env import ros_environment
from robocup3d_tools.servers import connect_trainer, cpu_seconds, free_port, start_mujoco_server, stop_process
from robocup3d_tools.team_config import PlayerConfig, TeamConfig
from robocup3d_tools.team_runner import TeamRunner

TEAM = 'BenchRec'


def run(
    players: int,
    seconds: float,
    record: bool,
    work: Path,
    exclude: list[str],
    rebuild: bool = True,
    realtime: bool = False,
    reliable: bool = False,
    per_topic: bool = False,
    busy_ms: float = 0.0,
    sink: bool = True,
) -> dict:
    env = ros_environment()
    aport, mport = free_port(), free_port()
    mode = [] if realtime else ['--sync', '--no-realtime']
    server = start_mujoco_server(work / 'server', aport, mport, mode, env=env)
    runner = recorder = trainer = burner = None
    out: dict = {}
    try:
        trainer = connect_trainer(mport, Dialect.MUJOCO)
        if busy_ms > 0.0:
            burner = subprocess.Popen([sys.executable, '-c', _BURN, str(busy_ms)])
        if record:
            recorder = start_recorder(
                work / 'bag',
                [TEAM],
                mport,
                work,
                env,
                exclude=exclude,
                rebuild=rebuild,
                reliable=reliable,
                per_topic=per_topic,
                sink=sink,
            )
        team = TeamConfig(
            'mujoco', TEAM, '127.0.0.1', aport, tuple(PlayerConfig(u, 'T1') for u in range(1, players + 1))
        )
        runner = TeamRunner(team, work, env=env, clock_player=1)  # raw/percept and raw/action, as match --record
        runner.start(stagger=0.3)
        trainer.wait_for(lambda s: s.team_left == TEAM, 90.0)
        time.sleep(3.0)  # every player joined, the recorder found the topics
        trainer.poll(0.1)
        trainer.kick_off('Left')
        pids = runner.pids
        t0, w0 = trainer.state.server_time, time.monotonic()
        cpu0 = {p: cpu_seconds(p) for p in pids}
        other = recorder or burner
        rec0 = cpu_seconds(other.pid) if other else 0.0
        while trainer.state.server_time - t0 < seconds and time.monotonic() - w0 < 600:
            trainer.poll(0.2)
        span = trainer.state.server_time - t0
        out['span'] = span
        out['wall'] = time.monotonic() - w0
        out['players'] = [(cpu_seconds(p) - cpu0[p]) / span for p in pids]
        out['recorder'] = (cpu_seconds(other.pid) - rec0) / span if other else 0.0
    finally:
        if burner is not None:
            stop_process(burner)
        if recorder is not None:
            stop_process(recorder, timeout=30.0)
        if runner is not None:
            runner.stop()
        if trainer is not None:
            trainer.close()
        stop_process(server)
    if record:
        out['bag_mb'] = sum(f.stat().st_size for f in (work / 'bag').iterdir()) / 1e6
    return out


#: burns argv[1] ms of CPU in every wall second, spread over 10 ms slices, until killed
_BURN = """
import signal, sys, time
signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
duty = min(1.0, float(sys.argv[1]) / 1000.0)
while True:
    start = time.monotonic()
    end = start + 0.01 * duty
    while time.monotonic() < end:
        pass
    time.sleep(max(0.0, start + 0.01 - time.monotonic()))
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--players', type=int, default=2)
    p.add_argument('--seconds', type=float, default=10.0, help='server seconds per run')
    p.add_argument(
        '--exclude', nargs='*', default=list(COSTLY), help='passed to robocup3d record --exclude (default: COSTLY)'
    )
    p.add_argument('--repeat', type=int, default=1, help='runs of each kind, interleaved; the median is shown')
    p.add_argument('--realtime', action='store_true', help='the server in real time (default: sync mode)')
    p.add_argument(
        '--kinds',
        nargs='*',
        default=['off', 'rebuilt', 'dds', 'per-topic', 'subscribed'],
        help='of off per-topic rebuilt dds subscribed busy',
    )
    p.add_argument('--busy', type=float, default=0.0, help="ms of CPU a wall second the 'busy' kind burns")
    p.add_argument(
        '--variant',
        action='append',
        default=[],
        metavar='NAME=TOPIC,...',
        help='one more kind: rebuilt, leaving out these topics besides --exclude (repeatable; for the split)',
    )
    args = p.parse_args()
    # name -> (recorded, rebuilt, per topic, excluded topics, local sink)
    kinds = {
        k: v
        for k, v in {
            'off': (False, True, False, args.exclude, True),
            'per-topic': (True, True, True, args.exclude, True),
            'rebuilt': (True, True, False, args.exclude, True),
            'dds': (True, True, False, args.exclude, False),
            'subscribed': (True, False, True, args.exclude, True),
            'busy': (False, True, False, args.exclude, True),
        }.items()
        if k in args.kinds
    }
    for spec in args.variant:
        name, _, topics = spec.partition('=')
        kinds[name] = (True, True, True, [*args.exclude, *filter(None, topics.split(','))], True)
    runs: dict[str, list[dict]] = {name: [] for name in kinds}
    for _ in range(args.repeat):
        for name, (record, rebuild, per_topic, exclude, sink) in kinds.items():
            work = Path(tempfile.mkdtemp(prefix='r3d_bench_record_'))
            old = not rebuild  # the old way: subscribed, reliably, to everything
            busy = 0.0
            if name == 'busy':  # as much as the recorder used in this bench so far
                used = [r['recorder'] * 1000.0 for r in runs.get('rebuilt', [])]
                busy = args.busy or (sorted(used)[len(used) // 2] if used else 350.0)
            runs[name].append(
                run(
                    args.players,
                    args.seconds,
                    record,
                    work,
                    exclude,
                    rebuild,
                    args.realtime,
                    old,
                    per_topic,
                    busy,
                    sink=sink,
                )
            )
    rows = [(name, _median_run(runs[name])) for name in kinds]
    base = sum(rows[0][1]['players']) / len(rows[0][1]['players'])
    mode = 'real time' if args.realtime else 'sync mode'
    print(f'recorded topics: all but {" ".join(args.exclude) or "none"}; median of {args.repeat} run(s) each; {mode}')
    print(f'load average: {" ".join(f"{x:.1f}" for x in os.getloadavg())}')
    print(
        f'{"recording":<11}{"server s":>9}{"wall s":>8}{"player CPU ms/s (each)":>28}'
        f'{"ms/cycle":>10}{"ratio":>7}{"recorder ms/s":>15}{"bag MB":>8}'
    )
    for name, r in rows:
        each = ' '.join(f'{c * 1000:.0f}' for c in r['players'])
        mean = sum(r['players']) / len(r['players'])
        print(
            f'{name:<11}{r["span"]:>9.1f}{r["wall"]:>8.1f}{each:>28}{mean * 1000 / 50:>10.2f}{mean / base:>7.2f}'
            f'{r["recorder"] * 1000:>15.0f}{r.get("bag_mb", 0.0):>8.2f}'
        )
    for spec in args.variant:
        print(f'{spec.partition("=")[0]:<11}also leaves out: {spec.partition("=")[2]}')
    if args.repeat > 1:
        for name in kinds:
            each = ' '.join(f'{sum(r["players"]) / len(r["players"]) * 1000 / 50:.2f}' for r in runs[name])
            print(f'{name:<11}every run, ms/cycle: {each}')
        for name in kinds:  # which player pays what (the clock player is p1)
            each = '  '.join('/'.join(f'{c * 1000:.0f}' for c in r['players']) for r in runs[name])
            print(f'{name:<11}every run, ms/s per player (p1/p2...): {each}')


def _median_run(runs: list[dict]) -> dict:
    """The run whose mean player CPU is the median of ``runs``."""
    ranked = sorted(runs, key=lambda r: sum(r['players']) / len(r['players']))
    return ranked[len(ranked) // 2]


if __name__ == '__main__':
    main()
