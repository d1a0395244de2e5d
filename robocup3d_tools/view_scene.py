"""What ``robocup3d view`` shows: the match state from ROS messages, and Foxglove messages built from it.

:class:`ViewState` takes decoded messages (from a bag through ``rosbags``, or live from rclpy: both
have the same fields) by topic and keeps the latest ground truth, game state and each player's
beliefs; the ``*_scene`` functions turn it into ``foxglove.messages.SceneUpdate`` in the ``world``
frame (field centre, +x towards the right goal), :func:`frame_transforms` turns a tf2 message into
``FrameTransforms``. No rclpy and no server here.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from robocup3d_tools.match_data import player_of, to_world

__all__ = [
    'TEAM_RGBA',
    'PlayerBelief',
    'ViewState',
    'belief_scene',
    'field_scene',
    'frame_transforms',
    'truth_scene',
]

_TRUTH = re.compile(r'^/truth/(?P<team>[^/]+)/p(?P<unum>\d+)/pose$')
TEAM_RGBA = {'left': (0.15, 0.45, 0.95, 1.0), 'right': (0.9, 0.2, 0.2, 1.0), None: (0.6, 0.6, 0.6, 1.0)}
BALL_RADIUS = 0.11  # m (RCSSServerMJ; rcssserver3d's is 0.042)


@dataclass
class PlayerBelief:
    """What one player believes, in the world frame."""

    pose: tuple[float, float, float] | None = None  # x y yaw
    ball: tuple[float, float, float] | None = None
    players: list[dict] = field(default_factory=list)  # x y teammate unum (world frame)
    stamp_ns: int = 0


@dataclass
class ViewState:
    """The latest of everything the view draws; :meth:`update` with each message."""

    ball: tuple[float, float, float] | None = None
    robots: dict[str, tuple[tuple[float, float, float], tuple[float, float, float, float]]] = field(
        default_factory=dict
    )  # player -> (position, quaternion x y z w) of the torso
    game: dict = field(default_factory=dict)
    sides: dict[str, str] = field(default_factory=dict)  # team -> side
    beliefs: dict[str, PlayerBelief] = field(default_factory=dict)
    truth_ns: int = 0

    def side_of(self, player: str) -> str | None:
        """The side of a player id ('Team/p3'), None when not known yet."""
        return self.sides.get(player.split('/', maxsplit=1)[0])

    def update(self, topic: str, t_ns: int, msg: object) -> str | None:
        """Take one message; returns what changed: 'truth', 'game', the player id of a belief, or None."""
        if topic == '/truth/ball':
            p = msg.point
            self.ball, self.truth_ns = (p.x, p.y, p.z), t_ns
            return 'truth'
        if topic == '/truth/game':
            self.set_game(json.loads(msg.data))
            return 'game'
        m = _TRUTH.match(topic)
        if m is not None:
            p, q = msg.pose.position, msg.pose.orientation
            self.robots[f'{m["team"]}/p{m["unum"]}'] = ((p.x, p.y, p.z), (q.x, q.y, q.z, q.w))
            self.truth_ns = t_ns
            return 'truth'
        who = player_of(topic)
        if who is None:
            return None
        player, rest = who
        if rest == 'game_state':
            g = json.loads(msg.data)
            if g.get('team') and g.get('side') in ('left', 'right'):
                self.sides[g['team']] = g['side']
            if not self.game or self.game.get('source') == player:  # one player's view, without a monitor
                self.set_game({**g, 'source': player})
            return 'game'
        belief = self.beliefs.setdefault(player, PlayerBelief())
        side = self.side_of(player)
        if rest == 'pose':
            pose = msg.pose.pose
            q = pose.orientation
            yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
            belief.pose = to_world(pose.position.x, pose.position.y, yaw, side)
        elif rest == 'ball':
            p = msg.pose.pose.position
            x, y, _ = to_world(p.x, p.y, 0.0, side)
            belief.ball = (x, y, p.z)
        elif rest == 'players':
            out = []
            for e in json.loads(msg.data).get('players', []):
                x, y, _ = to_world(float(e['x']), float(e['y']), 0.0, side)
                out.append({'x': x, 'y': y, 'teammate': bool(e.get('teammate')), 'unum': e.get('unum')})
            belief.players = out
        else:
            return None
        belief.stamp_ns = t_ns
        return player

    def set_game(self, g: dict) -> None:
        """A new game state (its teams give the sides)."""
        for key, side in (('team_left', 'left'), ('team_right', 'right')):
            if g.get(key):
                self.sides.setdefault(g[key], side)
        self.game = g


def _m() -> object:
    import foxglove.messages as m  # noqa: PLC0415 - optional package ([viz] extra)

    return m


def _ts(ns: int) -> object:
    return _m().Timestamp(sec=ns // 1_000_000_000, nsec=ns % 1_000_000_000)


def _color(rgba: tuple[float, float, float, float], alpha: float | None = None) -> object:
    r, g, b, a = rgba
    return _m().Color(r=r, g=g, b=b, a=a if alpha is None else alpha)


def _pose(x: float, y: float, z: float, q: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)) -> object:
    m = _m()
    return m.Pose(position=m.Vector3(x=x, y=y, z=z), orientation=m.Quaternion(x=q[0], y=q[1], z=q[2], w=q[3]))


def _yaw_q(yaw: float) -> tuple[float, float, float, float]:
    return (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))


def field_scene(f: object, ns: int = 0) -> object:
    """The field: grass, lines, centre circle and goals (``f``: a FieldModel)."""
    m = _m()
    white, grass = m.Color(r=1, g=1, b=1, a=1), m.Color(r=0.2, g=0.5, b=0.25, a=1)
    pts = []
    for x1, y1, x2, y2 in f.lines:
        pts += [m.Point3(x=float(x1), y=float(y1), z=0.01), m.Point3(x=float(x2), y=float(y2), z=0.01)]
    lines = [
        m.LinePrimitive(
            type=m.LinePrimitiveLineType.LineList, pose=_pose(0, 0, 0), thickness=0.08, points=pts, color=white
        )
    ]
    for cx, cy, r in f.circles:
        circle = [
            m.Point3(x=float(cx + r * math.cos(a)), y=float(cy + r * math.sin(a)), z=0.01)
            for a in (2 * math.pi * k / 64 for k in range(64))
        ]
        lines.append(
            m.LinePrimitive(
                type=m.LinePrimitiveLineType.LineLoop, pose=_pose(0, 0, 0), thickness=0.08, points=circle, color=white
            )
        )
    size = m.Vector3(x=f.length + 2 * f.border, y=f.width + 2 * f.border, z=0.02)
    ground = m.CubePrimitive(pose=_pose(0, 0, -0.011), size=size, color=grass)
    posts, gw, gh = [], f.goal_width / 2, f.goal_height
    for sx in (-1, 1):
        for sy in (-1, 1):
            posts.append(
                m.CylinderPrimitive(
                    pose=_pose(sx * f.half_length, sy * gw, gh / 2), size=m.Vector3(x=0.1, y=0.1, z=gh), color=white
                )
            )
        lines.append(
            m.LinePrimitive(
                type=m.LinePrimitiveLineType.LineStrip,
                pose=_pose(0, 0, 0),
                thickness=0.1,
                color=white,
                points=[m.Point3(x=sx * f.half_length, y=-gw, z=gh), m.Point3(x=sx * f.half_length, y=gw, z=gh)],
            )
        )
    entity = m.SceneEntity(
        timestamp=_ts(ns), frame_id='world', id='field', lines=lines, cubes=[ground], cylinders=posts
    )
    return m.SceneUpdate(entities=[entity])


def truth_scene(state: ViewState, ns: int) -> object:
    """The ground truth: every robot (torso box, a post to the ground, its number) and the ball."""
    m = _m()
    entities = []
    for player, ((x, y, z), q) in sorted(state.robots.items()):
        rgba = TEAM_RGBA[state.side_of(player)]
        body = m.CubePrimitive(pose=_pose(x, y, z, q), size=m.Vector3(x=0.18, y=0.3, z=0.3), color=_color(rgba))
        legs = m.CylinderPrimitive(
            pose=_pose(x, y, max(z, 0.05) / 2), size=m.Vector3(x=0.12, y=0.12, z=max(z, 0.05)), color=_color(rgba, 0.6)
        )
        label = m.TextPrimitive(
            pose=_pose(x, y, z + 0.45),
            billboard=True,
            font_size=14,
            scale_invariant=True,
            color=_color((1, 1, 1, 1)),
            text=player,
        )
        entities.append(
            m.SceneEntity(
                timestamp=_ts(ns), frame_id='world', id=f'truth/{player}', cubes=[body], cylinders=[legs], texts=[label]
            )
        )
    if state.ball is not None:
        d = 2 * BALL_RADIUS
        ball = m.SpherePrimitive(pose=_pose(*state.ball), size=m.Vector3(x=d, y=d, z=d), color=_color((1, 1, 1, 1)))
        entities.append(m.SceneEntity(timestamp=_ts(ns), frame_id='world', id='truth/ball', spheres=[ball]))
    return m.SceneUpdate(entities=entities)


def belief_scene(state: ViewState, player: str, ns: int) -> object:
    """One player's beliefs, translucent in its team's colour: its pose (arrow), its ball, the robots it tracks."""
    m = _m()
    b = state.beliefs.get(player) or PlayerBelief()
    rgba = TEAM_RGBA[state.side_of(player)]
    arrows, spheres, cylinders = [], [], []
    if b.pose is not None:
        x, y, yaw = b.pose
        arrows.append(
            m.ArrowPrimitive(
                pose=_pose(x, y, 0.05, _yaw_q(yaw)),
                shaft_length=0.4,
                shaft_diameter=0.06,
                head_length=0.15,
                head_diameter=0.15,
                color=_color(rgba, 0.9),
            )
        )
    if b.ball is not None:
        d = 2 * BALL_RADIUS
        spheres.append(
            m.SpherePrimitive(
                pose=_pose(*b.ball), size=m.Vector3(x=d, y=d, z=d), color=_color((1.0, 0.55, 0.0, 1.0), 0.6)
            )
        )
    for e in b.players:
        c = rgba if e['teammate'] else TEAM_RGBA['right' if state.side_of(player) == 'left' else 'left']
        cylinders.append(
            m.CylinderPrimitive(
                pose=_pose(e['x'], e['y'], 0.25), size=m.Vector3(x=0.3, y=0.3, z=0.5), color=_color(c, 0.35)
            )
        )
    entity = m.SceneEntity(
        timestamp=_ts(ns),
        frame_id='world',
        id=f'belief/{player}',
        arrows=arrows,
        spheres=spheres,
        cylinders=cylinders,
        metadata=[m.KeyValuePair(key='player', value=player)],
    )
    return m.SceneUpdate(entities=[entity])


def frame_transforms(msg: object) -> list[object]:
    """A tf2_msgs/TFMessage (or anything with ``transforms``) as a list of Foxglove FrameTransform."""
    m = _m()
    out = []
    for tr in msg.transforms:
        t, r = tr.transform.translation, tr.transform.rotation
        out.append(
            m.FrameTransform(
                timestamp=m.Timestamp(sec=tr.header.stamp.sec, nsec=tr.header.stamp.nanosec),
                parent_frame_id=tr.header.frame_id,
                child_frame_id=tr.child_frame_id,
                translation=m.Vector3(x=t.x, y=t.y, z=t.z),
                rotation=m.Quaternion(x=r.x, y=r.y, z=r.z, w=r.w),
            )
        )
    return out


def transform(ns: int, parent: str, child: str, xyz: tuple, q: tuple = (0.0, 0.0, 0.0, 1.0)) -> object:
    """One FrameTransform (live mode builds its TF from the ground truth)."""
    m = _m()
    return m.FrameTransform(
        timestamp=_ts(ns),
        parent_frame_id=parent,
        child_frame_id=child,
        translation=m.Vector3(x=xyz[0], y=xyz[1], z=xyz[2]),
        rotation=m.Quaternion(x=q[0], y=q[1], z=q[2], w=q[3]),
    )
