"""Length-prefixed message framing used by both servers (4-byte big-endian length).

Agent messages of both servers are ASCII S-expressions with no NUL byte (see the capture
READMEs), while every length prefix below 16 MB starts with one. :class:`TolerantFrameDecoder`
uses that to drop an oversize message at the cost of reading it, and to find the next
frame after a length prefix that lied.
"""

from __future__ import annotations

import socket
import struct

__all__ = [
    'AGENT_MAX_MESSAGE_SIZE',
    'DROPPED',
    'MAX_MESSAGE_SIZE',
    'FrameDecoder',
    'FramingError',
    'TolerantFrameDecoder',
    'frame',
    'recv_frame',
]

MAX_MESSAGE_SIZE = 4 * 1024 * 1024  # generous: a full SimSpark monitor scene is ~100 kB
#: Largest agent message taken in; the captures' largest is 2.5 kB (rcssserver3d, two teams).
AGENT_MAX_MESSAGE_SIZE = 64 * 1024
#: What :meth:`TolerantFrameDecoder.feed` returns in place of a message it dropped.
DROPPED = None
_LEN = struct.Struct('>I')


class FramingError(ValueError):
    """Raised when a length prefix is impossible (larger than ``MAX_MESSAGE_SIZE``)."""


def frame(payload: bytes | str) -> bytes:
    """Prefix ``payload`` with its 4-byte big-endian length."""
    if isinstance(payload, str):
        payload = payload.encode('ascii')
    return _LEN.pack(len(payload)) + payload


def recv_frame(sock: socket.socket, with_prefix: bool = False) -> bytes | None:
    """Read one whole message from a blocking socket (with its length prefix if asked); ``None`` at EOF or error."""
    head = _recv_exact(sock, 4)
    if head is None:
        return None
    size = _LEN.unpack(head)[0]
    if size > MAX_MESSAGE_SIZE:
        raise FramingError(f'length prefix {size} exceeds {MAX_MESSAGE_SIZE}')
    body = _recv_exact(sock, size)
    if body is None:
        return None
    return head + body if with_prefix else body


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = b''
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    return buf


class FrameDecoder:
    """Incremental decoder: feed it whatever ``recv`` returned, get whole messages back.

    Partial reads (a message split over several ``recv`` calls) and coalesced reads
    (several messages in one ``recv``) are both handled.
    """

    __slots__ = ('_buf', 'max_size')

    def __init__(self, max_size: int = MAX_MESSAGE_SIZE) -> None:
        self._buf = bytearray()
        self.max_size = max_size

    def feed(self, data: bytes) -> list[bytes]:
        """Add received bytes; return every message now complete (possibly none).

        Raises:
            FramingError: a length prefix exceeds ``max_size``; the buffer is cleared,
                because the stream cannot be resynchronised.
        """
        buf = self._buf
        buf += data
        out: list[bytes] = []
        pos = 0
        n = len(buf)
        while n - pos >= 4:
            (size,) = _LEN.unpack_from(buf, pos)
            if size > self.max_size:
                buf.clear()
                raise FramingError(f'message length {size} exceeds the limit of {self.max_size} bytes')
            end = pos + 4 + size
            if end > n:
                break
            out.append(bytes(buf[pos + 4 : end]))
            pos = end
        if pos:
            del buf[:pos]
        return out

    @property
    def pending(self) -> int:
        """Number of buffered bytes that do not yet form a whole message."""
        return len(self._buf)

    def clear(self) -> None:
        """Drop buffered bytes (after a reconnect)."""
        self._buf.clear()


class TolerantFrameDecoder(FrameDecoder):
    """Incremental decoder for agent links that never raises and never buffers more than ``max_size``.

    ``feed`` returns the whole messages now complete, with :data:`DROPPED` (``None``) in the
    place of each frame it refused: a length above ``max_size`` (a huge message, or a prefix
    that lied). A refused frame's bytes are discarded as they arrive, up to the next NUL byte:
    in these ASCII protocols only a length prefix holds one, so the next frame is found
    again even when the refused length was false. ``dropped`` counts the refusals.
    """

    __slots__ = ('_skipping', 'dropped')

    def __init__(self, max_size: int = AGENT_MAX_MESSAGE_SIZE) -> None:
        if max_size >= 1 << 24:
            raise ValueError(f'max_size {max_size} must be below 16 MB (the NUL-led prefix rule)')
        super().__init__(max_size)
        self._skipping = False
        self.dropped = 0

    def feed(self, data: bytes) -> list[bytes | None]:
        """Add received bytes; return every message now complete, ``DROPPED`` for a refused one."""
        buf = self._buf
        out: list[bytes | None] = []
        if self._skipping:
            nul = data.find(0)
            if nul < 0:
                return out  # still inside the refused frame: read and forgotten
            self._skipping = False
            data = data[nul:]
        buf += data
        pos = 0
        n = len(buf)
        while n - pos >= 4:
            (size,) = _LEN.unpack_from(buf, pos)
            if size > self.max_size:
                self.dropped += 1
                out.append(DROPPED)
                nul = buf.find(0, pos + 4)
                if nul < 0:
                    self._skipping = True
                    pos = n
                    break
                pos = nul
                continue
            end = pos + 4 + size
            if end > n:
                break
            out.append(bytes(buf[pos + 4 : end]))
            pos = end
        if pos:
            del buf[:pos]
        return out

    def clear(self) -> None:
        """Drop buffered bytes (after a reconnect)."""
        super().clear()
        self._skipping = False
