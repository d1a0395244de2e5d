"""A whole team in one process: every player's nodes on one executor.

``robocup3d team --one-process`` (and ``robocup3d match --one-process``) start this instead of one
process per player. Each player keeps its own nodes in its own namespace and its own server link
thread, as in ``robocup3d player``; they share one interpreter, one executor and one DDS participant,
which costs less CPU per player-cycle than a process each (``bench/bench_team.py --one-process``).
A player whose server link thread dies (never expected: the link contains every per-cycle error) gets a
new one, up to :data:`MAX_RESTARTS` times; the others play on.

    python -m robocup3d_tools.team_process --player '--server simspark --unum 1 ...' --player '...'
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Callable

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from robocup3d_bridge.bridge_node import BridgeNode
from robocup3d_bridge.node_main import make_executor, spin_until_shutdown
from robocup3d_tools.player import check_config_files, player_factories, player_parser
from robocup3d_tools.servers import end_with_parent

__all__ = ['MAX_RESTARTS', 'main']

MAX_RESTARTS = 5  # new link threads for one player before it is left out
_CHECK_PERIOD = 0.5  # s between two looks for a player whose link thread died


class _Player:
    """One player's arguments and nodes."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.nodes: list[Node] = []
        self.restarts = 0

    def build(self, executor: object) -> None:
        """Make the player's nodes (their bridge restarts its link instead of ending the process) and spin them."""
        self.nodes = [make() for make in player_factories(self.args)]
        for node in self.nodes:
            if isinstance(node, BridgeNode):
                node.exit_process_on_link_death = False
            executor.add_node(node)

    def bridge(self) -> BridgeNode | None:
        """The player's bridge (None before it is built)."""
        return next((n for n in self.nodes if isinstance(n, BridgeNode)), None)


def _restarter(players: list[_Player], log: Callable[[str], None]) -> Callable[[], bool]:
    """A ``stop`` callback for the spin: now and then restarts a dead server link; never stops the spin."""
    next_check = time.monotonic() + _CHECK_PERIOD

    def check() -> bool:
        nonlocal next_check
        if time.monotonic() < next_check:
            return False
        next_check = time.monotonic() + _CHECK_PERIOD
        for p in players:
            bridge = p.bridge()
            if bridge is None or not bridge.exit_code or p.restarts > MAX_RESTARTS:
                continue
            if p.restarts == MAX_RESTARTS:
                p.restarts += 1
                log(f'player {p.args.unum}: server link died {MAX_RESTARTS + 1} times; left out')
            elif bridge.restart_link():
                p.restarts += 1
                log(f'player {p.args.unum}: server link died; started again ({p.restarts}/{MAX_RESTARTS})')
        return False

    return check


def main(argv: list[str] | None = None) -> int:
    """Entry point: one ``--player 'ARGS'`` per player, ARGS as ``robocup3d player`` takes them."""
    end_with_parent(only_if_asked=True)
    ap = argparse.ArgumentParser(prog='robocup3d team process', description=__doc__.split('\n')[0])
    ap.add_argument('--player', action='append', required=True, metavar='ARGS', help="one player's arguments")
    args, ros_args = ap.parse_known_args(argv)
    players = []
    for line in args.player:
        player_args, unknown = player_parser().parse_known_args(shlex.split(line))
        if unknown:
            ap.error(f'unknown player arguments: {" ".join(unknown)}')
        error = check_config_files(player_args)
        if error:
            print(f'robocup3d team process: {error}', file=sys.stderr)
            return 2
        players.append(_Player(player_args))

    def log(line: str) -> None:
        print(f'robocup3d team process: {line}', file=sys.stderr, flush=True)

    rclpy.init(args=[sys.argv[0], *ros_args])
    executor = make_executor()
    try:
        for p in players:
            p.build(executor)
        spin_until_shutdown(executor, _restarter(players, log))
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ValueError as exc:  # a wrong configuration: say what, do not dump a trace
        log(f'configuration error: {exc}')
        return 2
    finally:
        try:
            for p in players:
                for node in p.nodes:
                    node.destroy_node()
        except KeyboardInterrupt:  # a second Ctrl-C while stopping
            pass
        if rclpy.ok():
            rclpy.shutdown()
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
