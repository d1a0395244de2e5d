"""The ``robocup3d`` command: one entry point, one subcommand per job."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

__all__ = ['main']


def _player(argv: list[str]) -> int:
    from robocup3d_tools.player import main as run  # noqa: PLC0415 - rclpy only for commands that need it

    return run(argv)


def _team(argv: list[str]) -> int:
    from robocup3d_tools.team_runner import main as run  # noqa: PLC0415

    return run(argv)


def _match(argv: list[str]) -> int:
    from robocup3d_tools.match import main as run  # noqa: PLC0415

    return run(argv)


def _penalties(argv: list[str]) -> int:
    from robocup3d_tools.penalties import main as run  # noqa: PLC0415

    return run(argv)


def _inspect(argv: list[str]) -> int:
    from robocup3d_tools.inspect_capture import main as run  # noqa: PLC0415

    return run(argv)


def _localize(argv: list[str]) -> int:
    from robocup3d_tools.localize import main as run  # noqa: PLC0415

    return run(argv)


def _optimize(argv: list[str]) -> int:
    from robocup3d_tools.optimize import main as run  # noqa: PLC0415

    return run(argv)


def _record(argv: list[str]) -> int:
    from robocup3d_tools.recorder import main as run  # noqa: PLC0415

    return run(argv)


def _tf(argv: list[str]) -> int:
    from robocup3d_tools.recorder import main as run  # noqa: PLC0415

    return run(['--publish-tf', *argv])


def _replay(argv: list[str]) -> int:
    from robocup3d_tools.replay import main as run  # noqa: PLC0415

    return run(argv)


def _report(argv: list[str]) -> int:
    from robocup3d_tools.report import main as run  # noqa: PLC0415

    return run(argv)


def _view(argv: list[str]) -> int:
    from robocup3d_tools.view import main as run  # noqa: PLC0415

    return run(argv)


def _bag_info(argv: list[str]) -> int:
    from robocup3d_tools.replay import info_main as run  # noqa: PLC0415

    return run(argv)


COMMANDS: dict[str, tuple[Callable[[list[str]], int], str]] = {
    'match': (_match, 'start RCSSServerMJ (or use a running server) and play two of our teams'),
    'penalties': (_penalties, 'a penalty shoot-out on RCSSServerMJ, or on rcssserver3d against any team'),
    'team': (_team, 'put one team on a server and supervise it'),
    'player': (_player, 'run one player (bridge, motion, strategy) in this process'),
    'inspect': (_inspect, 'decode a capture file (one server message per line)'),
    'optimize': (_optimize, 'tune walk and get-up parameters with CMA-ES on either server (sync mode, parallel)'),
    'record': (_record, "record running teams, the server's ground truth and TF into a rosbag2 bag (MCAP)"),
    'tf': (_tf, "publish the teams' TF live on /tf (world -> odom -> base_link -> links; needs a ROS 2 install)"),
    'replay': (_replay, 'publish a recorded bag on sim time (/clock first)'),
    'bag-info': (_bag_info, 'topics, message counts and duration of a bag'),
    'report': (_report, 'a recorded match as one HTML page (plotly, offline) and a text summary'),
    'view': (_view, 'serve a bag or the running teams to Foxglove (WebSocket on 127.0.0.1)'),
    'localize': (_localize, 'run localization and tracking offline over a capture; errors vs ground truth'),
}


def _exit_cleanly_on_termination() -> None:
    """SIGTERM and SIGHUP end the command through ``SystemExit``, so that what it started (a server,
    players, a recorder) is stopped by its own clean-up, as after Ctrl-C; a command may install its own.
    Once one has come, more are ignored: a second SIGTERM (seen when ``timeout`` and the command it ran were
    both sent one: ``timeout`` passes its own on) raised in the middle of the clean-up and left the server
    running."""

    def _exit(signum: int, _frame: object) -> None:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _exit)


def main(argv: list[str] | None = None) -> int:
    """Dispatch ``robocup3d <command> ...``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ('-h', '--help') or argv[0] not in COMMANDS:
        width = max(map(len, COMMANDS))
        lines = [f'  {name:<{width}}  {text}' for name, (_, text) in COMMANDS.items()]
        print('usage: robocup3d <command> [options]\n\ncommands:\n' + '\n'.join(lines))
        print('\nrun "robocup3d <command> --help" for the options of a command')
        return 0 if argv and argv[0] in ('-h', '--help') else 2
    run, _ = COMMANDS[argv[0]]
    _exit_cleanly_on_termination()
    try:
        return run(argv[1:]) or 0
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == '__main__':
    raise SystemExit(main())
