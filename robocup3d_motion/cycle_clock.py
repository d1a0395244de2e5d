"""Time steps from server timestamps that are truncated, not rounded.

RCSSServerMJ sends ``(time (now t))`` truncated to two decimals of a float that
accumulates 5 ms steps, so 20 ms cycles arrive as 1.02, 1.04, 1.05, 1.08 ...:
differences of 10 and 30 ms that would jerk a gait's phase. Every message is one
20 ms cycle; only a gap clearly longer than a cycle (a missed message) counts as more.
"""

from __future__ import annotations

__all__ = ['CYCLE', 'CycleClock']

CYCLE = 0.02  # s per agent cycle on both servers


class CycleClock:
    """Whole-cycle time steps from a stream of (truncated) server times, one per message."""

    def __init__(self, max_step: float = 0.1) -> None:
        self.max_step = max_step
        self._last: float | None = None

    def step(self, t: float) -> float:
        """Seconds since the previous stamp, a multiple of ``CYCLE`` in [CYCLE, max_step]."""
        last, self._last = self._last, t
        if last is None or t <= last or t - last < 1.75 * CYCLE:  # first, time went back, or one cycle
            return CYCLE
        return min(round((t - last) / CYCLE) * CYCLE, self.max_step)
