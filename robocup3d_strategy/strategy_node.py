"""The strategy node: decides where the player goes. For now: beam into formation."""

from __future__ import annotations

import json
import time

from geometry_msgs.msg import Pose2D
from rclpy.node import Node
from std_msgs.msg import String

from robocup3d_bridge.config_files import load_config
from robocup3d_bridge.node_main import LATCHED, spin_nodes
from robocup3d_strategy.formation import formation_pose, should_beam

__all__ = ['StrategyNode', 'main']


class StrategyNode(Node):
    """Beams the player to its kick-off place whenever the rules allow a beam."""

    def __init__(self, **kwargs) -> None:
        super().__init__('strategy', **kwargs)
        server = self.declare_parameter('server', 'mujoco').value
        self.unum = int(self.declare_parameter('unum', 1).value)
        formations = load_config(self.declare_parameter('formations_config', 'formations.yaml').value)
        self.home = formation_pose(formations, server, self.unum)
        self.pub_beam = self.create_publisher(Pose2D, 'beam', 1)
        self.create_subscription(String, 'game_state', self._on_game_state, LATCHED)
        self.play_mode: str | None = None
        self._last_beam: float | None = None
        self.create_timer(0.25, self._tick)

    def _on_game_state(self, msg: String) -> None:
        try:
            state = json.loads(msg.data)
        except ValueError:
            self.get_logger().error('game_state is not JSON; ignored')
            return
        mode = state.get('play_mode')
        if mode != self.play_mode:
            self._last_beam = None
        self.play_mode = mode
        self._tick()

    def _tick(self) -> None:
        now = time.monotonic()
        if should_beam(self.play_mode, self._last_beam, now):
            x, y, th = self.home
            self.pub_beam.publish(Pose2D(x=x, y=y, theta=th))
            self._last_beam = now


def main(args: list[str] | None = None) -> None:
    """Run the strategy node alone."""
    raise SystemExit(spin_nodes([StrategyNode], args))


if __name__ == '__main__':
    main()
