"""The world model node: one player's localization and tracking, as ROS topics.

Subscribes (in the player's namespace): ``joint_states``, ``imu``, ``vision/objects``
``game_state`` and ``hear`` from the bridge, and ``odom`` (nav_msgs/Odometry: the walk's
velocity estimate) from the motion node. It never subscribes to ``ground_truth/*``.
Heard team-talk messages (``robocup3d_bridge.team_talk``) of our teammates feed the
ball and player trackers; on rcssserver3d another team's are dropped by the ``hear``
perceptor's team name (:mod:`robocup3d_perception.hearing`, counted in ``hear_outcomes``).
Publishes: ``pose`` (PoseWithCovarianceStamped), ``ball`` (nav_msgs/Odometry),
``ball/stop`` (PointStamped), ``players`` (JSON String) and ``world_model/markers``
(MarkerArray for rviz), all in the ``field`` frame (our team's frame, +x towards the
goal we attack). Each ``imu`` message (one per server cycle) advances the model;
each ``vision/objects`` message is fused as soon as it arrives.

With ``local`` (a player process that holds bridge and motion node too), the bridge hands
each cycle's percept over directly (:meth:`WorldModelNode.step_percept`) and the walk's
velocity is read from the motion node: every cycle in order, none lost or late however
busy the machine; ``joint_states``, ``imu``, ``vision/objects``, ``odom`` and ``hear`` are not read
(what was heard comes with the percept: no executor callback per heard message).
Motion and strategy in the same process take each update straight from it as a
:class:`~robocup3d_perception.team_view.TeamView` (:meth:`WorldModelNode.attach_listener`); the
topics are then built only while someone else subscribes to them (rviz, a test), and ``pose``, ``ball``
and ``players`` also while the bridge of this process has a recorder, on the cycles it takes them
(:mod:`robocup3d_bridge.cycle_record`): they then go to it in the bridge's ``record/cycle``, as the numbers the
messages are made of (:mod:`robocup3d_perception.belief_record`; the recorder builds the messages).

What the node feeds the core between and in its cycles (joints, walk odometry, game state, heard
reports) is :class:`~robocup3d_perception.feed.WorldModelFeed`, pure Python: ``robocup3d replay BAG
--rerun world-model`` feeds recorded percepts through it the same way.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PointStamped, PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

from robocup3d_bridge import cycle_record
from robocup3d_bridge.audience import Audience
from robocup3d_bridge.conversions import seconds_from_stamp, stamp_from_seconds
from robocup3d_bridge.node_main import LATCHED, spin_nodes
from robocup3d_bridge.percept import Percept
from robocup3d_bridge.team_talk import SECRET_ENV
from robocup3d_description.body import body_for
from robocup3d_perception import belief_record
from robocup3d_perception import conversions as conv
from robocup3d_perception.feed import WorldModelFeed
from robocup3d_perception.field import field_for
from robocup3d_perception.representations import CycleInput
from robocup3d_perception.team_view import TeamView, team_view
from robocup3d_perception.world_model import WorldModel, WorldModelParameters

__all__ = ['WorldModelNode', 'main']


class WorldModelNode(Node):
    """Runs :class:`~robocup3d_perception.world_model.WorldModel` on the bridge's topics."""

    def __init__(self, **kwargs) -> None:
        super().__init__('world_model', **kwargs)
        server = self.declare_parameter('server', 'mujoco').value
        robot = self.declare_parameter('robot', '').value or ('T1' if server == 'mujoco' else 'nao')
        robot_type = int(self.declare_parameter('robot_type', 0).value)
        rules = self.declare_parameter('rules', 'ssim').value
        team = self.declare_parameter('team', '').value
        self.unum = int(self.declare_parameter('unum', 1).value)
        side = self.declare_parameter('side', '').value  # empty: from game_state
        self.frame = self.declare_parameter('frame_id', 'field').value
        self._frame_utf8 = str(self.frame).encode()  # for the record (belief_record)
        # TF field -> <namespace>/base_footprint where tf2 is installed (a ROS 2 install; not the PyPI wheels)
        self.tf_child = self.get_namespace().strip('/') + '/base_footprint'
        try:
            from tf2_ros import TransformBroadcaster  # noqa: PLC0415

            self._tf = TransformBroadcaster(self)
        except ImportError:
            self._tf = None
        self.publish_markers = bool(self.declare_parameter('publish_markers', True).value)
        seed = int(self.declare_parameter('seed', 0).value)

        model = WorldModel(
            body_for(robot, robot_type),
            field_for(server, rules),  # raises ValueError on a wrong config
            use_lines=server == 'simspark',
            params=WorldModelParameters(seed=seed),
        )
        # the team's secret keys team talk (parameter ``team_secret``; default: env ROBOCUP3D_TEAM_SECRET)
        secret = str(self.declare_parameter('team_secret', os.environ.get(SECRET_ENV, '')).value)
        #: the model and what it is fed each cycle (pure; ``replay --rerun world-model`` feeds it the same way)
        self.feed = WorldModelFeed(model, team, self.unum, side, secret)
        self._listeners: list[Callable[[TeamView], None]] = []  # nodes of this process that take each update
        self.cpu: list[float] = []  # s per update, the last 1000

        # the estimate topics are built only when someone listens (Audience: without asking the graph each cycle)
        self.audience = Audience(self)
        self.pub_pose = self.audience.publisher(PoseWithCovarianceStamped, 'pose', 1)
        self.pub_ball = self.audience.publisher(Odometry, 'ball', 1)
        self.pub_stop = self.audience.publisher(PointStamped, 'ball/stop', 1)
        self.pub_players = self.audience.publisher(String, 'players', 1)
        self.pub_markers = self.audience.publisher(MarkerArray, 'world_model/markers', 1)
        # the bridge's record in a composed player (attach_record): while active, a recorder takes the estimates
        self.record = cycle_record.CycleRecord()
        self.local = bool(self.declare_parameter('local', False).value)
        #: the walk's velocity (vx, vy, wz) in local mode, set by the player (None: no walk)
        self.walk_velocity: Callable[[], tuple[float, float, float]] | None = None
        if not self.local:
            self.create_subscription(JointState, 'joint_states', self._on_joints, 1)
            # every IMU cycle counts (the gyro is integrated): a deep queue rides out a busy moment
            self.create_subscription(Imu, 'imu', self._on_imu, 50)
            self.create_subscription(MarkerArray, 'vision/objects', self._on_vision, 5)
            self.create_subscription(Odometry, 'odom', self._on_odom, 50)
            # local: what the server let us hear comes with each cycle's percept (step_percept), not as one
            # ``hear`` message per teammate's say through DDS and this process's executor
            self.create_subscription(String, 'hear', self._on_hear, 10)
        self.create_subscription(String, 'game_state', self._on_game, LATCHED)
        self.pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.create_timer(1.0, self._publish_diagnostics)
        self.get_logger().info(
            f'world model for {self.team} #{self.unum} ({robot}, {server} field {self.model.field.name})'
        )

    @property
    def model(self) -> WorldModel:
        """The world model core."""
        return self.feed.model

    @property
    def team(self) -> str:
        return self.feed.team

    @property
    def side(self) -> str:
        return self.feed.side

    @property
    def heard(self) -> int:
        """Team-talk messages of teammates taken in."""
        return self.feed.heard

    @property
    def hear_outcomes(self) -> Counter[str]:
        """Heard messages by outcome."""
        return self.feed.hear_outcomes

    def _on_joints(self, msg: JointState) -> None:
        self.feed.joints = dict(zip(msg.name, msg.position, strict=False))

    def _on_game(self, msg: String) -> None:
        try:
            g = json.loads(msg.data)
        except ValueError:
            return
        if isinstance(g, dict):
            self.feed.on_game(g)

    def _on_hear(self, msg: String) -> None:
        try:
            h = json.loads(msg.data)
        except ValueError:
            return
        if isinstance(h, dict):
            self.feed.on_hear(h)

    def _publish_diagnostics(self) -> None:
        """What the world model heard (by outcome) and its update time, once a second."""
        cpu = sorted(self.cpu) or [0.0]
        values = {f'hear/{k}': n for k, n in self.hear_outcomes.items()}
        values['update_p50_ms'] = f'{1e3 * cpu[len(cpu) // 2]:.3f}'
        status = DiagnosticStatus(
            level=DiagnosticStatus.OK,
            name=f'{self.get_namespace().rstrip("/")}/world_model',
            message='localizing' if self.model.time is not None else 'waiting for percepts',
            hardware_id=f'{self.team}/{self.unum}',
            values=[KeyValue(key=k, value=str(v)) for k, v in values.items()],
        )
        arr = DiagnosticArray(status=[status])
        arr.header.stamp = self.get_clock().now().to_msg()
        self.pub_diag.publish(arr)

    def _on_odom(self, msg: Odometry) -> None:
        """The walk's velocity estimate (robot frame), integrated each cycle into the locator's odometry."""
        v, w = msg.twist.twist.linear, msg.twist.twist.angular
        self.feed.on_walk(seconds_from_stamp(msg.header.stamp), v.x, v.y, w.z)

    def step_percept(self, p: Percept) -> None:
        """One server cycle, handed over by the bridge of this process (``local``): the update, then what was
        heard in it (taken in for the next update, as the ``hear`` topic's messages would be)."""
        if p.time is not None:
            if self.walk_velocity is not None:
                self.feed.on_walk(p.time, *self.walk_velocity())
            self._run(self.feed.percept_input(p), None)
        for h in p.hear:
            self.feed.on_hear(
                {'team': h.team, 'time': h.time, 'direction': h.direction, 'self': h.is_self, 'text': h.text}
            )

    def _on_imu(self, msg: Imu) -> None:
        a, w = msg.linear_acceleration, msg.angular_velocity
        t = seconds_from_stamp(msg.header.stamp)
        odometry = self.feed.odometry(t)
        inp = self.feed.cycle_input(t, gyro=(w.x, w.y, w.z), accel=(a.x, a.y, a.z), odometry=odometry)
        self._run(inp, msg.header.stamp)

    def _on_vision(self, msg: MarkerArray) -> None:
        if not msg.markers:
            return
        stamp = msg.markers[0].header.stamp
        self._run(
            self.feed.cycle_input(seconds_from_stamp(stamp), vision=conv.camera_observations_from_markers(msg)), stamp
        )

    def _run(self, inp: CycleInput, stamp: object | None) -> None:
        """One update and what goes out of it; ``stamp`` None: the state's time's, made only for a message."""
        t0 = time.perf_counter()
        state, afresh = self.feed.update(inp)
        self.cpu.append(time.perf_counter() - t0)
        if afresh:
            self.get_logger().info('server time went back: starting afresh')
        del self.cpu[:-1000]
        if state.time != inp.time:  # a late See: the estimate is as of the newest cycle
            stamp = None

        def at() -> object:  # the messages' stamp, made for the first message (most cycles build none)
            nonlocal stamp
            if stamp is None:
                stamp = stamp_from_seconds(state.time)
            return stamp

        seen = inp.vision is not None
        if self._listeners:
            view = team_view(state, with_players=seen)
            for take in self._listeners:
                take(view)
        # messages for the listeners outside this process (all of them when nothing takes the view)
        every = not self._listeners
        # the recorder's copy, in the bridge's record, on the cycles it takes them (recording.yaml)
        due = self.record.active and state.time is not None and self.record.beliefs_due(state.time)
        record = self.record if due else None
        pose_out = every or self.audience.listened(self.pub_pose)
        if pose_out or self._tf is not None:
            pose = conv.pose_msg(state, at(), self.frame)
            if pose_out:
                self.pub_pose.publish(pose)
            if self._tf is not None:
                self._tf.sendTransform(conv.transform_msg(pose, self.tf_child))
        if record:  # numbers, not messages: the recorder builds those (robocup3d_perception.belief_record)
            record.add_bytes('pose', belief_record.POSE, belief_record.pack_pose(state, self._frame_utf8))
        if state.ball.valid:
            if every or self.audience.listened(self.pub_ball):
                self.pub_ball.publish(conv.ball_msg(state, at(), self.frame))
            if record:
                record.add_bytes('ball', belief_record.BALL, belief_record.pack_ball(state, self._frame_utf8))
            if every or self.audience.listened(self.pub_stop):
                self.pub_stop.publish(conv.ball_stop_msg(state, at(), self.frame))
        if seen:
            if every or self.audience.listened(self.pub_players):
                self.pub_players.publish(conv.players_msg(state))
            if record:
                record.add_bytes('players', belief_record.PLAYERS, belief_record.pack_players(state))
            if self.publish_markers and self.audience.listened(self.pub_markers):
                self.pub_markers.publish(conv.world_markers(state, at(), self.frame))

    def attach_listener(self, take: Callable[[TeamView], None]) -> None:
        """Hand every update to ``take`` (a node of this process), in the team frame.

        With a listener attached, ``pose``, ``ball``, ``ball/stop`` and ``players`` are built
        and published only while someone subscribes to them.
        """
        self._listeners.append(take)

    def attach_record(self, record: cycle_record.CycleRecord) -> None:
        """Add ``pose``, ``ball`` and ``players`` to the bridge's ``record`` (this process's) while it is active."""
        self.record = record


def main(args: list[str] | None = None) -> None:
    """Run the world model node alone (in the player's namespace: ``--ros-args -r __ns:=/team/p1``)."""
    raise SystemExit(spin_nodes([WorldModelNode], args))


if __name__ == '__main__':
    main()
