"""A local stream from a player to a recorder on the same machine, cheaper than DDS (issue #23).

A composed player packs what a recorder wants of a few cycles into one record
(:mod:`robocup3d_bridge.cycle_record`). Sent over DDS (``record/cycle``) each one cost the player about
0.2 ms of CPU, most of what recording cost it (``bench/bench_record.py``). A recorder on the same machine
offers a *sink* instead: a Unix stream socket, announced in the player's namespace on the latched topic
:data:`TOPIC` as text (:func:`address_text`). The player connects and writes each record there, framed,
without blocking: what the socket does not take at once waits in the player (up to ``limit`` bytes) for the
next record. A recorder that cannot be reached this way (another machine) gets no connection and takes
``record/cycle`` over DDS as before.

Frames are a 4-byte little-endian length and the bytes. A connection's first frame is :data:`HELLO` and the
player's namespace; every later frame is one packed record. The recorder takes connections from its own
user only (``SO_PEERCRED``, where the platform has it) and from the namespaces it announced a sink to.
"""

from __future__ import annotations

import errno
import os
import secrets
import socket
import struct
import sys
import tempfile
from dataclasses import dataclass, field

__all__ = ['HELLO', 'TOPIC', 'SinkClient', 'SinkError', 'SinkServer', 'address_text', 'socket_address']

#: the topic in a player's namespace where a recorder announces its sink (std_msgs/String, latched)
TOPIC = 'record/sink'
#: what a connection's first frame starts with (then the player's namespace, UTF-8)
HELLO = b'robocup3d-record-sink-1 '
_LEN = struct.Struct('<I')
MAX_FRAME = 64 << 20  # a record of a few cycles is tens of kB; anything this large is not one
_SEND_FLAGS = getattr(socket, 'MSG_NOSIGNAL', 0)
_GONE = (errno.EPIPE, errno.ECONNRESET, errno.ECONNREFUSED, errno.ENOENT, errno.ENOTCONN)


class SinkError(RuntimeError):
    """A sink that cannot be used: unreachable, gone (``gone``: its recorder left, an ordinary end), or not reading."""

    def __init__(self, message: str, gone: bool = False) -> None:
        super().__init__(message)
        self.gone = gone


def address_text(address: str | bytes) -> str:
    """A socket address as text for the announcement: an abstract one (Linux) as ``@name``."""
    if isinstance(address, bytes):
        return '@' + address[1:].decode() if address[:1] == b'\0' else address.decode()
    return '@' + address[1:] if address.startswith('\0') else address


def socket_address(text: str) -> str:
    """The socket address an announcement names (``@name``: abstract)."""
    return '\0' + text[1:] if text.startswith('@') else text


class SinkClient:
    """A player's connection to one recorder's sink; :meth:`send` never blocks."""

    def __init__(self, text: str, namespace: str, limit: int = 16 << 20, timeout: float = 0.5) -> None:
        """Connect to the sink announced as ``text`` and introduce ``namespace``.

        Raises:
            SinkError: the sink cannot be reached (gone, or on another machine).
        """
        self.text = text
        self.limit = limit
        self.sent = 0  # records written (or queued)
        self._pending = bytearray()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(socket_address(text))
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            raise SinkError(f'record sink {text}: cannot connect ({exc.strerror or exc})') from None
        self._sock: socket.socket | None = sock
        self._write(HELLO + namespace.encode())

    @property
    def open(self) -> bool:
        return self._sock is not None

    def send(self, record: bytes) -> None:
        """Write one record (and what waited before it) as far as the socket takes it now.

        Raises:
            SinkError: the recorder left, or stopped reading for longer than ``limit`` bytes last.
        """
        if self._sock is None:
            raise SinkError(f'record sink {self.text}: closed', gone=True)
        self._write(record)
        self.sent += 1

    def _write(self, payload: bytes) -> None:
        frame = _LEN.pack(len(payload)) + payload
        if self._pending:
            self._pending += frame
            frame = self._pending
        try:
            n = self._sock.send(frame, _SEND_FLAGS)
        except BlockingIOError:
            n = 0
        except OSError as exc:
            self.close()
            gone = exc.errno in _GONE
            raise SinkError(f'record sink {self.text}: {"the recorder left" if gone else exc}', gone=gone) from None
        rest = memoryview(frame)[n:]
        if len(rest) > self.limit:
            self.close()
            raise SinkError(f'record sink {self.text}: the recorder stopped reading ({len(rest)} bytes waiting)')
        self._pending = bytearray(rest)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._pending = bytearray()


@dataclass
class _Conn:
    sock: socket.socket
    namespace: str | None = None  # from its hello
    buf: bytearray = field(default_factory=bytearray)


class SinkServer:
    """A recorder's sink: takes the players' connections and their framed records, without blocking."""

    def __init__(self, allowed: set[str] | None = None) -> None:
        """Listen on a new address (abstract on Linux, a socket file in the temporary directory elsewhere).

        ``allowed``: the namespaces whose connections are taken (the set is read as it changes); None: any.
        """
        self.allowed = allowed
        self.errors: list[str] = []  # connections refused or dropped, and why (the recorder prints them)
        token = f'robocup3d-record-{os.getpid()}-{secrets.token_hex(4)}'
        if sys.platform.startswith('linux'):
            self.address, self._path = '\0' + token, None
        else:
            self._path = os.path.join(tempfile.gettempdir(), token + '.sock')
            self.address = self._path
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(self.address)
        self._sock.listen(64)
        self._sock.setblocking(False)
        self._conns: list[_Conn] = []

    @property
    def text(self) -> str:
        """The address as announced on :data:`TOPIC`."""
        return address_text(self.address)

    def namespaces(self) -> set[str]:
        """The namespaces connected now."""
        return {c.namespace for c in self._conns if c.namespace is not None}

    def poll(self, most: int = 4 << 20) -> list[tuple[str, bytes]]:
        """Take new connections and every whole record that arrived: ``(namespace, record)`` in order per player.

        ``most``: bytes read from one connection in one call, so one player cannot hold up the others.
        """
        self._accept()
        out: list[tuple[str, bytes]] = []
        for conn in list(self._conns):
            got, closed = 0, False
            while got < most:
                try:
                    chunk = conn.sock.recv(1 << 18)
                except BlockingIOError:
                    break
                except OSError as exc:
                    self._drop(conn, f'read failed ({exc})')
                    closed = True
                    break
                if not chunk:
                    closed = True
                    break
                conn.buf += chunk
                got += len(chunk)
            if not self._frames(conn, out):
                continue  # dropped for a bad frame
            if closed and conn in self._conns:
                if conn.buf:
                    self.errors.append(f'{conn.namespace}: connection closed within a record ({len(conn.buf)} bytes)')
                self._conns.remove(conn)
                conn.sock.close()
        return out

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self.errors.append(f'accept failed ({exc})')
                return
            if not self._same_user(sock):
                self.errors.append("a connection from another user's process: refused")
                sock.close()
                continue
            sock.setblocking(False)
            self._conns.append(_Conn(sock))

    @staticmethod
    def _same_user(sock: socket.socket) -> bool:
        peercred = getattr(socket, 'SO_PEERCRED', None)
        if peercred is None:
            return True  # no peer credentials here: the socket file's permissions guard it
        _, uid, _ = struct.unpack('3i', sock.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize('3i')))
        return uid == os.getuid()

    def _frames(self, conn: _Conn, out: list[tuple[str, bytes]]) -> bool:
        """Move ``conn``'s whole frames to ``out``; False when it was dropped for a bad one."""
        buf, at = conn.buf, 0
        while len(buf) - at >= _LEN.size:
            (n,) = _LEN.unpack_from(buf, at)
            if n > MAX_FRAME:
                self._drop(conn, f'a frame of {n} bytes: not a record')
                return False
            if len(buf) - at - _LEN.size < n:
                break
            payload = bytes(buf[at + _LEN.size : at + _LEN.size + n])
            at += _LEN.size + n
            if conn.namespace is None:
                if not payload.startswith(HELLO):
                    self._drop(conn, 'no hello: not a player')
                    return False
                ns = payload[len(HELLO) :].decode(errors='replace')
                if self.allowed is not None and ns not in self.allowed:
                    self._drop(conn, f'{ns}: no sink was offered to it')
                    return False
                conn.namespace = ns
            else:
                out.append((conn.namespace, payload))
        del buf[:at]
        return True

    def _drop(self, conn: _Conn, why: str) -> None:
        self.errors.append(why)
        if conn in self._conns:
            self._conns.remove(conn)
        conn.sock.close()

    def close(self) -> None:
        for conn in self._conns:
            conn.sock.close()
        self._conns = []
        self._sock.close()
        if self._path is not None:
            try:
                os.unlink(self._path)
            except OSError:
                pass
