"""Log throttling per reason: each reason is logged at most once per period, none hides another."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ['ReasonThrottle']


class ReasonThrottle:
    """Decides whether a message with a given reason is logged now.

    One shared throttle lets a frequent warning hide every other (issue #24: of 30 reconnect
    reasons only 10 were logged). Here each reason has its own clock, and the next message
    that gets through says how many of its kind were held back.
    """

    def __init__(self, period: float = 1.0, clock: Callable[[], float] = time.monotonic, max_reasons: int = 1000):
        self.period = period  # s
        self._clock = clock
        self._max = max_reasons
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def allow(self, reason: str) -> tuple[bool, int]:
        """``(log it now, how many of this reason were held back since it was last logged)``."""
        now = self._clock()
        last = self._last.get(reason)
        if last is not None and now - last < self.period:
            self._held[reason] = self._held.get(reason, 0) + 1
            return False, 0
        if last is None and len(self._last) >= self._max:  # bounded memory: forget the oldest reasons
            for old in list(self._last)[: self._max // 2]:
                self._last.pop(old)
                self._held.pop(old, None)
        self._last[reason] = now
        return True, self._held.pop(reason, 0)
