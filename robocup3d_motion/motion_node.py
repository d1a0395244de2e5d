"""The motion node: owns the player's joint command stream.

For now it holds the robot's configured pose (``config/robots.yaml``); skills and
the walk plug in here. It answers every ``joint_states`` message with one
``joint_commands`` message carrying the same stamp, and publishes the gains on
the latched ``joint_gains`` topic. If ``joint_states`` stop, it stops too; the
bridge then holds the last pose safely.
"""

from __future__ import annotations

from rclpy.node import Node
from sensor_msgs.msg import JointState

from robocup3d_bridge.config_files import load_config
from robocup3d_bridge.node_main import LATCHED, spin_nodes
from robocup3d_motion.joint_control import JointController, control_settings
from robocup3d_motion.robots import robot_spec

__all__ = ['MotionNode', 'main']


class MotionNode(Node):
    """Hold-pose controller between ``joint_states`` and ``joint_commands``."""

    def __init__(self, **kwargs) -> None:
        super().__init__('motion', **kwargs)
        server = self.declare_parameter('server', 'mujoco').value
        robot = self.declare_parameter('robot', 'T1' if server == 'mujoco' else 'nao').value
        robot_type = int(self.declare_parameter('robot_type', 0).value)
        robots_file = self.declare_parameter('robots_config', 'robots.yaml').value
        self.robot = robot_spec(server, robot, robot_type)
        self.settings = control_settings(self.robot, load_config(robots_file))
        self.controller = JointController(self.robot, self.settings)
        self.targets: dict[str, float] = {}
        self.pub_cmd = self.create_publisher(JointState, 'joint_commands', 1)
        self.pub_gains = self.create_publisher(JointState, 'joint_gains', LATCHED)
        self.create_subscription(JointState, 'joint_states', self._on_joint_states, 1)
        self.create_subscription(JointState, 'joint_targets', self._on_targets, 1)
        if self.robot.server == 'mujoco':
            names = list(self.robot.joint_names)
            self.pub_gains.publish(
                JointState(
                    name=names,
                    position=[self.settings.kp[n] for n in names],
                    velocity=[self.settings.kd[n] for n in names],
                )
            )

    def _on_targets(self, msg: JointState) -> None:
        """Optional external pose targets (rad); unknown names are refused, not guessed."""
        known = self.robot.by_name
        bad = [n for n in msg.name if n not in known]
        if bad or len(msg.position) != len(msg.name):
            self.get_logger().error(f'joint_targets refused: unknown joints {bad} or missing positions')
            return
        self.targets = dict(zip(msg.name, msg.position, strict=True))

    def _on_joint_states(self, msg: JointState) -> None:
        measured = dict(zip(msg.name, msg.position, strict=False))
        out = self.controller.command(self.targets, measured)
        cmd = JointState(name=out.names, position=out.position, velocity=out.velocity)
        cmd.header.stamp = msg.header.stamp
        self.pub_cmd.publish(cmd)


def main(args: list[str] | None = None) -> None:
    """Run the motion node alone."""
    raise SystemExit(spin_nodes([MotionNode], args))


if __name__ == '__main__':
    main()
