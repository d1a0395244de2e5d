"""``robocup3d match``: a whole match on the embedded RCSSServerMJ, with a result summary.

Starts the server headless on loopback (unless ``--no-server``), connects as the
monitor/trainer, puts two of our teams on the field, gives the kick-off, plays for
``--duration`` seconds of game time and prints what happened: score, play modes,
per-player cycles, late replies, latency and restarts. Everything it started is
stopped at the end, also on Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from robocup3d_bridge.percept import Dialect
from robocup3d_bridge.trainer import TrainerClient
from robocup3d_tools.recorder import start_recorder
from robocup3d_tools.ros_env import ros_environment
from robocup3d_tools.servers import connect_trainer, free_port, start_mujoco_server, stop_process
from robocup3d_tools.team_config import PlayerConfig, TeamConfig
from robocup3d_tools.team_runner import TeamRunner

__all__ = ['MatchResult', 'main', 'run_match']


@dataclass
class MatchResult:
    """What a match produced."""

    teams: tuple[str, str]
    mode: str = 'real time'  # or 'sync'
    score: tuple[int, int] = (0, 0)
    play_modes: list[str] = field(default_factory=list)
    game_time: float = 0.0
    wall_time: float = 0.0
    play_wall_time: float = 0.0  # wall seconds from the kick-off to the end
    players: dict[str, dict[str, str]] = field(default_factory=dict)  # from /diagnostics
    restarts: dict[str, int] = field(default_factory=dict)


class _DiagnosticsWatcher:
    """Collects the bridges' ``/diagnostics`` (cycles, late replies, latency) in this process."""

    def __init__(self, env: dict[str, str]) -> None:
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = env['ROS_AUTOMATIC_DISCOVERY_RANGE']
        os.environ['ROS_DOMAIN_ID'] = env['ROS_DOMAIN_ID']
        import rclpy  # noqa: PLC0415 - after the domain is set for this process
        from diagnostic_msgs.msg import DiagnosticArray  # noqa: PLC0415

        self._rclpy = rclpy
        rclpy.init(args=[])
        self.node = rclpy.create_node('match_observer')
        self.latest: dict[str, dict[str, str]] = {}
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diag, 50)

    def _on_diag(self, msg: object) -> None:
        for status in msg.status:
            if status.name.endswith('/bridge'):
                self.latest[status.name[: -len('/bridge')]] = {kv.key: kv.value for kv in status.values}

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._rclpy.spin_once(self.node, timeout_sec=min(0.05, max(0.0, end - time.monotonic())))

    def close(self) -> None:
        self.node.destroy_node()
        self._rclpy.try_shutdown()


def _team(name: str, port: int, players: int, robot: str) -> TeamConfig:
    return TeamConfig('mujoco', name, '127.0.0.1', port, tuple(PlayerConfig(u, robot) for u in range(1, players + 1)))


def match_parser() -> argparse.ArgumentParser:
    """Arguments of ``robocup3d match``."""
    p = argparse.ArgumentParser(prog='robocup3d match', description=__doc__.splitlines()[0])
    p.add_argument('--players', type=int, default=3, help='players per team (1-7; default 3 fits 2 cores)')
    p.add_argument('--robot', choices=('T1', 'K1'), default='T1')
    p.add_argument('--duration', type=float, default=30.0, help='seconds of play after the kick-off')
    p.add_argument('--teams', nargs=2, default=('Robo3dA', 'Robo3dB'), metavar=('LEFT', 'RIGHT'))
    p.add_argument('--run-dir', default='runs/match', help='server and player logs go here')
    p.add_argument(
        '--opponent',
        choices=('ours', 'formation'),
        default='ours',
        help='the right team: our full team, or ours keeping its formation places only (no play)',
    )
    p.add_argument('--sync', action='store_true', help='the server waits for every player each cycle (slow machines)')
    p.add_argument('--no-server', action='store_true', help='use a server that is already running')
    p.add_argument('--port', type=int, default=0, help='agent port (default: a free one, or 60000 with --no-server)')
    p.add_argument('--monitor-port', type=int, default=0, help='monitor port (default: free, or 60001)')
    p.add_argument(
        '--record',
        metavar='DIR',
        default=None,
        help='record the match into a rosbag2 bag (MCAP) in DIR (a new directory)',
    )
    p.add_argument(
        '--record-all',
        action='store_true',
        help='record also the topics players build only for a subscriber (vision/objects, markers, ground_truth)',
    )
    return p


def run_match(args: argparse.Namespace, log: callable = print) -> MatchResult:
    """Play one match; always cleans up what it started."""
    if not 1 <= args.players <= 7:
        raise ValueError(f'--players must be 1-7 (ssim rules), got {args.players}')
    env = ros_environment()
    run_dir = Path(args.run_dir)
    aport = args.port or (60000 if args.no_server else free_port())
    mport = args.monitor_port or (60001 if args.no_server else free_port())
    extra = ['--sync', '--no-realtime'] if args.sync else []
    server = None if args.no_server else start_mujoco_server(run_dir, aport, mport, extra, env=env)
    runners: list[TeamRunner] = []
    watcher = None
    recorder = None
    result = MatchResult(teams=tuple(args.teams), mode='sync' if args.sync else 'real time')
    t0 = time.monotonic()
    try:
        trainer = connect_trainer(mport, Dialect.MUJOCO)
        log(f'server up: agents 127.0.0.1:{aport}, monitor {mport}, ROS_DOMAIN_ID={env["ROS_DOMAIN_ID"]}')
        watcher = _DiagnosticsWatcher(env)
        if args.record:
            exclude = [] if args.record_all else None
            recorder = start_recorder(Path(args.record), list(args.teams), mport, run_dir, env, exclude=exclude)
            log(f'recording into {args.record} (pid {recorder.pid})')
        for i, name in enumerate(args.teams):
            runner = TeamRunner(
                _team(name, aport, args.players, args.robot),
                run_dir,
                env=env,
                extra_args=['--no-raw'] + (['--no-play'] if i == 1 and args.opponent == 'formation' else []),
                clock_player=1 if i == 0 else None,
            )
            runner.start(stagger=0.3)
            runners.append(runner)
            _wait(trainer, watcher, 4.0)  # the left team must be in before the right one joins
        _wait_players(trainer, watcher, 2 * args.players, timeout=60.0, log=log)
        log(f'{len(watcher.latest)} players connected; kick-off {args.teams[0]}')
        trainer.kick_off('Left')
        start_time = trainer.state.game_time
        play_t0 = time.monotonic()
        modes = [trainer.state.play_mode]
        end = time.monotonic() + args.duration * (20.0 if args.sync else 1.0) + 30.0  # sync: as slow as it must
        while trainer.state.game_time - start_time < args.duration and time.monotonic() < end:
            _wait(trainer, watcher, 0.5)
            if trainer.state.play_mode != modes[-1]:
                modes.append(trainer.state.play_mode)
                log(
                    f'  {trainer.state.game_time:7.2f} s  {trainer.state.play_mode}  '
                    f'{trainer.state.score_left}:{trainer.state.score_right}'
                )
            for r in runners:
                for line in r.poll():
                    log(f'  {line}')
        s = trainer.state
        result.score = (s.score_left, s.score_right)
        result.play_modes = modes
        result.game_time = s.game_time - start_time
        result.play_wall_time = time.monotonic() - play_t0
        log(f'play ended: {result.game_time:.1f} s of game time in {result.play_wall_time:.1f} s')
        watcher.spin_for(1.2)
        result.players = dict(sorted(watcher.latest.items()))
        result.restarts = {f'/{r.config.team}/p{u}': n for r in runners for u, n in r.restarts.items()}
        trainer.close()
    finally:
        if recorder is not None:
            stop_process(recorder, timeout=30.0)  # SIGINT: the recorder closes the bag
        for r in runners:
            r.stop()
        if watcher is not None:
            watcher.close()
        if server is not None:
            stop_process(server)
        result.wall_time = time.monotonic() - t0
    return result


def _wait(trainer: TrainerClient, watcher: _DiagnosticsWatcher | None, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        trainer.poll(0.02)
        if watcher is not None:
            watcher.spin_for(0.03)


def _wait_players(trainer: TrainerClient, watcher: _DiagnosticsWatcher, n: int, timeout: float, log: callable) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ready = [k for k, v in watcher.latest.items() if int(v.get('cycles', '0')) > 0]
        if len(ready) >= n:
            return
        _wait(trainer, watcher, 0.5)
    log(f'warning: only {len(watcher.latest)} of {n} players reported within {timeout:.0f} s')


def format_result(r: MatchResult) -> str:
    """A human-readable summary."""
    lines = [
        '',
        f'=== {r.teams[0]} {r.score[0]} : {r.score[1]} {r.teams[1]} ===',
        f'played {r.game_time:.1f} s of game time in {r.play_wall_time:.1f} s of wall time '
        f'(real-time factor {r.game_time / max(r.play_wall_time, 1e-9):.2f}; {r.wall_time:.1f} s with set-up; '
        f'server in {r.mode} mode)',
        f'play modes: {" -> ".join(r.play_modes)}',
        f'{"player":<18}{"cycles":>8}{"late":>7}{"p50 ms":>8}{"p99 ms":>8}{"errors":>8}{"restarts":>9}',
    ]
    for name, v in r.players.items():
        errors = sum(int(v.get(k, '0')) for k in ('parse_errors', 'perceptor_errors', 'action_errors'))
        lines.append(
            f'{name:<18}{v.get("cycles", "?"):>8}{v.get("replies_fallback", "?"):>7}'
            f'{v.get("latency_p50_ms", "?"):>8}{v.get("latency_p99_ms", "?"):>8}{errors:>8}'
            f'{r.restarts.get(name, 0):>9}'
        )
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d match``."""
    args = match_parser().parse_args(argv)
    try:
        result = run_match(args, log=lambda m: print(m, flush=True))
    except (ValueError, FileNotFoundError, TimeoutError) as exc:
        print(f'robocup3d match: {exc}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print('robocup3d match: interrupted', file=sys.stderr)
        return 130
    print(format_result(result), flush=True)
    return 0 if result.players else 1
