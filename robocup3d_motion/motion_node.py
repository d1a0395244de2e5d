"""The motion node: owns the player's joint command stream.

It answers every ``joint_states`` message with one ``joint_commands`` message
carrying the same stamp, and publishes the PD gains on the latched ``joint_gains``
topic (RCSSServerMJ). What it commands, in order of priority:

1. a **get-up** skill when the IMU says the robot lies on the ground
   (:mod:`robocup3d_motion.fall`; front/back/side; skills from :mod:`robocup3d_motion.getup`);
2. a **requested skill** (``motion_request``, ``std_msgs/String`` with a skill name, on
   rcssserver3d optionally followed by ``$parameter`` overrides, ``KICK_VAR_RIGHT kick_strength=0.6``;
   ``stand`` returns to standing; ``walk_set NAME`` picks a walk parameter set), or a **task**
   asked for on the same topic as JSON (:mod:`robocup3d_motion.requests`: go to a pose, kick
   the ball towards a point, dribble it there; :mod:`robocup3d_motion.ball_skills`), which
   reads the world model's ``pose`` and ``ball`` and drives the walk and the kick skills;
3. the **walk** (:mod:`robocup3d_motion.walk`) while ``cmd_vel`` (geometry_msgs/Twist,
   robot frame) is fresh or a ``walk_target`` (geometry_msgs/PoseStamped relative to the
   robot, ``base_footprint``) is not reached; it stops safely (finishing its step, feet
   side by side) when commands stop for ``cmd_timeout`` seconds, and resumes after a get-up;
   a ``beam`` (geometry_msgs/Pose2D, the strategy's to the bridge) stops everything at once: the
   robot lands at its place, standing, and the landing's jolt starts no get-up;
4. the **stand**: the hold pose of ``config/robots.yaml`` (or ``joint_targets``), with
   IMU-feedback balance (:mod:`robocup3d_motion.balance`) where the robot has it.

State goes out on ``motion_state`` (``std_msgs/String``, JSON, latched): the current
skill, whether the robot has fallen and which way, its tilt, the last error, and the task's
``id``, ``kind``, ``phase`` (approaching, settling, kicking, dribbling, fallen, done, failed,
cancelled) and ``reason``.

Degrading safely: a malformed or unknown request is refused and logged (the robot
keeps doing what it did); if the IMU stops, balance and fall handling pause and the
robot holds its current pose; if ``joint_states`` stop, the node stops too and the
bridge holds the last pose. Nothing here is robot-specific: a robot without get-up
skills reports its falls and holds its pose.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable

from geometry_msgs.msg import Pose2D, PoseStamped, PoseWithCovarianceStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String

from robocup3d_bridge import cycle_record
from robocup3d_bridge.audience import Audience
from robocup3d_bridge.config_files import ConfigError
from robocup3d_bridge.conversions import stamp_from_seconds
from robocup3d_bridge.node_main import LATCHED, spin_nodes
from robocup3d_bridge.percept import Percept
from robocup3d_bridge.protocol import JointCommand
from robocup3d_description.robots import robot_spec
from robocup3d_motion.core import CONTACT_N, MotionCore
from robocup3d_motion.kick_config import ball_skills_for, load_kicks_config
from robocup3d_motion.motion_config import load_robots_config, load_walk_config

__all__ = ['MotionNode', 'main']


def _seconds(stamp: object) -> float:
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


class MotionNode(Node):
    """The player's motion: stand with balance, skills on request, get up after falls."""

    def __init__(self, **kwargs) -> None:
        super().__init__('motion', **kwargs)
        server = self.declare_parameter('server', 'mujoco').value
        robot = self.declare_parameter('robot', 'T1' if server == 'mujoco' else 'nao').value
        robot_type = int(self.declare_parameter('robot_type', 0).value)
        robots_file = self.declare_parameter('robots_config', 'robots.yaml').value
        imu_timeout = float(self.declare_parameter('imu_timeout', 0.3).value)
        walk_file = self.declare_parameter('walk_config', 'walk.yaml').value
        cmd_timeout = float(self.declare_parameter('cmd_timeout', 0.5).value)
        kicks_file = self.declare_parameter('kicks_config', 'kicks.yaml').value
        # Nao: skill parameter files read after the shipped defaultParams(_t<type>).txt, in order
        # (os.pathsep-separated, as PATH, so a path may hold spaces)
        skill_params = tuple(f for f in str(self.declare_parameter('skill_params', '').value).split(os.pathsep) if f)
        # local: the bridge in this process calls step_percept() directly (no DDS hop per cycle).
        self.local = bool(self.declare_parameter('local', False).value)
        self.robot = robot_spec(server, robot, robot_type)
        try:
            self.core = MotionCore(
                self.robot,
                load_robots_config(robots_file),
                imu_timeout,
                walk_cfg=load_walk_config(walk_file),
                cmd_timeout=cmd_timeout,
                skill_params=skill_params,
                ball_skills=ball_skills_for(load_kicks_config(kicks_file), robot, robot_type, server),
            )
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        self.settings = self.core.settings
        self.controller = self.core.controller
        self._gains: tuple | None = None
        self._gains_out = (False, 0)  # whether someone listened to joint_gains, and the record's joins, last time
        self._state_recorded = 0  # the record's joins when it took motion_state last (0: it was not active)
        self._last_state: tuple = ()
        self._cycle = 0
        self.audience = Audience(self)  # who listens, without asking the graph each cycle
        self.pub_cmd = self.audience.publisher(JointState, 'joint_commands', 1)
        self.pub_gains = self.audience.publisher(JointState, 'joint_gains', LATCHED)
        self.pub_state = self.audience.publisher(String, 'motion_state', LATCHED)
        self._state_listeners: list[Callable[[dict], None]] = []  # nodes of this process (attach_state_listener)
        self._state_heard = False  # whether anyone outside them listened at the last state
        self.pub_odom = self.audience.publisher(Odometry, 'odom', 10)  # the walk's velocity (twist only)
        self._odom = Odometry()
        self._odom.header.frame_id = 'odom'
        self._odom.child_frame_id = 'base_footprint'
        self.record = cycle_record.CycleRecord()  # the bridge's in a composed player (attach_record)
        self._lock = threading.Lock()  # the core is stepped from the bridge thread when local
        if not self.local:
            self.create_subscription(JointState, 'joint_states', self._on_joint_states, 1)
            self.create_subscription(Imu, 'imu', self._on_imu, 1)
        self.create_subscription(JointState, 'joint_targets', self._on_targets, 1)
        self.create_subscription(String, 'motion_request', self._on_request, 10)
        self.create_subscription(Twist, 'cmd_vel', self._on_cmd_vel, 1)
        self.create_subscription(PoseStamped, 'walk_target', self._on_walk_target, 1)
        self.create_subscription(Pose2D, 'beam', self._on_beam, 1)  # the bridge sends it: the robot lands there
        # the world model's estimates (field frame), for tasks
        self._world_subs = [
            self.create_subscription(PoseWithCovarianceStamped, 'pose', self._on_pose, 1),
            self.create_subscription(Odometry, 'ball', self._on_ball, 1),
        ]
        self._publish_gains()
        self._publish_state(force=True)

    @property
    def targets(self) -> dict[str, float]:
        return self.core.targets

    def _publish_gains(self, gains: tuple[dict[str, float], dict[str, float]] | None = None) -> None:
        """Publish the PD gains in force (RCSSServerMJ) when they change; ``gains``: this cycle's, if known.

        With the bridge in this process (``local``) they go to it in each command, so the latched topic is built
        only while someone listens (at once for a new listener) and for a recorder's record while it is active.
        """
        if self.robot.server != 'mujoco':
            return
        kp, kd = gains or self.core.gains()
        key = (tuple(kp.values()), tuple(kd.values()))
        out = (not self.local or self.audience.listened(self.pub_gains), self.record.joins if self.record.active else 0)
        fresh = out != self._gains_out and any(out)  # a new listener or recorder: it gets the gains now
        self._gains_out = out
        if key == self._gains and not fresh:
            return
        self._gains = key
        if not any(out):
            return
        names = list(self.robot.joint_names)
        msg = JointState(name=names, position=[kp[n] for n in names], velocity=[kd[n] for n in names])
        if out[0]:
            self.pub_gains.publish(msg)
        if out[1]:  # a recorder takes it in the bridge's record/cycle (robocup3d_bridge.cycle_record)
            self.record.add('joint_gains', msg)

    def attach_state_listener(self, take: Callable[[dict], None]) -> None:
        """Hand every ``motion_state`` to ``take`` (a node of this process) as a dict, without DDS.

        With a listener attached the topic is published only while someone subscribes to it (at once
        when one appears, so a latecomer has the state it would have had from the latched topic).
        """
        self._state_listeners.append(take)

    def attach_record(self, record: cycle_record.CycleRecord) -> None:
        """Add ``odom`` to the bridge's ``record`` (this process's) while it is active."""
        self.record = record

    def _publish_state(self, force: bool = False) -> None:
        c = self.core
        key = (c.skill, c.is_getup, c.state.fallen, c.state.direction, c.imu_ok, c.getups, c.error)
        heard = not self._state_listeners or self.audience.listened(self.pub_state)
        recorded = self.record.joins if self.record.active else 0
        if (heard and not self._state_heard) or (recorded and recorded != self._state_recorded):
            force = True  # a new subscriber or recorder: it gets the state now
        self._state_heard, self._state_recorded = heard, recorded
        if not (force or key != self._last_state or self._cycle % 25 == 0):  # on change, and twice a second
            return
        self._last_state = key
        state = c.state_dict()
        for take in self._state_listeners:
            take(state)
        if heard or recorded:
            text = json.dumps(state, sort_keys=True)
            if heard:
                self.pub_state.publish(String(data=text))
            if recorded:  # in the bridge's record/cycle
                self.record.add_text('motion_state', text)

    def _publish_odom(self, stamp: object | None, t: float = 0.0) -> None:
        """The walk's velocity estimate, for the world model's particle filter (if anyone listens);
        ``stamp`` None: made from ``t`` (s) when it is needed."""
        if self.core.walk is None:
            return
        listened, record = self.audience.listened(self.pub_odom), self.record.active
        if not (listened or record):
            return
        if stamp is None:
            stamp = stamp_from_seconds(t)
        vx, vy, wz = self.core.walk.odometry
        m = self._odom
        m.header.stamp = stamp
        m.twist.twist.linear.x, m.twist.twist.linear.y, m.twist.twist.angular.z = vx, vy, wz
        if listened:
            self.pub_odom.publish(m)
        if record:  # a recorder takes it in the bridge's record/cycle (robocup3d_bridge.cycle_record)
            self.record.add_twist('odom', stamp.sec * 1_000_000_000 + stamp.nanosec, vx, vy, wz)

    def _on_targets(self, msg: JointState) -> None:
        """Optional external pose targets (rad); unknown names are refused, not guessed."""
        known = self.robot.by_name
        bad = [n for n in msg.name if n not in known]
        if bad or len(msg.position) != len(msg.name) or not all(math.isfinite(v) for v in msg.position):
            self.get_logger().error(f'joint_targets refused: unknown joints {bad}, missing or non-finite positions')
            return
        with self._lock:
            self.core.targets = dict(zip(msg.name, msg.position, strict=True))

    def _on_pose(self, msg: PoseWithCovarianceStamped) -> None:
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
        with self._lock:
            self.core.on_pose(_seconds(msg.header.stamp), p.x, p.y, yaw)

    def _on_ball(self, msg: Odometry) -> None:
        p, cov = msg.pose.pose.position, msg.pose.covariance
        sigma = math.sqrt(max(0.0, cov[0] + cov[7]))
        with self._lock:
            self.core.on_ball(_seconds(msg.header.stamp), p.x, p.y, sigma)

    def attach_world_model(self, world_model: object) -> None:
        """Take the estimates straight from a world model node of this process, not from ``pose``/``ball``."""
        for sub in self._world_subs:
            self.destroy_subscription(sub)
        self._world_subs = []
        world_model.attach_listener(self.take_world)

    def take_world(self, view: object) -> None:
        """One world-model update (a ``robocup3d_perception.team_view.TeamView``: team frame)."""
        with self._lock:
            self.core.on_pose(view.time, *view.pose)
            if view.ball is not None:
                self.core.on_ball(view.time, *view.ball, view.ball_sigma)

    def _on_imu(self, msg: Imu) -> None:
        a, g = msg.angular_velocity, msg.linear_acceleration
        self.core.on_imu(_seconds(msg.header.stamp), (a.x, a.y, a.z), (g.x, g.y, g.z), time.monotonic())

    def _on_request(self, msg: String) -> None:
        self.request(msg.data)

    def request(self, text: str) -> None:
        """A ``motion_request`` (a node of this process calls it directly); one not understood is refused."""
        with self._lock:
            err = self.core.request(text)
        if err:
            self.get_logger().error(err)
        self._publish_state(force=True)

    def _on_cmd_vel(self, msg: Twist) -> None:
        with self._lock:
            err = self.core.set_velocity(msg.linear.x, msg.linear.y, msg.angular.z)
        if err:
            self.get_logger().error(err, throttle_duration_sec=2.0)

    def _on_beam(self, _msg: Pose2D) -> None:
        """A beam goes to the server with the next reply: whatever runs stops and the robot stands
        (:meth:`MotionCore.on_beam`)."""
        with self._lock:
            self.core.on_beam()
        self._publish_state(force=True)

    def _on_walk_target(self, msg: PoseStamped) -> None:
        """A pose to walk to, relative to the robot (frame ``base_footprint``); yaw from the quaternion."""
        q, pos = msg.pose.orientation, msg.pose.position
        yaw = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
        frame = msg.header.frame_id or 'base_footprint'
        if frame not in ('base_footprint', 'base_link'):
            self.get_logger().error(f'walk_target refused: frame {frame!r}; send it relative to base_footprint')
            return
        with self._lock:
            err = self.core.set_walk_target(pos.x, pos.y, yaw)
        if err:
            self.get_logger().error(err)

    def _on_joint_states(self, msg: JointState) -> None:
        self._cycle += 1
        measured = dict(zip(msg.name, msg.position, strict=False))
        with self._lock:
            targets = self.core.step(_seconds(msg.header.stamp), measured, time.monotonic())
            kp, kd = self.core.gains()
            caps = self.core.speed_caps()
        self._publish_gains((kp, kd))
        out = self.controller.command(targets, measured, kp, caps)
        cmd = JointState(name=out.names, position=out.position, velocity=out.velocity)
        cmd.header.stamp = msg.header.stamp
        self.pub_cmd.publish(cmd)
        self._publish_state()
        self._publish_odom(msg.header.stamp)

    def step_percept(self, p: Percept) -> JointCommand | None:
        """One cycle straight from the bridge in this process: the command for the server.

        Same logic as the ``joint_states``/``imu`` path; ``joint_commands`` is still
        published for whoever listens.
        """
        if not p.joint_positions:
            return None
        self._cycle += 1
        t = p.time if p.time is not None else 0.0
        wall = time.monotonic()
        with self._lock:
            if p.gyro is not None and p.accel is not None:
                self.core.on_imu(t, p.gyro, p.accel, wall, p.forces or None)
            if p.forces:  # SimSpark foot pressure: which feet touch the ground
                self.core.contacts = {
                    side: (f := p.forces.get(f'{side}f')) is not None and f.f[2] > CONTACT_N for side in 'lr'
                }
            targets = self.core.step(t, p.joint_positions, wall)
            kp, kd = self.core.gains()
            caps = self.core.speed_caps()
        self._publish_gains((kp, kd))
        out = self.controller.command(targets, p.joint_positions, kp, caps)
        if self.audience.listened(self.pub_cmd):
            cmd = JointState(name=out.names, position=out.position, velocity=out.velocity)
            cmd.header.stamp = stamp_from_seconds(t)
            self.pub_cmd.publish(cmd)
        self._publish_state()
        self._publish_odom(None, t)  # the stamp only for a listener
        if out.position:  # RCSSServerMJ: PD targets with gains
            return JointCommand(
                position=dict(zip(out.names, out.position, strict=True)),
                velocity=dict(zip(out.names, out.velocity, strict=True)),
                kp=kp,
                kd=kd,
            )
        return JointCommand(velocity=dict(zip(out.names, out.velocity, strict=True)))


def main(args: list[str] | None = None) -> None:
    """Run the motion node alone."""
    raise SystemExit(spin_nodes([MotionNode], args))


if __name__ == '__main__':
    main()
