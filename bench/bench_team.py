"""Whole teams: CPU per player per cycle and whether the server keeps real time.

Run: ``python bench/bench_team.py [--players 7] [--duration 30] [--robot T1]`` (RCSSServerMJ),
or ``python bench/bench_team.py --server simspark [--duration 30]`` (one team of 11
heterogeneous Nao from config/team_simspark.yaml on rcssserver3d, which must be on PATH).

Plays ``robocup3d match`` (two teams, every player composed in one process) and reads
each player process's CPU time from ``/proc`` at the kick-off and at the end of play,
so set-up is left out. Prints ms of CPU per player per cycle (the whole graph of a
player: bridge, motion, strategy, DDS threads), the server's share, late replies and
the real-time factor (game seconds per wall second).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robocup3d_tools.match import format_result, match_parser, run_match  # noqa: E402
from robocup3d_tools.servers import cpu_seconds  # noqa: E402


def _pids(pattern: str) -> list[int]:
    out = subprocess.run(['pgrep', '-f', pattern], capture_output=True, text=True, check=False).stdout
    return [int(p) for p in out.split()]


def simspark_team(duration: float) -> None:
    """11 Nao on rcssserver3d: CPU of each player process and of the server over ``duration`` s."""
    import tempfile  # noqa: PLC0415
    import time  # noqa: PLC0415

    from robocup3d_bridge.config_files import load_config  # noqa: PLC0415
    from robocup3d_bridge.percept import Dialect  # noqa: PLC0415
    from robocup3d_tools.servers import connect_trainer, free_port, start_simspark_server, stop_process  # noqa: PLC0415
    from robocup3d_tools.team_config import parse_team_config  # noqa: PLC0415
    from robocup3d_tools.team_runner import TeamRunner  # noqa: PLC0415

    run = Path(tempfile.mkdtemp(prefix='bench_team_'))
    aport, mport = free_port(), free_port()
    try:
        server = start_simspark_server(run, aport, mport)
    except FileNotFoundError as exc:
        raise SystemExit(str(exc)) from None
    runner = None
    try:
        trainer = connect_trainer(mport, Dialect.SIMSPARK)
        cfg = parse_team_config({**load_config('team_simspark.yaml'), 'port': aport, 'team': 'BenchS'})
        runner = TeamRunner(cfg, run / 'logs', extra_args=['--no-raw'])
        runner.start(stagger=0.2)  # the bridges' join gate lets one player join rcssserver3d at a time
        trainer.wait_for(lambda s: s.play_mode is not None, 10)
        time.sleep(5.0)
        trainer.poll(0.1)
        pids = [*runner.pids, server.pid]
        t0, c0 = trainer.state.game_time, {p: cpu_seconds(p) for p in pids}
        w0 = time.monotonic()
        trainer.kick_off('Left')
        while time.monotonic() - w0 < duration:
            trainer.poll(0.2)
        wall = time.monotonic() - w0
        c1 = {p: cpu_seconds(p) for p in pids}
        cycles = wall / 0.02  # rcssserver3d steps in real time; its monitor time is game time
        per = sorted((c1[p] - c0[p]) * 1e3 / cycles for p in runner.pids)
        print(
            f'{len(per)} Nao players on rcssserver3d for {wall:.1f} s ({cycles:.0f} cycles); game time moved '
            f'{trainer.state.game_time - t0:.1f} s'
        )
        print(f'CPU per player per cycle: median {per[len(per) // 2]:.2f} ms, min {per[0]:.2f}, max {per[-1]:.2f} ms')
        print(f'CPU of the server per cycle: {(c1[server.pid] - c0[server.pid]) * 1e3 / cycles:.2f} ms')
    finally:
        if runner is not None:
            runner.stop()
        stop_process(server, timeout=0.0)  # rcssserver3d ignores SIGTERM


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--server', choices=('mujoco', 'simspark'), default='mujoco')
    ap.add_argument('--players', type=int, default=7)
    ap.add_argument('--duration', type=float, default=30.0)
    ap.add_argument('--robot', default='T1')
    opts = ap.parse_args()
    if opts.server == 'simspark':
        simspark_team(opts.duration)
        return
    teams = ('BenchL', 'BenchR')
    args = match_parser().parse_args(
        [
            '--players',
            str(opts.players),
            '--duration',
            str(opts.duration),
            '--robot',
            opts.robot,
            '--teams',
            *teams,
            '--run-dir',
            '/tmp/bench_team',
        ]
    )
    marks: dict[str, dict[int, float]] = {}

    def log(line: str) -> None:
        print(line, flush=True)
        if 'kick-off' in line or line.startswith('play ended'):
            players = _pids(f'robocup3d_tools.player .*--team ({teams[0]}|{teams[1]}) ')
            server = _pids('rcssservermj --host 127.0.0.1')
            marks['start' if 'kick-off' in line else 'end'] = {p: cpu_seconds(p) for p in players + server}
            marks.setdefault('players', {}).update(dict.fromkeys(players, 1))
            marks.setdefault('server', {}).update(dict.fromkeys(server, 1))

    result = run_match(args, log=log)
    print(format_result(result))
    cycles = result.game_time / 0.02
    start, end = marks.get('start', {}), marks.get('end', {})
    per_player = [(end[p] - start[p]) * 1e3 / cycles for p in marks.get('players', {}) if p in start and p in end]
    server = [(end[p] - start[p]) * 1e3 / cycles for p in marks.get('server', {}) if p in start and p in end]
    print(f'\n{len(per_player)} player processes, {cycles:.0f} cycles of play')
    if per_player:
        per_player.sort()
        print(
            f'CPU per player per cycle: median {per_player[len(per_player) // 2]:.2f} ms, '
            f'min {per_player[0]:.2f}, max {per_player[-1]:.2f} ms'
        )
    if server:
        print(f'CPU of the server per cycle: {sum(server):.2f} ms')
    late = sum(int(v.get('replies_fallback', 0)) for v in result.players.values())
    total = sum(int(v.get('cycles', 0)) for v in result.players.values())
    factor = result.game_time / max(result.play_wall_time, 1e-9)
    print(f'late replies: {late} of {total}; real-time factor {factor:.2f}')


if __name__ == '__main__':
    main()
