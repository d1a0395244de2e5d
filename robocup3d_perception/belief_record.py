"""The world model's ``pose``, ``ball`` and ``players`` for a recorder, as a few packed numbers (issue #23).

A composed player's world model puts its estimates into the bridge's record
(:mod:`robocup3d_bridge.cycle_record`) on the cycles the recorder takes them (10 Hz). Building the ROS
messages and serializing them there was most of what recording still cost the player (session 39,
py-spy: ``CycleRecord.add`` of the beliefs 1.2 % of a recorded player's samples). The player packs
the numbers those messages are made of instead, already in the team frame (:func:`pack_pose`,
:func:`pack_ball`, :func:`pack_players`), and the recorder builds the messages from them in its own
process with the world model's own builders (:func:`robocup3d_perception.conversions.pose_from_values`,
:func:`~robocup3d_perception.conversions.ball_from_values`, and :func:`players_text` here for the JSON
of ``players``): the same values, stamps and frames as the messages the player publishes on those topics
(``test/tools/test_record_rebuild.py`` compares them).

Payloads (little-endian; the stamp is the world model's server time in seconds, which both sides turn
into the header's stamp with :func:`robocup3d_bridge.conversions.stamp_from_seconds`):

* :data:`POSE`: time, x, y, z, roll, pitch, yaw, the (x, y, yaw) covariance row by row (9), then the
  frame's name (UTF-8, the rest of the payload);
* :data:`BALL`: time, x, y, z, vx, vy, the position covariance (xx, xy, yx, yy), the velocity covariance
  (the same four), then the frame;
* :data:`PLAYERS`: time, the side, and per tracked robot its flags, number, position, velocity, the
  variances of x and y, the time of its last update, its team and its intent (what
  :func:`robocup3d_perception.team_view.player_dicts` makes its JSON of).

Pure Python: no ROS.
"""

from __future__ import annotations

import json
import math
import struct

from robocup3d_perception.representations import WorldState
from robocup3d_perception.team_view import to_team_frame

__all__ = [
    'BALL',
    'PLAYERS',
    'POSE',
    'ball_values',
    'pack_ball',
    'pack_players',
    'pack_pose',
    'players_text',
    'pose_values',
    'unpack_ball',
    'unpack_pose',
]

#: the record's entry types (not ROS types: a recorder makes ``geometry_msgs/PoseWithCovarianceStamped``,
#: ``nav_msgs/Odometry`` and ``std_msgs/String`` of them)
POSE = 'robocup3d/pose'
BALL = 'robocup3d/ball'
PLAYERS = 'robocup3d/players'

_POSE = struct.Struct('<16d')  # time, x y z roll pitch yaw, 9 covariance
_BALL = struct.Struct('<14d')  # time, x y z vx vy, 4 + 4 covariance
_PLAYERS = struct.Struct('<dH')  # time, count; then the side (a length byte and UTF-8)
_PLAYER = struct.Struct('<Bi7d')  # flags, unum, x y vx vy var_x var_y last_update; then team and intent
_TEAM_NONE, _UNUM_NONE, _TEAMMATE, _FALLEN, _INTENT_NONE = 1, 2, 4, 8, 16


def pose_values(state: WorldState) -> tuple[float, ...]:
    """The torso pose in the team frame: x, y, z, roll, pitch, yaw and the (x, y, yaw) covariance (9)."""
    p = state.pose
    x, y, yaw = to_team_frame(p.x, p.y, p.yaw, state.side)
    return (x, y, p.z, p.roll, p.pitch, yaw, *p.covariance[:3, :3].ravel().tolist())


def ball_values(state: WorldState) -> tuple[float, ...]:
    """The ball in the team frame: x, y, z, vx, vy, the position covariance (4) and the velocity's (4)."""
    b = state.ball
    px, py, pz = b.position.tolist()
    x, y, _ = to_team_frame(px, py, 0.0, state.side)
    vx, vy = b.velocity.tolist()
    if state.side == 'right':
        vx, vy = -vx, -vy
    c = b.covariance
    return (x, y, pz, vx, vy, *c[0:2, 0:2].ravel().tolist(), *c[2:4, 2:4].ravel().tolist())


def pack_pose(state: WorldState, frame: bytes) -> bytes:
    """``pose`` for the record: its time, :func:`pose_values` and ``frame`` (UTF-8)."""
    return _POSE.pack(state.time, *pose_values(state)) + frame


def pack_ball(state: WorldState, frame: bytes) -> bytes:
    """``ball`` for the record: its time, :func:`ball_values` and ``frame`` (UTF-8)."""
    return _BALL.pack(state.time, *ball_values(state)) + frame


def unpack_pose(payload: bytes) -> tuple[float, tuple[float, ...], str]:
    """A :data:`POSE` payload's time (s), values (:func:`pose_values`) and frame."""
    values = _POSE.unpack_from(payload)
    return values[0], values[1:], bytes(payload[_POSE.size :]).decode()


def unpack_ball(payload: bytes) -> tuple[float, tuple[float, ...], str]:
    """A :data:`BALL` payload's time (s), values (:func:`ball_values`) and frame."""
    values = _BALL.unpack_from(payload)
    return values[0], values[1:], bytes(payload[_BALL.size :]).decode()


def _text(s: str | None) -> bytes:
    b = s.encode() if s else b''
    if len(b) > 255:
        raise ValueError(f'{s[:20]!r}...: longer than 255 bytes')
    return bytes((len(b),)) + b


def pack_players(state: WorldState) -> bytes:
    """``players`` for the record: the numbers and names :func:`players_text` makes its JSON of."""
    out = [_PLAYERS.pack(state.time, len(state.players)), _text(state.side)]
    for e in state.players:
        flags = (
            (_TEAM_NONE if e.team is None else 0)
            | (_UNUM_NONE if e.unum is None else 0)
            | (_TEAMMATE if e.teammate else 0)
            | (_FALLEN if e.fallen else 0)
            | (_INTENT_NONE if e.intent is None else 0)
        )
        px, py = e.position.tolist()
        vx, vy = e.velocity.tolist()
        cov = e.covariance
        out += [
            _PLAYER.pack(flags, e.unum or 0, px, py, vx, vy, cov.item(0, 0), cov.item(1, 1), e.last_update),
            _text(e.team),
            _text(e.intent),
        ]
    return b''.join(out)


def players_text(payload: bytes) -> str:
    """The JSON of ``players`` (:func:`robocup3d_perception.conversions.players_msg`) from a :data:`PLAYERS` payload.

    Raises:
        ValueError: a truncated payload.
    """
    try:
        t, n = _PLAYERS.unpack_from(payload)
        at = _PLAYERS.size
        side, at = _read_text(payload, at)
        s = -1.0 if side == 'right' else 1.0
        players = []
        for _ in range(n):
            flags, unum, px, py, vx, vy, vxx, vyy, last = _PLAYER.unpack_from(payload, at)
            at += _PLAYER.size
            team, at = _read_text(payload, at)
            intent, at = _read_text(payload, at)
            x, y, _ = to_team_frame(px, py, 0.0, side)
            players.append(
                {
                    'team': None if flags & _TEAM_NONE else team,
                    'unum': None if flags & _UNUM_NONE else unum,
                    'teammate': bool(flags & _TEAMMATE),
                    'x': round(x, 3),
                    'y': round(y, 3),
                    'vx': round(s * vx, 3),
                    'vy': round(s * vy, 3),
                    'sigma': round(math.sqrt(vxx + vyy), 3),
                    'age': round(t - last, 3),
                    'fallen': bool(flags & _FALLEN),
                    'intent': None if flags & _INTENT_NONE else intent,
                }
            )
    except (struct.error, IndexError) as exc:
        raise ValueError(f'truncated players record ({exc})') from None
    return json.dumps({'time': t, 'side': side, 'players': players})


def _read_text(payload: bytes, at: int) -> tuple[str, int]:
    n = payload[at]
    end = at + 1 + n
    if end > len(payload):
        raise IndexError('text past the end')
    return bytes(payload[at + 1 : end]).decode(), end
