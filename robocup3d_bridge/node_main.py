"""Process entry points: run one or more nodes in one process on one executor.

All nodes of a player can share a process (composition, like ROS 2 components),
which keeps the per-cycle cost down: one executor, no extra interpreters.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile

__all__ = ['LATCHED', 'make_executor', 'spin_nodes', 'spin_until_shutdown']

#: QoS for state that late joiners must get (game state, gains): keep the last message.
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def make_executor() -> object:
    """The fastest executor available: ``EventsExecutor`` where rclpy has it."""
    try:
        from rclpy.experimental import EventsExecutor  # noqa: PLC0415 - optional in older rclpy

        return EventsExecutor()
    except ImportError:  # pragma: no cover - older ROS 2 distributions
        from rclpy.executors import SingleThreadedExecutor  # noqa: PLC0415

        return SingleThreadedExecutor()


MAX_SPIN_ERRORS = 50  # spin_once errors in a row that end the process


def spin_until_shutdown(executor: object, stop: Callable[[], bool] = lambda: False) -> None:
    """Spin until rclpy shuts down (Ctrl-C, SIGTERM).

    ``EventsExecutor.spin()`` of the Kilted wheels never dispatches a callback here
    (measured: timers and subscriptions stay silent), while ``spin_once`` works, so
    we loop on ``spin_once``; it returns as soon as one event has been handled.
    ``stop`` ends the loop early (a node that must end the process).

    rclpy's ``spin_once`` can raise ``RuntimeError`` ("Unable to convert call argument '0' to
    Python object") while Ctrl-C shuts the context down: that ends the loop quietly. While the
    context is up, one such error is reported and the spin goes on; :data:`MAX_SPIN_ERRORS` in a
    row re-raise it.
    """
    errors = 0
    while rclpy.ok() and not stop():
        try:
            executor.spin_once(timeout_sec=0.2)
            errors = 0
        except RuntimeError as exc:
            if not rclpy.ok():
                return
            errors += 1
            if errors >= MAX_SPIN_ERRORS:
                raise
            print(f'robocup3d: rclpy spin_once failed ({exc}); going on', file=sys.stderr, flush=True)


def spin_nodes(
    factories: Sequence[Callable[..., Node]],
    args: list[str] | None = None,
    **node_kwargs: object,
) -> int:
    """Initialise rclpy, build the nodes, spin until shutdown, clean up; return an exit code.

    A node with a non-zero ``exit_code`` attribute (the bridge whose link thread died) ends
    the spin, and its code is returned.
    """
    rclpy.init(args=args if args is not None else sys.argv)
    nodes: list[Node] = []
    try:
        for make in factories:
            nodes.append(make(**node_kwargs))
        executor = make_executor()
        for node in nodes:
            executor.add_node(node)
        spin_until_shutdown(executor, lambda: any(_exit_code(n) for n in nodes))
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ValueError as exc:  # a wrong configuration: say what, do not dump a trace
        print(f'robocup3d: configuration error: {exc}', file=sys.stderr)
        return 2
    finally:
        try:
            for node in nodes:
                node.destroy_node()
        except KeyboardInterrupt:  # a second Ctrl-C while stopping
            pass
        if rclpy.ok():
            rclpy.shutdown()
    return max((_exit_code(n) for n in nodes), default=0)


def _exit_code(node: Node) -> int:
    return int(getattr(node, 'exit_code', 0) or 0)
