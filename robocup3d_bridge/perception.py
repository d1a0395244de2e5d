"""Turn one server message into a :class:`~robocup3d_bridge.percept.Percept`.

Handles both dialects (rcssserver3d and RCSSServerMJ) with one table of perceptor
readers. A malformed perceptor is recorded in ``Percept.errors`` and skipped; an
unknown one is kept in ``Percept.unknown``; only a message that is not an
S-expression at all raises :class:`PerceptParseError`.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable

from robocup3d_bridge.percept import (
    Dialect,
    ForceResistance,
    GameStateInfo,
    Hear,
    Percept,
    PlayerSighting,
    Polar,
    Side,
    Vision,
)
from robocup3d_bridge.sexp import SExpParseError, parse_sexp, to_sexp

__all__ = ['KNOWN_PERCEPTORS', 'PerceptParseError', 'parse_percept']

_D2R = math.pi / 180.0


class PerceptParseError(ValueError):
    """The message is not a well-formed S-expression (e.g. truncated)."""


def _f(tok: object) -> float:
    """Parse a finite float atom; lists and NaN/inf are errors."""
    if not isinstance(tok, str):
        raise ValueError(f'expected a number, got {to_sexp(tok)}')
    v = float(tok)
    if not math.isfinite(v):
        raise ValueError(f'non-finite value {tok}')
    return v


def _fields(expr: list) -> dict[str, list]:
    """Map ``(key v...)`` children of ``expr`` to their value lists."""
    out: dict[str, list] = {}
    for child in expr[1:]:
        if isinstance(child, list) and child and isinstance(child[0], str):
            out[child[0]] = child[1:]
    return out


def _vec3(vals: list) -> tuple[float, float, float]:
    if len(vals) < 3:
        raise ValueError(f'expected 3 numbers, got {len(vals)}')
    try:
        x, y, z = float(vals[0]), float(vals[1]), float(vals[2])
    except TypeError:  # a nested list where a number belongs
        raise ValueError(f'expected numbers, got {to_sexp(vals[:3])}') from None
    if not math.isfinite(x + y + z):  # one test: NaN and inf propagate through the sum
        raise ValueError(f'non-finite value in {" ".join(map(str, vals[:3]))}')
    return (x, y, z)


def _polar(vals: list) -> Polar:
    d, az, el = _vec3(vals)
    return Polar(d, az * _D2R, el * _D2R)


def _pol(expr: list) -> Polar:
    """``_polar(expr[1:])`` of a ``(pol d az el)`` expression: the usual one (three finite numbers) read without
    slicing it and without the checks' calls (a See has 30-60); anything else goes through :func:`_polar`."""
    if len(expr) == 4:
        try:
            d, az, el = float(expr[1]), float(expr[2]), float(expr[3])
        except (TypeError, ValueError):  # a nested list or a word where a number belongs: _polar says so
            pass
        else:
            if math.isfinite(d + az + el):
                return Polar(d, az * _D2R, el * _D2R)
    return _polar(expr[1:])


def _time(expr: list, p: Percept) -> None:
    p.time = _f(_fields(expr)['now'][0])


def _gs(expr: list, p: Percept) -> None:
    g = p.game if p.game is not None else GameStateInfo()
    for key, vals in _fields(expr).items():
        if not vals:
            continue
        v = vals[0]
        if not isinstance(v, str):
            p.errors.append(f'GS/{key}: expected an atom, got {to_sexp(v)[:40]}')
            continue
        if key == 'pm':
            g.play_mode = v
        elif key == 't':
            g.game_time = _f(v)
        elif key == 'sl':
            g.score_left = int(v)
        elif key == 'sr':
            g.score_right = int(v)
        elif key == 'unum':
            g.unum = int(v)
        elif key == 'team':
            g.side = Side.LEFT if v.lower() == 'left' else Side.RIGHT if v.lower() == 'right' else Side.UNKNOWN
        elif key == 'tl':
            g.team_left = v
        elif key == 'tr':
            g.team_right = v
    p.game = g


def _gyr(expr: list, p: Percept) -> None:
    x, y, z = _vec3(_fields(expr)['rt'])
    p.gyro = (x * _D2R, y * _D2R, z * _D2R)


def _acc(expr: list, p: Percept) -> None:
    p.accel = _vec3(_fields(expr)['a'])


def _hj(expr: list, p: Percept) -> None:
    # Hot path (22-24 per message): read positions directly instead of via _fields.
    name = ax = vx = None
    for child in expr[1:]:
        if isinstance(child, list) and len(child) >= 2:
            key = child[0]
            if key == 'n':
                name = child[1]
            elif key == 'ax':
                ax = child[1]
            elif key == 'vx':
                vx = child[1]
    if not isinstance(name, str) or ax is None:
        raise ValueError('HJ without name or angle')
    if name.startswith('q_'):
        name = name[2:]
    p.joint_positions[name] = _f(ax) * _D2R
    if vx is not None:
        p.joint_velocities[name] = _f(vx) * _D2R


def _uj(expr: list, p: Percept) -> None:
    fl = _fields(expr)
    name = ' '.join(fl['n'])
    p.universal_joints[name] = (_f(fl['ax1'][0]) * _D2R, _f(fl['ax2'][0]) * _D2R)


def _tch(expr: list, p: Percept) -> None:
    # Both ``(TCH n bumper val 1)`` (seeds, MJ) and ``(TCH (n bumper) (val 1))``.
    flat: list[str] = []
    for item in expr[1:]:
        flat.extend(item if isinstance(item, list) else [item])
    kv = dict(zip(flat[0::2], flat[1::2], strict=False))
    p.touch[kv['n']] = kv['val'] not in ('0', 'false', 'False')


def _frp(expr: list, p: Percept) -> None:
    fl = _fields(expr)
    p.forces[fl['n'][0]] = ForceResistance(_vec3(fl['c']), _vec3(fl['f']))


def _agent_state(expr: list, p: Percept) -> None:
    for key, vals in _fields(expr).items():
        if vals:
            p.agent_state[key] = _f(vals[0])


def _quat(expr: list, p: Percept) -> None:
    q = _fields(expr)['q']
    if len(q) < 4:
        raise ValueError('quat needs 4 numbers')
    p.torso_orientation = (_f(q[0]), _f(q[1]), _f(q[2]), _f(q[3]))


def _pos(expr: list, p: Percept) -> None:
    p.torso_position = _vec3(_fields(expr)['p'])


def _player(expr: list, errors: list[str]) -> PlayerSighting:
    s = PlayerSighting(team=None, unum=None)
    for child in expr[1:]:
        if not isinstance(child, list) or not child:
            continue
        key = child[0]
        try:
            if key == 'team':
                if not isinstance(child[1], str):
                    raise ValueError(f'team must be a name, got {to_sexp(child[1])[:40]}')
                s.team = child[1]
            elif key == 'id':
                s.unum = int(child[1])
            elif len(child) == 2 and isinstance(child[1], list) and child[1][:1] == ['pol']:
                s.parts[key] = _pol(child[1])
            elif key == 'pol':  # old servers: one vector for the whole player
                s.parts['body'] = _polar(child[1:])
        except (ValueError, IndexError, TypeError) as exc:
            errors.append(f'See/P/{key}: {exc}')
    return s


def _see(expr: list, p: Percept) -> None:
    v = Vision()
    errors = p.errors
    for child in expr[1:]:
        if not isinstance(child, list) or not child or not isinstance(child[0], str):
            errors.append(f'See: unexpected item {to_sexp(child)}')
            continue
        key = child[0]
        try:
            if key == 'P':
                v.players.append(_player(child, errors))
            elif key == 'L':
                ends = [c for c in child[1:] if isinstance(c, list) and c[:1] == ['pol']]
                if len(ends) != 2:
                    raise ValueError('a line needs two pol vectors')
                v.lines.append((_pol(ends[0]), _pol(ends[1])))
            elif key == 'mypos':
                v.my_position = _vec3(child[1:])
            elif key == 'myorien':
                v.my_orientation = _f(child[1]) * _D2R
            elif key == 'ballpos':
                v.ball_position = _vec3(child[1:])
            else:
                pol = child[1] if len(child) > 1 else None
                if not isinstance(pol, list) or pol[:1] != ['pol']:
                    raise ValueError('expected (pol d az el)')
                if key == 'B':
                    v.ball = _pol(pol)
                else:
                    v.landmarks[key] = _pol(pol)
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            errors.append(f'See/{key}: {exc}')
    p.vision = v


def _hear(expr: list, p: Percept) -> None:
    # (hear [team] time self|direction message)
    args = expr[1:]
    if any(isinstance(a, list) for a in args) or len(args) not in (3, 4):
        raise ValueError(f'unexpected hear form {to_sexp(expr)}')
    team = args[0] if len(args) == 4 else None
    t, who, msg = args[-3:]
    is_self = who == 'self'
    p.hear.append(Hear(msg.encode('ascii', 'replace'), team, _f(t), None if is_self else _f(who) * _D2R, is_self))


def _mic(expr: list, p: Percept) -> None:
    # (MIC <name> (<azimuth_deg> <base64>)...)
    for item in expr[2:]:
        if not isinstance(item, list) or len(item) != 2:
            raise ValueError(f'unexpected MIC item {to_sexp(item)}')
        try:
            data = base64.b64decode(item[1], validate=True)
        except (binascii.Error, TypeError) as exc:
            raise ValueError(f'bad base64 in MIC: {exc}') from None
        p.hear.append(Hear(data, None, p.game.game_time if p.game else None, _f(item[0]) * _D2R, False))


_READERS: dict[str, Callable[[list, Percept], None]] = {
    'time': _time,
    'GS': _gs,
    'GYR': _gyr,
    'ACC': _acc,
    'HJ': _hj,
    'UJ': _uj,
    'TCH': _tch,
    'FRP': _frp,
    'AgentState': _agent_state,
    'See': _see,
    'hear': _hear,
    'MIC': _mic,
    'quat': _quat,
    'pos': _pos,
}

KNOWN_PERCEPTORS = frozenset(_READERS)


# Hinge joints are most of every message: one C-level regex pass takes them out
# before the generic reader sees the rest. Anything unusual falls through to ``_hj``.
_HJ_FAST = re.compile(r'\(HJ\s*\(n\s+([^\s()]+)\)\s*\(ax\s+([^\s()]+)\)\s*(?:\(vx\s+([^\s()]+)\)\s*)?\)')
# RCSSServerMJ's own spelling, ``(HJ (n q_x)(ax a)(vx v))``: a regex without the optional parts splits a T1's message
# in under half the time. Where it matches, ``_HJ_FAST`` matches the same text with the same groups, and ``_HJ_FAST``
# matches only where ``(HJ`` starts: so when no ``(HJ`` is left outside its matches, both split alike.
_HJ_MJ = re.compile(r'\(HJ \(n ([^\s()]+)\)\(ax ([^\s()]+)\)\(vx ([^\s()]+)\)\)')


# The last message's joint names as on the wire and without their ``q_``: a robot's messages name the same joints
# in the same order every cycle (one tuple, read and replaced whole: players in other threads share it)
_last_names: tuple[list[str], list[str]] = ([], [])


def _fast_joints(text: str, p: Percept) -> str:
    global _last_names  # noqa: PLW0603
    pieces = None
    if ')(ax ' in text:  # RCSSServerMJ's spacing (rcssserver3d writes ``) (ax``)
        pieces = _HJ_MJ.split(text)
        rest = ''.join(pieces[0::4])
        if '(HJ' in rest:  # an HJ in another form: the general regex, as ever
            pieces = None
    if pieces is None:
        pieces = _HJ_FAST.split(text)
        rest = None
    if len(pieces) == 1:
        return text
    wire = pieces[1::4]
    last_wire, names = _last_names
    if wire != last_wire:
        names = [n[2:] if n.startswith('q_') else n for n in wire]
        _last_names = (wire, names)
    axs, vxs = pieces[2::4], pieces[3::4]
    try:  # the common case in one go: every value a finite number
        angles = [float(a) * _D2R for a in axs]
        rates = [float(v) * _D2R for v in vxs if v is not None]
        ok = math.isfinite(sum(angles) + sum(rates))
    except ValueError:
        ok = False
    pos, vel = p.joint_positions, p.joint_velocities
    if ok:
        pos.update(zip(names, angles, strict=True))
        if len(rates) == len(names):
            vel.update(zip(names, rates, strict=True))
        else:  # velocities on some joints only (not seen on the wire, but allowed)
            vel.update((n, float(v) * _D2R) for n, v in zip(names, vxs, strict=True) if v is not None)
    else:  # at least one bad value: go joint by joint and report which
        for name, ax, vx in zip(names, axs, vxs, strict=True):
            try:
                pos[name] = _f(ax) * _D2R
                if vx is not None:
                    vel[name] = _f(vx) * _D2R
            except ValueError as exc:
                pos.pop(name, None)
                p.errors.append(f'HJ {name}: {exc}')
    p.kinds.extend(['HJ'] * ((len(pieces) - 1) // 4))
    return ''.join(pieces[0::4]) if rest is None else rest


def parse_percept(message: str | bytes, dialect: Dialect | str | None = None) -> Percept:
    """Parse one server message (either dialect) into a :class:`Percept`.

    Args:
        message: the payload, without its length prefix.
        dialect: the server it came from. With ``simspark``, the gyro and accelerometer
            are turned from rcssserver3d's torso frame (x right, y forward, z up) into
            REP-103 (x forward, y left, z up). ``None`` keeps them as on the wire
            (RCSSServerMJ already uses REP-103 axes).

    Raises:
        PerceptParseError: the message is not a well-formed S-expression.
    """
    if isinstance(message, (bytes, bytearray, memoryview)):
        message = bytes(message).decode('ascii', 'replace')
    p = Percept()
    try:
        exprs = parse_sexp(_fast_joints(message, p))
    except SExpParseError as exc:
        raise PerceptParseError(str(exc)) from None
    kinds = p.kinds
    readers = _READERS
    for expr in exprs:
        if not isinstance(expr, list) or not expr or not isinstance(expr[0], str):
            p.errors.append(f'unexpected top-level item {to_sexp(expr)[:60]}')
            continue
        kind = expr[0]
        kinds.append(kind)
        reader = readers.get(kind)
        if reader is None:
            p.unknown.append(to_sexp(expr))
            continue
        try:
            reader(expr, p)
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            p.errors.append(f'{kind}: {exc!s} in {to_sexp(expr)[:80]}')
    if dialect == Dialect.SIMSPARK:
        if p.gyro is not None:
            p.gyro = (p.gyro[1], -p.gyro[0], p.gyro[2])
        if p.accel is not None:
            p.accel = (p.accel[1], -p.accel[0], p.accel[2])
    return p
