"""``robocup3d match``: a whole match on RCSSServerMJ or rcssserver3d, with a result summary.

Starts the server headless on loopback (the embedded RCSSServerMJ by default, unless
``--no-server``; rcssserver3d from PATH with ``--server simspark``), connects as the
monitor/trainer, puts our team on the left and the right team on the field (ours, or on
rcssserver3d any team given by its start command, ``--opponent-cmd``), gives each half's
kick-off, plays ``--halves`` of ``--half-time`` seconds of game time and prints what happened:
the score of each half, play modes, per-player cycles, late replies, latency and restarts.
Everything it started is stopped at the end, also on Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from robocup3d_bridge.percept import Dialect
from robocup3d_bridge.trainer import TrainerClient
from robocup3d_tools.match_stats import MatchStats, summary_lines
from robocup3d_tools.mujoco_server import check_monitor_interval
from robocup3d_tools.opponent import OpponentError
from robocup3d_tools.recorder import start_recorder
from robocup3d_tools.ros_env import ros_environment
from robocup3d_tools.servers import END_WITH_PARENT, connect_trainer, free_port, start_mujoco_server, stop_process
from robocup3d_tools.team_config import PlayerConfig, TeamConfig
from robocup3d_tools.team_runner import TeamRunner, process_count, processes_for

__all__ = ['MatchResult', 'format_result', 'main', 'match_parser', 'play_halves', 'run_match']


@dataclass
class MatchResult:
    """What a match produced."""

    teams: tuple[str, str]
    mode: str = 'real time'  # or 'sync'
    server: str = 'RCSSServerMJ'  # or 'rcssserver3d'
    half_scores: list[tuple[int, int]] = field(default_factory=list)  # the score at the end of each half
    opponent: str = ''  # the right team's start command, if it is not ours
    opponent_agents: int = 0  # how many of its agents joined
    score: tuple[int, int] = (0, 0)
    play_modes: list[str] = field(default_factory=list)
    game_time: float = 0.0
    wall_time: float = 0.0
    play_wall_time: float = 0.0  # wall seconds from the kick-off to the end
    players: dict[str, dict[str, str]] = field(default_factory=dict)  # from /diagnostics
    restarts: dict[str, int] = field(default_factory=dict)
    players_at_kickoff: dict[str, dict[str, str]] = field(default_factory=dict)  # diagnostics as play began
    stats: list[str] = field(default_factory=list)  # goals, possession, kicks, falls; fouls on RCSSServerMJ
    processes: str = 'a process per player'  # how our teams' players were run (--processes, --one-process)


CLOSE_TIMEOUT = 10.0  # s the observer's ROS teardown may take before it is left behind


class _DiagnosticsWatcher:
    """Collects the bridges' ``/diagnostics`` (cycles, late replies, latency) in this process."""

    def __init__(self, env: dict[str, str]) -> None:
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = env['ROS_AUTOMATIC_DISCOVERY_RANGE']
        os.environ['ROS_DOMAIN_ID'] = env['ROS_DOMAIN_ID']
        import rclpy  # noqa: PLC0415 - after the domain is set for this process
        from diagnostic_msgs.msg import DiagnosticArray  # noqa: PLC0415
        from rclpy.context import Context  # noqa: PLC0415
        from rclpy.executors import SingleThreadedExecutor  # noqa: PLC0415

        self._rclpy = rclpy
        # a context of its own, on the match's domain: the process may hold another (a test, a caller)
        self._context = Context()
        rclpy.init(args=[], context=self._context, domain_id=int(env['ROS_DOMAIN_ID']))
        self.node = rclpy.create_node('match_observer', context=self._context)
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self.node)
        self.latest: dict[str, dict[str, str]] = {}
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diag, 50)

    def _on_diag(self, msg: object) -> None:
        for status in msg.status:
            if status.name.endswith('/bridge'):
                self.latest[status.name[: -len('/bridge')]] = {kv.key: kv.value for kv in status.values}

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._executor.spin_once(timeout_sec=min(0.05, max(0.0, end - time.monotonic())))

    def close(self, timeout: float = CLOSE_TIMEOUT) -> bool:
        """Tear the node and its context down; False when that hung for ``timeout`` s and was left behind (a Fast
        DDS publisher's deletion blocked for good after a 5-minute rcssserver3d half, session 31)."""

        def teardown() -> None:
            self._executor.shutdown()
            self.node.destroy_node()
            self._rclpy.try_shutdown(context=self._context)

        worker = threading.Thread(target=teardown, name='match-observer-close', daemon=True)
        worker.start()
        worker.join(timeout)
        return not worker.is_alive()


def close_watcher(watcher: _DiagnosticsWatcher | None, log: callable) -> None:
    """Close ``watcher`` if there is one, with a line in ``log`` when its teardown was left behind."""
    if watcher is not None and not watcher.close():
        log(f'the /diagnostics observer did not close within {CLOSE_TIMEOUT:g} s (ROS teardown): left behind')


def _team(name: str, port: int, players: int, robot: str) -> TeamConfig:
    return TeamConfig('mujoco', name, '127.0.0.1', port, tuple(PlayerConfig(u, robot) for u in range(1, players + 1)))


#: (halves, seconds of game time per half) when not given: the README's short RCSSServerMJ match;
#: on rcssserver3d the rules' two halves of 5 minutes
DEFAULT_HALVES = {'mujoco': (1, 30.0), 'simspark': (2, 300.0)}
#: wall seconds without the game time moving after which a half is given up (a stalled server or team)
STALL_SECONDS = 60.0
#: wall s the match waits for every player to run a cycle: 14 T1 joining RCSSServerMJ at load 8 ran their first
#: cycles 57 s after connecting (session 42)
JOIN_WAIT_S = 180.0
SETTLE_S = 2.0  # s of server time the players stand at their kick-off places before the first kick-off


def match_parser() -> argparse.ArgumentParser:
    """Arguments of ``robocup3d match``."""
    p = argparse.ArgumentParser(prog='robocup3d match', description=__doc__.splitlines()[0])
    p.add_argument(
        '--server',
        choices=('mujoco', 'simspark'),
        default='mujoco',
        help='mujoco: the embedded RCSSServerMJ (default); simspark: rcssserver3d from PATH, 11 Nao a side',
    )
    p.add_argument(
        '--players', type=int, default=None, help='our players per team (mujoco 1-7, default 3; simspark 1-11, 11)'
    )
    p.add_argument('--robot', choices=('T1', 'K1'), default='T1', help='mujoco only')
    p.add_argument(
        '--team-config', default='team_simspark.yaml', help='simspark: our team file (types per player number)'
    )
    p.add_argument('--halves', type=int, default=None, help='halves to play (default: mujoco 1, simspark 2)')
    p.add_argument(
        '--half-time',
        '--duration',
        dest='half_time',
        type=float,
        default=None,
        help='seconds of game time per half (default: mujoco 30, simspark 300); --duration is its old name',
    )
    p.add_argument('--teams', nargs=2, default=('Robo3dA', 'Robo3dB'), metavar=('LEFT', 'RIGHT'))
    p.add_argument('--run-dir', default='runs/match', help='server and player logs go here')
    p.add_argument(
        '--opponent',
        choices=('ours', 'formation'),
        default='ours',
        help='the right team: our full team, or ours keeping its formation places only (no play)',
    )
    p.add_argument(
        '--opponent-cmd',
        metavar='SHELL_COMMAND',
        default=None,
        help='simspark: the right team is another team started by this shell command; {host} {port} '
        '{monitor_port} {team} in it (and ROBOCUP3D_HOST/PORT/MONITOR_PORT/TEAM in its environment) name the server',
    )
    p.add_argument(
        '--opponent-players', type=int, default=11, help='--opponent-cmd: how many of its players to wait for'
    )
    p.add_argument(
        '--opponent-timeout', type=float, default=90.0, help='--opponent-cmd: seconds to wait for its players'
    )
    p.add_argument(
        '--one-process',
        action='store_true',
        help='run each of our teams in one process (all its players on one executor) instead of one per player',
    )
    p.add_argument(
        '--processes',
        type=process_count,
        default=0,
        metavar='N',
        help="deal each of our teams' players into N processes (default: one process per player)",
    )
    p.add_argument('--sync', action='store_true', help='the server waits for every player each cycle (slow machines)')
    p.add_argument('--no-server', action='store_true', help='mujoco: use a server that is already running')
    p.add_argument('--port', type=int, default=0, help='agent port (default: a free one, or 60000 with --no-server)')
    p.add_argument('--monitor-port', type=int, default=0, help='monitor port (default: free, or 60001)')
    p.add_argument(
        '--monitor-interval',
        type=int,
        default=0,
        help="mujoco: server frames between monitor scenes (divides 250; the server's own: 2)",
    )
    p.add_argument(
        '--record',
        metavar='DIR',
        default=None,
        help='record the match into a rosbag2 bag (MCAP) in DIR (a new directory)',
    )
    p.add_argument(
        '--record-all',
        action='store_true',
        help='record also what recorder.COSTLY leaves out: joint_commands, ball/stop (which the players build for '
        'the recorder), vision/objects, world_model/markers, ground_truth/* (large)',
    )
    return p


def check_args(args: argparse.Namespace) -> None:
    """Fill in the per-server defaults; ValueError for what cannot be played."""
    halves, half_time = DEFAULT_HALVES[args.server]
    args.halves = halves if args.halves is None else args.halves
    args.half_time = half_time if args.half_time is None else args.half_time
    if args.players is None:
        args.players = 3 if args.server == 'mujoco' else 11
    most = 7 if args.server == 'mujoco' else 11
    if not 1 <= args.players <= most:
        raise ValueError(f'--players must be 1-{most} on {args.server}, got {args.players}')
    if args.halves < 1 or not args.half_time > 0:
        raise ValueError(f'--halves must be >= 1 and --half-time > 0, got {args.halves} and {args.half_time}')
    if args.server == 'simspark':
        if args.halves > 2:
            raise ValueError(f'rcssserver3d plays 1 or 2 halves, not {args.halves}')
        if args.no_server:
            raise ValueError('--no-server is for RCSSServerMJ; on simspark the match starts its own rcssserver3d')
        if args.opponent_cmd is not None and not 1 <= args.opponent_players <= 11:
            raise ValueError(f'--opponent-players must be 1-11, got {args.opponent_players}')
    elif args.opponent_cmd is not None:
        raise ValueError('--opponent-cmd needs --server simspark (on RCSSServerMJ use --opponent ours|formation)')
    if args.monitor_interval:
        if args.server == 'simspark':
            raise ValueError('--monitor-interval is for RCSSServerMJ')
        check_monitor_interval(args.monitor_interval)
    if args.record and Path(args.record).exists():  # before a server starts: the recorder would refuse it then
        raise ValueError(f'--record {args.record}: it exists already; the bag needs a new directory')


def run_match(args: argparse.Namespace, log: callable = print) -> MatchResult:
    """Play one match; always cleans up what it started."""
    check_args(args)
    if args.server == 'simspark':
        from robocup3d_tools.simspark_match import run_simspark_match  # noqa: PLC0415

        return run_simspark_match(args, log)
    env = {**ros_environment(), END_WITH_PARENT: '1'}  # server and players end with the match, however it ends
    run_dir = Path(args.run_dir)
    aport = args.port or (60000 if args.no_server else free_port())
    mport = args.monitor_port or (60001 if args.no_server else free_port())
    extra = ['--sync', '--no-realtime'] if args.sync else []
    extra += ['--monitor-interval', str(args.monitor_interval)] if args.monitor_interval else []
    server = None if args.no_server else start_mujoco_server(run_dir, aport, mport, extra, env=env)
    runners: list[TeamRunner] = []
    watcher = None
    recorder = None
    result = MatchResult(teams=tuple(args.teams), mode='sync' if args.sync else 'real time', server='RCSSServerMJ')
    result.processes = process_layout(args, args.players)
    t0 = time.monotonic()
    try:
        trainer = connect_trainer(mport, Dialect.MUJOCO)
        stats = MatchStats()
        trainer.listeners.append(stats.take)
        log(f'server up: agents 127.0.0.1:{aport}, monitor {mport}, ROS_DOMAIN_ID={env["ROS_DOMAIN_ID"]}')
        watcher = _DiagnosticsWatcher(env)
        if args.record:
            exclude = [] if args.record_all else None
            recorder = start_recorder(
                Path(args.record), list(args.teams), mport, run_dir, env, exclude=exclude, server='mujoco'
            )
            log(f'recording into {args.record} (pid {recorder.pid})')
        for i, name in enumerate(args.teams):
            runner = TeamRunner(
                _team(name, aport, args.players, args.robot),
                run_dir,
                env=env,
                extra_args=([] if args.record else ['--no-raw'])
                + (['--no-play'] if i == 1 and args.opponent == 'formation' else []),
                clock_player=1 if i == 0 else None,
                one_process=args.one_process,
                processes=args.processes,
            )
            runner.start(stagger=0.3)
            runners.append(runner)
            _wait(trainer, watcher, 4.0)  # the left team must be in before the right one joins
        _wait_players(trainer, watcher, 2 * args.players, timeout=JOIN_WAIT_S, log=log)
        # beamed, they stand: a player's pose estimate settles within a second of a beam (the IMU's landing jolt),
        # and a kick-off given 0.2 s after it was walked up to on a pose 23 cm off (sync mode on a loaded machine)
        _wait_server_time(trainer, watcher, SETTLE_S, timeout=60.0)
        log(f'{len(watcher.latest)} players connected; kick-off {args.teams[0]}')
        play_halves(trainer, watcher, runners, args, result, log, server_halves=False)
        watcher.spin_for(1.2)
        result.players = dict(sorted(watcher.latest.items()))
        result.restarts = {f'/{r.config.team}/p{u}': n for r in runners for u, n in r.restarts.items()}
        trainer.close()
        analysed = stats.analysis()
        if analysed is not None:
            result.stats = summary_lines(analysed[0], stats.fouls)
    finally:
        if recorder is not None:
            stop_process(recorder, timeout=30.0)  # SIGINT: the recorder closes the bag
        for r in runners:
            r.stop()
        if server is not None:
            stop_process(server)
        close_watcher(watcher, log)
        result.wall_time = time.monotonic() - t0
    return result


def play_halves(
    trainer: TrainerClient,
    watcher: _DiagnosticsWatcher | None,
    runners: list[TeamRunner],
    args: argparse.Namespace,
    result: MatchResult,
    log: callable,
    server_halves: bool,
    tick: callable = lambda: None,
) -> None:
    """Kick off each half (left team first, then alternating) and play it; fills ``result``.

    ``server_halves``: the server ends a half by itself and waits in BeforeKickOff for the next
    kick-off (rcssserver3d); otherwise (RCSSServerMJ, which plays on) a half ends after
    ``args.half_time`` s of game time and the next one starts with a kick-off for the other side.
    ``tick`` runs every half second (e.g. to watch an opponent's processes). A half may take any
    wall time (a loaded machine slows the server down); the match ends early only when the game
    time stands still for :data:`STALL_SECONDS`.
    """
    start_time = trainer.state.game_time
    play_t0 = time.monotonic()
    if watcher is not None:
        result.players_at_kickoff = {k: dict(v) for k, v in watcher.latest.items()}
    modes = [trainer.state.play_mode]
    stalled = False
    for h in range(args.halves):
        side = ('Left', 'Right')[h % 2]
        if h and server_halves:  # the server is in BeforeKickOff of the next half: let players beam first
            _wait(trainer, watcher, 3.0)
        log(f'half {h + 1}: kick-off {result.teams[h % 2]}')
        trainer.kick_off(side)
        end_game = start_time + (h + 1) * args.half_time
        last_time, last_change = trainer.state.game_time, time.monotonic()
        while True:
            _wait(trainer, watcher, 0.5)
            s = trainer.state
            if s.play_mode != modes[-1]:
                modes.append(s.play_mode)
                log(f'  {s.game_time:7.2f} s  half {s.half}  {s.play_mode}  {s.score_left}:{s.score_right}')
            for r in runners:
                for line in r.poll():
                    log(f'  {line}')
            tick()
            if (server_halves and (s.play_mode == 'GameOver' or s.half > h + 1)) or (
                not server_halves and s.game_time >= end_game
            ):
                break
            if s.game_time != last_time:
                last_time, last_change = s.game_time, time.monotonic()
            elif time.monotonic() - last_change > STALL_SECONDS:
                log(f'warning: the game time stood still at {s.game_time:.2f} s for {STALL_SECONDS:.0f} s; match ended')
                stalled = True
                break
        s = trainer.state
        result.half_scores.append((s.score_left, s.score_right))
        if stalled or s.play_mode == 'GameOver':
            break
    s = trainer.state
    result.score = (s.score_left, s.score_right)
    result.play_modes = modes
    result.game_time = s.game_time - start_time
    result.play_wall_time = time.monotonic() - play_t0
    log(f'play ended: {result.game_time:.1f} s of game time in {result.play_wall_time:.1f} s')


def _wait(trainer: TrainerClient, watcher: _DiagnosticsWatcher | None, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        trainer.poll(0.02)
        if watcher is not None:
            watcher.spin_for(0.03)


def _wait_server_time(
    trainer: TrainerClient, watcher: _DiagnosticsWatcher | None, seconds: float, timeout: float
) -> None:
    """Wait until the server's clock has run ``seconds`` (RCSSServerMJ's ``gt``; without one, wall seconds),
    or ``timeout`` wall seconds."""
    t0 = trainer.state.server_time
    if t0 is None:
        _wait(trainer, watcher, seconds)
        return
    end = time.monotonic() + timeout
    while time.monotonic() < end and (trainer.state.server_time or t0) - t0 < seconds:
        _wait(trainer, watcher, 0.1)


def _wait_players(trainer: TrainerClient, watcher: _DiagnosticsWatcher, n: int, timeout: float, log: callable) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ready = [k for k, v in watcher.latest.items() if int(v.get('cycles', '0')) > 0]
        if len(ready) >= n:
            return
        _wait(trainer, watcher, 0.5)
    ready = [k for k, v in watcher.latest.items() if int(v.get('cycles', '0')) > 0]
    # players that joined but got no cycle: the server stalled as they joined (docs/servers.md)
    log(f'warning: only {len(ready)} of {n} players ran a cycle within {timeout:.0f} s ({len(watcher.latest)} joined)')


def process_layout(args: argparse.Namespace, players: int, team_file: int = 0) -> str:
    """How ``--one-process``/``--processes`` (else the team file's ``processes``) run a team of ``players``, in
    words (as :meth:`TeamRunner.groups` deals them)."""
    n = processes_for(players, args.one_process, args.processes, team_file)
    if n == players:
        return 'a process per player'
    return 'one process per team' if n == 1 else f'{n} processes per team'


def format_result(r: MatchResult) -> str:
    """A human-readable summary."""
    lines = [
        '',
        f'=== {r.teams[0]} {r.score[0]} : {r.score[1]} {r.teams[1]} ===',
        f'played {r.game_time:.1f} s of game time in {r.play_wall_time:.1f} s of wall time '
        f'(real-time factor {r.game_time / max(r.play_wall_time, 1e-9):.2f}; {r.wall_time:.1f} s with set-up; '
        f'{r.server} in {r.mode} mode; our players: {r.processes})',
    ]
    before = (0, 0)
    for i, (left, right) in enumerate(r.half_scores, 1):
        lines.append(f'half {i}: {left - before[0]} : {right - before[1]} (after it {left} : {right})')
        before = (left, right)
    if r.opponent:
        lines.append(f'right team: {r.opponent_agents} agents of `{r.opponent}`')
    lines += r.stats
    lines += [
        f'play modes: {" -> ".join(r.play_modes)}',
        f'{"player":<18}{"cycles":>8}{"late":>7}{"p50 ms":>8}{"p99 ms":>8}{"CPU ms":>8}{"errors":>8}{"restarts":>9}',
    ]
    for name, v in r.players.items():
        errors = sum(int(v.get(k, '0')) for k in ('parse_errors', 'perceptor_errors', 'action_errors'))
        lines.append(
            f'{name:<18}{v.get("cycles", "?"):>8}{v.get("replies_fallback", "?"):>7}'
            f'{v.get("latency_p50_ms", "?"):>8}{v.get("latency_p99_ms", "?"):>8}'
            f'{cpu_per_cycle(r.players_at_kickoff.get(name), v):>8}{errors:>8}{r.restarts.get(name, 0):>9}'
        )
    lines.append('CPU ms: CPU time of the player process per cycle from the kick-off on (from its diagnostics)')
    return '\n'.join(lines)


def cpu_per_cycle(before: dict[str, str] | None, after: dict[str, str]) -> str:
    """A player process's CPU ms per cycle between two of its bridge's diagnostics, or ``?``."""
    try:
        cycles = int(after['cycles']) - int(before['cycles'])
        cpu = float(after['process_cpu_s']) - float(before['process_cpu_s'])
    except (KeyError, TypeError, ValueError):
        return '?'
    return f'{1e3 * cpu / cycles:.2f}' if cycles > 0 else '?'


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d match``."""
    args = match_parser().parse_args(argv)
    try:
        result = run_match(args, log=lambda m: print(m, flush=True))
    except (ValueError, FileNotFoundError, TimeoutError, OpponentError) as exc:
        print(f'robocup3d match: {exc}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print('robocup3d match: interrupted', file=sys.stderr)
        return 130
    print(format_result(result), flush=True)
    return 0 if result.players else 1
