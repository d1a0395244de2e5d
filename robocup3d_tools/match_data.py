"""Read a recorded match (a rosbag2 bag of ``robocup3d record``) into arrays: :func:`load_match`.

Uses PyPI ``rosbags`` only (no rclpy). What it takes from the bag: the server's ground truth
(``/truth/ball``, ``/truth/<team>/p<unum>/pose``, ``/truth/game``), each player's beliefs
(``pose`` and ``ball`` in its team's field frame, turned into the world frame), its ``game_state``
and ``motion_state``, and ``/diagnostics``. A bag that cannot be read raises
:class:`~robocup3d_tools.replay.BagError` with one line naming the file and the problem.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robocup3d_tools.replay import BagError, _why, open_bag

__all__ = ['MatchData', 'Series', 'load_match', 'player_of', 'to_world']

_PLAYER = re.compile(r'^/(?P<team>[^/]+)/p(?P<unum>\d+)/(?P<rest>.+)$')
_TRUTH = re.compile(r'^/truth/(?P<team>[^/]+)/p(?P<unum>\d+)/pose$')
_DIAG = re.compile(r'^/?(?P<team>[^/]+)/p(?P<unum>\d+)/(?P<node>[^/]+)$')


@dataclass
class Series:
    """Samples: times ``t`` (n,) in s of server time and values ``v`` (n, k)."""

    t: np.ndarray
    v: np.ndarray

    @classmethod
    def of(cls, rows: list[tuple[float, ...]], k: int) -> Series:
        """From rows ``(t, v1, ..., vk)``, sorted by time."""
        a = np.array(rows, dtype=float).reshape(-1, k + 1)
        a = a[np.argsort(a[:, 0], kind='stable')]
        return cls(a[:, 0], a[:, 1:])


@dataclass
class MatchData:
    """A match as arrays; player ids are ``'<team>/p<unum>'``."""

    bag: Path
    start: float  # s of server time
    end: float
    field: object  # robocup3d_perception.field.FieldModel
    ball: Series | None = None  # truth: x y z
    truth: dict[str, Series] = field(default_factory=dict)  # torso: x y z qx qy qz qw
    games: list[tuple[float, dict]] = field(default_factory=list)  # /truth/game, else a player's game_state
    beliefs: dict[str, Series] = field(default_factory=dict)  # its pose, world frame: x y yaw
    belief_ball: dict[str, Series] = field(default_factory=dict)  # its ball, world frame: x y z
    motion: dict[str, list[tuple[float, dict]]] = field(default_factory=dict)
    diagnostics: dict[str, list[tuple[float, dict]]] = field(default_factory=dict)
    sides: dict[str, str] = field(default_factory=dict)  # team -> 'left' / 'right'
    topics: dict[str, int] = field(default_factory=dict)  # message counts

    def side_of(self, player: str) -> str | None:
        """'left' / 'right' for a player id, None when unknown."""
        return self.sides.get(player.split('/', maxsplit=1)[0])

    @property
    def players(self) -> list[str]:
        """Every player seen in the truth or in its own topics."""
        return sorted(set(self.truth) | set(self.beliefs) | set(self.motion))


def player_of(topic: str) -> tuple[str, str] | None:
    """``('<team>/p<unum>', rest)`` of a player's topic, None for another topic."""
    m = _PLAYER.match(topic)
    return (f'{m["team"]}/p{m["unum"]}', m['rest']) if m and m['team'] != 'truth' else None


def to_world(x: float, y: float, yaw: float, side: str | None) -> tuple[float, float, float]:
    """A team-field-frame pose in the world frame (the right team's field frame is turned by pi)."""
    if side == 'right':
        return -x, -y, (yaw + 2 * math.pi) % (2 * math.pi) - math.pi
    return x, y, yaw


def _yaw(q: object) -> float:
    return math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))


def _stamp(header: object) -> float:
    return header.stamp.sec + header.stamp.nanosec * 1e-9


_WANTED_REST = ('pose', 'ball', 'game_state', 'motion_state')


def _wanted(topic: str) -> bool:
    if topic in ('/truth/ball', '/truth/game', '/diagnostics') or _TRUTH.match(topic):
        return True
    p = player_of(topic)
    return p is not None and p[1] in _WANTED_REST


class _Collector:
    """Rows per kind while the bag is read; :meth:`take` one decoded message."""

    def __init__(self) -> None:
        self.ball: list[tuple] = []
        self.games: list[tuple[float, dict]] = []
        self.own_games: list[tuple[str, float, dict]] = []  # (player, t, its game_state)
        self.truth: dict[str, list] = {}
        self.poses: dict[str, list] = {}
        self.balls: dict[str, list] = {}
        self.motion: dict[str, list] = {}
        self.diag: dict[str, list] = {}
        self.sides: dict[str, str] = {}

    def take(self, topic: str, t: float, msg: object) -> None:
        """Put one decoded message where it belongs."""
        if topic == '/truth/ball':
            p = msg.point
            self.ball.append((_stamp(msg.header), p.x, p.y, p.z))
        elif topic == '/truth/game':
            self.games.append((t, json.loads(msg.data)))
        elif topic == '/diagnostics':
            for status in msg.status:
                m = _DIAG.match(status.name)
                if m is not None:
                    values = {kv.key: kv.value for kv in status.values}
                    values['node'], values['wall'] = m['node'], _stamp(msg.header)
                    self.diag.setdefault(f'{m["team"]}/p{m["unum"]}', []).append((t, values))
        elif (m := _TRUTH.match(topic)) is not None:
            p, q = msg.pose.position, msg.pose.orientation
            row = (_stamp(msg.header), p.x, p.y, p.z, q.x, q.y, q.z, q.w)
            self.truth.setdefault(f'{m["team"]}/p{m["unum"]}', []).append(row)
        else:
            self._player(*player_of(topic), t, msg)

    def _player(self, player: str, rest: str, t: float, msg: object) -> None:
        if rest == 'pose':
            pose = msg.pose.pose
            row = (_stamp(msg.header), pose.position.x, pose.position.y, _yaw(pose.orientation))
            self.poses.setdefault(player, []).append(row)
        elif rest == 'ball':
            p = msg.pose.pose.position
            self.balls.setdefault(player, []).append((_stamp(msg.header), p.x, p.y, p.z))
        elif rest == 'game_state':
            g = json.loads(msg.data)
            if g.get('team') and g.get('side') in ('left', 'right'):
                self.sides[g['team']] = g['side']
            self.own_games.append((player, t, g))
        elif rest == 'motion_state':
            self.motion.setdefault(player, []).append((t, json.loads(msg.data)))

    def match(self, bag: Path, start: float, end: float, field: object, counts: dict[str, int]) -> MatchData:
        """The collected rows as a :class:`MatchData` (beliefs in the world frame)."""
        games = self.games
        if not games and self.own_games:  # one player's view of the game (players lag one another)
            first = self.own_games[0][0]
            games = [(t, g) for p, t, g in self.own_games if p == first]
        sides = dict(self.sides)
        for _, g in games:
            for key, side in (('team_left', 'left'), ('team_right', 'right')):
                if g.get(key):
                    sides.setdefault(g[key], side)
        data = MatchData(bag, start, end, field, games=games, sides=sides, topics=counts)
        data.ball = Series.of(self.ball, 3) if self.ball else None
        data.truth = {p: Series.of(rows, 7) for p, rows in self.truth.items()}
        for p, rows in self.poses.items():
            side = data.side_of(p)
            data.beliefs[p] = Series.of([(t, *to_world(x, y, yaw, side)) for t, x, y, yaw in rows], 3)
        for p, rows in self.balls.items():
            s = -1.0 if data.side_of(p) == 'right' else 1.0
            data.belief_ball[p] = Series.of([(t, s * x, s * y, z) for t, x, y, z in rows], 3)
        data.motion, data.diagnostics = self.motion, self.diag
        return data


def load_match(bag: Path, server: str = 'auto', rules: str = 'ssim') -> MatchData:
    """Read ``bag``; ``server``: 'mujoco', 'simspark' or 'auto' (as ``/truth/game`` names it, else mujoco
    when the bag has ground truth).

    Raises:
        BagError: the bag is missing, not a bag, truncated or corrupted.
    """
    from rosbags.typesys import Stores, get_typestore  # noqa: PLC0415 - optional package ([ros] extra)

    from robocup3d_perception.field import field_for  # noqa: PLC0415

    store = get_typestore(Stores.ROS2_KILTED)
    reader = open_bag(Path(bag))
    where = reader.bag_name
    counts = {c.topic: 0 for c in reader.connections}
    rows = _Collector()
    first = last = None
    try:
        wanted = {c.id for c in reader.connections if _wanted(c.topic)}
        try:
            for conn, t_ns, raw in reader.messages():
                counts[conn.topic] += 1
                t = t_ns * 1e-9
                first = t if first is None else min(first, t)
                last = t if last is None else max(last, t)
                if conn.id not in wanted:
                    continue
                try:
                    msg = store.deserialize_cdr(raw, conn.msgtype)
                except Exception as exc:  # noqa: BLE001 - any decoding failure is a damaged bag
                    raise BagError(
                        f'{where}: corrupted message {counts[conn.topic]} of {conn.topic} at {t:.3f} s ({_why(exc)})'
                    ) from None
                rows.take(conn.topic, t, msg)
        except BagError:
            raise
        except Exception as exc:  # noqa: BLE001 - rosbags raises many kinds for a bad chunk
            raise BagError(
                f'{where}: corrupted or truncated data after {sum(counts.values())} messages ({_why(exc)})'
            ) from None
    finally:
        reader.close()
    if first is None:
        raise BagError(f'{where}: the bag holds no messages')
    if server == 'auto':  # the recorder names the server in /truth/game; older bags: truth came from MJ only
        named = next((g['server'] for _, g in rows.games if g.get('server') in ('mujoco', 'simspark')), None)
        server = named or ('mujoco' if rows.truth or rows.ball else 'simspark')
    return rows.match(Path(bag), first, last, field_for(server, rules), counts)
