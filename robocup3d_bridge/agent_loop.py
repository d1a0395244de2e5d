"""The per-player server loop: connect, init, perceive, act once per cycle, reconnect.

Pure Python (no rclpy): the bridge node runs :meth:`AgentLoop.run` in a thread and
plugs ROS in through two callbacks. Timing contract:

* every server message is parsed and handed to ``on_percept``;
* the reply for that cycle is sent as soon as joint targets for it arrive
  (:meth:`submit_joints`), or at ``reply_timeout`` after the percept at the latest,
  so the server always gets exactly one action message per cycle, ending in ``(syn)``;
* beam and say requests ride along with the next reply;
* a server that sends nothing for ``silence_timeout`` seconds is treated as gone:
  the link is closed and opened again (a hung server, or one that never took us on);
* with a ``join_gate`` (rcssserver3d), the agent holds it from before it connects until
  the server has taken its init (it reports our side) and a few cycles more, so that agents
  of this host join one at a time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from robocup3d_bridge.join_gate import JoinGate
from robocup3d_bridge.link import LinkDown, ServerLink
from robocup3d_bridge.percept import Dialect, Percept
from robocup3d_bridge.perception import PerceptParseError, parse_percept
from robocup3d_bridge.protocol import Action, ActionError, JointCommand, ServerProtocol

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
        self._connected_at = 0.0
        self._join_cycles = self._side_cycles = 0  # server messages while holding the join gate
        self._heard_at = 0.0  # last server message (monotonic)
        self._unknown_kinds: set[str] = set()
        self.last_percept: Percept | None = None

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
                except LinkDown as exc:
                    self._open_gate()
                    with self._lock:
                        self._pending = False
                    if stop.is_set():
                        break
                    self.log.warning('server link down (%s); reconnecting in %.1f s', exc, self.reconnect_delay)
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
        self._connected_at = self._heard_at = time.monotonic()
        self._join_cycles = self._side_cycles = 0
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
                if self.silence_timeout > 0 and now - self._heard_at > self.silence_timeout:
                    link.close()
                    since = ' since connecting' if self._first else ''
                    raise LinkDown(f'no message from the server for {now - self._heard_at:.1f} s{since}')
                continue
            for raw in messages:
                self._handle(raw)

    def _handle(self, raw: bytes) -> None:
        now = self._heard_at = time.monotonic()
        if self._first:
            self.log.info('first server message %.2f s after connecting', now - self._connected_at)
        with self._lock:
            if self._pending:  # the previous cycle is still unanswered: answer it first
                self._reply(on_time=False)
        text = raw.decode('ascii', 'replace')
        try:
            percept = parse_percept(text, self.protocol.dialect)
        except PerceptParseError as exc:
            self.stats.parse_errors += 1
            self.log.error('malformed server message skipped (%s): %.120s', exc, text)
            percept = None
        if percept is not None:
            if percept.errors:
                self.stats.perceptor_errors += len(percept.errors)
                self.log.warning('perceptor errors: %s', '; '.join(percept.errors[:3]))
            if percept.unknown:
                self.stats.unknown_perceptors += len(percept.unknown)
                for item in percept.unknown:
                    kind = item[1:].split(' ', 1)[0].rstrip(')')
                    if kind not in self._unknown_kinds:  # say so once per kind, keep going
                        self._unknown_kinds.add(kind)
                        self.log.warning('unknown perceptor %s kept in raw/percept, not interpreted: %.80s', kind, item)
            self.protocol.observe(percept)
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
        except ActionError as exc:
            self.stats.action_errors += 1
            self.log.error('action refused, sending (syn) only: %s', exc)
            self._last_joints = None
            encoded = self.protocol.encode(Action())
        else:
            if encoded.warnings:
                self.log.warning('action clamped: %s', '; '.join(encoded.warnings[:4]))
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
            self.on_action(text)
