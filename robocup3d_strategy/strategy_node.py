"""The strategy node: decides where the player goes. For now: beam into formation.

It also speaks for the player: in its slot (``team_talk.is_my_slot``) it says the
world model's pose and ball (``pose``, ``ball``, the last ``vision/ball`` sighting)
as one ``team_talk`` message on ``say``, while the pose is certain enough.
"""

from __future__ import annotations

import json
import math
import os
import time

from geometry_msgs.msg import PointStamped, Pose2D, PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from std_msgs.msg import String

from robocup3d_bridge import team_talk
from robocup3d_bridge.conversions import seconds_from_stamp
from robocup3d_bridge.node_main import LATCHED, spin_nodes
from robocup3d_strategy.formation import formation_pose, load_formations, should_beam

__all__ = ['StrategyNode', 'main']

TEAM_SIZE = {'mujoco': 7, 'simspark': 11}  # players per team: the say slots repeat with it
MAX_SAY_SIGMA = 0.5  # m; a less certain pose is not said
MAX_BALL_AGE = 1.4  # s; an older ball is not said


class StrategyNode(Node):
    """Beams the player to its kick-off place whenever the rules allow a beam."""

    def __init__(self, **kwargs) -> None:
        super().__init__('strategy', **kwargs)
        server = self.declare_parameter('server', 'mujoco').value
        self.unum = int(self.declare_parameter('unum', 1).value)
        formations = load_formations(self.declare_parameter('formations_config', 'formations.yaml').value)
        self.home = formation_pose(formations, server, self.unum)
        self.pub_beam = self.create_publisher(Pose2D, 'beam', 1)
        self.create_subscription(String, 'game_state', self._on_game_state, LATCHED)
        self.play_mode: str | None = None
        self.team = ''
        self.say_period = int(self.declare_parameter('say_period', TEAM_SIZE.get(server, 11)).value)
        #: the team's secret that keys team talk (never sent; default: env ROBOCUP3D_TEAM_SECRET)
        self.secret = str(self.declare_parameter('team_secret', os.environ.get(team_talk.SECRET_ENV, '')).value)
        self.pub_say = self.create_publisher(String, 'say', 1)
        self.create_subscription(PoseWithCovarianceStamped, 'pose', self._on_pose, 1)
        self.create_subscription(Odometry, 'ball', self._on_ball, 1)
        self.create_subscription(PointStamped, 'vision/ball', self._on_ball_seen, 1)
        self._ball: tuple[float, float] | None = None
        self._ball_seen: float | None = None
        self._said_cycle: int | None = None
        self.said = 0
        self._last_beam: float | None = None
        self.create_timer(0.25, self._tick)

    def _on_game_state(self, msg: String) -> None:
        try:
            state = json.loads(msg.data)
        except ValueError:
            self.get_logger().error('game_state is not JSON; ignored')
            return
        self.team = state.get('team') or self.team
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

    def _on_ball(self, msg: Odometry) -> None:
        p = msg.pose.pose.position
        self._ball = (p.x, p.y)

    def _on_ball_seen(self, msg: PointStamped) -> None:
        self._ball_seen = seconds_from_stamp(msg.header.stamp)

    def _on_pose(self, msg: PoseWithCovarianceStamped) -> None:
        """Say our pose and ball in our slot (the pose comes once or twice per server cycle)."""
        now = seconds_from_stamp(msg.header.stamp)
        cycle = team_talk.server_cycle(now)
        if cycle == self._said_cycle or not self.team or not team_talk.is_my_slot(self.unum, cycle, self.say_period):
            return
        cov = msg.pose.covariance
        if math.sqrt(max(cov[0] + cov[7], 0.0)) > MAX_SAY_SIGMA:
            return
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        age = now - self._ball_seen if self._ball_seen is not None else math.inf
        ball_known = self._ball is not None and 0.0 <= age <= MAX_BALL_AGE
        text = team_talk.encode(
            team_talk.TeamMessage(
                unum=self.unum,
                stamp=cycle % 16,
                x=p.x,
                y=p.y,
                heading=math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z)),
                ball=self._ball if ball_known else None,
                ball_age=age if ball_known else 0.0,
            ),
            self.team,
            self.secret,
        )
        self.pub_say.publish(String(data=text))
        self._said_cycle = cycle
        self.said += 1


def main(args: list[str] | None = None) -> None:
    """Run the strategy node alone."""
    raise SystemExit(spin_nodes([StrategyNode], args))


if __name__ == '__main__':
    main()
