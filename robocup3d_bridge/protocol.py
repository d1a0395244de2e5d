"""Agent-side protocol of both servers: hello/init messages and per-cycle actions.

Everything here is validated before it is sent: an unknown effector name kills the
RCSSServerMJ server, and rcssserver3d silently drops or truncates ``say`` texts it
does not like (see ``../shared/captures/simspark/README.md``). Bad input raises
:class:`ActionError` with a message naming the value; values that are merely out of
range are clamped and reported in ``EncodedAction.warnings``. Every number a joint or beam
command sends is finite and of sane size (issue #24) by construction: each value is checked and
clamped into limits that are themselves bounded (:data:`WIRE_MAX`), so the per-cycle encoders
need no second pass over their text; :func:`check_wire_numbers` states the guarantee, and the
fuzz tests hold the encoders to it.
"""

from __future__ import annotations

import base64
import math
import re
import struct
from dataclasses import dataclass, field

from robocup3d_bridge.percept import Dialect, Percept, Side
from robocup3d_description.robots import RobotSpec

__all__ = [
    'Action',
    'ActionError',
    'EncodedAction',
    'JointCommand',
    'MujocoProtocol',
    'ServerProtocol',
    'SimSparkProtocol',
    'check_say_mujoco',
    'check_say_simspark',
    'check_team_name',
    'check_wire_numbers',
    'make_protocol',
]

_R2D = 180.0 / math.pi
_TEAM_NAME = re.compile(r'^[A-Za-z0-9_-]{1,20}$')
SIMSPARK_SAY_MAX = 20
MUJOCO_SAY_MAX = 10  # bytes, before base64
MAX_GAIN = 1e4  # RCSSServerMJ kp (N m/rad) and kd (N m s/rad); the T1's stiffest joints use ~200
MAX_RATE = 100.0  # rad/s, target joint velocity where the robot file gives no limit
MAX_TORQUE = 1000.0  # N m, feed-forward torque where the robot file gives no limit
MAX_BEAM = 50.0  # m, beyond any field of either server
WIRE_MAX = 1e6  # no number we send is larger (degrees, deg/s, gains, N m, m)
_MAX_ANGLE = 4 * math.pi  # rad, a bound on any joint limit (the robot files' are within pi)
_PACK4 = struct.Struct('4d').pack
_TAILS_KEPT = 256  # MujocoProtocol's texts after the position: all cleared when this many are kept
_WIRE_NUMBER = re.compile(r'[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf', re.IGNORECASE)


class ActionError(ValueError):
    """An action that must not be sent (unknown joint, NaN, illegal say, ...)."""


@dataclass(slots=True)
class JointCommand:
    """Joint targets for one cycle, keyed by canonical joint name.

    SimSpark uses ``velocity`` (rad/s) only. RCSSServerMJ uses ``position`` (rad),
    ``velocity`` (rad/s), ``kp``, ``kd`` and ``effort`` (feed-forward N m); joints
    missing from ``kp``/``kd`` get gain 0.
    """

    position: dict[str, float] = field(default_factory=dict)
    velocity: dict[str, float] = field(default_factory=dict)
    effort: dict[str, float] = field(default_factory=dict)
    kp: dict[str, float] = field(default_factory=dict)
    kd: dict[str, float] = field(default_factory=dict)

    def names(self) -> list[str]:
        """Every joint this command mentions (in the order they first appear in position, velocity, effort, kp,
        kd)."""
        pos = self.position.keys()
        if (
            self.velocity.keys() <= pos
            and self.effort.keys() <= pos
            and self.kp.keys() <= pos
            and self.kd.keys() <= pos
        ):
            return list(pos)  # the usual case (every joint has a position), checked in C: the same list
        seen = dict.fromkeys(self.position)
        seen.update(dict.fromkeys(self.velocity))
        seen.update(dict.fromkeys(self.effort))
        seen.update(dict.fromkeys(self.kp))
        seen.update(dict.fromkeys(self.kd))
        return list(seen)


@dataclass(slots=True)
class Action:
    """What to send in one cycle. ``beam`` is (x m, y m, theta rad) in the team frame:
    our goal at -x, we attack +x, whichever side the server gave us."""

    joints: JointCommand | None = None
    beam: tuple[float, float, float] | None = None
    say: str | bytes | None = None


@dataclass(slots=True)
class EncodedAction:
    """A ready-to-send message plus what was clamped on the way."""

    text: str
    warnings: list[str] = field(default_factory=list)


def check_team_name(name: str) -> str:
    """Validate a team name for both servers (``[A-Za-z0-9_-]``, 1-20 chars)."""
    if not isinstance(name, str) or not _TEAM_NAME.match(name):
        raise ActionError(f'team name {name!r} must be 1-20 characters from A-Z a-z 0-9 _ -')
    return name


def check_say_simspark(text: str) -> str:
    """Validate a rcssserver3d ``say`` text, or raise :class:`ActionError`.

    The server hears at most 20 printable ASCII characters without space, ``(`` or
    ``)``. Seen on the wire: a ``"`` or a trailing ``\\`` makes it drop the whole
    message, and ``'`` truncates it; we refuse those instead of losing them.
    """
    if not isinstance(text, str) or not text:
        raise ActionError('say: empty message')
    if len(text) > SIMSPARK_SAY_MAX:
        raise ActionError(f'say: {len(text)} characters, rcssserver3d allows {SIMSPARK_SAY_MAX}: {text!r}')
    for ch in text:
        if not '\x21' <= ch <= '\x7e' or ch in '()"\'':
            raise ActionError(f'say: character {ch!r} is not allowed by rcssserver3d in {text!r}')
    if text.endswith('\\'):
        raise ActionError(f'say: rcssserver3d drops a message ending in a backslash: {text!r}')
    return text


def check_say_mujoco(data: str | bytes) -> bytes:
    """Validate an RCSSServerMJ ``say`` payload (1-10 bytes), or raise :class:`ActionError`."""
    raw = data.encode('utf-8') if isinstance(data, str) else bytes(data)
    if not raw:
        raise ActionError('say: empty message')
    if len(raw) > MUJOCO_SAY_MAX:
        raise ActionError(f'say: {len(raw)} bytes, RCSSServerMJ allows {MUJOCO_SAY_MAX}: {raw!r}')
    return raw


def check_wire_numbers(text: str) -> str:
    """Raise :class:`ActionError` unless every number in ``text`` is finite and at most ``WIRE_MAX``.

    For joint and beam commands only: a say text may hold any characters.
    """
    for tok in _WIRE_NUMBER.findall(text):
        v = float(tok)
        if not -WIRE_MAX <= v <= WIRE_MAX:  # also false for NaN
            raise ActionError(f'refusing to send {tok!r} in {text[:80]!r}')
    return text


def _finite(value: float, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ActionError(f'{what}: {value!r} is not a number') from None
    if not math.isfinite(v):
        raise ActionError(f'{what}: {value!r} is not finite')
    return v


def _clamp(v: float, lo: float, hi: float, what: str, warnings: list[str]) -> float:
    if v < lo:
        warnings.append(f'{what} {v:.4g} below {lo:.4g}, clamped')
        return lo
    if v > hi:
        warnings.append(f'{what} {v:.4g} above {hi:.4g}, clamped')
        return hi
    return v


def _fmt(v: float) -> str:
    s = f'{v:.4f}'.rstrip('0').rstrip('.')
    return '0' if s in ('-0', '') else s


class ServerProtocol:
    """Common interface; use :func:`make_protocol`."""

    dialect: Dialect

    def __init__(self, robot: RobotSpec, team: str, unum: int) -> None:
        self.robot = robot
        self.team = check_team_name(team)
        if not isinstance(unum, int) or not 0 <= unum <= 99:
            raise ActionError(f'player number must be 0-99, got {unum!r}')
        self.unum = unum
        self.side = Side.UNKNOWN
        #: per joint: effector, lower, upper (rad), speed (rad/s), torque (N m), each bounded so that the
        #: wire stays within WIRE_MAX whatever the robot file says (an unlimited joint gets MAX_RATE, ...)
        self._limits = {
            j.name: (
                j.effector,
                max(j.lower, -_MAX_ANGLE),
                min(j.upper, _MAX_ANGLE),
                min(j.max_speed, MAX_RATE),
                min(j.max_torque, MAX_TORQUE),
            )
            for j in robot.joints
        }

    def hello(self) -> list[str]:
        """Messages to send as soon as the TCP connection is up."""
        raise NotImplementedError

    def after_first_message(self) -> list[str]:
        """Messages to send in reply to the server's first message."""
        return []

    def observe(self, percept: Percept) -> None:
        """Learn our side from the game state (SimSpark: once after init; MJ: ``tl``/``tr``)."""
        g = percept.game
        if g is None:
            return
        if g.side is not None and g.side is not Side.UNKNOWN:
            self.side = g.side
        elif g.team_left == self.team:
            self.side = Side.LEFT
        elif g.team_right == self.team:
            self.side = Side.RIGHT

    #: ``(syn)`` leads the message instead of ending it (rcssserver3d: see :class:`SimSparkProtocol`)
    syn_first = False

    def encode(self, action: Action) -> EncodedAction:
        """Validate ``action`` and render it as one message with ``(syn)`` (last, or first: ``syn_first``)."""
        warnings: list[str] = []
        parts: list[str] = ['(syn)'] if self.syn_first else []
        if action.joints is not None:
            parts.append(self._encode_joints(action.joints, warnings))  # in range by construction
        if action.beam is not None:
            parts.append(check_wire_numbers(self._encode_beam(action.beam)))  # rare: checked again
        if action.say is not None:
            parts.append(self._encode_say(action.say))
        if not self.syn_first:
            parts.append('(syn)')
        return EncodedAction(''.join(parts), warnings)

    def _limit(self, name: str) -> tuple[str, float, float, float, float]:
        """``name``'s effector and bounded limits (lower, upper, speed, torque); an unknown joint is refused."""
        lim = self._limits.get(name)
        if lim is None:
            raise ActionError(f'joint {name!r} does not exist on {self.robot.name}')
        return lim

    def _beam_values(self, beam: tuple[float, float, float]) -> tuple[float, float, float]:
        if len(beam) != 3:
            raise ActionError(f'beam needs (x, y, theta), got {beam!r}')
        x, y, th = (_finite(v, 'beam') for v in beam)
        if not (abs(x) <= MAX_BEAM and abs(y) <= MAX_BEAM and abs(th) <= 4 * math.pi):
            raise ActionError(f'beam {beam!r} is off any field (|x|, |y| <= {MAX_BEAM} m, |theta| <= 4 pi)')
        return x, y, th

    def _encode_joints(self, cmd: JointCommand, warnings: list[str]) -> str:
        raise NotImplementedError

    def _encode_beam(self, beam: tuple[float, float, float]) -> str:
        raise NotImplementedError

    def _encode_say(self, say: str | bytes) -> str:
        raise NotImplementedError


class SimSparkProtocol(ServerProtocol):
    """rcssserver3d: scene, then init after the first message; hinge velocities in rad/s.

    ``(syn)`` leads each reply: in sync mode with 7 or 11 of our players, 0.7.3 stopped for 10 s
    every 12-14 s with it at the end (the players reconnected; UT Austin Villa's agents, waiting
    60 s, gave up), and ran without a stall with it first.
    """

    dialect = Dialect.SIMSPARK
    syn_first = True

    def hello(self) -> list[str]:
        return [f'(scene {self.robot.model} {self.robot.robot_type})']

    def after_first_message(self) -> list[str]:
        # An init sent together with the scene is silently ignored by the server.
        return [f'(init (unum {self.unum})(teamname {self.team}))']

    def _encode_joints(self, cmd: JointCommand, warnings: list[str]) -> str:
        if cmd.position or cmd.effort or cmd.kp or cmd.kd:
            raise ActionError('rcssserver3d takes joint velocities only (position/gains/effort were given)')
        out = []
        for name, v in cmd.velocity.items():
            effector, _, _, vmax, _ = self._limit(name)
            v = _finite(v, name)
            if not -vmax <= v <= vmax:  # rare (the controller caps them): its warning's text made only then
                v = _clamp(v, -vmax, vmax, f'{name} velocity', warnings)
            out.append(f'({effector} {_fmt(v)})')  # fixed-point: no exponent notation for SimSpark
        return ''.join(out)

    def _encode_beam(self, beam: tuple[float, float, float]) -> str:
        # The server itself mirrors a right-team beam, so the team frame goes out as is.
        x, y, th = self._beam_values(beam)
        return f'(beam {_fmt(x)} {_fmt(y)} {_fmt(th * _R2D)})'

    def _encode_say(self, say: str | bytes) -> str:
        text = say.decode('ascii', 'replace') if isinstance(say, bytes) else say
        return f'(say {check_say_simspark(text)})'


class MujocoProtocol(ServerProtocol):
    """RCSSServerMJ: one init; ``(<eff> q dq kp kd tau)`` per joint, degrees on the wire."""

    dialect = Dialect.MUJOCO

    def __init__(self, robot: RobotSpec, team: str, unum: int) -> None:
        super().__init__(robot, team, unum)
        #: a joint's text after its position, by the bytes of (velocity, kp, kd, torque): a cycle's joints share a
        #: few sets of these (a standing or walking robot sends velocity 0, torque 0 and a few gains)
        self._tails: dict[bytes, str] = {}

    def hello(self) -> list[str]:
        return [f'(init {self.robot.model} {self.team} {self.unum})']

    def _encode_joints(self, cmd: JointCommand, warnings: list[str]) -> str:
        # One cycle's 22-23 joints: the names' limits looked up once each, the values read and tested without
        # calls beyond float(), the usual case (finite, gains in range, nothing to clamp) in one test
        out = []
        append = out.append
        pos, vel, eff, kp, kd = cmd.position, cmd.velocity, cmd.effort, cmd.kp, cmd.kd
        limits, tails, pack = self._limits, self._tails, _PACK4
        for name in cmd.names():
            lim = limits.get(name)
            if lim is None:
                self._limit(name)  # raises ActionError
            effector, lo, hi, vmax, tmax = lim
            try:
                q, dq, p, d, tau = (
                    float(pos.get(name, 0.0)),
                    float(vel.get(name, 0.0)),
                    float(kp.get(name, 0.0)),
                    float(kd.get(name, 0.0)),
                    float(eff.get(name, 0.0)),
                )
            except (TypeError, ValueError):
                raise ActionError(f'{name}: joint command values must be numbers') from None
            if not (
                0.0 <= p <= MAX_GAIN
                and 0.0 <= d <= MAX_GAIN
                and -vmax <= dq <= vmax
                and lo <= q <= hi
                and -tmax <= tau <= tmax
            ):  # also true for a NaN; an infinite value is out of every range
                q, dq, p, d, tau = self._checked(name, q, dq, p, d, tau, lim, warnings)
            # the text after the position: '%.6g' of the same four floats is the same text, so it is made once for
            # each set of their exact values (the bytes tell -0.0 from 0.0, which compare equal but print apart)
            key = pack(dq, p, d, tau)
            tail = tails.get(key)
            if tail is None:
                if len(tails) >= _TAILS_KEPT:
                    tails.clear()
                tail = tails[key] = ' %.6g %.6g %.6g %.6g)' % (dq * _R2D, p, d, tau)  # noqa: UP031
            append('(%s %.6g' % (effector, q * _R2D) + tail)  # noqa: UP031
        return ''.join(out)

    @staticmethod
    def _checked(
        name: str,
        q: float,
        dq: float,
        p: float,
        d: float,
        tau: float,
        lim: tuple[str, float, float, float, float],
        warnings: list[str],
    ) -> tuple[float, float, float, float, float]:
        """One joint's values that the usual case's test did not pass: refused (not finite, a negative gain) or
        clamped into range with a warning, in the order :meth:`_encode_joints` always checked them."""
        _, lo, hi, vmax, tmax = lim
        if not math.isfinite(q + dq + p + d + tau):
            raise ActionError(f'{name}: a value is not finite: q={q} dq={dq} kp={p} kd={d} tau={tau}')
        if not (0.0 <= p <= MAX_GAIN and 0.0 <= d <= MAX_GAIN):
            if p < 0 or d < 0:
                raise ActionError(f'{name}: gains must be >= 0, got kp={p} kd={d}')
            p, d = (_clamp(g, 0.0, MAX_GAIN, f'{name} {k}', warnings) for g, k in ((p, 'kp'), (d, 'kd')))
        if not -vmax <= dq <= vmax:
            dq = _clamp(dq, -vmax, vmax, f'{name} velocity', warnings)
        if not lo <= q <= hi:
            q = _clamp(q, lo, hi, f'{name} position', warnings)
        if not -tmax <= tau <= tmax:
            tau = _clamp(tau, -tmax, tmax, f'{name} torque', warnings)
        return q, dq, p, d, tau

    def _encode_beam(self, beam: tuple[float, float, float]) -> str:
        # The server puts a beam at (-|x|, y, th) for the left team and at (|x|, y, th + pi)
        # for the right team: a reflection in x only. Send -y on the right so that the
        # team frame is the field rotated by 180 degrees, as on rcssserver3d.
        x, y, th = self._beam_values(beam)
        if x > 0:
            raise ActionError(f'beam x={x} is in the opponent half; RCSSServerMJ beams into our own half only')
        if self.side is Side.RIGHT:
            y = -y
        return f'(beam {_fmt(x)} {_fmt(y)} {_fmt(th * _R2D)})'

    def _encode_say(self, say: str | bytes) -> str:
        raw = check_say_mujoco(say)
        return f'(SPK say 100 {base64.b64encode(raw).decode("ascii")})'


def make_protocol(robot: RobotSpec, team: str, unum: int) -> ServerProtocol:
    """The protocol for ``robot``'s server."""
    if robot.server == 'simspark':
        return SimSparkProtocol(robot, team, unum)
    return MujocoProtocol(robot, team, unum)
