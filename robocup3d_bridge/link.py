"""TCP link to a server: connect, frame, receive and send. No ROS, no threads.

:class:`ServerLink` raises :class:`LinkDown` when the server goes away; the caller
(the agent loop) decides when to reconnect.
"""

from __future__ import annotations

import select
import socket

from robocup3d_bridge.framing import AGENT_MAX_MESSAGE_SIZE, TolerantFrameDecoder, frame

__all__ = ['LinkDown', 'ServerLink']


class LinkDown(ConnectionError):
    """The server closed the connection or refused it."""


class ServerLink:
    """One TCP connection speaking length-prefixed messages."""

    def __init__(
        self, host: str, port: int, connect_timeout: float = 2.0, max_message: int = AGENT_MAX_MESSAGE_SIZE
    ) -> None:
        self.host = host
        self.port = port
        self.connect_timeout = connect_timeout
        self._sock: socket.socket | None = None
        self._decoder = TolerantFrameDecoder(max_message)
        self.bytes_in = 0
        self.bytes_out = 0

    @property
    def connected(self) -> bool:
        """Whether a socket is open."""
        return self._sock is not None

    def connect(self) -> None:
        """Open the connection (closing any previous one)."""
        self.close()
        try:
            sock = socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        except OSError as exc:
            raise LinkDown(f'cannot connect to {self.host}:{self.port}: {exc}') from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(None)
        self._sock = sock
        self._decoder.clear()

    def close(self) -> None:
        """Close the socket if open."""
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def fileno(self) -> int:
        """The socket's descriptor (for select)."""
        if self._sock is None:
            raise LinkDown('not connected')
        return self._sock.fileno()

    def send(self, payload: str | bytes) -> None:
        """Send one message (framed)."""
        if self._sock is None:
            raise LinkDown('not connected')
        data = frame(payload)
        try:
            self._sock.sendall(data)
        except OSError as exc:
            self.close()
            raise LinkDown(f'send failed: {exc}') from None
        self.bytes_out += len(data)

    @property
    def dropped(self) -> int:
        """Messages refused for their size (or a false length prefix) since this link was made."""
        return self._decoder.dropped

    def receive(self, timeout: float | None) -> list[bytes | None]:
        """Wait up to ``timeout`` seconds for data; return the complete messages (maybe none).

        ``None`` stands for a message that was dropped unread (above ``max_message`` bytes).
        """
        sock = self._sock
        if sock is None:
            raise LinkDown('not connected')
        if timeout is not None:
            ready, _, _ = select.select([sock], [], [], max(0.0, timeout))
            if not ready:
                return []
        try:
            data = sock.recv(1 << 16)
        except OSError as exc:
            self.close()
            raise LinkDown(f'receive failed: {exc}') from None
        if not data:
            self.close()
            raise LinkDown('server closed the connection')
        self.bytes_in += len(data)
        return self._decoder.feed(data)
