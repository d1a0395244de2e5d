"""Perception representations <-> ROS messages (standard message types only).

The published frame ``field`` is our team's frame: +x towards the goal we attack.
For the left team it equals the server's absolute frame; for the right team it is
turned by 180 degrees about z (``to_team_frame``).

Inputs come from the bridge: ``vision/objects`` (a MarkerArray in the camera frame,
``ns`` = ``landmark/<name>``, ``ball``, ``player/<team>/<unum>/<part>``, ``lines``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, PointStamped, PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from std_msgs.msg import String
from visualization_msgs.msg import Marker, MarkerArray

from robocup3d_bridge.conversions import make_marker
from robocup3d_perception.belief_record import ball_values, pose_values
from robocup3d_perception.representations import CameraObservations, WorldState, frozen_array
from robocup3d_perception.team_view import player_dicts, to_team_frame

__all__ = [
    'ball_from_values',
    'ball_msg',
    'ball_stop_msg',
    'camera_observations_from_markers',
    'players_msg',
    'pose_from_values',
    'pose_msg',
    'to_team_frame',
    'world_markers',
]


def _quat(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    )


def camera_observations_from_markers(msg: MarkerArray) -> CameraObservations:
    """The bridge's ``vision/objects`` back into camera-frame observations."""
    landmarks: dict[str, tuple[float, float, float]] = {}
    ball = None
    players: dict[tuple[str | None, int | None], dict[str, tuple[float, float, float]]] = {}
    lines: list[list[tuple[float, float, float]]] = []
    for m in msg.markers:
        p = m.pose.position
        xyz = (p.x, p.y, p.z)
        ns = m.ns
        if ns.startswith('landmark/'):
            landmarks[ns[len('landmark/') :]] = xyz
        elif ns == 'ball':
            ball = xyz
        elif ns.startswith('player/'):
            parts = ns.split('/')
            if len(parts) >= 4:
                team = None if parts[1] == 'None' else parts[1]
                try:
                    unum = int(parts[2])
                except ValueError:
                    unum = None
                players.setdefault((team, unum), {})[parts[3]] = xyz
        elif ns == 'lines':
            pts = [(q.x, q.y, q.z) for q in m.points]
            lines += [[pts[i], pts[i + 1]] for i in range(0, len(pts) - 1, 2)]
    return CameraObservations(
        landmarks=landmarks,
        ball=ball,
        players=tuple((t, u, parts) for (t, u), parts in players.items()),
        lines=frozen_array(lines if lines else [], (-1, 2, 3)),
    )


def pose_msg(state: WorldState, stamp: Time, frame: str = 'field') -> PoseWithCovarianceStamped:
    """The robot's torso pose (team frame) with covariance over x, y and yaw."""
    return pose_from_values(pose_values(state), stamp, frame)


def pose_from_values(values: Sequence[float], stamp: Time, frame: str = 'field') -> PoseWithCovarianceStamped:
    """:func:`pose_msg` from :func:`~robocup3d_perception.belief_record.pose_values` (a recorder builds it so)."""
    x, y, z, roll, pitch, yaw = values[:6]
    msg = PoseWithCovarianceStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = frame
    pose = msg.pose.pose
    pose.position.x, pose.position.y, pose.position.z = x, y, z
    o = pose.orientation
    o.w, o.x, o.y, o.z = _quat(roll, pitch, yaw)
    c = [0.0] * 36
    idx = (0, 1, 5)  # x, y, yaw in the 6x6 (x y z roll pitch yaw)
    for i in range(3):
        for j in range(3):
            c[idx[i] * 6 + idx[j]] = values[6 + 3 * i + j]
    c[2 * 6 + 2] = 0.01  # z
    c[3 * 6 + 3] = c[4 * 6 + 4] = 0.003  # roll, pitch
    msg.pose.covariance = c
    return msg


def ball_msg(state: WorldState, stamp: Time, frame: str = 'field') -> Odometry:
    """The ball as ``nav_msgs/Odometry``: position, velocity, covariances (team frame)."""
    return ball_from_values(ball_values(state), stamp, frame)


def ball_from_values(values: Sequence[float], stamp: Time, frame: str = 'field') -> Odometry:
    """:func:`ball_msg` from :func:`~robocup3d_perception.belief_record.ball_values` (a recorder builds it so)."""
    x, y, z, vx, vy = values[:5]
    msg = Odometry()
    msg.header.stamp = stamp
    msg.header.frame_id = frame
    msg.child_frame_id = 'ball'
    msg.pose.pose.position.x, msg.pose.pose.position.y, msg.pose.pose.position.z = x, y, z
    msg.pose.pose.orientation.w = 1.0
    msg.twist.twist.linear.x, msg.twist.twist.linear.y = vx, vy
    pc = [0.0] * 36
    tc = [0.0] * 36
    pc[0], pc[1], pc[6], pc[7] = values[5:9]
    tc[0], tc[1], tc[6], tc[7] = values[9:13]
    pc[14] = 0.01
    msg.pose.covariance = pc
    msg.twist.covariance = tc
    return msg


def ball_stop_msg(state: WorldState, stamp: Time, frame: str = 'field') -> PointStamped:
    """Where the ball will stop (team frame)."""
    x, y, _ = to_team_frame(float(state.ball.stop[0]), float(state.ball.stop[1]), 0.0, state.side)
    msg = PointStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = frame
    msg.point.x, msg.point.y = x, y
    return msg


def players_msg(state: WorldState) -> String:
    """Tracked robots as JSON (team frame; :func:`robocup3d_perception.team_view.player_dicts`)."""
    return String(data=json.dumps({'time': state.time, 'side': state.side, 'players': player_dicts(state)}))


def _marker(ns: str, mid: int, mtype: int, stamp: Time, frame: str, rgba: tuple[float, float, float, float]) -> Marker:
    return make_marker(ns, mid, mtype, stamp, frame, rgba, scale=0.2, lifetime=0.5)


def world_markers(state: WorldState, stamp: Time, frame: str = 'field') -> MarkerArray:
    """rviz markers: our pose (arrow), ball, its stop point, the tracked robots."""
    out = MarkerArray()
    p = state.pose
    x, y, yaw = to_team_frame(p.x, p.y, p.yaw, state.side)
    me = _marker('self', 0, Marker.ARROW, stamp, frame, (0.1, 0.9, 0.1, max(0.2, p.confidence)))
    me.pose.position.x, me.pose.position.y = x, y
    me.pose.orientation.z, me.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    me.scale.x, me.scale.y, me.scale.z = 0.5, 0.08, 0.08
    out.markers.append(me)
    b = state.ball
    if b.valid:
        bx, by, _ = to_team_frame(float(b.position[0]), float(b.position[1]), 0.0, state.side)
        m = _marker('ball', 0, Marker.SPHERE, stamp, frame, (1.0, 0.5, 0.0, 1.0))
        m.pose.position.x, m.pose.position.y, m.pose.position.z = bx, by, float(b.position[2])
        out.markers.append(m)
        sx, sy, _ = to_team_frame(float(b.stop[0]), float(b.stop[1]), 0.0, state.side)
        line = _marker('ball/stop', 0, Marker.LINE_STRIP, stamp, frame, (1.0, 0.5, 0.0, 0.6))
        line.scale.x = 0.03
        line.points = [Point(x=bx, y=by, z=0.02), Point(x=sx, y=sy, z=0.02)]
        out.markers.append(line)
    for i, e in enumerate(state.players):
        ex, ey, _ = to_team_frame(float(e.position[0]), float(e.position[1]), 0.0, state.side)
        color = (0.2, 0.4, 1.0, 1.0) if e.teammate else (1.0, 0.2, 0.2, 1.0)
        m = _marker('players', i, Marker.CYLINDER, stamp, frame, color)
        m.pose.position.x, m.pose.position.y, m.pose.position.z = ex, ey, 0.25
        m.scale.z = 0.5
        out.markers.append(m)
    return out


def transform_msg(pose: PoseWithCovarianceStamped, child: str) -> object:
    """The pose as a TF transform (``geometry_msgs/TransformStamped``) from its frame to ``child``."""
    from geometry_msgs.msg import TransformStamped  # noqa: PLC0415

    t = TransformStamped()
    t.header = pose.header
    t.child_frame_id = child
    p, q = pose.pose.pose.position, pose.pose.pose.orientation
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = p.x, p.y, p.z
    t.transform.rotation = q
    return t
