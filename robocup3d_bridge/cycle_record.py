"""One message every few cycles for a recorder: what a player's nodes would publish for it, packed together.

A recorder in another process costs a player about 0.1-0.2 ms of CPU for every message it sends there
(DDS, not the building: ``bench/bench_record.py``, issue #23), and it wanted five or six a cycle:
``raw/percept``, ``raw/action``, the world model's ``pose``, ``ball`` and ``players``, and motion's
``odom``. In a composed player (bridge, motion and world model in one process, ``local_motion``) the
bridge offers the topic :data:`TOPIC` instead: while someone subscribes to it, every node of the player
adds those messages here, serialized, as it makes them in the cycle, and the bridge sends the messages of
:data:`BATCH_CYCLES` cycles as one ``std_msgs/UInt8MultiArray``: every message, a tenth of the sends (a
message costs the sender about the same whatever its size, ``bench/bench_record.py``). The recorder
unpacks it (:func:`unpack`) and writes each message on its own topic, as if it had subscribed to it; it
gets them up to 0.1 s later than that way, and a stopped player's last cycles (fewer than
:data:`BATCH_CYCLES`) are not sent. Live subscribers of ``pose`` and the others (rviz, a test) still get
those topics, at full rate, as before.

An entry is ``(topic in the namespace, type, payload)``: the message's CDR bytes as rclpy serializes them,
but for ``std_msgs/msg/String`` the text itself, UTF-8 (:data:`TEXT`).

The record is found by the player's namespace (:func:`for_namespace`), so the nodes need not know each
other; nodes in other processes have a record of their own that is never active, and publish as before.
"""

from __future__ import annotations

import struct
import threading
from typing import Any

__all__ = ['BATCH_CYCLES', 'BUNDLED', 'TEXT', 'TOPIC', 'CycleRecord', 'for_namespace', 'pack', 'unpack']

#: the topic in the player's namespace (std_msgs/UInt8MultiArray, one a cycle while subscribed)
TOPIC = 'record/cycle'
#: the topics (in the player's namespace) whose messages travel in the record, and nowhere else for it
BUNDLED = ('raw/percept', 'raw/action', 'pose', 'ball', 'players', 'odom')

#: cycles whose messages go in one record/cycle message (0.1 s of server time)
BATCH_CYCLES = 5
#: the type whose payload is the UTF-8 text, not CDR (``raw/percept``, ``raw/action``, ``players``)
TEXT = 'std_msgs/msg/String'

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


class CycleRecord:
    """The messages of one player's last cycles for the recorder; :attr:`active` while the bridge has a subscriber."""

    def __init__(self) -> None:
        self.active = False  # set by the bridge at each cycle's start
        self._parts: list[tuple[str, str, bytes]] = []  # this cycle's
        self._done: list[tuple[str, str, bytes]] = []  # the cycles ended since the last take()
        self.cycles = 0  # cycles in _done
        self._types: dict[type, str] = {}
        self._lock = threading.Lock()  # a late reply's raw/action may come from another thread
        from rclpy.serialization import serialize_message  # noqa: PLC0415 - unpack() (the recorder's) needs no rclpy

        self._serialize = serialize_message

    def add(self, topic: str, msg: Any) -> None:
        """Serialize ``msg`` (an rclpy message) for ``topic`` (in the player's namespace) into this cycle's record."""
        cls = type(msg)
        msgtype = self._types.get(cls)
        if msgtype is None:
            msgtype = self._types[cls] = f'{cls.__module__.split(".", 1)[0]}/msg/{cls.__name__}'
        self._add((topic, msgtype, self._serialize(msg)))

    def add_text(self, topic: str, text: str) -> None:
        """A ``std_msgs/String`` with ``text`` for ``topic``, into this cycle's record."""
        self._add((topic, TEXT, text.encode()))

    def _add(self, entry: tuple[str, str, bytes]) -> None:
        with self._lock:
            if entry[0] == _FIRST:
                self._parts.insert(0, entry)
            else:
                self._parts.append(entry)

    def end_cycle(self) -> int:
        """End this cycle (its ``raw/percept`` first); how many cycles the record now holds."""
        with self._lock:
            self._done += self._parts
            self._parts = []
            self.cycles += 1
            return self.cycles

    def take(self) -> bytes:
        """The ended cycles' messages, packed (:func:`pack`); the record starts empty again."""
        with self._lock:
            parts, self._done, self.cycles = self._done, [], 0
        return pack(parts)

    def clear(self) -> None:
        """Forget what the record holds (nobody takes it any more)."""
        with self._lock:
            self._parts, self._done, self.cycles = [], [], 0


_records: dict[str, CycleRecord] = {}
_records_lock = threading.Lock()


def for_namespace(namespace: str) -> CycleRecord:
    """The record of the player in ``namespace`` in this process (made on first use)."""
    with _records_lock:
        rec = _records.get(namespace)
        if rec is None:
            rec = _records[namespace] = CycleRecord()
        return rec
