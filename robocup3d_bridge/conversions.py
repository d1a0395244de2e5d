"""Percept <-> ROS message conversion for the bridge (standard message types only).

Frames (REP-103/105): ``<prefix>torso`` is the robot base (x forward, y left,
z up), ``<prefix>camera`` the camera (same axes), ``world`` the field
(origin at the centre, +x towards the right goal as the server defines it).
"""

from __future__ import annotations

import json
import math

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, PointStamped, PoseStamped, WrenchStamped
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import ColorRGBA, String
from visualization_msgs.msg import Marker, MarkerArray

from robocup3d_bridge.percept import ForceResistance, Percept, Polar, Vision
from robocup3d_bridge.protocol import JointCommand

__all__ = [
    'ball_point',
    'game_state_dict',
    'ground_truth_ball',
    'ground_truth_pose',
    'hear_msgs',
    'imu_msg',
    'joint_command_from_msg',
    'joint_state_msg',
    'make_marker',
    'polar_to_point',
    'seconds_from_stamp',
    'stamp_from_seconds',
    'vision_markers',
    'wrench_msg',
]


def stamp_from_seconds(t: float) -> Time:
    """A ``builtin_interfaces/Time`` from seconds."""
    sec = math.floor(t)
    return Time(sec=int(sec), nanosec=round((t - sec) * 1e9) % 1_000_000_000)


def seconds_from_stamp(stamp: Time) -> float:
    """Seconds from a ``builtin_interfaces/Time``."""
    return stamp.sec + stamp.nanosec * 1e-9


def polar_to_point(p: Polar) -> Point:
    """Camera-frame point (x forward, y left, z up) from a polar observation."""
    ce = math.cos(p.elevation)
    return Point(
        x=p.distance * ce * math.cos(p.azimuth),
        y=p.distance * ce * math.sin(p.azimuth),
        z=p.distance * math.sin(p.elevation),
    )


def joint_state_msg(p: Percept, stamp: Time, names: tuple[str, ...], out: JointState | None = None) -> JointState:
    """``sensor_msgs/JointState`` in the robot's joint order (rad, rad/s).

    Pass the previous message as ``out`` to refill it instead of building a new one
    (publishing serialises at once, so a publisher can reuse its message).
    """
    msg = JointState() if out is None else out
    msg.header.stamp = stamp
    pos = p.joint_positions
    if len(pos) == len(names) and len(msg.name) == len(names) and all(n in pos for n in names):
        present = names  # the usual case: every joint, names already set
    else:
        present = [n for n in names if n in pos]
        msg.name = list(present)
    msg.position = [pos[n] for n in present]
    vel = p.joint_velocities
    msg.velocity = [vel.get(n, 0.0) for n in present] if vel else []
    return msg


def imu_msg(p: Percept, stamp: Time, frame: str, out: Imu | None = None) -> Imu:
    """``sensor_msgs/Imu`` with rates and accelerations; orientation unknown (covariance -1).

    A missing gyro or accelerometer reading is published as zeros. ``out``: reuse a message.
    """
    if out is None:
        out = Imu()
        out.header.frame_id = frame
        out.orientation_covariance[0] = -1.0
    out.header.stamp = stamp
    av, la = out.angular_velocity, out.linear_acceleration
    av.x, av.y, av.z = p.gyro if p.gyro is not None else (0.0, 0.0, 0.0)
    la.x, la.y, la.z = p.accel if p.accel is not None else (0.0, 0.0, 0.0)
    return out


def wrench_msg(frp: ForceResistance | None, stamp: Time, frame: str) -> WrenchStamped:
    """Foot contact as a wrench at the foot frame origin: force ``f`` and torque ``c x f``.

    No contact gives a zero wrench; the centre of pressure is recovered as
    ``(-torque.y / force.z, torque.x / force.z)``.
    """
    msg = WrenchStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = frame
    if frp is not None:
        (cx, cy, cz), (fx, fy, fz) = frp.c, frp.f
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = fx, fy, fz
        msg.wrench.torque.x = cy * fz - cz * fy
        msg.wrench.torque.y = cz * fx - cx * fz
        msg.wrench.torque.z = cx * fy - cy * fx
    return msg


_COLORS = {
    'landmark': (1.0, 1.0, 0.0, 1.0),
    'ball': (1.0, 0.5, 0.0, 1.0),
    'player': (0.2, 0.4, 1.0, 1.0),
    'line': (1.0, 1.0, 1.0, 1.0),
}


def make_marker(
    ns: str,
    mid: int,
    mtype: int,
    stamp: Time,
    frame: str,
    rgba: tuple[float, float, float, float],
    scale: float = 0.1,
    lifetime: float = 0.2,
) -> Marker:
    """A ``visualization_msgs/Marker`` to ADD, with identity orientation and uniform scale (m)."""
    m = Marker()
    m.header.stamp = stamp
    m.header.frame_id = frame
    m.ns = ns
    m.id = mid
    m.type = mtype
    m.action = Marker.ADD
    m.pose.orientation.w = 1.0
    m.scale.x = m.scale.y = m.scale.z = scale
    m.color = ColorRGBA(r=rgba[0], g=rgba[1], b=rgba[2], a=rgba[3])
    m.lifetime.nanosec = int(lifetime * 1e9)
    return m


def vision_markers(v: Vision, stamp: Time, frame: str) -> MarkerArray:
    """Everything seen, as markers in the camera frame.

    ``ns`` names the object: ``landmark/<name>``, ``ball``, ``player/<team>/<unum>/<part>``
    and ``lines`` (one LINE_LIST); so the array is both drawable and machine-readable.
    """
    out = MarkerArray()
    markers = out.markers
    for i, (name, pol) in enumerate(v.landmarks.items()):
        m = make_marker(f'landmark/{name}', i, Marker.SPHERE, stamp, frame, _COLORS['landmark'])
        m.pose.position = polar_to_point(pol)
        markers.append(m)
    if v.ball is not None:
        m = make_marker('ball', 0, Marker.SPHERE, stamp, frame, _COLORS['ball'])
        m.pose.position = polar_to_point(v.ball)
        markers.append(m)
    for s in v.players:
        for j, (part, pol) in enumerate(s.parts.items()):
            m = make_marker(f'player/{s.team}/{s.unum}/{part}', j, Marker.CUBE, stamp, frame, _COLORS['player'])
            m.pose.position = polar_to_point(pol)
            markers.append(m)
    if v.lines:
        m = make_marker('lines', 0, Marker.LINE_LIST, stamp, frame, _COLORS['line'])
        m.scale.x = 0.03
        for a, b in v.lines:
            m.points.append(polar_to_point(a))
            m.points.append(polar_to_point(b))
        markers.append(m)
    return out


def ball_point(v: Vision, stamp: Time, frame: str) -> PointStamped | None:
    """The seen ball as a camera-frame point, or ``None`` when not seen."""
    if v.ball is None:
        return None
    msg = PointStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = frame
    msg.point = polar_to_point(v.ball)
    return msg


def game_state_dict(p: Percept, side: str, team: str, unum: int) -> dict:
    """Game state as a plain dict (published as JSON on ``game_state``)."""
    g = p.game
    return {
        'time': p.time,
        'game_time': g.game_time if g else None,
        'play_mode': g.play_mode if g else None,
        'score_left': g.score_left if g else None,
        'score_right': g.score_right if g else None,
        'side': side,
        'team': team,
        'unum': unum,
        'team_left': g.team_left if g else None,
        'team_right': g.team_right if g else None,
    }


def hear_msgs(p: Percept) -> list[String]:
    """Heard messages as JSON strings: team, time, direction (rad or null), self, text, hex bytes."""
    return [
        String(
            data=json.dumps(
                {
                    'team': h.team,
                    'time': h.time,
                    'direction': h.direction,
                    'self': h.is_self,
                    'text': h.text,
                    'hex': h.data.hex(),
                }
            )
        )
        for h in p.hear
    ]


def ground_truth_pose(p: Percept, stamp: Time, side: str = 'left') -> PoseStamped | None:
    """Server ground truth of the robot in the world frame (MJ torso pose, or SimSpark mypos/myorien).

    SimSpark says ``mypos``/``myorien`` in the agent's team frame, turned by 180 degrees on the
    ``right`` side: they are turned back.
    """
    msg = PoseStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = 'world'
    if p.torso_position is not None:
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = p.torso_position
        if p.torso_orientation is not None:
            o = msg.pose.orientation
            o.w, o.x, o.y, o.z = p.torso_orientation
        return msg
    v = p.vision
    if v is not None and v.my_position is not None:
        sign = -1.0 if side == 'right' else 1.0
        x, y, z = v.my_position
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = sign * x, sign * y, z
        yaw = (v.my_orientation or 0.0) + (math.pi if side == 'right' else 0.0)
        msg.pose.orientation.z = math.sin(yaw / 2)
        msg.pose.orientation.w = math.cos(yaw / 2)
        return msg
    return None


def ground_truth_ball(p: Percept, stamp: Time, side: str = 'left') -> PointStamped | None:
    """SimSpark's ``ballpos`` ground truth in the world frame, when sent (turned back on the right side)."""
    v = p.vision
    if v is None or v.ball_position is None:
        return None
    msg = PointStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = 'world'
    sign = -1.0 if side == 'right' else 1.0
    x, y, z = v.ball_position
    msg.point.x, msg.point.y, msg.point.z = sign * x, sign * y, z
    return msg


def joint_command_from_msg(msg: JointState, kp: dict[str, float], kd: dict[str, float]) -> JointCommand:
    """A ``joint_commands`` message (position rad, velocity rad/s, effort N m) plus gains."""
    names = list(msg.name)
    cmd = JointCommand()
    if len(msg.position) == len(names):
        cmd.position = dict(zip(names, msg.position, strict=True))
        cmd.kp = {n: kp.get(n, 0.0) for n in names}
        cmd.kd = {n: kd.get(n, 0.0) for n in names}
    if len(msg.velocity) == len(names):
        cmd.velocity = dict(zip(names, msg.velocity, strict=True))
    if len(msg.effort) == len(names):
        cmd.effort = dict(zip(names, msg.effort, strict=True))
    return cmd
