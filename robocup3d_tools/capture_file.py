"""Reading capture files (one server message per line) as a stream, with a cap on the line length.

The offline tools read captures through :func:`capture_lines`: one line at a time, never
more than ``max_line`` bytes of it (the rest of a longer line is read past in chunks and
dropped), so a 50 MB single-line file costs what reading it costs, not 50 MB of memory
per copy. The longest line in the shared captures is 22 kB (a monitor scene); agent
messages are below 3 kB.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ['MAX_LINE', 'CaptureLine', 'capture_lines']

MAX_LINE = 1 << 20  # bytes; far above anything either server sends in one message
_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class CaptureLine:
    """One line: its number (from 1) and bytes without the newline; ``data`` is ``None`` when it was too long."""

    number: int
    data: bytes | None
    length: int  # bytes in the line, without the newline


def _skip_rest(f: BinaryIO) -> int:
    """Read past the rest of a line; returns the bytes skipped (without the newline)."""
    skipped = 0
    while True:
        chunk = f.readline(_CHUNK)
        if not chunk:
            return skipped
        if chunk.endswith(b'\n'):
            return skipped + len(chunk) - 1
        skipped += len(chunk)


def capture_lines(f: BinaryIO, max_line: int = MAX_LINE) -> Iterator[CaptureLine]:
    """The lines of an open binary file, streamed; empty lines at the very end are left out."""
    number = 0
    empty: list[int] = []  # empty lines not yet known to be followed by more
    while True:
        raw = f.readline(max_line + 1)
        if not raw:
            return
        number += 1
        ended = raw.endswith(b'\n')
        line = raw[:-1] if ended else raw
        if not line and ended:
            empty.append(number)
            continue
        for n in empty:
            yield CaptureLine(n, b'', 0)
        empty = []
        if len(line) > max_line:
            yield CaptureLine(number, None, len(line) + _skip_rest(f))
        else:
            yield CaptureLine(number, line.removesuffix(b'\r'), len(line))
