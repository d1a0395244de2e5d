"""Whole teams: CPU per player per cycle and whether the server keeps real time.

Run: ``python bench/bench_team.py [--players 7] [--duration 30] [--robot T1]`` (RCSSServerMJ),
or ``python bench/bench_team.py --server simspark [--duration 120] [--move-ball 10]`` (one team of 11
heterogeneous Nao from config/team_simspark.yaml on rcssserver3d, which must be on PATH, playing after
its kick-off; the trainer puts the ball somewhere else every ``--move-ball`` s, so they all walk).
``--profile UNUM`` (rcssserver3d) also samples that player's process with py-spy while the team plays
and prints where its time goes by stage (``bench/bench_profile.py``'s stages) and by thread;
``--profile-out FILE`` keeps py-spy's raw stacks; ``--capture FILE`` writes that player's server messages
(its ``raw/percept``, one a line, as ``robocup3d inspect`` reads them) for offline runs
(``bench/bench_world_strategy.py``).

Plays ``robocup3d match`` (two teams, every player composed in one process) and reads
each player process's CPU time from ``/proc`` at the kick-off and at the end of play,
so set-up is left out. Prints ms of CPU per player per cycle (the whole graph of a
player: bridge, motion, strategy, DDS threads), the server's share, late replies and
the real-time factor (game seconds per wall second).
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'bench'))

from robocup3d_tools.match import format_result, match_parser, run_match  # noqa: E402
from robocup3d_tools.servers import cpu_seconds  # noqa: E402


def _pids(pattern: str) -> list[int]:
    out = subprocess.run(['pgrep', '-f', pattern], capture_output=True, text=True, check=False).stdout
    return [int(p) for p in out.split()]


class _Late:
    """Each bridge's late and on-time replies from ``/diagnostics`` (rclpy, in this run's ROS domain)."""

    def __init__(self, capture: tuple[str, Path] | None = None) -> None:
        import rclpy  # noqa: PLC0415
        from diagnostic_msgs.msg import DiagnosticArray  # noqa: PLC0415
        from std_msgs.msg import String  # noqa: PLC0415

        self.rclpy = rclpy
        rclpy.init(args=[])
        self.node = rclpy.create_node('bench_team')
        self.values: dict[str, tuple[int, int]] = {}
        self.p99: dict[str, float] = {}  # each bridge's perceive-to-act latency p99 (its recent cycles), ms
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on, 50)
        self.capture = None
        if capture is not None:  # one player's server messages, one a line
            topic, path = capture
            self.capture = path.open('w', encoding='ascii', errors='replace')
            self.node.create_subscription(String, topic, lambda m: self.capture.write(m.data + '\n'), 200)

    def _on(self, msg: object) -> None:
        for st in msg.status:
            if st.name.endswith('/bridge'):
                kv = {k.key: k.value for k in st.values}
                self.values[st.name] = (int(kv.get('replies_fallback', 0)), int(kv.get('replies_on_time', 0)))
                self.p99[st.name] = float(kv.get('latency_p99_ms', 'nan'))

    def spin(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.rclpy.spin_once(self.node, timeout_sec=0.02)

    def close(self) -> None:
        if self.capture is not None:
            self.capture.close()
        self.node.destroy_node()
        self.rclpy.try_shutdown()


class _Paths:
    """How far each robot walked: its torso on the ground from full scenes, asked for once a second."""

    def __init__(self) -> None:
        self.last: dict[tuple[str, int], tuple[float, float]] = {}
        self.length: dict[tuple[str, int], float] = {}

    def __call__(self, message: bytes) -> None:
        from robocup3d_bridge.trainer import simspark_torso_poses  # noqa: PLC0415

        if b'(RSG' not in message[:4096]:
            return
        for who, (pos, _z, _yaw) in simspark_torso_poses(message).items():
            prev = self.last.get(who)
            if prev is not None:
                self.length[who] = self.length.get(who, 0.0) + math.hypot(pos[0] - prev[0], pos[1] - prev[1])
            self.last[who] = (pos[0], pos[1])


def _thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of each thread of process ``pid`` so far, by thread name (``/proc``; the main thread: ``main``)."""
    out: dict[str, float] = {}
    tick = os.sysconf('SC_CLK_TCK')
    for task in Path(f'/proc/{pid}/task').glob('*'):
        try:
            head, _, rest = (task / 'stat').read_text().rpartition(')')
        except OSError:
            continue
        name = 'main' if task.name == str(pid) else head.partition('(')[2]
        fields = rest.split()
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def _sampler(pid: int, seconds: float, raw: Path) -> tuple[threading.Thread, list]:
    """py-spy sampling process ``pid`` for ``seconds`` into ``raw`` (collapsed stacks), in a thread."""
    import shutil  # noqa: PLC0415

    spy = shutil.which('py-spy') or str(Path(sys.executable).parent / 'py-spy')
    if not Path(spy).exists():
        raise SystemExit('py-spy is not installed: pip install py-spy')
    # --gil: only the thread holding the GIL is sampled, so a thread waiting for it (after a numpy or rclpy call that
    # let it go, while the executor thread runs) is not counted where it waits; C code without the GIL (DDS, select)
    # is not sampled (the per-thread CPU from /proc covers it)
    cmd = [spy, 'record', '--format', 'raw', '-r', '100', '--nonblocking', '--gil', '-d', str(max(1, int(seconds)))]
    cmd += ['-o', str(raw), '--pid', str(pid)]
    done: list = []
    thread = threading.Thread(target=lambda: done.append(subprocess.run(cmd, capture_output=True, check=False)))
    thread.start()
    return thread, done


def simspark_team(
    duration: float,
    move_ball: float,
    seed: int,
    profile: int | None = None,
    profile_out: Path | None = None,
    capture: Path | None = None,
    one_process: bool = False,
    processes: int = 0,
) -> None:
    """11 Nao on rcssserver3d playing (the ball put elsewhere every ``move_ball`` s, so they all walk):
    CPU of each player process and of the server, late replies and how far they walked; with ``profile``,
    that player's stages (py-spy)."""
    import random  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    from robocup3d_bridge.config_files import load_config  # noqa: PLC0415
    from robocup3d_bridge.percept import Dialect  # noqa: PLC0415
    from robocup3d_tools.ros_env import ros_environment  # noqa: PLC0415
    from robocup3d_tools.servers import connect_trainer, free_port, start_simspark_server, stop_process  # noqa: PLC0415
    from robocup3d_tools.team_config import parse_team_config  # noqa: PLC0415
    from robocup3d_tools.team_runner import TeamRunner  # noqa: PLC0415

    os.environ.update(ros_environment())
    rng = random.Random(seed)
    run = Path(tempfile.mkdtemp(prefix='bench_team_'))
    aport, mport = free_port(), free_port()
    try:
        server = start_simspark_server(run, aport, mport)
    except FileNotFoundError as exc:
        raise SystemExit(str(exc)) from None
    runner = late = None
    try:
        late = _Late((f'/BenchS/p{profile}/raw/percept', capture) if capture and profile is not None else None)
        trainer = connect_trainer(mport, Dialect.SIMSPARK)
        paths = _Paths()
        trainer.listeners.append(paths)
        cfg = parse_team_config({**load_config('team_simspark.yaml'), 'port': aport, 'team': 'BenchS'})
        # raw/percept only for the capture's subscriber (a bridge publishes it only to a subscriber)
        runner = TeamRunner(
            cfg,
            run / 'logs',
            extra_args=[] if capture else ['--no-raw'],
            one_process=one_process,
            processes=processes,
        )
        runner.start(stagger=0.2)  # the bridges' join gate lets one player join rcssserver3d at a time
        trainer.wait_for(lambda s: s.play_mode is not None, 10)
        # every player up (its bridge reports on /diagnostics once its process spins), so that no player's start-up
        # falls in the measured time on a loaded machine
        up = time.monotonic() + 60.0
        while len(late.values) < len(cfg.players) and time.monotonic() < up:
            late.spin(0.5)
        late.spin(5.0)
        trainer.poll(0.1)
        trainer.kick_off('Left')
        late.spin(3.0)  # the kick-off's first steps, then measure
        trainer.poll(0.1)
        pids = [*runner.pids, server.pid]
        t0 = trainer.state.game_time
        c0, l0 = {p: cpu_seconds(p) for p in pids}, dict(late.values)
        paths.length.clear()
        sampler = None
        if profile is not None:
            raw = profile_out or run / 'player.raw'
            unums = [p.unum for p in cfg.players]
            profiled = runner.pids[unums.index(profile)]
            threads0 = _thread_cpu(profiled)
            sampler = _sampler(profiled, duration, raw)
        w0 = next_ball = next_scene = time.monotonic()
        while time.monotonic() - w0 < duration:
            now = time.monotonic()
            if move_ball and now >= next_ball:
                if now > w0:
                    trainer.move_ball(rng.uniform(-12, 12), rng.uniform(-8, 8), 0.042)
                next_ball = now + move_ball
            if now >= next_scene:
                trainer.request_full_state()
                next_scene = now + 1.0
            trainer.poll(0.02)
            late.spin(0.02)
        wall = time.monotonic() - w0
        c1 = {p: cpu_seconds(p) for p in pids}
        threads1 = _thread_cpu(profiled) if sampler is not None else {}
        late.spin(2.5)  # the bridges publish diagnostics once a second
        # the server's own steps, from its game time (it runs after the kick-off; a loaded server falls behind
        # the wall clock, rcssserver3d sends no server time)
        game = (trainer.state.game_time or 0.0) - (t0 or 0.0)
        cycles = game / 0.02 if game > 0 else wall / 0.02
        per = sorted((c1[p] - c0[p]) * 1e3 / cycles for p in runner.pids)
        team_ms = sum(per)  # CPU of all the players per cycle
        players = len(cfg.players)
        fallback = sum(v[0] - l0.get(k, (0, 0))[0] for k, v in late.values.items())
        on_time = sum(v[1] - l0.get(k, (0, 0))[1] for k, v in late.values.items())
        walked = sorted(paths.length.values())
        print(
            f'{players} Nao players on rcssserver3d for {wall:.1f} s ({cycles:.0f} cycles, real-time factor '
            f'{cycles * 0.02 / wall:.2f}); ball moved every {move_ball:g} s'
        )
        groups = len(runner.groups())
        if groups < players:
            print(f'{players} players in {groups} process(es): {team_ms / players:.2f} ms per player-cycle')
        else:
            median = per[len(per) // 2]
            print(f'CPU per player per cycle: median {median:.2f} ms, min {per[0]:.2f}, max {per[-1]:.2f} ms')
            print(f'mean per player-cycle: {team_ms / players:.2f} ms')
        print(f'all {players} players together: {team_ms / 20:.2f} of a core at real time')
        print(f'CPU of the server per cycle: {(c1[server.pid] - c0[server.pid]) * 1e3 / cycles:.2f} ms')
        print(f'late replies: {fallback} of {fallback + on_time} ({len(late.values)} bridges reporting)')
        p99 = sorted(late.p99.values())
        if p99:
            print(
                f'perceive-to-act latency p99 (each bridge, its recent cycles): median {p99[len(p99) // 2]:.2f} ms, '
                f'max {p99[-1]:.2f} ms'
            )
        if walked:
            print(
                f'walked (torso on the ground, sampled each second): median {walked[len(walked) // 2]:.1f} m, '
                f'min {walked[0]:.1f}, max {walked[-1]:.1f} m per player ({len(walked)} robots)'
            )
        if sampler is not None:
            sampler[0].join()
            _print_profile(profile, raw, sampler[1])
            print(f'player {profile} by thread (ms of CPU per cycle):')
            for name, sec in sorted(threads1.items(), key=lambda kv: -(kv[1] - threads0.get(kv[0], 0.0))):
                if sec - threads0.get(name, 0.0) > 0:
                    print(f'{(sec - threads0.get(name, 0.0)) * 1e3 / cycles:7.3f}  {name}')
    finally:
        if runner is not None:
            runner.stop()
        stop_process(server, timeout=0.0)  # rcssserver3d ignores SIGTERM
        if late is not None:
            late.close()


def _print_profile(unum: int, raw: Path, done: list) -> None:
    from bench_profile import breakdown  # noqa: PLC0415

    if not raw.exists():
        err = done[0].stderr.decode(errors='replace').strip() if done else ''
        print(f'py-spy wrote no profile of player {unum}: {err}')
        return
    total, shares = breakdown(raw)
    print(f'player {unum}: {total} samples of its process holding the GIL (py-spy --gil, 100/s; {raw})')
    for name, n in shares.most_common():
        print(f'{100.0 * n / max(total, 1):5.1f} %  {name}')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--server', choices=('mujoco', 'simspark'), default='mujoco')
    ap.add_argument('--players', type=int, default=7)
    ap.add_argument('--duration', type=float, default=30.0)
    ap.add_argument('--robot', default='T1')
    ap.add_argument(
        '--move-ball', type=float, default=10.0, help='simspark: put the ball elsewhere every S s (0: never)'
    )
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--profile', type=int, metavar='UNUM', help='simspark: sample this player with py-spy')
    ap.add_argument('--profile-out', type=Path, metavar='FILE', help="keep py-spy's raw stacks here")
    ap.add_argument('--capture', type=Path, metavar='FILE', help="write the profiled player's server messages here")
    ap.add_argument(
        '--one-process', action='store_true', help='each team in one process (robocup3d team --one-process)'
    )
    ap.add_argument(
        '--processes', type=int, default=0, metavar='N', help="each team's players in N processes (default: one each)"
    )
    opts = ap.parse_args()
    if (opts.one_process or opts.processes) and opts.profile is not None:
        ap.error('--profile samples one player process; with --one-process or --processes there is none')
    if opts.server == 'simspark':
        simspark_team(
            opts.duration,
            opts.move_ball,
            opts.seed,
            opts.profile,
            opts.profile_out,
            opts.capture,
            opts.one_process,
            opts.processes,
        )
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
            *(['--one-process'] if opts.one_process else []),
            *(['--processes', str(opts.processes)] if opts.processes else []),
        ]
    )
    marks: dict[str, dict[int, float]] = {}

    def log(line: str) -> None:
        print(line, flush=True)
        if 'kick-off' in line or line.startswith('play ended'):
            players = _pids(f'robocup3d_tools.(player|team_process) .*--team ({teams[0]}|{teams[1]}) ')
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
    print(f'CPU per player-cycle, all players: {sum(per_player) / (2 * opts.players):.2f} ms')
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
