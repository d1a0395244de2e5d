"""``robocup3d match --server simspark``: our Nao team against any team on rcssserver3d.

rcssserver3d (from PATH) runs in a run directory of its own with the half time set
(``RuleHalfTime``; ``SingleHalfTime`` for one half). Our team (``--team-config``) joins
first and gets the left side; the right team is ours again, or the team that
``--opponent-cmd`` starts (see :mod:`robocup3d_tools.opponent`). The server ends each half
by itself; the match gives the kick-offs (left team first, right team in the second half).
"""

from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path

from robocup3d_bridge.percept import Dialect
from robocup3d_bridge.trainer import TrainerClient, parse_monitor_message, simspark_torsos
from robocup3d_tools.match import (
    MatchResult,
    _DiagnosticsWatcher,
    _wait,
    _wait_players,
    close_watcher,
    play_halves,
    process_layout,
)
from robocup3d_tools.match_stats import MatchStats, summary_lines
from robocup3d_tools.opponent import OpponentError, OpponentTeam, format_command, opponent_team
from robocup3d_tools.recorder import start_recorder
from robocup3d_tools.ros_env import ros_environment
from robocup3d_tools.servers import END_WITH_PARENT, connect_trainer, free_port, start_simspark_server, stop_process
from robocup3d_tools.team_runner import TeamRunner, load_team

__all__ = ['count_agents', 'run_simspark_match']


def _our_team(args: argparse.Namespace, name: str, port: int) -> argparse.Namespace:
    ns = argparse.Namespace(
        server='simspark', config=args.team_config, host='127.0.0.1', port=port, team=name, players=args.players
    )
    return ns


def count_agents(trainer: TrainerClient, side: str, timeout: float = 3.0) -> int:
    """How many agents of ``side`` ('Left'/'Right') the server's scene has now (asks for a full state)."""
    trainer.request_full_state()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for msg in trainer.receive(0.1):
            with contextlib.suppress(ValueError):
                parse_monitor_message(msg, Dialect.SIMSPARK, trainer.state)
            if b'(RSG ' in msg[:20000]:
                return sum(1 for s, _ in simspark_torsos(msg) if s == side)
    return 0


def _wait_opponent(
    trainer: TrainerClient, watcher: _DiagnosticsWatcher, team: OpponentTeam, args: argparse.Namespace, log: callable
) -> int:
    """Wait until ``--opponent-players`` right agents joined; the number seen. OpponentError if none did."""
    deadline = time.monotonic() + args.opponent_timeout
    seen = 0
    while time.monotonic() < deadline:
        _wait(trainer, watcher, 1.0)
        team.track()
        seen = count_agents(trainer, 'Right')
        if seen >= args.opponent_players:
            return seen
        if not team.alive():
            raise OpponentError(
                f'the opponent command exited with {team.returncode} and {seen} of its players on the field '
                f'(its output: {team.log}): {team.log_tail() or "no output"}'
            )
    if seen == 0:
        raise OpponentError(
            f"none of the opponent's players joined within {args.opponent_timeout:.0f} s (its output: {team.log}): "
            f'{team.log_tail() or "no output"}'
        )
    log(f'warning: {seen} of {args.opponent_players} opponent players joined within {args.opponent_timeout:.0f} s')
    return seen


def run_simspark_match(args: argparse.Namespace, log: callable = print) -> MatchResult:
    """Play one match on rcssserver3d; always stops what it started (the server with SIGKILL)."""
    env = {**ros_environment(), END_WITH_PARENT: '1'}  # our players end with the match, however it ends
    run_dir = Path(args.run_dir)
    aport = args.port or free_port()
    mport = args.monitor_port or free_port()
    ours = load_team(_our_team(args, args.teams[0], aport))  # a bad team file fails before anything starts
    command = None
    if args.opponent_cmd is not None:
        command = format_command(args.opponent_cmd, '127.0.0.1', aport, mport, args.teams[1])
    server_env = dict(env)
    if args.sync:
        server_env.update(SIMSPARK_SYNC='1', SIMSPARK_REALTIME='0')
    soccer = {'RuleHalfTime': f'{args.half_time:.3f}', 'SingleHalfTime': 'true' if args.halves == 1 else 'false'}
    server = start_simspark_server(run_dir, aport, mport, env=server_env, soccer=soccer)
    runners: list[TeamRunner] = []
    watcher = None
    opponent = None
    recorder = None
    mode = 'sync' if args.sync else 'real time'
    result = MatchResult(teams=tuple(args.teams), mode=mode, server='rcssserver3d', opponent=command or '')
    result.processes = process_layout(args, len(ours.players), ours.processes)
    t0 = time.monotonic()
    try:
        trainer = connect_trainer(mport, Dialect.SIMSPARK)
        stats = MatchStats('simspark')
        trainer.listeners.append(stats.take)
        log(f'rcssserver3d up: agents 127.0.0.1:{aport}, monitor {mport}, ROS_DOMAIN_ID={env["ROS_DOMAIN_ID"]}')
        watcher = _DiagnosticsWatcher(env)
        if args.record:  # a monitor connection of its own, beside the match's trainer
            exclude = [] if args.record_all else None  # robot auto: each player's robot_description
            teams = [ours.team, args.teams[1]]
            recorder = start_recorder(Path(args.record), teams, mport, run_dir, env, exclude=exclude, server='simspark')
            log(f'recording into {args.record} (pid {recorder.pid})')
        # recorded: the players publish raw/percept, from which the recorder builds their percept topics
        raw = [] if args.record else ['--no-raw']
        runner = TeamRunner(
            ours,
            run_dir,
            env=env,
            extra_args=raw,
            clock_player=1,
            one_process=args.one_process,
            processes=args.processes,
        )
        runner.start(stagger=0.2)
        runners.append(runner)
        _wait_players(trainer, watcher, len(ours.players), timeout=90.0, log=log)
        if trainer.state.team_left != ours.team:
            raise OpponentError(f'our team is not on the left (left: {trainer.state.team_left}); is the port shared?')
        if command is not None:
            log_file = run_dir / 'opponent.log'
            opponent = opponent_team(args.opponent_cmd, '127.0.0.1', aport, mport, args.teams[1], log_file, env)
            log(f'starting the opponent: {command}')
            opponent.start()
            result.opponent_agents = _wait_opponent(trainer, watcher, opponent, args, log)
        else:
            right = load_team(_our_team(args, args.teams[1], aport))
            no_play = ['--no-play'] if args.opponent == 'formation' else []
            runner = TeamRunner(
                right,
                run_dir,
                env=env,
                extra_args=[*raw, *no_play],
                one_process=args.one_process,
                processes=args.processes,
            )
            runner.start(stagger=0.2)
            runners.append(runner)
            _wait_players(trainer, watcher, 2 * len(ours.players), timeout=90.0, log=log)
        result.teams = (ours.team, trainer.state.team_right or args.teams[1])
        log(f'{result.teams[0]} (left) v {result.teams[1]} (right)')
        play_halves(
            trainer,
            watcher,
            runners,
            args,
            result,
            log,
            server_halves=True,
            tick=lambda: (opponent.track() if opponent is not None else None, stats.tick(trainer)),
        )
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
        if opponent is not None:
            opponent.stop()
        for r in runners:
            r.stop()
        stop_process(server, timeout=0)  # it ignores SIGTERM
        close_watcher(watcher, log)
        result.wall_time = time.monotonic() - t0
    return result
