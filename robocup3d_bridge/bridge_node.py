"""The bridge node: one player's connection to the server, as ROS topics.

Publishes (in the player's namespace): ``joint_states``, ``imu``,
``foot_contacts/<foot>`` (SimSpark), ``vision/objects``, ``vision/ball``,
``game_state`` (JSON, latched), ``hear`` (JSON), ``ground_truth/pose``,
``ground_truth/ball``, ``raw/percept``, ``raw/action`` (if ``publish_raw``), ``record/cycle`` (if
``publish_raw`` and ``local_motion``: the recorder's messages of a few cycles in one,
:mod:`robocup3d_bridge.cycle_record`; a recorder on this machine takes them through the local sink it
announces on ``record/sink`` instead, :mod:`robocup3d_bridge.record_sink`), ``/clock`` (if
``publish_clock``) and ``/diagnostics`` once a second. All but ``game_state``, ``/clock`` and
``/diagnostics`` are built only while someone subscribes; the percept topics come from
:class:`~robocup3d_bridge.percept_topics.PerceptTopics`, which the recorder also uses.
Subscribes: ``joint_commands`` (JointState) and ``joint_gains`` (JointState with kp in ``position`` and kd in
``velocity``; latched), both unless ``local_motion``, ``beam`` (Pose2D, team frame),
``say`` (String), ``record/sink`` (String, latched; if ``record/cycle`` is offered).

Nothing one server message holds stops the player (issue #24): every per-cycle error is
contained and counted by kind in ``/diagnostics`` (``errors/<kind>``). Should the link thread
die anyway, a watchdog thread ends the process with :data:`LINK_DIED_EXIT` so that whoever
started it (the team runner) starts it again.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PointStamped, Pose2D, PoseStamped, WrenchStamped
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String, UInt8MultiArray
from visualization_msgs.msg import MarkerArray

from robocup3d_bridge import conversions as conv
from robocup3d_bridge import cycle_record, record_sink
from robocup3d_bridge.agent_loop import AgentLoop
from robocup3d_bridge.audience import Audience
from robocup3d_bridge.join_gate import JoinGate
from robocup3d_bridge.link import ServerLink
from robocup3d_bridge.node_main import LATCHED, spin_nodes
from robocup3d_bridge.percept import Percept
from robocup3d_bridge.percept_topics import PerceptTopics
from robocup3d_bridge.protocol import ActionError, JointCommand, make_protocol
from robocup3d_description.body import body_for
from robocup3d_description.robots import robot_spec
from robocup3d_description.urdf import urdf_string

__all__ = ['DEFAULT_PORTS', 'LINK_DIED_EXIT', 'BridgeNode', 'main']

DEFAULT_PORTS = {'mujoco': 60000, 'simspark': 3100}
#: Exit status of a player whose server link thread died (EX_SOFTWARE).
LINK_DIED_EXIT = 70
_WATCH_PERIOD = 0.5  # s between two looks at the link thread
_EXIT_GRACE = 5.0  # s the process gets to stop cleanly before it is ended hard


class InjectedLinkFault(BaseException):
    """Raised in the link thread by the ``fail_link_after_cycles`` parameter (tests of the watchdog).

    A ``BaseException``, so that the per-cycle containment (which catches ``Exception``) lets it through.
    """


class BridgeNode(Node):
    """Connects to the server and turns each server message into ROS messages."""

    def __init__(self, **kwargs) -> None:
        super().__init__('bridge', **kwargs)
        server = self.declare_parameter('server', 'mujoco').value
        host = self.declare_parameter('host', '127.0.0.1').value
        port = self.declare_parameter('port', 0).value or DEFAULT_PORTS.get(server, 60000)
        self.team = self.declare_parameter('team', 'robocup3d').value
        self.unum = int(self.declare_parameter('unum', 1).value)
        robot = self.declare_parameter('robot', 'T1' if server == 'mujoco' else 'nao').value
        robot_type = int(self.declare_parameter('robot_type', 0).value)
        reply_timeout = float(self.declare_parameter('reply_timeout', 0.012).value)
        silence = float(self.declare_parameter('server_silence_timeout', 10.0).value)
        join = float(self.declare_parameter('server_join_timeout', 120.0).value)
        self.publish_clock = bool(self.declare_parameter('publish_clock', False).value)
        self.publish_raw = bool(self.declare_parameter('publish_raw', True).value)
        prefix = self.declare_parameter('frame_prefix', '').value
        # local_motion: a motion node in this process answers each cycle by a direct call
        # (see attach_motion); the joint_commands topic is then not read.
        local_motion = bool(self.declare_parameter('local_motion', False).value)
        # For tests of the watchdog only: the link thread dies after this many cycles (0: never).
        self._fail_after = int(self.declare_parameter('fail_link_after_cycles', 0).value)
        self.exit_code = 0  # non-zero once the link thread died: the process should end with it
        # False where the process runs other players too (robocup3d_tools.team_process), which restarts the link
        self.exit_process_on_link_death = True
        self._cycles_at_start = 0  # the link thread's first cycle (fail_link_after_cycles counts from it)
        self._link_error = ''

        self._motion_step: Callable[[Percept], JointCommand | None] | None = None
        self._listeners: list[Callable[[Percept], None]] = []  # in-process consumers of every cycle
        if not prefix:
            prefix = self.get_namespace().strip('/') + '/' if self.get_namespace() != '/' else ''

        self.robot = robot_spec(server, robot, robot_type)  # raises ValueError on a wrong config
        self.protocol = make_protocol(self.robot, self.team, self.unum)
        self._kp: dict[str, float] = {}
        self._kd: dict[str, float] = {}
        self._last_game: tuple | None = None
        self._game_age = 0
        self.topics = PerceptTopics(self.robot, prefix)

        # the topics built only when someone listens (Audience: known without asking the graph each cycle)
        self.audience = aud = Audience(self)
        self.pub_joints = aud.publisher(JointState, 'joint_states', 1)
        self.pub_imu = aud.publisher(Imu, 'imu', 10)  # integrators downstream want every one
        self.pub_feet = {f: aud.publisher(WrenchStamped, f'foot_contacts/{f}', 1) for f in self.robot.feet}
        self.pub_vision = aud.publisher(MarkerArray, 'vision/objects', 1)
        self.pub_ball = aud.publisher(PointStamped, 'vision/ball', 1)
        self.pub_game = self.create_publisher(String, 'game_state', LATCHED)
        self.pub_hear = aud.publisher(String, 'hear', 10)
        self.pub_gt = aud.publisher(PoseStamped, 'ground_truth/pose', 1)
        self.pub_gt_ball = aud.publisher(PointStamped, 'ground_truth/ball', 1)
        # raw streams are for recording: a deeper queue, so a busy recorder loses none. Without them
        # (publish_raw false) there is no such topic: a recorder then subscribes to the percept topics
        self.pub_raw_in = aud.publisher(String, 'raw/percept', 50) if self.publish_raw else None
        self.pub_raw_out = aud.publisher(String, 'raw/action', 50) if self.publish_raw else None
        # a composed player's messages for a recorder, a few cycles in one (the world model and motion add theirs:
        # the player hands them this record)
        self.record = cycle_record.from_config()
        bundle = self.publish_raw and local_motion
        self.pub_record = aud.publisher(UInt8MultiArray, cycle_record.TOPIC, 50) if bundle else None
        # recorders on this machine that take the record through a local socket (record_sink); the link thread
        # sends, the executor connects (a new announcement) and replaces the list whole, under the lock
        self._sinks: list[record_sink.SinkClient] = []
        self._sinks_lock = threading.Lock()
        if bundle:
            self.create_subscription(String, record_sink.TOPIC, self._on_sink, LATCHED)
        self._percept_pubs = {
            'joint_states': self.pub_joints,
            'imu': self.pub_imu,
            **{f'foot_contacts/{f}': pub for f, pub in self.pub_feet.items()},
            'vision/objects': self.pub_vision,
            'vision/ball': self.pub_ball,
            'ground_truth/pose': self.pub_gt,
            'ground_truth/ball': self.pub_gt_ball,
            'hear': self.pub_hear,
        }
        self.pub_clock = self.create_publisher(Clock, '/clock', 1) if self.publish_clock else None
        self.pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', 1)
        self.pub_description = self.create_publisher(String, 'robot_description', LATCHED)
        self._publish_description(robot, robot_type)

        if not local_motion:  # a motion node in this process hands over commands with their gains
            self.create_subscription(JointState, 'joint_commands', self._on_joint_commands, 1)
            self.create_subscription(JointState, 'joint_gains', self._on_joint_gains, LATCHED)
        self.create_subscription(Pose2D, 'beam', self._on_beam, 1)
        self.create_subscription(String, 'say', self._on_say, 1)
        self.create_timer(1.0, self._publish_diagnostics)

        self.loop = AgentLoop(
            self.protocol,
            ServerLink(host, port),
            on_percept=self._on_percept,
            on_action=self._on_action if self.publish_raw else None,
            reply_timeout=reply_timeout,
            silence_timeout=silence,
            join_timeout=join,
            join_gate=JoinGate(host, port) if server == 'simspark' else None,
            log=_RosLogger(self),
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run_link, name='server-link', daemon=True)
        self._watchdog = threading.Thread(target=self._watch_link, name='link-watchdog', daemon=True)
        if not local_motion:  # with local motion the link starts once the motion node is attached
            self._start_link()
        self.get_logger().info(f'bridge for {self.team} #{self.unum} ({self.robot.name}) -> {server} {host}:{port}')

    # -- server -> ROS (runs in the link thread) -------------------------------------

    def _publish_description(self, robot: str, robot_type: int) -> None:
        """The robot's URDF on ``robot_description``, latched, as robot_state_publisher offers it: rviz's
        RobotModel draws it, and a recorder knows which robot (and which Nao type) a player is."""
        try:
            text = urdf_string(body_for(robot, robot_type))
        except (ValueError, OSError, RuntimeError, ImportError) as exc:  # a model file missing or unreadable
            self.get_logger().warning(f'no robot_description: {exc}')
            return
        self.pub_description.publish(String(data=text))

    def attach_motion(self, step: Callable[[Percept], JointCommand | None]) -> None:
        """Let a motion node in this process answer each cycle directly (no DDS round trip).

        With ``local_motion`` the server link starts here, so that no cycle goes out
        before the motion node can answer it.
        """
        self._motion_step = step
        if not self._thread.is_alive():
            self._start_link()

    # -- the link thread and its watchdog ------------------------------------------------------

    def _start_link(self) -> None:
        self._thread.start()
        self._watchdog.start()

    def restart_link(self) -> bool:
        """Start the server link thread again after it died; ``False`` if it had not died."""
        if self._thread.is_alive() or not self.exit_code or self._stop.is_set():
            return False
        self._cycles_at_start = self.loop.stats.cycles
        self._link_error = ''
        self._thread = threading.Thread(target=self._run_link, name='server-link', daemon=True)
        self._thread.start()
        self.exit_code = 0
        return True

    def _run_link(self) -> None:
        try:
            self.loop.run(self._stop)
        except BaseException as exc:
            self._link_error = f'{type(exc).__name__}: {exc}'
            raise  # threading's excepthook prints the traceback

    def _watch_link(self) -> None:
        """End the process when the link thread has died while the node still runs (or, where the process
        runs other players too, set ``exit_code`` for it to see and :meth:`restart_link`)."""
        while not self._stop.wait(_WATCH_PERIOD):
            if self._thread.is_alive() or self.exit_code:
                continue
            if self._stop.is_set():
                return
            self.exit_code = LINK_DIED_EXIT
            why = self._link_error or 'no exception recorded'
            if not self.exit_process_on_link_death:
                self.get_logger().error(f'server link thread died ({why})')
                continue
            self.get_logger().fatal(f'server link thread died ({why}); exiting with status {LINK_DIED_EXIT}')
            time.sleep(_EXIT_GRACE)  # spin_nodes sees exit_code and stops cleanly meanwhile
            os._exit(LINK_DIED_EXIT)

    def attach_listener(self, take: Callable[[Percept], None]) -> None:
        """Hand every cycle's percept to ``take`` as well (in order, after the reply; none dropped).

        A node in this process that integrates every cycle (the world model) uses this
        instead of the topics, whose delivery can lag or drop on a busy machine.
        """
        self._listeners.append(take)

    def _on_percept(self, p: Percept, raw: str) -> None:
        if self._fail_after and self.loop.stats.cycles - self._cycles_at_start >= self._fail_after:
            raise InjectedLinkFault(f'fail_link_after_cycles={self._fail_after}')
        record = self.record
        dds = self.pub_record is not None and self.audience.listened(self.pub_record)
        record.set_takers((self.pub_record.get_subscription_count() if dds else 0) + len(self._sinks))
        if self._motion_step is not None:
            try:
                cmd = self._motion_step(p)
            except Exception as exc:  # noqa: BLE001 - a motion bug must not stop the server link
                self._contained('motion', 'motion step failed', exc)
                cmd = None
            if cmd is not None:
                self.loop.submit_joints(cmd)  # the reply goes out now; publishing follows
        try:
            self._publish(p, raw)
        except Exception as exc:  # noqa: BLE001 - one bad value must not cost the listeners their cycle
            self._contained('publish', 'publishing a percept failed', exc)
        for take in self._listeners:
            try:
                take(p)
            except Exception as exc:  # noqa: BLE001 - a consumer's bug must not stop the server link
                self._contained('listener', 'cycle listener failed', exc)
        if record.active:
            try:
                if record.end_cycle():
                    packed = record.take()
                    if self._sinks:
                        self._send_sinks(packed)
                    if dds:
                        self.pub_record.publish(UInt8MultiArray(data=packed))
            except Exception as exc:  # noqa: BLE001 - recording must not stop the server link
                self._contained('record', 'publishing the cycle record failed', exc)
        elif record.cycles:
            record.clear()  # its recorder left

    def _send_sinks(self, packed: bytes) -> None:
        """Write one record to every local sink; a sink that fails is dropped (its recorder left or stalled)."""
        lost = []
        for sink in self._sinks:
            try:
                sink.send(packed)
            except record_sink.SinkError as exc:
                lost.append(sink)
                if exc.gone:
                    self.get_logger().info(f'{exc}: recording there ended')
                else:
                    self.loop.report('record', 'a recorder stopped taking the record', str(exc))
        if lost:
            with self._sinks_lock:
                self._sinks = [s for s in self._sinks if s not in lost]

    def _on_sink(self, msg: String) -> None:
        """A recorder's sink (executor thread): connect to it, and the link thread writes the record there."""
        text = msg.data
        if any(s.text == text for s in self._sinks):
            return
        try:
            sink = record_sink.SinkClient(text, self.get_namespace())
        except record_sink.SinkError as exc:  # another machine's recorder: it takes record/cycle over DDS
            self.get_logger().info(f'{exc}; the record goes over DDS to that recorder')
            return
        with self._sinks_lock:
            self._sinks = [*self._sinks, sink]
        self.get_logger().info(f'recording to the local sink {text}')

    def _contained(self, where: str, what: str, exc: Exception) -> None:
        if not self.context.ok():  # shutting down (Ctrl-C): publishers are gone, and that is no fault
            return
        name = type(exc).__name__
        self.loop.report(f'callback:{where}', f'{what} ({name})', repr(exc)[:200], error=True)

    def _publish(self, p: Percept, raw: str) -> None:
        if self.pub_clock is not None:
            t = p.time if p.time is not None else 0.0
            self.pub_clock.publish(Clock(clock=conv.stamp_from_seconds(t)))
        # Topics are built only when someone listens (with motion and world model in this process
        # nobody does: they take the percept itself; a recorder rebuilds them from raw/percept).
        pubs = self._percept_pubs
        for topic, msg in self.topics.messages(p, self.protocol.side.value, lambda t: self.audience.listened(pubs[t])):
            pubs[topic].publish(msg)
        self._maybe_publish_game(p)
        if self.pub_raw_in is not None:
            if self.audience.listened(self.pub_raw_in):
                self.pub_raw_in.publish(String(data=raw))
            if self.record.active:
                self.record.add_text('raw/percept', raw)

    def _maybe_publish_game(self, p: Percept) -> None:
        if p.game is None:
            return
        g, side = p.game, self.protocol.side.value
        key = (g.play_mode, g.score_left, g.score_right, side)
        self._game_age += 1
        if key != self._last_game or self._game_age >= 50:  # the dict and its JSON only then (every cycle: 2 %)
            self._last_game = key
            self._game_age = 0
            state = conv.game_state_dict(p, side, self.team, self.unum)
            self.pub_game.publish(String(data=json.dumps(state)))

    def _on_action(self, text: str) -> None:
        if self.audience.listened(self.pub_raw_out):
            self.pub_raw_out.publish(String(data=text))
        if self.record.active:
            self.record.add_text('raw/action', text)

    # -- ROS -> server ----------------------------------------------------------------

    def _on_joint_commands(self, msg: JointState) -> None:
        self.loop.submit_joints(conv.joint_command_from_msg(msg, self._kp, self._kd))

    def _on_joint_gains(self, msg: JointState) -> None:
        names = list(msg.name)
        if len(msg.position) != len(names) or len(msg.velocity) != len(names):
            self.get_logger().error('joint_gains needs kp in position and kd in velocity for every name; ignored')
            return
        self._kp = dict(zip(names, msg.position, strict=True))
        self._kd = dict(zip(names, msg.velocity, strict=True))

    def _on_beam(self, msg: Pose2D) -> None:
        try:
            self.loop.request_beam(msg.x, msg.y, msg.theta)
        except ActionError as exc:
            self.get_logger().error(f'beam refused: {exc}')

    def _on_say(self, msg: String) -> None:
        self.say(msg.data)

    def say(self, text: str) -> None:
        """Say ``text`` with the next reply (a node of this process calls it directly); an illegal text is refused."""
        try:
            self.loop.request_say(text)
        except ActionError as exc:
            self.get_logger().error(f'say refused: {exc}')

    def _publish_diagnostics(self) -> None:
        s = self.loop.stats
        lat = np.array(s.latencies) * 1e3 if s.latencies else np.zeros(1)
        values = {
            'cycles': s.cycles,
            'replies_on_time': s.replies_on_time,
            'replies_fallback': s.replies_fallback,
            'parse_errors': s.parse_errors,
            'perceptor_errors': s.perceptor_errors,
            'unknown_perceptors': s.unknown_perceptors,
            'action_errors': s.action_errors,
            'dropped_messages': s.dropped_messages,
            'connects': s.connects,
            'link_thread': 'alive' if self._thread.is_alive() else 'dead',
            'side': self.protocol.side.value,
            'latency_p50_ms': f'{np.percentile(lat, 50):.3f}',
            'latency_p99_ms': f'{np.percentile(lat, 99):.3f}',
            # CPU s of this process so far (bridge, world model, motion and strategy when composed): robocup3d
            # report divides its rise by the rise of the header stamps
            'process_cpu_s': f'{time.process_time():.3f}',
        }
        values.update({f'errors/{k}': n for k, n in sorted(s.errors.copy().items())})
        status = DiagnosticStatus(
            level=DiagnosticStatus.OK if self.loop.link.connected else DiagnosticStatus.WARN,
            name=f'{self.get_namespace().rstrip("/")}/bridge',
            message='connected' if self.loop.link.connected else 'not connected',
            hardware_id=f'{self.team}/{self.unum}',
            values=[KeyValue(key=k, value=str(v)) for k, v in values.items()],
        )
        arr = DiagnosticArray(status=[status])
        arr.header.stamp = self.get_clock().now().to_msg()
        self.pub_diag.publish(arr)

    def destroy_node(self) -> None:
        """Stop the link thread, then the node."""
        self._stop.set()
        self.loop.link.close()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        for sink in self._sinks:
            sink.close()
        super().destroy_node()


class _RosLogger:
    """Adapts the node's logger to the ``logging`` calls the core makes.

    No throttle here: rclpy throttles per call site, and these three methods are one call
    site each for every reason; the core throttles per reason (:class:`ReasonThrottle`).
    """

    def __init__(self, node: Node) -> None:
        self._log = node.get_logger()

    def info(self, msg: str, *args: object) -> None:
        self._log.info(msg % args if args else msg)

    def warning(self, msg: str, *args: object) -> None:
        self._log.warning(msg % args if args else msg)

    def error(self, msg: str, *args: object) -> None:
        self._log.error(msg % args if args else msg)


def main(args: list[str] | None = None) -> None:
    """Run the bridge node alone."""
    raise SystemExit(spin_nodes([BridgeNode], args))


if __name__ == '__main__':
    main()
