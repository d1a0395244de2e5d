"""The per-player server loop: connect, init, perceive, act once per cycle, reconnect.

Pure Python (no rclpy): the bridge node runs :meth:`AgentLoop.run` in a thread and
plugs ROS in through two callbacks. Timing contract:

* every server message is parsed and handed to ``on_percept``;
* the reply for that cycle is sent as soon as joint targets for it arrive
  (:meth:`submit_joints`), or at ``reply_timeout`` after the percept at the latest,
  so the server always gets exactly one action message per cycle, ending in ``(syn)``;
* beam and say requests ride along with the next reply;
* a server that sends nothing for ``silence_timeout`` seconds is treated as gone: the link
  is closed and opened again (a hung server, or one that never took us on). Before the first
  message of a connection, and while the game is before its kick-off, the limit is
  ``join_timeout``: players are still joining then, and RCSSServerMJ stops the whole
  simulation while it adds each robot (it recompiles its model); on a loaded machine that
  took longer than 10 s, and a player that gave up and joined again made the server add it
  once more, which stalled everyone again: no match started. Each time in a row that this wait
  lapses with nothing heard, the next is twice as long (up to 8 times ``join_timeout``): 14 T1
  joining at load 12 kept the server busy for more than 30 s a join, and the players' rejoins at
  30 s each kept it so. ``join_timeout`` is 120 s by default (30 before session 42: 14 T1 joining at load 8 got
  their first message 57 s after connecting, and the players that had given up at 30 s joined again as duplicates
  that the server refused, so that no match started in 3 tries);
* nothing the server sends ends the loop: an error in parsing, in a callback or in encoding
  is contained in its cycle, counted by kind in :attr:`LoopStats.errors` and logged with its
  reason, throttled per reason; the next cycle is answered as usual. Values are sanitized
  where they enter (:class:`~robocup3d_bridge.sanitize.PerceptSanitizer`), and a message
  the link dropped for its size still gets its cycle's reply;
* with a ``join_gate`` (rcssserver3d), the agent holds it from before it connects until
  the server has taken its init (it reports our side) and a few cycles more, so that agents
  of this host join one at a time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from robocup3d_bridge.join_gate import JoinGate
from robocup3d_bridge.link import LinkDown, ServerLink
from robocup3d_bridge.percept import Dialect, Percept
from robocup3d_bridge.perception import PerceptParseError, parse_percept
from robocup3d_bridge.protocol import Action, JointCommand, ServerProtocol
from robocup3d_bridge.sanitize import PerceptSanitizer
from robocup3d_bridge.throttle import ReasonThrottle

#: the play mode (both servers) while players join; the server may stall for seconds as each one does
BEFORE_KICKOFF = 'BeforeKickOff'

__all__ = ['AgentLoop', 'LoopStats']

_log = logging.getLogger('robocup3d.bridge')

# The join gate is held this many cycles after the server reported our side (the init is
# through), and at most _JOIN_MAX cycles after the first message when it never does.
_JOIN_SETTLE = 10
_JOIN_MAX = 150

# A joint command older than this many cycles is not repeated on SimSpark (where a
# velocity stays in force): the joints are stopped instead.
_STALE_CYCLES = 5


@dataclass
class LoopStats:
    """Counters for diagnostics and benchmarks."""

    cycles: int = 0
    replies_on_time: int = 0  # sent when the joint command arrived
    replies_fallback: int = 0  # sent at the deadline without a fresh command
    parse_errors: int = 0
    perceptor_errors: int = 0
    unknown_perceptors: int = 0
    connects: int = 0
    action_errors: int = 0
    dropped_messages: int = 0  # refused unread for their size
    errors: Counter = field(default_factory=Counter)  # kind -> count (every contained error and sanitizer change)
    latencies: deque = field(default_factory=lambda: deque(maxlen=3000))  # s, percept in -> action out


class AgentLoop:
    """Drive one player's connection to a server."""

    def __init__(
        self,
        protocol: ServerProtocol,
        link: ServerLink,
        on_percept: Callable[[Percept, str], None],
        on_action: Callable[[str], None] | None = None,
        reply_timeout: float = 0.012,
        reconnect_delay: float = 1.0,
        silence_timeout: float = 10.0,
        join_timeout: float = 120.0,
        join_gate: JoinGate | None = None,
        log: logging.Logger = _log,
    ) -> None:
        self.protocol = protocol
        self.link = link
        self.on_percept = on_percept
        self.on_action = on_action
        self.reply_timeout = reply_timeout
        self.reconnect_delay = reconnect_delay
        self.silence_timeout = silence_timeout  # s; 0 waits for ever
        # s before the first message of a connection: a server admitting several players (RCSSServerMJ
        # spawns them in turn, slowly on a busy machine) may keep a new one waiting for longer
        self.join_timeout = join_timeout
        self.join_gate = join_gate
        self.log = log
        self.stats = LoopStats()
        self._lock = threading.Lock()
        self._pending = False  # a cycle awaits its reply
        self._received_at = 0.0
        self._deadline = 0.0
        self._last_joints: JointCommand | None = None
        self._last_joints_cycle = -1
        self._beam: tuple[float, float, float] | None = None
        self._say: str | bytes | None = None
        self._first = True
        self._before_kickoff = True
        self._lapsed_joins = 0  # join waits in a row that lapsed with nothing heard (each next one waits longer)
        self._connected_at = 0.0
        self._join_cycles = self._side_cycles = 0  # server messages while holding the join gate
        self._heard_at = 0.0  # last server message (monotonic)
        self._errors_lock = threading.Lock()
        self._throttle = ReasonThrottle(1.0)
        self.sanitizer = PerceptSanitizer(protocol.robot.joint_names)
        self.last_percept: Percept | None = None

    # -- errors ---------------------------------------------------------------------------

    def report(self, kind: str, reason: str, detail: str = '', error: bool = False) -> None:
        """Count one contained problem under ``kind`` and log it, throttled per ``reason`` (any thread)."""
        with self._errors_lock:
            self.stats.errors[kind] += 1
            show, held = self._throttle.allow(reason)
        if show:
            more = f' ({held} more since the last report)' if held else ''
            (self.log.error if error else self.log.warning)('%s%s%s', reason, f': {detail}' if detail else '', more)

    # -- requests from the node (any thread) -------------------------------------

    def submit_joints(self, cmd: JointCommand) -> None:
        """Joint targets for the current cycle: sends the reply now if one is due."""
        with self._lock:
            self._last_joints = cmd
            self._last_joints_cycle = self.stats.cycles
            if self._pending:
                self._reply(on_time=True)

    def request_beam(self, x: float, y: float, theta: float) -> None:
        """Beam with the next reply (team frame: x, y in m, theta in rad). Validated now."""
        self.protocol.encode(Action(beam=(x, y, theta)))  # raises ActionError
        with self._lock:
            self._beam = (x, y, theta)

    def request_say(self, message: str | bytes) -> None:
        """Say with the next reply. Validated now against the server's rules."""
        self.protocol.encode(Action(say=message))  # raises ActionError
        with self._lock:
            self._say = message

    # -- the loop ------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Serve until ``stop`` is set, reconnecting whenever the server goes away."""
        try:
            while not stop.is_set():
                try:
                    self._connect(stop)
                    self._serve(stop)
                except Exception as exc:  # noqa: BLE001 - LinkDown, or a bug outside any one cycle: reconnect
                    self._open_gate()
                    self.link.close()
                    with self._lock:
                        self._pending = False
                    if stop.is_set():
                        break
                    if isinstance(exc, LinkDown):
                        reason = f'server link down ({exc})'
                    else:
                        reason = f'server link failed ({type(exc).__name__}: {exc})'
                        self.report('link', 'server link failed outside a cycle', repr(exc), error=True)
                    self.log.warning('%s; reconnecting in %.1f s', reason, self.reconnect_delay)
                    stop.wait(self.reconnect_delay)
        finally:
            self._open_gate()
            self.link.close()

    def _connect(self, stop: threading.Event) -> None:
        gate = self.join_gate
        if gate is not None and not gate.acquire(stop) and not stop.is_set():
            self.log.warning('joining without the join gate %s (waited %.1f s)', gate.path, gate.waited)
        self.link.connect()
        self.stats.connects += 1
        self._first = True
        self._before_kickoff = True  # until a game state says otherwise
        self._connected_at = self._heard_at = time.monotonic()
        self._join_cycles = self._side_cycles = 0
        self.sanitizer.reset()
        self.protocol.side = self.protocol.side.UNKNOWN
        for msg in self.protocol.hello():
            self.link.send(msg)
        self.log.info(
            'connected to %s:%d as %s #%d (%s), attempt %d',
            self.link.host,
            self.link.port,
            self.protocol.team,
            self.protocol.unum,
            self.protocol.robot.name,
            self.stats.connects,
        )

    def _serve(self, stop: threading.Event) -> None:
        link = self.link
        while not stop.is_set():
            with self._lock:
                timeout = max(0.0, self._deadline - time.monotonic()) if self._pending else 0.5
            messages = link.receive(timeout)
            if not messages:
                now = time.monotonic()
                with self._lock:
                    if self._pending and now >= self._deadline:
                        self._reply(on_time=False)
                joining = self._first or self._before_kickoff
                limit = self.join_timeout * 2 ** min(self._lapsed_joins, 3) if joining else self.silence_timeout
                if self.silence_timeout > 0 and now - self._heard_at > limit:
                    self._lapsed_joins += joining
                    link.close()
                    since = (
                        ' since connecting' if self._first else ' before the kick-off' if self._before_kickoff else ''
                    )
                    raise LinkDown(f'no message from the server for {now - self._heard_at:.1f} s{since}')
                continue
            for raw in messages:
                try:
                    self._handle(raw)
                except LinkDown:
                    raise
                except Exception as exc:  # noqa: BLE001 - contained: this cycle is lost, the next is served
                    name = type(exc).__name__
                    self.report(f'cycle:{name}', f'cycle failed ({name})', repr(exc)[:200], error=True)
                    with self._lock:
                        if self._pending:
                            self._reply(on_time=False)

    def _handle(self, raw: bytes | None) -> None:
        """One server message (``None``: one the link dropped unread) is one cycle."""
        now = self._heard_at = time.monotonic()
        self._lapsed_joins = 0
        if self._first:
            self.log.info('first server message %.2f s after connecting', now - self._connected_at)
        with self._lock:
            if self._pending:  # the previous cycle is still unanswered: answer it first
                self._reply(on_time=False)
        percept, text = self._parse(raw)
        if percept is not None:
            for f in self.sanitizer.clean(percept):
                self.report(f.kind, f.reason, f.detail)
            if percept.errors:
                self.stats.perceptor_errors += len(percept.errors)
                self.report('perceptor', 'malformed perceptors skipped', '; '.join(percept.errors[:3])[:300])
            if percept.unknown:
                self.stats.unknown_perceptors += len(percept.unknown)
                for item in percept.unknown:
                    kind = item[1:].split(' ', 1)[0].rstrip(')')[:40]
                    self.report('unknown_perceptor', f'unknown perceptor {kind} kept in raw/percept', item[:80])
            self.protocol.observe(percept)
            if percept.game is not None and percept.game.play_mode is not None:
                self._before_kickoff = percept.game.play_mode == BEFORE_KICKOFF
            self.last_percept = percept
        if self.join_gate is not None and self.join_gate.held:
            self._count_join_cycle()
        with self._lock:
            self.stats.cycles += 1
            self._received_at = now
            self._deadline = now + self.reply_timeout
            hello = self.protocol.after_first_message() if self._first else []
            self._first = False
            for msg in hello:  # SimSpark: the init goes out as this cycle's reply
                self._send(msg + '(syn)')
            self._pending = not hello  # MJ (no init here): the first cycle is answered like any other
        if percept is not None:
            self.on_percept(percept, text)

    def _parse(self, raw: bytes | None) -> tuple[Percept | None, str]:
        if raw is None:
            self.stats.dropped_messages += 1
            self.report('oversize', 'oversize server message dropped unread')
            return None, ''
        text = raw.decode('ascii', 'replace')
        try:
            return parse_percept(text, self.protocol.dialect), text
        except PerceptParseError as exc:
            self.stats.parse_errors += 1
            self.report('parse', 'malformed server message skipped', f'{exc}: {text[:120]}', error=True)
            return None, text

    def _count_join_cycle(self) -> None:
        self._join_cycles += 1
        if self.protocol.side is not self.protocol.side.UNKNOWN:
            self._side_cycles += 1
        if self._side_cycles > _JOIN_SETTLE or self._join_cycles > _JOIN_MAX:
            self._open_gate()

    def _open_gate(self) -> None:
        if self.join_gate is not None:
            self.join_gate.release()

    def _reply(self, on_time: bool) -> None:
        """Send this cycle's action (caller holds the lock)."""
        joints = self._last_joints
        if not on_time and joints is not None and self.stats.cycles - self._last_joints_cycle > _STALE_CYCLES:
            joints = self._stale_joints(joints)
        action = Action(joints=joints, beam=self._beam, say=self._say)
        self._beam = None
        self._say = None
        try:
            encoded = self.protocol.encode(action)
        except Exception as exc:  # noqa: BLE001 - ActionError, or a bug: this cycle gets (syn) only
            self.stats.action_errors += 1
            self.report('action', f'action refused, sending (syn) only ({type(exc).__name__})', str(exc)[:200], True)
            self._last_joints = None
            encoded = self.protocol.encode(Action())
        else:
            if encoded.warnings:
                self.report('clamped', 'action clamped', '; '.join(encoded.warnings[:4]))
        self._pending = False
        self._send(encoded.text)
        self.stats.latencies.append(time.monotonic() - self._received_at)
        if on_time:
            self.stats.replies_on_time += 1
        else:
            self.stats.replies_fallback += 1

    def _stale_joints(self, joints: JointCommand) -> JointCommand:
        # SimSpark: a velocity stays in force, so stop the joints. MJ: a position hold
        # is safe to repeat (and must be repeated: joins reset the gains).
        if self.protocol.dialect is Dialect.SIMSPARK:
            return JointCommand(velocity=dict.fromkeys(joints.velocity, 0.0))
        return joints

    def _send(self, text: str) -> None:
        try:
            self.link.send(text)
        except LinkDown as exc:  # the receive side notices and reconnects
            self.log.warning('could not send action: %s', exc)
            return
        if self.on_action is not None:
            try:
                self.on_action(text)
            except Exception as exc:  # noqa: BLE001 - recording the action must not stop the link
                self.report('callback', 'action callback failed', repr(exc)[:200], error=True)
