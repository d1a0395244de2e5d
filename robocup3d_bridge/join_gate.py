"""One agent at a time joins a server: a lock shared by every player process on this host.

rcssserver3d 0.7.3 (threaded agent control, its real-time default) stops serving every agent
when two agents connect within a few milliseconds of each other (measured: 4 agents joining at
once hung it in 6 of 6 trials). Players of a team start as separate processes at about the same
time, so each takes this lock from before it connects until the server has taken its init
(the agent loop decides when; a team test once hung with a join 13 ms after the previous
agent's first server message, so it waits for more than that). The lock is an ``flock`` on a
file in the temp directory, keyed by server address: it works across processes and threads,
and the kernel drops it if its holder dies.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: no gate
    fcntl = None

__all__ = ['JoinGate']


class JoinGate:
    """A host-wide lock named after ``host:port``; waiters give up after ``timeout`` s and join anyway."""

    def __init__(self, host: str, port: int, timeout: float = 15.0, directory: str | None = None) -> None:
        safe_host = re.sub(r'[^A-Za-z0-9.-]', '_', host)
        self.path = Path(directory or tempfile.gettempdir()) / f'robocup3d-join-{safe_host}-{port}.lock'
        self.timeout = timeout
        self._fd: int | None = None
        self.waited = 0.0  # s the last acquire waited

    @property
    def held(self) -> bool:
        """Whether this gate holds the lock now."""
        return self._fd is not None

    def acquire(self, stop: threading.Event | None = None) -> bool:
        """Wait for the lock; False when it timed out, ``stop`` was set, or locking is unavailable."""
        if self._fd is not None:
            return True
        start = time.monotonic()
        if fcntl is None:
            return False
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError:
            return False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.waited = time.monotonic() - start
                if self.waited >= self.timeout or (stop is not None and stop.is_set()):
                    os.close(fd)
                    return False
                time.sleep(0.01)
                continue
            except OSError:
                os.close(fd)
                return False
            self._fd = fd
            self.waited = time.monotonic() - start
            return True

    def release(self) -> None:
        """Let the next agent join (closing the file drops the lock); harmless when not held."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
