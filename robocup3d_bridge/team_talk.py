"""Team talk: one compact ``say`` message carrying the speaker's pose and the ball.

One format serves both servers. A message is 10 characters from an 89-character
alphabet (printable ASCII without space, ``( ) " ' \\``), so it passes
rcssserver3d's rules (at most 20 such characters; no trailing backslash possible)
and RCSSServerMJ's (at most 10 bytes; sent as text on the bridge's ``say`` topic).
The characters are the base-89 digits of one 64-bit word::

    bits  field
    4     unum (1-15)
    4     stamp: the say cycle (server time / 20 ms) modulo 16
    9+9   speaker x, y (team frame, 1/8 m steps over -32..32 m: both fields and their margins)
    5     speaker heading (11.25-degree steps)
    9+9   ball x, y (team frame, as above)
    4     ball age at the say (0.1 s steps; 15: no ball known)
    1     fallen: the speaker is down or getting up
    2     intent: what the speaker is doing (:data:`INTENTS`: none, on the ball, set-play taker)
    8     check: an HMAC-SHA256 of the team name and the 56 bits above, keyed by the
          team's secret (the team file's ``secret``, never sent); without a secret, a
          hash of the team name and the bits

RCSSServerMJ lets both teams hear every message and sends no team name: the check
turns away the other team's messages (and any garbled one) but 1 in 256. Without a
secret an opponent who knows our name can make the check; with one it cannot, and a
forger's guess passes 1 in 256 (the world model also drops stale and implausible reports).
Positions are in the team frame (+x towards the goal we attack), which all
teammates share. The receiver dates the message from the stamp: it was said
``(cycle_now - stamp) mod 16`` cycles ago (both servers deliver in 2 cycles).

Who speaks when: player ``unum`` speaks in the cycles where ``cycle % period ==
(unum - 1) % period`` (``period`` = team size), so teammates never talk over each
other and each one is heard every ``period`` cycles.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import zlib
from dataclasses import dataclass

__all__ = [
    'ALPHABET',
    'CYCLE',
    'INTENTS',
    'MESSAGE_LENGTH',
    'SECRET_ENV',
    'TeamMessage',
    'TeammateReport',
    'decode',
    'encode',
    'heard_at',
    'is_my_slot',
    'server_cycle',
    'to_report',
]

ALPHABET = ''.join(ch for ch in map(chr, range(0x21, 0x7F)) if ch not in '()"\'\\')
MESSAGE_LENGTH = 10
#: the environment variable a player reads its team's secret from (the team runner sets it from the team file)
SECRET_ENV = 'ROBOCUP3D_TEAM_SECRET'
CYCLE = 0.02  # s, one server cycle on both servers
_BASE = len(ALPHABET)  # 89
_INDEX = {ch: i for i, ch in enumerate(ALPHABET)}
_RANGE = 32.0  # m, |x|, |y| covered
_STEP = 0.125  # m
_NO_BALL = 15
_AGE_STEP = 0.1  # s
_COORD_BITS = 9
_FIELDS = (
    ('unum', 4),
    ('stamp', 4),
    ('x', _COORD_BITS),
    ('y', _COORD_BITS),
    ('heading', 5),
    ('bx', _COORD_BITS),
    ('by', _COORD_BITS),
    ('age', 4),
    ('fallen', 1),
    ('intent', 2),
)
_CHECK_BITS = 8
#: what a speaker says it is doing (the ``intent`` field's values, by index)
INTENTS = ('none', 'on_ball', 'taker')


@dataclass(frozen=True, slots=True)
class TeammateReport:
    """What a teammate said: its own position and the ball it saw (absolute frame, m)."""

    time: float  # s, server time when it was said
    unum: int
    position: tuple[float, float] | None = None
    ball: tuple[float, float] | None = None
    ball_time: float | None = None  # s, when the speaker last saw the ball (default: ``time``)
    fallen: bool = False  # the speaker is down or getting up
    intent: str = 'none'  # one of INTENTS


@dataclass(frozen=True, slots=True)
class TeamMessage:
    """What one message says (team frame: m, rad, s).

    ``stamp`` is the say cycle modulo 16; ``ball`` is ``None`` when the speaker knows
    no ball; ``ball_age`` is how old the speaker's ball sighting was when it spoke;
    ``intent`` is one of :data:`INTENTS`.
    """

    unum: int
    stamp: int
    x: float
    y: float
    heading: float
    ball: tuple[float, float] | None = None
    ball_age: float = 0.0
    fallen: bool = False
    intent: str = 'none'


def server_cycle(time: float) -> int:
    """The server cycle number of a server time (s)."""
    return round(time / CYCLE)


def is_my_slot(unum: int, cycle: int, period: int) -> bool:
    """Whether player ``unum`` speaks in ``cycle`` (one speaker per cycle and team)."""
    return period > 0 and cycle % period == (unum - 1) % period


def heard_at(stamp: int, now: float) -> float:
    """Server time (s) at which a message with ``stamp`` heard at ``now`` was said."""
    return now - ((server_cycle(now) - stamp) % 16) * CYCLE


def _coord(v: float) -> int:
    return max(0, min((1 << _COORD_BITS) - 1, round((v + _RANGE) / _STEP)))


def _uncoord(i: int) -> float:
    return i * _STEP - _RANGE


def _check(team: str, data: int, secret: str = '') -> int:
    """The 8-bit check: an HMAC-SHA256 keyed by the team's ``secret``, or without one a hash of the team name."""
    payload = team.encode('utf-8') + data.to_bytes(8, 'big')
    if secret:
        return hmac.new(secret.encode('utf-8'), payload, hashlib.sha256).digest()[0] & ((1 << _CHECK_BITS) - 1)
    return zlib.crc32(payload) & ((1 << _CHECK_BITS) - 1)


def encode(msg: TeamMessage, team: str, secret: str = '') -> str:
    """The 10-character ``say`` text of ``msg`` for ``team``, checked with its ``secret``.

    Raises ``ValueError`` on a bad unum or intent.
    """
    if not 1 <= msg.unum <= 15:
        raise ValueError(f'unum {msg.unum} does not fit the message (1-15)')
    if msg.intent not in INTENTS:
        raise ValueError(f'intent {msg.intent!r} is not one of {INTENTS}')
    heading = round((msg.heading % (2 * math.pi)) / (2 * math.pi) * 32) % 32
    if msg.ball is None:
        bx = by = 0
        age = _NO_BALL
    else:
        bx, by = _coord(msg.ball[0]), _coord(msg.ball[1])
        age = max(0, min(_NO_BALL - 1, round(msg.ball_age / _AGE_STEP)))
    values = {
        'unum': msg.unum,
        'stamp': msg.stamp % 16,
        'x': _coord(msg.x),
        'y': _coord(msg.y),
        'heading': heading,
        'bx': bx,
        'by': by,
        'age': age,
        'fallen': int(bool(msg.fallen)),
        'intent': INTENTS.index(msg.intent),
    }
    data = 0
    for name, bits in _FIELDS:
        data = (data << bits) | values[name]
    word = (data << _CHECK_BITS) | _check(team, data, secret)
    chars = []
    for _ in range(MESSAGE_LENGTH):
        word, digit = divmod(word, _BASE)
        chars.append(ALPHABET[digit])
    return ''.join(reversed(chars))


def decode(text: str, team: str, secret: str = '') -> TeamMessage | None:
    """The message in ``text`` if it is one of ``team``'s (keyed by its ``secret``), else ``None`` (never raises)."""
    if len(text) != MESSAGE_LENGTH:
        return None
    word = 0
    for ch in text:
        digit = _INDEX.get(ch)
        if digit is None:
            return None
        word = word * _BASE + digit
    if word >= 1 << 64:
        return None
    data = word >> _CHECK_BITS
    if word & ((1 << _CHECK_BITS) - 1) != _check(team, data, secret):
        return None
    values: dict[str, int] = {}
    for name, bits in reversed(_FIELDS):
        values[name] = data & ((1 << bits) - 1)
        data >>= bits
    if values['unum'] == 0 or values['intent'] >= len(INTENTS):
        return None
    ball = None
    if values['age'] != _NO_BALL:
        ball = (_uncoord(values['bx']), _uncoord(values['by']))
    heading = values['heading'] / 32 * 2 * math.pi
    return TeamMessage(
        unum=values['unum'],
        stamp=values['stamp'],
        x=_uncoord(values['x']),
        y=_uncoord(values['y']),
        heading=heading - 2 * math.pi if heading > math.pi else heading,
        ball=ball,
        ball_age=values['age'] * _AGE_STEP if ball is not None else 0.0,
        fallen=bool(values['fallen']),
        intent=INTENTS[values['intent']],
    )


def to_report(msg: TeamMessage, now: float, side: str) -> TeammateReport:
    """A heard message as the world model's report (absolute frame), heard at server time ``now``."""
    sign = -1.0 if side == 'right' else 1.0  # the team frame of the right team is turned by 180 degrees
    said = heard_at(msg.stamp, now)
    ball = None if msg.ball is None else (sign * msg.ball[0], sign * msg.ball[1])
    return TeammateReport(
        time=said,
        unum=msg.unum,
        position=(sign * msg.x, sign * msg.y),
        ball=ball,
        ball_time=None if msg.ball is None else said - msg.ball_age,
        fallen=msg.fallen,
        intent=msg.intent,
    )
