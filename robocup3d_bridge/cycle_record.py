"""One message every few cycles for a recorder: what a player's nodes would publish for it, packed together.

A recorder in another process costs a player about 0.1-0.2 ms of CPU for every message it sends there
(DDS, not the building: ``bench/bench_record.py``, issue #23), and it wanted five or six a cycle:
``raw/percept``, ``raw/action``, the world model's ``pose``, ``ball`` and ``players``, and motion's
``odom``; strategy's ``motion_request`` and ``say`` and motion's ``motion_state`` and ``joint_gains`` came
on top, on change. In a composed player (bridge, motion, world model and strategy in one process,
``local_motion``) the bridge offers the topic :data:`TOPIC` instead: while someone subscribes to it, or a
recorder on this machine takes it through its local sink (:mod:`robocup3d_bridge.record_sink`, cheaper
still), every node of the player adds those messages (:data:`BUNDLED`) here as it makes them in the cycle,
and the bridge sends the messages of ``batch_cycles`` cycles as one record (``config/recording.yaml``: 5;
over DDS a ``std_msgs/UInt8MultiArray``, whose send costs the player about the same whatever its size).
``pose``, ``ball`` and ``players`` go in only on the cycles whose server time is a multiple of
``belief_period_cycles`` (5: 10 Hz; :meth:`CycleRecord.beliefs_due`); ``raw/percept``, ``raw/action`` and
``odom``, the inputs of ``replay --rerun``, every cycle; the others when the nodes would publish them, and
the latched ``motion_state`` and ``joint_gains`` also once when the record becomes active. The recorder
unpacks it (:func:`unpack`) and writes each message on its own topic, as if it had subscribed to it; it
gets them up to a batch later than that way, and a stopped player's last cycles (less than a batch) are
not sent. Live subscribers of ``pose`` and the others (rviz, a test) still get those topics at every
cycle, as before.

An entry is ``(topic in the namespace, type, payload)``: the message's CDR bytes as rclpy serializes them;
for ``std_msgs/msg/String`` the text itself, UTF-8 (:data:`TEXT`); for ``odom`` (:data:`TWIST`) the stamp
and the walk's velocity, ``<qddd``: ns, vx, vy, wz (:func:`odometry_fields`), which the recorder makes
into motion's ``nav_msgs/Odometry`` (frame ``odom``, child ``base_footprint``, the twist only); for the
world model's ``pose``, ``ball`` and ``players`` the numbers those messages are made of
(:mod:`robocup3d_perception.belief_record`, types ``robocup3d/pose``, ``robocup3d/ball``,
``robocup3d/players``), which the recorder builds the messages from (since session 41; before, the player
built and serialized them for it).

The bridge makes the record (:func:`from_config`); the player that composes the nodes hands it to motion, the
world model and strategy (their ``attach_record``). A node that is not handed it, in another process or composed
otherwise, keeps a record of its own that is never active, and publishes as before.
"""

from __future__ import annotations

import struct
import threading
from typing import Any

from robocup3d_bridge.config_files import ConfigError, load_config

__all__ = [
    'BUNDLED',
    'ODOM_FRAMES',
    'TEXT',
    'TOPIC',
    'TWIST',
    'CycleRecord',
    'from_config',
    'odometry_fields',
    'pack',
    'unpack',
]

#: the topic in the player's namespace (std_msgs/UInt8MultiArray, one a batch while subscribed)
TOPIC = 'record/cycle'
#: the topics (in the player's namespace) whose messages travel in the record, and nowhere else for it
BUNDLED = (
    'raw/percept',
    'raw/action',
    'pose',
    'ball',
    'players',
    'odom',
    'motion_request',
    'say',
    'motion_state',
    'joint_gains',
)

#: the type whose payload is the UTF-8 text, not CDR (``raw/percept``, ``raw/action``, ``players``)
TEXT = 'std_msgs/msg/String'
#: the type of an ``odom`` entry: stamp (ns) and the walk's velocity, not CDR
TWIST = 'robocup3d/twist'
#: the frames of motion's ``odom`` (robocup3d_motion.motion_node), for the recorder
ODOM_FRAMES = ('odom', 'base_footprint')
_TWIST = struct.Struct('<qddd')

_HEAD = struct.Struct('<HHI')  # len(topic), len(type), len(payload)
_FIRST = 'raw/percept'  # goes first: a recorder stamps the cycle's messages without a header by it


def pack(parts: list[tuple[str, str, bytes]]) -> bytes:
    """``(topic in the namespace, type 'pkg/msg/Name', CDR bytes)`` entries as one byte string."""
    out = []
    for topic, msgtype, payload in parts:
        t, m = topic.encode(), msgtype.encode()
        out += [_HEAD.pack(len(t), len(m), len(payload)), t, m, payload]
    return b''.join(out)


def unpack(data: bytes) -> list[tuple[str, str, bytes]]:
    """The entries :func:`pack` packed; ``ValueError`` on a truncated record."""
    parts, at, end = [], 0, len(data)
    while at < end:
        if at + _HEAD.size > end:
            raise ValueError('truncated cycle record')
        nt, nm, np_ = _HEAD.unpack_from(data, at)
        at += _HEAD.size
        if at + nt + nm + np_ > end:
            raise ValueError('truncated cycle record')
        topic = bytes(data[at : at + nt]).decode()
        msgtype = bytes(data[at + nt : at + nt + nm]).decode()
        parts.append((topic, msgtype, bytes(data[at + nt + nm : at + nt + nm + np_])))
        at += nt + nm + np_
    return parts


def odometry_fields(payload: bytes) -> tuple[int, float, float, float]:
    """A :data:`TWIST` entry's stamp (ns) and velocity (vx, vy, wz)."""
    return _TWIST.unpack(payload)


class CycleRecord:
    """The messages of one player's last cycles for the recorder; :attr:`active` while the bridge has a subscriber.

    Each entry is packed (:func:`pack`'s layout) into one buffer as it is added, with the topic's and type's
    names encoded once per pair: :meth:`take` only copies the buffer out.
    """

    def __init__(self, batch_cycles: int = 5, belief_period_cycles: int = 5) -> None:
        self.batch_cycles = max(1, batch_cycles)
        self.belief_period = max(1, belief_period_cycles)
        self.active = False  # set by the bridge at each cycle's start (:meth:`set_takers`)
        self.takers = 0  # recorders taking the record (local sinks and DDS readers)
        self.joins = 0  # how often the takers grew: a node puts its latched entries in again when this changes
        self._buf = bytearray()  # the ended cycles' entries, then this cycle's, packed
        self._start = 0  # where this cycle's entries begin in _buf
        self.cycles = 0  # cycles ended since the last take()
        self._types: dict[type, str] = {}
        self._names: dict[tuple[str, str], tuple[int, int, bytes]] = {}  # (topic, type) -> lengths, names
        self._lock = threading.Lock()  # a late reply's raw/action may come from another thread
        from rclpy.serialization import serialize_message  # noqa: PLC0415 - unpack() (the recorder's) needs no rclpy

        self._serialize = serialize_message

    def set_takers(self, n: int) -> None:
        """The bridge's count of recorders taking the record this cycle; :attr:`active` while there is one.

        A recorder that comes while another takes the record counts as a join too: it needs the latched entries
        (``joint_gains``, ``motion_state``) that the first one had when it came.
        """
        if n > self.takers:
            self.joins += 1
        self.takers, self.active = n, n > 0

    def add(self, topic: str, msg: Any) -> None:
        """Serialize ``msg`` (an rclpy message) for ``topic`` (in the player's namespace) into this cycle's record."""
        cls = type(msg)
        msgtype = self._types.get(cls)
        if msgtype is None:
            msgtype = self._types[cls] = f'{cls.__module__.split(".", 1)[0]}/msg/{cls.__name__}'
        self.add_bytes(topic, msgtype, self._serialize(msg))

    def beliefs_due(self, t: float) -> bool:
        """Whether the cycle at server time ``t`` (s) takes ``pose``, ``ball`` and ``players``."""
        return round(t * 50.0) % self.belief_period == 0

    def add_twist(self, topic: str, stamp_ns: int, vx: float, vy: float, wz: float) -> None:
        """The walk's velocity at ``stamp_ns`` for ``topic`` (``odom``), into this cycle's record."""
        self.add_bytes(topic, TWIST, _TWIST.pack(stamp_ns, vx, vy, wz))

    def add_text(self, topic: str, text: str) -> None:
        """A ``std_msgs/String`` with ``text`` for ``topic``, into this cycle's record."""
        self.add_bytes(topic, TEXT, text.encode())

    def add_bytes(self, topic: str, msgtype: str, payload: bytes) -> None:
        """An entry of type ``msgtype`` (a ROS type's CDR, or one of ours that a recorder knows) into this cycle's."""
        names = self._names.get((topic, msgtype))
        if names is None:
            t, m = topic.encode(), msgtype.encode()
            names = self._names[topic, msgtype] = (len(t), len(m), t + m)
        nt, nm, both = names
        with self._lock:
            buf = self._buf
            if topic == _FIRST and len(buf) > self._start:  # goes first in its cycle
                buf[self._start : self._start] = _HEAD.pack(nt, nm, len(payload)) + both + payload
            else:
                buf += _HEAD.pack(nt, nm, len(payload))
                buf += both
                buf += payload

    def end_cycle(self) -> bool:
        """End this cycle (its ``raw/percept`` first); whether a batch is full (:meth:`take` it)."""
        with self._lock:
            self._start = len(self._buf)
            self.cycles += 1
            return self.cycles >= self.batch_cycles

    def take(self) -> bytes:
        """The ended cycles' messages, packed (:func:`pack`); the record starts empty again."""
        with self._lock:
            buf, start = self._buf, self._start
            out = bytes(buf[:start]) if start < len(buf) else bytes(buf)
            del buf[:start]
            self._start, self.cycles = 0, 0
        return out

    def clear(self) -> None:
        """Forget what the record holds (nobody takes it any more)."""
        with self._lock:
            self._buf.clear()
            self._start, self.cycles = 0, 0


def from_config() -> CycleRecord:
    """A record as ``recording.yaml`` says (:class:`ConfigError` names a bad file)."""
    cfg = load_config('recording.yaml')
    try:
        return CycleRecord(int(cfg['batch_cycles']), int(cfg['belief_period_cycles']))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f'recording.yaml: batch_cycles and belief_period_cycles, integers ({exc})') from None
