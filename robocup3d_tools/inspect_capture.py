"""``robocup3d inspect FILE``: decode a capture of server messages into readable records.

A capture holds one server message per line (the payload without its length prefix),
as in ``../shared/captures``. Each message becomes one JSON object per line::

    {"line": 12, "time_s": 1.18, "game": {...}, "joints_deg": {...}, "gyro_deg_s": [...],
     "vision": {"landmarks": 4, "ball": {"distance_m": ..., "azimuth_deg": ...}, ...}, ...}

Angles are written in degrees (keys end in ``_deg``), or in radians with ``--radians``
(keys end in ``_rad``). Keys for things a message did not carry are left out.
A summary follows on stderr (stdout with ``--summary-only``): the number of messages,
a count of every perceptor kind, every per-perceptor error and unknown perceptor with
its line numbers, and every malformed line.

Exit status:
    0  every line is a well-formed message. Per-perceptor errors (e.g. the ``nan`` that
       a real rcssserver3d sent in one ``See`` line) and unknown perceptors are reported
       in the summary only: the parser skips them, so an agent survives them too.
    1  the file cannot be read, holds no valid message (none with a time: empty, binary),
       or some line is malformed (not an S-expression, e.g. truncated, an empty line
       before the end, or a line longer than ``--max-line``, 1 MiB by default); each is
       printed as ``FILE:LINE: error`` (the first 50).

The file is streamed: memory does not grow with its size or its longest line.
    2  only with ``--strict``: no line is malformed, but some message has per-perceptor
       errors or unknown perceptors.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TextIO

from robocup3d_bridge.percept import Percept, Polar
from robocup3d_bridge.perception import PerceptParseError, parse_percept
from robocup3d_tools.capture_file import MAX_LINE, CaptureLine, capture_lines

__all__ = ['EXIT_MALFORMED', 'EXIT_OK', 'EXIT_STRICT', 'CaptureSummary', 'format_summary', 'main', 'percept_record']

EXIT_OK = 0
EXIT_MALFORMED = 1
EXIT_STRICT = 2
_DIGITS = 4  # decimals kept in the records; the servers send two
_MAX_LINES_SHOWN = 10  # line numbers listed per error message in the summary
_MAX_MALFORMED_SHOWN = 50  # malformed lines printed one by one


@dataclass(slots=True)
class CaptureSummary:
    """What a whole capture contained."""

    messages: int = 0
    timed: int = 0  # messages with a finite server time: the valid percepts
    kinds: Counter[str] = field(default_factory=Counter)
    errors: dict[str, list[int]] = field(default_factory=dict)  # message -> line numbers
    unknown: dict[str, list[int]] = field(default_factory=dict)  # perceptor kind -> line numbers
    malformed: list[tuple[int, str]] = field(default_factory=list)  # (line, error)

    def add(self, line: int, p: Percept) -> None:
        """Count one parsed message."""
        self.messages += 1
        self.timed += p.time is not None and math.isfinite(p.time)
        self.kinds.update(p.kinds)
        for err in p.errors:
            self.errors.setdefault(err, []).append(line)
        for expr in p.unknown:
            self.unknown.setdefault(_head(expr), []).append(line)


def _head(expr: str) -> str:
    """The perceptor name of a rendered expression: ``(TCH n bumper)`` -> ``TCH``."""
    return expr.lstrip('(').split(' ', 1)[0].rstrip(')')[:40] or expr[:40]


def _r(v: float) -> float:
    return round(v, _DIGITS) + 0.0  # + 0.0 turns -0.0 into 0.0


class _Units:
    """Angle conversion for the records: degrees (default) or radians."""

    def __init__(self, radians: bool) -> None:
        self.suffix = 'rad' if radians else 'deg'
        self.scale = 1.0 if radians else 180.0 / math.pi

    def angle(self, v: float) -> float:
        return _r(v * self.scale)

    def polar(self, p: Polar) -> dict[str, float]:
        u = self.suffix
        return {
            'distance_m': _r(p.distance),
            f'azimuth_{u}': self.angle(p.azimuth),
            f'elevation_{u}': self.angle(p.elevation),
        }


def _game(p: Percept) -> dict[str, object] | None:
    g = p.game
    if g is None:
        return None
    out = {
        'play_mode': g.play_mode,
        'game_time_s': g.game_time,
        'score_left': g.score_left,
        'score_right': g.score_right,
        'unum': g.unum,
        'side': g.side.value if g.side is not None else None,
        'team_left': g.team_left,
        'team_right': g.team_right,
    }
    return {k: v for k, v in out.items() if v is not None}


def _vision(p: Percept, u: _Units) -> dict[str, object] | None:
    v = p.vision
    if v is None:
        return None
    out: dict[str, object] = {
        'landmarks': len(v.landmarks),
        'landmark_names': sorted(v.landmarks),
        'players': len(v.players),
        'player_ids': [f'{s.team}:{s.unum}' for s in v.players],
        'lines': len(v.lines),
    }
    if v.ball is not None:
        out['ball'] = u.polar(v.ball)
    if v.my_position is not None:
        out['my_position_m'] = [_r(x) for x in v.my_position]
    if v.my_orientation is not None:
        out[f'my_orientation_{u.suffix}'] = u.angle(v.my_orientation)
    if v.ball_position is not None:
        out['ball_position_m'] = [_r(x) for x in v.ball_position]
    return out


def _hear(p: Percept, u: _Units) -> list[dict[str, object]]:
    out = []
    for h in p.hear:
        rec: dict[str, object] = {'text': h.data.decode('ascii', 'backslashreplace'), 'self': h.is_self}
        if h.team is not None:
            rec['team'] = h.team
        if h.time is not None:
            rec['time_s'] = h.time
        if h.direction is not None:
            rec[f'direction_{u.suffix}'] = u.angle(h.direction)
        out.append(rec)
    return out


def percept_record(line: int, p: Percept, radians: bool = False) -> dict[str, object]:
    """One readable JSON-ready record of a parsed message (angles in deg unless ``radians``)."""
    u = _Units(radians)
    s = u.suffix
    rec: dict[str, object] = {
        'line': line,
        'time_s': p.time,
        'game': _game(p),
        f'joints_{s}': {k: u.angle(v) for k, v in p.joint_positions.items()} or None,
        f'joint_velocities_{s}_s': {k: u.angle(v) for k, v in p.joint_velocities.items()} or None,
        f'gyro_{s}_s': [u.angle(x) for x in p.gyro] if p.gyro is not None else None,
        'accel_m_s2': [_r(x) for x in p.accel] if p.accel is not None else None,
        'foot_forces': {k: {'c_m': [_r(x) for x in fr.c], 'f_n': [_r(x) for x in fr.f]} for k, fr in p.forces.items()}
        or None,
        'vision': _vision(p, u),
        'hear': _hear(p, u) or None,
        'torso_position_m': [_r(x) for x in p.torso_position] if p.torso_position is not None else None,
        'torso_quat_wxyz': [_r(x) for x in p.torso_orientation] if p.torso_orientation is not None else None,
        'unknown': p.unknown or None,
        'errors': p.errors or None,
    }
    return {k: v for k, v in rec.items() if v is not None}


def _finite(rec: object) -> object:
    """``rec`` with every non-finite number written as a string (JSON has no inf or nan)."""
    if isinstance(rec, float) and not math.isfinite(rec):
        return str(rec)
    if isinstance(rec, dict):
        return {k: _finite(v) for k, v in rec.items()}
    if isinstance(rec, list):
        return [_finite(v) for v in rec]
    return rec


def _inspect(lines: Iterable[CaptureLine], radians: bool, out: TextIO | None, max_line: int) -> CaptureSummary:
    summary = CaptureSummary()
    for line in lines:
        n, raw = line.number, line.data
        try:
            if raw is None:
                raise PerceptParseError(f'line of {line.length} bytes, longer than {max_line}: skipped')
            if not raw:
                raise PerceptParseError('empty line: no message')
            p = parse_percept(raw)
        except PerceptParseError as exc:
            summary.malformed.append((n, str(exc)))
            if out is not None:
                out.write(json.dumps({'line': n, 'malformed': str(exc)}) + '\n')
            continue
        summary.add(n, p)
        if out is not None:
            out.write(json.dumps(_finite(percept_record(n, p, radians)), allow_nan=False) + '\n')
    return summary


def _line_list(lines: list[int]) -> str:
    shown = ', '.join(map(str, lines[:_MAX_LINES_SHOWN]))
    return shown + (', ...' if len(lines) > _MAX_LINES_SHOWN else '')


def format_summary(path: str, s: CaptureSummary) -> str:
    """The human-readable summary of a capture (malformed lines are printed separately)."""
    out = [f'{path}: {s.messages} messages, {len(s.malformed)} malformed']
    out.append('perceptors: ' + (', '.join(f'{k} {n}' for k, n in sorted(s.kinds.items())) or 'none'))
    out.append(f'errors: {sum(map(len, s.errors.values()))}')
    out += [f'  {len(ls)}x {msg} (line {_line_list(ls)})' for msg, ls in s.errors.items()]
    out.append(f'unknown perceptors: {sum(map(len, s.unknown.values()))}')
    out += [f'  {len(ls)}x {kind} (line {_line_list(ls)})' for kind, ls in s.unknown.items()]
    return '\n'.join(out) + '\n'


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog='robocup3d inspect',
        description='Decode a capture (one server message per line) into JSON lines and a summary.',
        epilog='Exit status: 0 all lines parsed, 1 malformed lines or unreadable file, '
        '2 (--strict only) per-perceptor errors or unknown perceptors.',
    )
    ap.add_argument('file', metavar='FILE', help='capture file, one server message per line')
    ap.add_argument('--jsonl', metavar='OUT', help='write the JSON lines to OUT instead of stdout')
    ap.add_argument('--summary-only', action='store_true', help='no JSON lines; print the summary to stdout')
    ap.add_argument('--radians', action='store_true', help='write angles in radians (keys end in _rad)')
    ap.add_argument('--strict', action='store_true', help='exit 2 on per-perceptor errors or unknown perceptors')
    ap.add_argument(
        '--max-line', type=int, default=MAX_LINE, metavar='BYTES', help='longer lines are skipped as malformed'
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run ``robocup3d inspect``; returns the exit status (see the module docstring)."""
    args = _parser().parse_args(argv)
    try:
        with open(args.file, 'rb') as f:
            lines = capture_lines(f, args.max_line)
            if args.summary_only:
                summary = _inspect(lines, args.radians, None, args.max_line)
            elif args.jsonl:
                with open(args.jsonl, 'w', encoding='utf-8') as out:
                    summary = _inspect(lines, args.radians, out, args.max_line)
            else:
                summary = _inspect(lines, args.radians, sys.stdout, args.max_line)
    except OSError as exc:
        print(f'{args.file}: cannot read: {exc.strerror or exc}', file=sys.stderr)
        return EXIT_MALFORMED
    for n, err in summary.malformed[:_MAX_MALFORMED_SHOWN]:
        print(f'{args.file}:{n}: {err}', file=sys.stderr)
    if len(summary.malformed) > _MAX_MALFORMED_SHOWN:
        print(f'{args.file}: ... {len(summary.malformed) - _MAX_MALFORMED_SHOWN} more malformed lines', file=sys.stderr)
    report = format_summary(args.file, summary)
    (sys.stdout if args.summary_only else sys.stderr).write(report)
    if not summary.timed:
        print(f'{args.file}: no valid server message (none with a time)', file=sys.stderr)
        return EXIT_MALFORMED
    if summary.malformed:
        return EXIT_MALFORMED
    if args.strict and (summary.errors or summary.unknown):
        return EXIT_STRICT
    return EXIT_OK


if __name__ == '__main__':
    sys.exit(main())
