"""Sanitize a parsed percept where it enters the player: time, value ranges and joint names.

PROVIDES: the same :class:`~robocup3d_bridge.percept.Percept`, edited in place, plus a list of
:class:`Finding` (what was changed and why). State kept between cycles: the last accepted server
time and the last value of every joint.

Rules (issue #24):

* the server time is finite, within ``[0, max_time]`` and moves forward by at most ``max_time_jump``;
  otherwise the last accepted time is kept. A new timeline is accepted once ``_REANCHOR``
  messages in a row agree on it (a server whose clock really restarted);
* numbers lie within the perceptor's physical range (:class:`Limits`); a reading outside it is
  dropped, as the parser drops a non-finite one;
* a joint the robot does not have is dropped and counted; a joint the message lacks keeps its
  last value.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from robocup3d_bridge.percept import Percept, Polar, Vision

__all__ = ['LIMITS', 'Finding', 'Limits', 'PerceptSanitizer']

_REANCHOR = 5  # messages in a row that agree on a new timeline


@dataclass(frozen=True, slots=True)
class Limits:
    """Physical ranges of the perceptors (SI units, after parsing). Generous: they catch nonsense, not noise."""

    max_time: float = 1e6  # s, server time and game time
    max_time_jump: float = 10.0  # s, forward step between two messages
    joint_angle: float = 4 * math.pi  # rad
    joint_rate: float = 500.0  # rad/s
    gyro: float = 100.0  # rad/s
    accel: float = 2000.0  # m/s^2
    position: float = 200.0  # m, any field-frame coordinate
    distance: float = 500.0  # m, polar vision distance
    angle: float = 4 * math.pi  # rad, polar angles, headings, hear direction
    force: float = 1e5  # N
    contact: float = 10.0  # m, FRP centre of pressure
    score: int = 10_000
    agent_state: float = 1e6


LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Finding:
    """One change the sanitizer made: ``kind`` for counting, ``reason`` for the (throttled) log."""

    kind: str  # 'time', 'range', 'unknown_joint', 'missing_joint'
    reason: str
    detail: str = ''


def _within(values: Iterable[float], bound: float) -> bool:
    """Whether every value lies in ``[-bound, bound]`` (NaN does not); a loop, not ``all()`` of a generator: the
    sanitizer asks this of a few short tuples every cycle."""
    low = -bound
    for v in values:
        if not low <= v <= bound:
            return False
    return True


def _surely_within(values: Collection[float], bound: float) -> bool:
    """True when every value is finite and in ``[-bound, bound]``, found by C-level ``sum``, ``min`` and ``max``
    (a cycle's 22-25 joints); False says nothing (a value to look at, or none at all): check them one by one."""
    return bool(values) and math.isfinite(sum(values)) and -bound <= min(values) and max(values) <= bound


class PerceptSanitizer:
    """Checks every percept of one connection; call :meth:`reset` when the connection is new."""

    def __init__(self, joint_names: Iterable[str], limits: Limits = LIMITS) -> None:
        self.joints = frozenset(joint_names)
        self.limits = limits
        self._last_q: dict[str, float] = {}
        self._last_dq: dict[str, float] = {}
        self.reset()

    def reset(self) -> None:
        """Forget the server time (a new connection starts a new clock); joint values are kept."""
        self.time: float | None = None
        self._candidate: float | None = None
        self._agreeing = 0

    def clean(self, p: Percept) -> list[Finding]:
        """Edit ``p`` in place so that every value is in range; return what was changed."""
        found: list[Finding] = []
        self._time(p, found)
        self._joints(p, found)
        self._ranges(p, found)
        return found

    # -- time ----------------------------------------------------------------------------

    def _time(self, p: Percept, found: list[Finding]) -> None:
        lim = self.limits
        t, last = p.time, self.time
        if t is not None and not 0.0 <= t <= lim.max_time:
            found.append(Finding('time', 'server time out of range', f'{t!r}'))
            t = None
        elif t is not None and last is not None and not 0.0 < t - last <= lim.max_time_jump:
            if self._agrees(t):
                found.append(Finding('time', 'server time restarted', f'{last} -> {t}'))
            else:
                why = 'server time went back' if t <= last else 'server time jumped forward'
                found.append(Finding('time', why, f'{last} -> {t}'))
                t = None
        if t is None:
            p.time = last  # keep the last accepted time: time never goes back
            return
        self.time = t
        self._candidate, self._agreeing = None, 0

    def _agrees(self, t: float) -> bool:
        """Whether ``t`` continues a run of rejected times that now makes a new timeline."""
        c = self._candidate
        self._agreeing = self._agreeing + 1 if c is not None and 0.0 < t - c <= self.limits.max_time_jump else 1
        self._candidate = t
        return self._agreeing >= _REANCHOR

    # -- joints --------------------------------------------------------------------------

    def _joints(self, p: Percept, found: list[Finding]) -> None:
        q, dq, lim = p.joint_positions, p.joint_velocities, self.limits
        known = self.joints
        if not (q.keys() <= known and dq.keys() <= known):  # the usual case (every joint known) in C
            for name in [n for n in q if n not in known] + [n for n in dq if n not in known and n not in q]:
                found.append(Finding('unknown_joint', 'unknown joint ignored', name))
                q.pop(name, None)
                dq.pop(name, None)
        if not _surely_within(q.values(), lim.joint_angle):
            for name, v in list(q.items()):
                if not -lim.joint_angle <= v <= lim.joint_angle:
                    found.append(Finding('range', 'joint angle out of range', f'{name}={v!r}'))
                    del q[name]
        if not _surely_within(dq.values(), lim.joint_rate):
            for name, v in list(dq.items()):
                if not -lim.joint_rate <= v <= lim.joint_rate:
                    found.append(Finding('range', 'joint rate out of range', f'{name}={v!r}'))
                    del dq[name]
        if len(q) < len(self._last_q):
            missing = [n for n in self._last_q if n not in q]
            found.append(Finding('missing_joint', 'missing joints keep their last value', ' '.join(missing[:4])))
            for n in missing:
                q[n] = self._last_q[n]
        if self._last_dq and len(dq) < len(q):
            for n in q:
                if n not in dq and n in self._last_dq:
                    dq[n] = self._last_dq[n]
        self._last_q.update(q)
        self._last_dq.update(dq)

    # -- everything else -----------------------------------------------------------------

    def _ranges(self, p: Percept, found: list[Finding]) -> None:
        lim = self.limits

        def bad(what: str, value: object) -> None:
            found.append(Finding('range', f'{what} out of range', f'{value!r}'[:80]))

        if p.gyro is not None and not _within(p.gyro, lim.gyro):
            bad('gyro', p.gyro)
            p.gyro = None
        if p.accel is not None and not _within(p.accel, lim.accel):
            bad('accelerometer', p.accel)
            p.accel = None
        if p.torso_position is not None and not _within(p.torso_position, lim.position):
            bad('torso position', p.torso_position)
            p.torso_position = None
        q = p.torso_orientation
        if q is not None and not (_within(q, 1.01) and 0.9 <= math.sqrt(sum(c * c for c in q)) <= 1.1):
            bad('torso quaternion', q)
            p.torso_orientation = None
        for name, frp in list(p.forces.items()):
            if not (_within(frp.c, lim.contact) and _within(frp.f, lim.force)):
                bad(f'foot force {name}', frp)
                del p.forces[name]
        for name, (a1, a2) in list(p.universal_joints.items()):
            if not _within((a1, a2), lim.joint_angle):
                bad(f'universal joint {name}', (a1, a2))
                del p.universal_joints[name]
        for name, v in list(p.agent_state.items()):
            if not -lim.agent_state <= v <= lim.agent_state:
                bad(f'agent state {name}', v)
                del p.agent_state[name]
        g = p.game
        if g is not None:
            if g.game_time is not None and not 0.0 <= g.game_time <= lim.max_time:
                bad('game time', g.game_time)
                g.game_time = None
            for attr in ('score_left', 'score_right'):
                v = getattr(g, attr)
                if v is not None and not 0 <= v <= lim.score:
                    bad(attr.replace('_', ' '), v)
                    setattr(g, attr, None)
            if g.unum is not None and not 0 <= g.unum <= 99:
                bad('player number', g.unum)
                g.unum = None
        keep = []
        for h in p.hear:
            if (h.time is not None and not 0.0 <= h.time <= lim.max_time) or (
                h.direction is not None and not -lim.angle <= h.direction <= lim.angle
            ):
                bad('hear time or direction', (h.time, h.direction))
            else:
                keep.append(h)
        p.hear[:] = keep
        if p.vision is not None:
            self._vision(p.vision, bad)

    def _vision(self, v: Vision, bad: object) -> None:
        lim = self.limits
        far, angle = lim.distance, lim.angle

        def ok(pol: Polar) -> bool:  # comparisons written out: a See has 30-60 of these
            return 0.0 <= pol.distance <= far and -angle <= pol.azimuth <= angle and -angle <= pol.elevation <= angle

        for name, pol in list(v.landmarks.items()):
            if not ok(pol):
                bad(f'landmark {name}', pol)
                del v.landmarks[name]
        if v.ball is not None and not ok(v.ball):
            bad('ball', v.ball)
            v.ball = None
        for s in v.players:
            for part, pol in list(s.parts.items()):
                if not ok(pol):
                    bad(f'player part {part}', pol)
                    del s.parts[part]
            if s.unum is not None and not 0 <= s.unum <= 99:
                bad('seen player number', s.unum)
                s.unum = None
        lines = [ln for ln in v.lines if ok(ln[0]) and ok(ln[1])]
        if len(lines) != len(v.lines):
            bad('line', len(v.lines) - len(lines))
            v.lines[:] = lines
        if v.my_position is not None and not _within(v.my_position, lim.position):
            bad('mypos', v.my_position)
            v.my_position = None
        if v.ball_position is not None and not _within(v.ball_position, lim.position):
            bad('ballpos', v.ball_position)
            v.ball_position = None
        if v.my_orientation is not None and not -lim.angle <= v.my_orientation <= lim.angle:
            bad('myorien', v.my_orientation)
            v.my_orientation = None
