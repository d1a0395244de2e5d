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
busy the machine; ``joint_states``, ``imu``, ``vision/objects`` and ``odom`` are not read.
Motion and strategy in the same process take each update straight from it as a
:class:`~robocup3d_perception.team_view.TeamView` (:meth:`WorldModelNode.attach_listener`); the
topics are then built only while someone else subscribes to them (a recorder, rviz, a test).
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

from robocup3d_bridge.conversions import seconds_from_stamp, stamp_from_seconds
from robocup3d_bridge.node_main import LATCHED, spin_nodes
from robocup3d_bridge.percept import Percept
from robocup3d_bridge.team_talk import SECRET_ENV
from robocup3d_description.body import body_for
from robocup3d_perception import conversions as conv
from robocup3d_perception.field import field_for
from robocup3d_perception.hearing import HEAR_OUTCOMES, implausible, teammate_report
from robocup3d_perception.inputs import cycle_input
from robocup3d_perception.representations import CycleInput, TeammateReport
from robocup3d_perception.representations import Odometry as WalkOdometry
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
        self.team = self.declare_parameter('team', '').value
        self.unum = int(self.declare_parameter('unum', 1).value)
        self.side = self.declare_parameter('side', '').value or 'left'  # game_state overrides when empty
        self._side_fixed = bool(self.get_parameter('side').value)
        self.frame = self.declare_parameter('frame_id', 'field').value
        # TF field -> <namespace>/base_footprint where tf2 is installed (a ROS 2 install; not the PyPI wheels)
        self.tf_child = self.get_namespace().strip('/') + '/base_footprint'
        try:
            from tf2_ros import TransformBroadcaster  # noqa: PLC0415

            self._tf = TransformBroadcaster(self)
        except ImportError:
            self._tf = None
        self.publish_markers = bool(self.declare_parameter('publish_markers', True).value)
        seed = int(self.declare_parameter('seed', 0).value)

        self.model = WorldModel(
            body_for(robot, robot_type),
            field_for(server, rules),  # raises ValueError on a wrong config
            use_lines=server == 'simspark',
            params=WorldModelParameters(seed=seed),
        )
        self._joints: dict[str, float] = {}
        self._play_mode: str | None = None
        self._reports: list[TeammateReport] = []  # heard since the last update
        self._listeners: list[Callable[[TeamView], None]] = []  # nodes of this process that take each update
        self.heard = 0  # team-talk messages of teammates taken in
        self.hear_outcomes: Counter[str] = Counter(dict.fromkeys(HEAR_OUTCOMES, 0))  # heard messages by outcome
        self._last_report: dict[int, TeammateReport] = {}  # the last report taken in, per teammate
        #: the team's secret that keys team talk (parameter ``team_secret``; default: env ROBOCUP3D_TEAM_SECRET)
        self.secret = str(self.declare_parameter('team_secret', os.environ.get(SECRET_ENV, '')).value)
        self.cpu: list[float] = []  # s per update, the last 1000

        self.pub_pose = self.create_publisher(PoseWithCovarianceStamped, 'pose', 1)
        self.pub_ball = self.create_publisher(Odometry, 'ball', 1)
        self.pub_stop = self.create_publisher(PointStamped, 'ball/stop', 1)
        self.pub_players = self.create_publisher(String, 'players', 1)
        self.pub_markers = self.create_publisher(MarkerArray, 'world_model/markers', 1)
        self.local = bool(self.declare_parameter('local', False).value)
        #: the walk's velocity (vx, vy, wz) in local mode, set by the player (None: no walk)
        self.walk_velocity: Callable[[], tuple[float, float, float]] | None = None
        if not self.local:
            self.create_subscription(JointState, 'joint_states', self._on_joints, 1)
            # every IMU cycle counts (the gyro is integrated): a deep queue rides out a busy moment
            self.create_subscription(Imu, 'imu', self._on_imu, 50)
            self.create_subscription(MarkerArray, 'vision/objects', self._on_vision, 5)
            self.create_subscription(Odometry, 'odom', self._on_odom, 50)
        self.create_subscription(String, 'game_state', self._on_game, LATCHED)
        self.create_subscription(String, 'hear', self._on_hear, 10)
        self.pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.create_timer(1.0, self._publish_diagnostics)
        self._walk: tuple[float, float, float, float] | None = None  # (t, vx, vy, wz) from the walk
        self._last_imu_t: float | None = None
        self.get_logger().info(
            f'world model for {self.team} #{self.unum} ({robot}, {server} field {self.model.field.name})'
        )

    def _on_joints(self, msg: JointState) -> None:
        self._joints = dict(zip(msg.name, msg.position, strict=False))

    def _on_game(self, msg: String) -> None:
        try:
            g = json.loads(msg.data)
        except ValueError:
            return
        if not self._side_fixed and g.get('side') in ('left', 'right'):
            self.side = g['side']
        self.team = self.team or g.get('team') or ''
        self._play_mode = g.get('play_mode')

    def _on_hear(self, msg: String) -> None:
        try:
            h = json.loads(msg.data)
        except ValueError:
            return
        if not isinstance(h, dict) or not self.team or self.model.time is None:
            return
        report, outcome = teammate_report(h, self.team, self.unum, self.side, self.model.time, self.secret)
        if report is not None:
            last = self._last_report.get(report.unum)
            if self._play_mode == 'PlayOn' and implausible(last, report):
                report, outcome = None, 'implausible'
            else:
                self._last_report[report.unum] = report
        self.hear_outcomes[outcome] += 1
        if report is None:
            return
        self._reports.append(report)
        del self._reports[:-20]
        self.heard += 1

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

    def _input(self, stamp: object, **kw: object) -> CycleInput:
        reports, self._reports = tuple(self._reports), []
        return CycleInput(
            reports=reports,
            time=seconds_from_stamp(stamp),
            joints=self._joints,
            side=self.side,
            team=self.team,
            unum=self.unum,
            play_mode=self._play_mode,
            **kw,
        )

    def _on_odom(self, msg: Odometry) -> None:
        """The walk's velocity estimate (robot frame), integrated each cycle into the locator's odometry."""
        v, w = msg.twist.twist.linear, msg.twist.twist.angular
        self._walk = (seconds_from_stamp(msg.header.stamp), v.x, v.y, w.z)

    def _odometry(self, t: float) -> WalkOdometry | None:
        last, self._last_imu_t = self._last_imu_t, t
        if self._walk is None or last is None or not 0.0 < t - last <= 0.1 or t - self._walk[0] > 0.2:
            return None  # no walk (or a stale one): the gyro alone moves the estimate
        dt = t - last
        _, vx, vy, wz = self._walk
        return WalkOdometry(vx * dt, vy * dt, wz * dt)

    def step_percept(self, p: Percept) -> None:
        """One server cycle, handed over by the bridge of this process (``local``)."""
        if p.time is None:
            return
        if self.walk_velocity is not None:
            self._walk = (p.time, *self.walk_velocity())
        self._joints = dict(p.joint_positions)
        stamp = stamp_from_seconds(p.time)
        c = cycle_input(p)
        odometry = self._odometry(p.time)
        self._run(self._input(stamp, gyro=c.gyro, accel=c.accel, vision=c.vision, odometry=odometry), stamp)

    def _on_imu(self, msg: Imu) -> None:
        a, w = msg.linear_acceleration, msg.angular_velocity
        odometry = self._odometry(seconds_from_stamp(msg.header.stamp))
        inp = self._input(msg.header.stamp, gyro=(w.x, w.y, w.z), accel=(a.x, a.y, a.z), odometry=odometry)
        self._run(inp, msg.header.stamp)

    def _on_vision(self, msg: MarkerArray) -> None:
        if not msg.markers:
            return
        stamp = msg.markers[0].header.stamp
        self._run(self._input(stamp, vision=conv.camera_observations_from_markers(msg)), stamp)

    def _run(self, inp: CycleInput, stamp: object) -> None:
        if self.model.time is not None and inp.time < self.model.time - 1.0:
            self.get_logger().info('server time went back: starting afresh')
            self.model.time = None
        t0 = time.perf_counter()
        state = self.model.update(inp)
        self.cpu.append(time.perf_counter() - t0)
        del self.cpu[:-1000]
        if state.time != inp.time:  # a late See: the estimate is as of the newest cycle
            stamp = stamp_from_seconds(state.time)
        seen = inp.vision is not None
        if self._listeners:
            view = team_view(state, with_players=seen)
            for take in self._listeners:
                take(view)
        # messages for the listeners outside this process (all of them when nothing takes the view)
        every = not self._listeners
        if every or self._tf is not None or _wanted(self.pub_pose):
            pose = conv.pose_msg(state, stamp, self.frame)
            if every or _wanted(self.pub_pose):
                self.pub_pose.publish(pose)
            if self._tf is not None:
                self._tf.sendTransform(conv.transform_msg(pose, self.tf_child))
        if state.ball.valid:
            if every or _wanted(self.pub_ball):
                self.pub_ball.publish(conv.ball_msg(state, stamp, self.frame))
            if every or _wanted(self.pub_stop):
                self.pub_stop.publish(conv.ball_stop_msg(state, stamp, self.frame))
        if seen:
            if every or _wanted(self.pub_players):
                self.pub_players.publish(conv.players_msg(state))
            if self.publish_markers and _wanted(self.pub_markers):
                self.pub_markers.publish(conv.world_markers(state, stamp, self.frame))

    def attach_listener(self, take: Callable[[TeamView], None]) -> None:
        """Hand every update to ``take`` (a node of this process), in the team frame.

        With a listener attached, ``pose``, ``ball``, ``ball/stop`` and ``players`` are built
        and published only while someone subscribes to them.
        """
        self._listeners.append(take)


def _wanted(pub: object) -> bool:
    return pub.get_subscription_count() > 0


def main(args: list[str] | None = None) -> None:
    """Run the world model node alone (in the player's namespace: ``--ros-args -r __ns:=/team/p1``)."""
    raise SystemExit(spin_nodes([WorldModelNode], args))


if __name__ == '__main__':
    main()
