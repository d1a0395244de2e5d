"""Start, supervise and stop a team of player processes (``robocup3d team``)."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from robocup3d_bridge.config_files import ConfigError, config_path, load_config
from robocup3d_bridge.team_talk import SECRET_ENV
from robocup3d_tools.ros_env import ros_environment
from robocup3d_tools.servers import stop_process
from robocup3d_tools.team_config import PlayerConfig, TeamConfig, parse_team_config, player_args

__all__ = ['TeamRunner', 'main', 'process_count', 'processes_for']


@dataclass
class _Proc:
    player: PlayerConfig
    team: list[PlayerConfig] = field(default_factory=list)  # the players of a process that runs several
    popen: subprocess.Popen | None = None
    restarts: int = 0
    started: float = 0.0
    log: Path | None = None


@dataclass
class TeamRunner:
    """Runs one process per player (or the team in ``processes`` groups); restarts a process that dies."""

    config: TeamConfig
    log_dir: Path
    env: dict[str, str] = field(default_factory=ros_environment)
    extra_args: list[str] = field(default_factory=list)
    max_restarts: int = 5
    clock_player: int | None = None  # which player publishes /clock
    one_process: bool = False  # every player in one process (robocup3d_tools.team_process): ``processes`` 1
    processes: int = 0  # the players in this many processes (robocup3d_tools.team_process); 0: the team file's
    _procs: list[_Proc] = field(default_factory=list)

    def command(self, p: PlayerConfig) -> list[str]:
        """The command line that starts player ``p``."""
        clock = p.unum == self.clock_player
        cmd = [sys.executable, '-m', 'robocup3d_tools.player', *player_args(self.config, p, clock)]
        cmd += self.extra_args
        return cmd

    def team_command(self, players: list[PlayerConfig]) -> list[str]:
        """The command line that starts ``players`` in one process."""
        cmd = [sys.executable, '-m', 'robocup3d_tools.team_process']
        for p in players:
            cmd += ['--player', shlex.join(self.command(p)[3:])]
        return cmd

    def groups(self) -> list[list[PlayerConfig]]:
        """The players of each process: one each, or dealt round the ``processes`` (goalie first; the runner's
        ``processes``, else the team file's; as many as the players or more: one each)."""
        players = list(self.config.players)
        n = processes_for(len(players), self.one_process, self.processes, self.config.processes)
        if n == len(players):
            return [[p] for p in players]
        return [players[i::n] for i in range(n)]

    def start(self, stagger: float = 0.1) -> None:
        """Start every player (goalie first)."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        groups = self.groups()
        if len(groups) < len(self.config.players):
            for i, group in enumerate(groups):
                name = self.config.team if len(groups) == 1 else f'{self.config.team}_g{i + 1}'
                proc = _Proc(group[0], team=group, log=self.log_dir / f'{name}.log')
                self._spawn(proc)
                self._procs.append(proc)
                time.sleep(stagger)
            return
        for p in self.config.players:
            proc = _Proc(p, log=self.log_dir / f'{self.config.team}_p{p.unum}.log')
            self._spawn(proc)
            self._procs.append(proc)
            time.sleep(stagger)

    def _spawn(self, proc: _Proc) -> None:
        env = {**self.env, SECRET_ENV: self.config.secret} if self.config.secret else self.env
        with open(proc.log, 'ab') as log:
            cmd = self.team_command(proc.team) if proc.team else self.command(proc.player)
            proc.popen = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        proc.started = time.monotonic()

    def poll(self) -> list[str]:
        """Restart players whose process ended; return what happened, one line each."""
        events = []
        for proc in self._procs:
            if proc.popen is None or proc.popen.poll() is None:
                continue
            code = proc.popen.returncode
            if proc.restarts >= self.max_restarts:
                continue
            proc.restarts += 1
            events.append(
                f'{self.config.team} {self._who(proc)} exited with {code}; restart {proc.restarts}'
                f'/{self.max_restarts} (log: {proc.log})'
            )
            self._spawn(proc)
        return events

    @staticmethod
    def _who(proc: _Proc) -> str:
        if not proc.team:
            return f'#{proc.player.unum}'
        return f'process of players {", ".join(str(p.unum) for p in proc.team)}'

    @property
    def restarts(self) -> dict[int, int]:
        """Restarts per player number."""
        return {p.unum: proc.restarts for proc in self._procs for p in (proc.team or [proc.player])}

    @property
    def pids(self) -> list[int]:
        """PIDs of the running player processes."""
        return [p.popen.pid for p in self._procs if p.popen is not None and p.popen.poll() is None]

    def stop(self, timeout: float = 5.0) -> None:
        """SIGINT every player, then SIGKILL what is left after ``timeout``."""
        for p in self._procs:
            if p.popen is not None and p.popen.poll() is None:
                os.killpg(p.popen.pid, signal.SIGINT)
        deadline = time.monotonic() + timeout
        for p in self._procs:
            if p.popen is None:
                continue
            try:
                p.popen.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.popen.pid, signal.SIGKILL)
                p.popen.wait()


def processes_for(players: int, one_process: bool, processes: int, team_file: int) -> int:
    """How many processes a team of ``players`` runs in: 1 with ``one_process``, else ``processes`` (0: the team
    file's), and one per player when that is 0 or at least as many as the players."""
    n = 1 if one_process else processes or team_file
    return players if n <= 0 or n >= players else n


def process_count(text: str) -> int:
    """``--processes``: a whole number >= 0 (0: the team file's; at or above the number of players: one each)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'a number of processes must be a whole number, not {text!r}') from None
    if n < 0:
        raise argparse.ArgumentTypeError(f'a number of processes cannot be negative ({n})')
    return n


def team_parser() -> argparse.ArgumentParser:
    """Arguments of ``robocup3d team``."""
    p = argparse.ArgumentParser(prog='robocup3d team', description='Put a team on a server and supervise it.')
    p.add_argument('--server', choices=('mujoco', 'simspark'), default=None)
    p.add_argument('--config', default=None, help='team YAML (default: team_<server>.yaml from config/)')
    p.add_argument('--host', default=None)
    p.add_argument('--port', type=int, default=None)
    p.add_argument('--team', default=None, help='team name (overrides the config)')
    p.add_argument('--players', type=int, default=None, help='only the first N players of the config')
    p.add_argument('--log-dir', default='runs/team', help='where player logs go')
    p.add_argument('--no-raw', action='store_true', help='players do not publish raw strings')
    p.add_argument(
        '--one-process', action='store_true', help='all players in one process (default: one process per player)'
    )
    p.add_argument(
        '--processes',
        type=process_count,
        default=0,
        metavar='N',
        help="the players dealt into N processes (each player's nodes stay together; default: the team file's "
        '`processes`, else one process each; N >= the players: one each)',
    )
    p.add_argument('--record', metavar='DIR', default=None, help='record the team into a rosbag2 bag (MCAP) in DIR')
    p.add_argument(
        '--record-all',
        action='store_true',
        help='record also what recorder.COSTLY leaves out: joint_commands, ball/stop (which the players build for '
        'the recorder), vision/objects, world_model/markers, ground_truth/* (large)',
    )
    p.add_argument(
        '--monitor-port',
        type=int,
        default=None,
        help="the server's monitor port for the recorded ground truth (default: RCSSServerMJ agent port + 1, "
        'rcssserver3d 3200; 0: none)',
    )
    return p


def load_team(args: argparse.Namespace) -> TeamConfig:
    """Team config from the arguments (file, then overrides), validated."""
    server = args.server or 'mujoco'
    path = config_path(args.config or f'team_{server}.yaml')
    data = dict(load_config(path))
    if args.server:
        data['server'] = args.server
    for key in ('host', 'port', 'team'):
        if getattr(args, key) is not None:
            data[key] = getattr(args, key)
    if args.players is not None:
        cfg = parse_team_config(data, source=str(path))  # the whole file is checked first
        data['players'] = {p.unum: {'robot': p.robot, 'type': p.robot_type} for p in cfg.players[: args.players]}
    return parse_team_config(data, source=str(path))


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d team``: run until Ctrl-C or SIGTERM."""
    args = team_parser().parse_args(argv)
    try:
        cfg = load_team(args)
    except ConfigError as exc:
        print(f'robocup3d team: {exc}', file=sys.stderr)
        return 2
    runner = TeamRunner(
        cfg,
        Path(args.log_dir),
        extra_args=['--no-raw'] if args.no_raw else [],
        one_process=args.one_process,
        processes=args.processes,
    )
    stop = False

    def _stop(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    print(
        f'robocup3d team: {cfg.team}, {len(cfg.players)} players in {len(runner.groups())} process(es) on '
        f'{cfg.server} {cfg.host}:{cfg.port}, '
        f'ROS_DOMAIN_ID={runner.env["ROS_DOMAIN_ID"]}, logs in {args.log_dir}',
        flush=True,
    )
    recorder = None
    if args.record:
        from robocup3d_tools.recorder import start_recorder  # noqa: PLC0415

        default_port = cfg.port + 1 if cfg.server == 'mujoco' else 3200
        mport = args.monitor_port if args.monitor_port is not None else default_port
        robot = 'auto'  # each player's model from its robot_description
        try:
            exclude = [] if args.record_all else None
            recorder = start_recorder(
                Path(args.record),
                [cfg.team],
                mport,
                Path(args.log_dir),
                runner.env,
                robot,
                exclude=exclude,
                server=cfg.server,
            )
        except FileExistsError as exc:
            print(f'robocup3d team: {exc}', file=sys.stderr)
            return 2
        print(f'robocup3d team: recording into {args.record}', flush=True)
    runner.start(stagger=0.2)  # on rcssserver3d the bridges' join gate lets one player join at a time
    try:
        while not stop:
            for line in runner.poll():
                print(f'robocup3d team: {line}', flush=True)
            time.sleep(0.5)
    finally:
        if recorder is not None:
            stop_process(recorder, timeout=30.0)  # SIGINT: the recorder closes the bag
        runner.stop()
        print('robocup3d team: stopped', flush=True)
    return 0
