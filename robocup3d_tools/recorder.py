"""``robocup3d record``: write a running team's topics, the server's ground truth and TF into a rosbag2 bag (MCAP).

One process of its own: a node that subscribes (serialized, no decoding) to the topics under the
given team namespaces plus ``/clock`` and ``/diagnostics``, as they appear, and a monitor connection
of its own to the server (RCSSServerMJ and rcssserver3d both take several monitors) for the ground
truth; ``--server auto`` tells them apart by the first monitor message. A player's percept topics
(``joint_states``, ``imu``, ``vision/*``, ``ground_truth/*``, ``foot_contacts/*``, ``hear``: what its
bridge makes from the server's message alone) are not subscribed to: the recorder builds them from the
player's ``raw/percept`` with the bridge's own code (:mod:`robocup3d_tools.percept_rebuild`), so that the
player builds and sends nothing for them (issue #23). A player without ``raw/percept`` (``--no-raw``),
or ``--no-rebuild``, is subscribed to as before. A composed player offers its ``raw/percept``, ``raw/action``,
``pose``, ``ball``, ``players`` and ``odom`` of every 5 cycles in one message, ``record/cycle``
(:mod:`robocup3d_bridge.cycle_record`): the recorder takes that instead of those topics (``--per-topic``: not)
and writes each message on its own topic, as received. It takes it through a local socket of its own
(:mod:`robocup3d_bridge.record_sink`), announced on the player's ``record/sink``, which costs the player far
less than DDS; a player that does not connect within :data:`SINK_WAIT` s (another machine), or
``--no-sink``, is taken over DDS. The bag is written with PyPI
``rosbags`` (rosbag2 format 9, MCAP storage, ROS 2 Kilted types), so ``tf2_msgs`` needs no wheel.
Bag timestamps are server time (the latest ``/clock`` or monitor time when the message came).
rcssserver3d's monitor sends no server time: its truth is stamped with the monitor time (0.04 s a
message) put on the server time of ``/clock`` (or, without it, of the players' ``joint_states``; see
:class:`robocup3d_tools.simspark_truth.MonitorClock`).

Written besides the players' topics:

* ``/truth/ball`` (geometry_msgs/PointStamped, ``world``), ``/truth/<team>/p<unum>/pose``
  (geometry_msgs/PoseStamped of the torso as base_link: x forward, ``world``), ``/truth/game``
  (std_msgs/String JSON: play mode, game time, half, score, teams, fouls, the server: ``mujoco`` or
  ``simspark``; on change and once a second), stamped with server time;
* ``/tf`` (tf2_msgs/TFMessage): ``world -> <team>/p<unum>/odom -> <team>/p<unum>/base_link`` (REP-105,
  :mod:`robocup3d_tools.odom_frames`: the walk's odometry below, the ground truth through both; every
  monitor message) and ``<team>/p<unum>/base_link -> <team>/p<unum>/<link>`` for every link of the
  robot's kinematic model from its ``joint_states`` (at most every ``--tf-period`` s of server time);
* ``/tf_static``: ``world -> <team>/field`` (each team's own field frame: the right team's is turned
  by pi).

``--publish-tf`` also publishes ``/tf`` and ``/tf_static`` live, the same messages (on a ROS 2 install:
``tf2_msgs`` has no wheel on PyPI); ``robocup3d tf`` does only that, with no bag.

SIGINT or SIGTERM closes the bag cleanly, after writing what had reached the recorder by then; ``--duration``
stops after that many seconds of wall time.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import importlib.util
import json
import math
import os
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from robocup3d_bridge import cycle_record
from robocup3d_bridge.percept_topics import PERCEPT_TOPICS
from robocup3d_perception import belief_record
from robocup3d_tools.odom_frames import OdomFrames
from robocup3d_tools.percept_rebuild import PerceptRebuild

__all__ = ['main', 'record_command', 'start_recorder']

_EXTRA_TOPICS = ('/clock', '/diagnostics')
#: the world model's estimates as numbers in a record (robocup3d_perception.belief_record's types)
_BELIEFS = (belief_record.POSE, belief_record.BALL, belief_record.PLAYERS)


def record_command(
    out: Path,
    teams: list[str],
    monitor_port: int | None,
    robot: str = 'auto',
    host: str = '127.0.0.1',
    exclude: list[str] | None = None,
    server: str = 'auto',
    rebuild: bool = True,
    reliable: bool = False,
    per_topic: bool = False,
    sink: bool = True,
) -> list[str]:
    """The command line that starts a recorder process (for ``match --record`` and ``team --record``).

    ``rebuild``: build the players' percept topics from their ``raw/percept`` (False: subscribe to them).
    ``reliable``: subscribe reliably to every topic (default: see :data:`RELIABLE_TOPICS`).
    ``per_topic``: subscribe to each topic, not to the players' ``record/cycle``.
    ``sink``: take ``record/cycle`` through the local sink (False: over DDS).
    """
    cmd = [sys.executable, '-m', 'robocup3d_tools.recorder', '--out', str(out), '--robot', robot, '--host', host]
    cmd += ['--server', server]
    cmd += ['--teams', *teams]
    if exclude:
        cmd += ['--exclude', *exclude]
    if not rebuild:
        cmd += ['--no-rebuild']
    if reliable:
        cmd += ['--reliable']
    if per_topic:
        cmd += ['--per-topic']
    if not sink:
        cmd += ['--no-sink']
    if monitor_port:
        cmd += ['--monitor-port', str(monitor_port)]
    return cmd


DESCRIPTION_WAIT = 100  # joint states (2 s) a Nao's link TF waits for its robot_description

#: Topics ``match --record`` and ``team --record`` leave out unless ``--record-all``. The players build
#: ``joint_commands`` and ``ball/stop`` only for a subscriber, a message a cycle each (bench/bench_record.py),
#: and the bag has them in other words: ``raw/action`` is the same command as the server got, ``ball/stop``
#: follows from ``ball``. The others cost the players nothing now (the recorder rebuilds them from
#: ``raw/percept``) but the bag much room: the camera's markers, the world model's markers, and the
#: ground truth, which the monitor gives anyway (``/truth/*``)
COSTLY = ('vision/objects', 'world_model/markers', 'ground_truth/*', 'joint_commands', 'ball/stop')


#: Topics in a player's namespace the recorder subscribes to reliably even without ``--reliable``: the
#: inputs of ``replay --rerun world-model`` (and of the rebuilt percept topics), which needs every one.
#: The others (not latched) are subscribed best effort: a reliable reader doubles what a message costs the
#: player to send (the acknowledgements), and none is sent again anyway once its publisher's queue of 1
#: to 10 moved on.
RELIABLE_TOPICS = ('raw/percept', 'odom', 'beam')  # every message counts; a beam is a rare one
SINK_WAIT = 3.0  # s a player has to connect to the local sink before its record/cycle is taken over DDS
SINK_RETURN = 15.0  # s a player that was connected has to come back (restarted by its team runner)
#: s a player whose percept topics are rebuilt has to offer its record/cycle before the recorder subscribes to
#: the topics that would come in it one by one (a player without a record: a bridge alone). Its bridge creates both
#: publishers together, but the graph may show them a discovery pass apart, and subscriptions made one by one in
#: between start each at its own cycle, so the bag's first cycles would lack some of them
BUNDLE_WAIT = 3.0


def start_recorder(
    out: Path,
    teams: list[str],
    monitor_port: int | None,
    log_dir: Path,
    env: dict[str, str],
    robot: str = 'auto',
    exclude: list[str] | None = None,
    server: str = 'auto',
    rebuild: bool = True,
    reliable: bool = False,
    per_topic: bool = False,
    sink: bool = True,
) -> subprocess.Popen:
    """Start ``robocup3d record`` in a process of its own (its output in ``log_dir/recorder.log``).

    ``exclude``: topics not to record (default :data:`COSTLY`; ``[]`` records everything).
    ``server``: ``mujoco``, ``simspark`` or ``auto`` (from the first monitor message).
    ``rebuild``: build the players' percept topics from their ``raw/percept`` (False: subscribe to them).
    ``reliable``: subscribe reliably to every topic (default: see :data:`RELIABLE_TOPICS`).
    ``per_topic``: subscribe to each topic, not to the players' ``record/cycle`` (the way before it).
    ``sink``: take ``record/cycle`` through the local sink (False: over DDS, the way before it).

    Stop it with :func:`robocup3d_tools.servers.stop_process` (SIGINT), which lets it close the bag.
    """
    if Path(out).exists():
        raise FileExistsError(f'{out} exists already: the bag needs a new directory')
    log_dir.mkdir(parents=True, exist_ok=True)
    with open(log_dir / 'recorder.log', 'ab') as log:
        return subprocess.Popen(
            record_command(
                out,
                teams,
                monitor_port,
                robot,
                exclude=list(COSTLY) if exclude is None else exclude,
                server=server,
                rebuild=rebuild,
                reliable=reliable,
                per_topic=per_topic,
                sink=sink,
            ),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _stamp(ns: int) -> tuple[int, int]:
    return ns // 1_000_000_000, ns % 1_000_000_000


class _Messages:
    """Message builders over the rosbags Kilted type store (serialised to CDR)."""

    def __init__(self) -> None:
        from rosbags.typesys import Stores, get_typestore  # noqa: PLC0415

        self.store = get_typestore(Stores.ROS2_KILTED)
        self.t = self.store.types

    def header(self, ns: int, frame: str) -> object:
        sec, nsec = _stamp(ns)
        return self.t['std_msgs/msg/Header'](
            stamp=self.t['builtin_interfaces/msg/Time'](sec=sec, nanosec=nsec), frame_id=frame
        )

    def point(self, x: float, y: float, z: float) -> object:
        return self.t['geometry_msgs/msg/Point'](x=x, y=y, z=z)

    def quat(self, q: tuple[float, float, float, float]) -> object:
        return self.t['geometry_msgs/msg/Quaternion'](x=q[0], y=q[1], z=q[2], w=q[3])

    def point_stamped(self, ns: int, frame: str, p: tuple[float, float, float]) -> bytes:
        msg = self.t['geometry_msgs/msg/PointStamped'](header=self.header(ns, frame), point=self.point(*p))
        return self.store.serialize_cdr(msg, 'geometry_msgs/msg/PointStamped')

    def pose_stamped(self, ns: int, frame: str, m: np.ndarray) -> bytes:
        from robocup3d_tools.monitor_truth import matrix_quaternion  # noqa: PLC0415

        pose = self.t['geometry_msgs/msg/Pose'](
            position=self.point(float(m[0, 3]), float(m[1, 3]), float(m[2, 3])),
            orientation=self.quat(matrix_quaternion(m)),
        )
        msg = self.t['geometry_msgs/msg/PoseStamped'](header=self.header(ns, frame), pose=pose)
        return self.store.serialize_cdr(msg, 'geometry_msgs/msg/PoseStamped')

    def clock(self, ns: int) -> bytes:
        sec, nsec = _stamp(ns)
        msg = self.t['rosgraph_msgs/msg/Clock'](clock=self.t['builtin_interfaces/msg/Time'](sec=sec, nanosec=nsec))
        return self.store.serialize_cdr(msg, 'rosgraph_msgs/msg/Clock')

    def string(self, text: str) -> bytes:
        return self.store.serialize_cdr(self.t['std_msgs/msg/String'](data=text), 'std_msgs/msg/String')

    def transform(self, ns: int, parent: str, child: str, m: np.ndarray) -> object:
        from robocup3d_tools.monitor_truth import matrix_quaternion  # noqa: PLC0415

        tr = self.t['geometry_msgs/msg/Transform'](
            translation=self.t['geometry_msgs/msg/Vector3'](x=float(m[0, 3]), y=float(m[1, 3]), z=float(m[2, 3])),
            rotation=self.quat(matrix_quaternion(m)),
        )
        return self.t['geometry_msgs/msg/TransformStamped'](
            header=self.header(ns, parent), child_frame_id=child, transform=tr
        )

    def tf(self, transforms: list[object]) -> bytes:
        return self.store.serialize_cdr(
            self.t['tf2_msgs/msg/TFMessage'](transforms=transforms), 'tf2_msgs/msg/TFMessage'
        )

    def cdr_of(self, msg: object) -> tuple[str, bytes]:
        """An rclpy message's type name and CDR bytes, as a subscription receives them.

        ``rclpy.serialization.serialize_message`` returns rmw's estimated size, which can run past the
        message's end, and leaves the alignment padding as it found the memory: the message is decoded
        and encoded again by rosbags (zero padding, its true length).
        """
        from rclpy.serialization import serialize_message  # noqa: PLC0415

        cls = type(msg)
        msgtype = f'{cls.__module__.split(".", 1)[0]}/msg/{cls.__name__}'
        return msgtype, self.recode(msgtype, serialize_message(msg))

    def twist(self, ns: int, vx: float, vy: float, wz: float) -> bytes:
        """Motion's ``odom`` (nav_msgs/Odometry: the walk's velocity, the twist only) at ``ns``."""
        t = self.t
        frame, child = cycle_record.ODOM_FRAMES
        v3 = t['geometry_msgs/msg/Vector3']
        zero = np.zeros(36)
        pose = t['geometry_msgs/msg/PoseWithCovariance'](
            pose=t['geometry_msgs/msg/Pose'](position=self.point(0.0, 0.0, 0.0), orientation=self.quat((0, 0, 0, 1))),
            covariance=zero,
        )
        twist = t['geometry_msgs/msg/TwistWithCovariance'](
            twist=t['geometry_msgs/msg/Twist'](linear=v3(x=vx, y=vy, z=0.0), angular=v3(x=0.0, y=0.0, z=wz)),
            covariance=zero,
        )
        msg = t['nav_msgs/msg/Odometry'](header=self.header(ns, frame), child_frame_id=child, pose=pose, twist=twist)
        return self.store.serialize_cdr(msg, 'nav_msgs/msg/Odometry')

    def belief(self, kind: str, payload: bytes) -> tuple[str, bytes]:
        """The world model's ``pose``, ``ball`` or ``players`` from a record's numbers
        (:mod:`robocup3d_perception.belief_record`), built with the world model's own builders: its type and CDR."""
        from robocup3d_bridge.conversions import stamp_from_seconds  # noqa: PLC0415
        from robocup3d_perception import conversions as conv  # noqa: PLC0415

        if kind == belief_record.PLAYERS:
            return 'std_msgs/msg/String', self.string(belief_record.players_text(payload))
        if kind == belief_record.POSE:
            t, values, frame = belief_record.unpack_pose(payload)
            return self.cdr_of(conv.pose_from_values(values, stamp_from_seconds(t), frame))
        t, values, frame = belief_record.unpack_ball(payload)
        return self.cdr_of(conv.ball_from_values(values, stamp_from_seconds(t), frame))

    def recode(self, msgtype: str, data: bytes) -> bytes:
        """rclpy's CDR bytes of a ``msgtype`` message decoded and encoded again (zero padding, true length)."""
        msgdef = self.store.get_msgdef(msgtype)
        decode = msgdef.deserialize_cdr_le if data[1] else msgdef.deserialize_cdr_be
        decoded, _ = decode(data[4:], 0, msgdef.cls, self.store)
        return bytes(self.store.serialize_cdr(decoded, msgtype))

    def joint_state(self, data: bytes) -> object:
        return self.store.deserialize_cdr(bytes(data), 'sensor_msgs/msg/JointState')

    def odometry(self, data: bytes) -> object:
        return self.store.deserialize_cdr(bytes(data), 'nav_msgs/msg/Odometry')


def _is_percept_topic(rest: str) -> bool:
    """Whether ``rest`` (a topic in a player's namespace) is one its bridge makes from the percept alone."""
    return any(fnmatch.fnmatchcase(rest, pattern) for pattern in PERCEPT_TOPICS)


def _header_ns(data: bytes) -> int | None:
    """The stamp of a serialised message that starts with a Header (or of a rosgraph_msgs/Clock), in ns."""
    if len(data) < 12:
        return None
    little = data[1] & 1
    sec, nsec = struct.unpack('<iI' if little else '>iI', bytes(data[4:12]))
    return sec * 1_000_000_000 + nsec


STAMP_TRUST = 60 * 1_000_000_000  # ns: a player's stamp further than this from the server time is not its time


class Recorder:
    """Subscribes, reads the monitor and writes the bag; :meth:`run` until stopped."""

    def __init__(self, args: argparse.Namespace) -> None:
        from rosbags.rosbag2 import StoragePlugin, Writer  # noqa: PLC0415

        self.args = args
        self.teams = list(args.teams)
        self.msgs = _Messages()
        self.writer = None
        if args.out:
            out = Path(args.out)
            if out.exists():
                raise FileExistsError(f'{out} exists already: the bag needs a new directory')
            out.parent.mkdir(parents=True, exist_ok=True)
            self.writer = Writer(out, version=9, storage_plugin=StoragePlugin.MCAP)
            self.writer.open()
        self.tf_pubs: dict[str, object] = {}  # '/tf', '/tf_static' with --publish-tf
        self.connections: dict[str, object] = {}
        self.counts: dict[str, int] = {}
        self.now_ns = 0  # latest server time seen
        self.clock_ns = 0  # latest /clock (or, without one, a player's joint_states stamp): the server time
        self._clock_topic = False  # whether a /clock came
        self._topic_ns: dict[str, int] = {}  # per topic, the latest bag time written (kept monotonic)
        self._player_ns: dict[str, int] = {}  # per player namespace, the latest stamp of its messages
        self._stamped: dict[str, bool] = {}  # per message type, whether it starts with a std_msgs/Header
        self.running = True
        self.trainer = None
        self.tracker = None
        self.monitor_state = None
        self.monitor_clock = None  # rcssserver3d: monitor time -> server time
        self._truth_ns = -1  # stamp of the latest truth written
        self._full_asked = -math.inf  # when a full rcssserver3d scene was last asked for
        self._last_game: tuple[str, int] = ('', -1)
        self._static_done: set[str] = set()
        self._tf_due: dict[str, int] = {}
        self._bodies: dict[str, object] = {}
        self._undescribed: dict[str, int] = {}  # joint states seen before a robot_description
        self._subs: dict[str, object] = {}
        # what the DDS thread received, for the main loop: (handler, its arguments)
        self._inbox: queue.SimpleQueue[tuple[object, tuple]] = queue.SimpleQueue()
        # players whose percept topics are rebuilt here from their raw/percept (namespace -> PerceptRebuild)
        self._rebuilds: dict[str, PerceptRebuild] = {}
        # players whose cycle_record.BUNDLED topics come in their record/cycle (namespaces)
        self._bundles: set[str] = set()
        self._rebuilt_since: dict[str, float] = {}  # when each rebuild began (BUNDLE_WAIT counts from it)
        self._unbundled: set[str] = set()  # rebuilt players that offered no record/cycle in BUNDLE_WAIT
        # the local sink (record_sink) their records come through, the namespaces it was offered to (and when)
        self.sink = None
        self._sink_offered: set[str] = set()
        self._sink_since: dict[str, float] = {}
        self._sink_pubs: dict[str, object] = {}
        self._sink_seen: set[str] = set()  # namespaces whose records came through it
        # the player whose bridge publishes /clock, when it is bundled: /clock is written from its raw/percept
        # (each /clock sent to this process cost that player as much as the rest of its recording)
        self._clock_from: str | None = None
        self._exclusions: dict[str, bool] = {}  # topic in a player's namespace -> excluded
        self.odom = OdomFrames()
        self.received = 0  # messages taken from the subscriptions
        self.dump = open(args.dump_monitor, 'w', encoding='ascii') if args.dump_monitor else None

    # -- bag
    def _conn(self, topic: str, msgtype: str) -> object:
        conn = self.connections.get(topic)
        if conn is None:
            conn = self.writer.add_connection(topic, msgtype, typestore=self.msgs.store)
            self.connections[topic] = conn
        return conn

    def write(self, topic: str, msgtype: str, data: bytes, ns: int | None = None) -> None:
        """Write a message at bag time ``ns`` or, without one, at its own time (:meth:`_time_of`)."""
        ns = max(self._topic_ns.get(topic, 0), self._time_of(topic, msgtype, data) if ns is None else ns)
        self._topic_ns[topic] = ns
        if self.writer is not None:
            self.writer.write(self._conn(topic, msgtype), ns, bytes(data))
        pub = self.tf_pubs.get(topic)
        if pub is not None:
            pub.publish(bytes(data))  # the same CDR bytes, live
        self.counts[topic] = self.counts.get(topic, 0) + 1

    def _time_of(self, topic: str, msgtype: str, data: bytes) -> int:
        """A player's message's server time: its header's stamp, else the latest stamp of its player's messages
        (the same cycle's), else (and for any other topic) the latest server time seen. A loaded recorder takes
        the players' messages a second or more after the monitor's truth of the same moment (1.5 s in a sync-mode
        3 v 3): written when taken, they lay that far from it in the bag, and replay played them that late."""
        stamped = self._stamped.get(msgtype)
        if stamped is None:
            fields = self.msgs.store.fielddefs.get(msgtype, ((), ()))[1]
            stamped = self._stamped[msgtype] = bool(fields) and fields[0][1][1] == 'std_msgs/msg/Header'
        parts = topic.split('/', 3)
        player = f'/{parts[1]}/{parts[2]}' if len(parts) == 4 else ''
        if not player:
            return self.now_ns  # /diagnostics is stamped with the wall clock
        ns = _header_ns(data) if stamped else None
        if ns is not None and ns > 0 and (not self.now_ns or abs(ns - self.now_ns) < STAMP_TRUST):
            self._player_ns[player] = max(self._player_ns.get(player, 0), ns)
            return ns
        return self._player_ns.get(player) or self.now_ns

    # -- ROS side
    def start_ros(self) -> None:
        import rclpy  # noqa: PLC0415
        from rclpy.executors import SingleThreadedExecutor  # noqa: PLC0415
        from rclpy.signals import SignalHandlerOptions  # noqa: PLC0415

        self.rclpy = rclpy
        rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node('robocup3d_recorder')
        # DDS is received in a thread of its own that sleeps in the executor's wait until a message comes, and the
        # callbacks only queue it for the main loop: a wait costs some 10 us per subscription (rclpy builds its
        # wait set anew each time), and the main loop, which polls the local sink and the monitor every 5 ms, spun
        # it for nothing each time: a third of the recorder's CPU (bench_record, 2 players; docs/recording.md)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self._receiving = True
        self._receiver = threading.Thread(target=self._receive, name='recorder-dds', daemon=True)
        self._receiver.start()
        if self.args.publish_tf:
            from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: PLC0415
            from tf2_msgs.msg import TFMessage  # noqa: PLC0415 - a ROS 2 install's; checked in main()

            latched = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL)
            self.tf_pubs = {
                '/tf': self.node.create_publisher(TFMessage, '/tf', 100),
                '/tf_static': self.node.create_publisher(TFMessage, '/tf_static', latched),
            }

    def _wanted(self, topic: str) -> bool:
        for team in self.teams:
            if topic.startswith(f'/{team}/'):
                rest = topic.split('/', 3)[-1]  # the topic inside the player's namespace
                if rest == cycle_record.TOPIC:  # a transport: its messages are written on their own topics
                    return False
                if self.writer is None:  # TF only: what it is made of, nothing the players build for us alone
                    return rest in ('joint_states', 'odom', 'game_state')
                return not self._excluded(rest)
        return topic in _EXTRA_TOPICS

    def _excluded(self, rest: str) -> bool:
        """Whether the topic ``rest`` of a player's namespace is left out of the bag (``--exclude``)."""
        out = self._exclusions.get(rest)
        if out is None:
            out = self._exclusions[rest] = any(fnmatch.fnmatchcase(rest, p) for p in self.args.exclude)
        return out

    def _rebuilt(self, topic: str) -> tuple[PerceptRebuild | None, str]:
        """The rebuild of the player ``topic`` belongs to, if one is under way, and the topic in its namespace."""
        parts = topic.split('/', 3)  # '', team, player, the rest
        if len(parts) < 4 or not self._rebuilds:
            return None, ''
        return self._rebuilds.get(f'/{parts[1]}/{parts[2]}'), parts[3]

    def discover(self) -> None:
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: PLC0415

        topics = self.node.get_topic_names_and_types()
        if self.args.rebuild and self.writer is not None:
            self._find_rebuilds([topic for topic, _ in topics])
            if not self.args.per_topic:
                self._find_bundles([topic for topic, _ in topics])
        for topic, types in topics:
            if topic in self._subs or not types or (topic == '/clock' and self._clock_from is not None):
                continue
            rebuild, rest = self._rebuilt(topic)
            if rebuild is not None and rebuild.namespace in self._bundles:
                if rest in cycle_record.BUNDLED:
                    continue  # they come in its record/cycle
                if rest == cycle_record.TOPIC:
                    if self._record_over_dds(rebuild.namespace):
                        self._subscribe_record(rebuild.namespace, topic)
                    continue
            if rebuild is not None:
                if _is_percept_topic(rest):
                    continue  # built here from raw/percept
                if rest in cycle_record.BUNDLED and self._awaits_record(rebuild.namespace):
                    continue  # asked again at the next discovery
                if rest != 'raw/percept' and not self._wanted(topic):
                    continue
            elif not self._wanted(topic):
                continue
            msgtype = types[0]
            try:
                pkg, _, name = msgtype.split('/')
                cls = getattr(importlib.import_module(f'{pkg}.msg'), name)
            except (ValueError, ImportError, AttributeError):
                print(f'record: {topic}: type {msgtype} not installed, not recorded', file=sys.stderr)
                self._subs[topic] = None
                continue
            if msgtype not in self.msgs.store.fielddefs:
                print(f'record: {topic}: type {msgtype} unknown to rosbags, not recorded', file=sys.stderr)
                self._subs[topic] = None
                continue
            pubs = self.node.get_publishers_info_by_topic(topic)
            if not pubs:  # its publishers not discovered yet: their QoS (latched or not) decides ours; next pass
                continue
            latched = all(p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in pubs)
            # a reliable reader costs the publisher twice a best-effort one's CPU per message (its
            # acknowledgements): best effort but where every message counts (latched, RELIABLE_TOPICS, and
            # /diagnostics, once a second)
            every = topic == '/diagnostics' or topic.split('/', 3)[-1] in RELIABLE_TOPICS
            best_effort = not (latched or every or self.args.reliable)
            best_effort = best_effort or any(p.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT for p in pubs)
            qos = QoSProfile(
                depth=200,
                reliability=ReliabilityPolicy.BEST_EFFORT if best_effort else ReliabilityPolicy.RELIABLE,
                durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
            )
            self._subs[topic] = self.node.create_subscription(
                cls,
                topic,
                lambda data, t=topic, m=msgtype: self._inbox.put((self._on_message, (t, m, data))),
                qos,
                raw=True,
            )

    def _awaits_record(self, namespace: str) -> bool:
        """Whether a rebuilt player's :data:`~robocup3d_bridge.cycle_record.BUNDLED` topics wait for its
        ``record/cycle`` (:data:`BUNDLE_WAIT`), so that its bag starts with the record's first cycle, whole."""
        if not self.args.rebuild or self.writer is None or self.args.per_topic:
            return False
        waited = time.monotonic() - self._rebuilt_since.get(namespace, -math.inf)
        if waited < BUNDLE_WAIT:
            return True
        if namespace not in self._unbundled:
            self._unbundled.add(namespace)
            print(
                f'record: {namespace}: no {cycle_record.TOPIC} offered; its topics subscribed one by one',
                file=sys.stderr,
                flush=True,
            )
        return False

    def _find_bundles(self, topics: list[str]) -> None:
        """Take the ``record/cycle`` of every player whose percept topics are rebuilt and that offers one.

        Its own subscriptions to the topics that come in it, made before it was seen, end here.
        """
        tail = f'/{cycle_record.TOPIC}'
        for topic in topics:
            namespace = topic[: -len(tail)]
            if not topic.endswith(tail) or namespace not in self._rebuilds or namespace in self._bundles:
                continue
            self._bundles.add(namespace)
            took = ', '.join(cycle_record.BUNDLED)
            print(f'record: {namespace}: {took} from {cycle_record.TOPIC}', file=sys.stderr, flush=True)
            if self.args.sink:
                self._offer_sink(namespace)
            for old in [f'{namespace}/{rest}' for rest in cycle_record.BUNDLED]:
                sub = self._subs.pop(old, None)
                if sub is not None:
                    self.node.destroy_subscription(sub)
        self._find_clock()

    def _find_clock(self) -> None:
        """Write ``/clock`` from its publisher's ``raw/percept`` once that player is bundled: one publisher, whose
        namespace's record this recorder takes; a subscription to ``/clock`` made before ends here."""
        if self._clock_from is not None or not self.args.rebuild or self.writer is None:
            return
        pubs = self.node.get_publishers_info_by_topic('/clock')
        if len(pubs) != 1 or pubs[0].node_namespace not in self._bundles:
            return
        self._clock_from = pubs[0].node_namespace
        print(f'record: /clock from {self._clock_from}/raw/percept', file=sys.stderr, flush=True)
        sub = self._subs.pop('/clock', None)
        if sub is not None:
            self.node.destroy_subscription(sub)

    def _offer_sink(self, namespace: str) -> None:
        """Announce the local sink on the player's ``record/sink``; its record comes there once it connects."""
        from std_msgs.msg import String  # noqa: PLC0415

        from robocup3d_bridge import record_sink  # noqa: PLC0415
        from robocup3d_bridge.node_main import LATCHED  # noqa: PLC0415

        if self.sink is None:
            self.sink = record_sink.SinkServer(allowed=self._sink_offered)
        self._sink_offered.add(namespace)
        self._sink_since[namespace] = time.monotonic()
        pub = self.node.create_publisher(String, f'{namespace}/{record_sink.TOPIC}', LATCHED)
        pub.publish(String(data=self.sink.text))
        self._sink_pubs[namespace] = pub

    def _record_over_dds(self, namespace: str) -> bool:
        """Whether to take the player's ``record/cycle`` over DDS: no sink offered, or not connected to it within
        :data:`SINK_WAIT` s (:data:`SINK_RETURN` s once it was) (then the sink refuses it, so that no record comes
        twice)."""
        if namespace not in self._sink_offered:
            return True
        now = time.monotonic()
        if namespace in self.sink.namespaces():
            self._sink_since[namespace] = now
            return False
        if now - self._sink_since[namespace] < (SINK_RETURN if namespace in self._sink_seen else SINK_WAIT):
            return False  # asked again at the next discovery
        self._sink_offered.discard(namespace)
        pub = self._sink_pubs.pop(namespace, None)
        if pub is not None:
            self.node.destroy_publisher(pub)
        print(f'record: {namespace}: no connection to the local sink; {cycle_record.TOPIC} over DDS', file=sys.stderr)
        return True

    def poll_sink(self) -> int:
        """Take the records that came through the local sink; return how many."""
        if self.sink is None:
            return 0
        records = self.sink.poll()
        for namespace, packed in records:
            if namespace not in self._sink_seen:
                self._sink_seen.add(namespace)
                print(f'record: {namespace}: {cycle_record.TOPIC} through the local sink', file=sys.stderr, flush=True)
            self.received += 1
            self._take_record(namespace, packed)
        while self.sink.errors:
            print(f'record: local sink: {self.sink.errors.pop(0)}', file=sys.stderr)
        return len(records)

    def _subscribe_record(self, namespace: str, topic: str) -> None:
        """Subscribe (reliably: it holds ``raw/percept`` and ``odom``, the rerun's inputs) to a player's record."""
        from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: PLC0415
        from std_msgs.msg import UInt8MultiArray  # noqa: PLC0415

        qos = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
        self._subs[topic] = self.node.create_subscription(
            UInt8MultiArray,
            topic,
            lambda data, ns=namespace: self._inbox.put((self._on_record, (ns, data))),
            qos,
            raw=True,
        )

    def _on_record(self, namespace: str, data: bytes) -> None:
        """A player's messages of its last few cycles: each as if received on its own topic."""
        self.received += 1
        try:
            packed = self.msgs.store.deserialize_cdr(bytes(data), 'std_msgs/msg/UInt8MultiArray').data.tobytes()
        except Exception as exc:  # noqa: BLE001 - a bad record is reported, not fatal
            print(f'record: {namespace}: unreadable {cycle_record.TOPIC} ({exc})', file=sys.stderr)
            return
        self._take_record(namespace, packed)

    def _take_record(self, namespace: str, packed: bytes) -> None:
        """A player's packed record (:func:`~robocup3d_bridge.cycle_record.pack`): each message on its topic."""
        try:
            parts = cycle_record.unpack(packed)
        except ValueError as exc:
            print(f'record: {namespace}: unreadable {cycle_record.TOPIC} ({exc})', file=sys.stderr)
            return
        for rest, msgtype, payload in parts:
            if rest != 'raw/percept' and self._excluded(rest):
                continue
            try:
                if msgtype == cycle_record.TEXT:
                    clean = self.msgs.string(payload.decode())
                elif msgtype == cycle_record.TWIST:
                    msgtype, clean = 'nav_msgs/msg/Odometry', self.msgs.twist(*cycle_record.odometry_fields(payload))
                elif msgtype in _BELIEFS:
                    msgtype, clean = self.msgs.belief(msgtype, payload)
                else:
                    clean = self.msgs.recode(msgtype, payload)
            except Exception as exc:  # noqa: BLE001
                print(f'record: {namespace}/{rest}: unreadable in {cycle_record.TOPIC} ({exc})', file=sys.stderr)
                continue
            self._dispatch(f'{namespace}/{rest}', msgtype, clean)

    def _find_rebuilds(self, topics: list[str]) -> None:
        """Start rebuilding the percept topics of every player of our teams that publishes ``raw/percept``.

        Its own subscriptions to those topics, made before its ``raw/percept`` was seen, end here.
        """
        for topic in topics:
            if not topic.endswith('/raw/percept') or topic.count('/') != 4:
                continue
            namespace = topic[: -len('/raw/percept')]
            if namespace in self._rebuilds or not any(namespace.startswith(f'/{t}/') for t in self.teams):
                continue
            self._rebuilds[namespace] = PerceptRebuild(namespace, self.args.robot)
            self._rebuilt_since[namespace] = time.monotonic()
            print(f'record: {namespace}: percept topics rebuilt from raw/percept', file=sys.stderr, flush=True)
            for old in [t for t in self._subs if t.startswith(f'{namespace}/')]:
                if _is_percept_topic(old[len(namespace) + 1 :]):
                    sub = self._subs.pop(old)
                    if sub is not None:
                        self.node.destroy_subscription(sub)

    def _on_message(self, topic: str, msgtype: str, data: bytes) -> None:
        rebuild, rest = self._rebuilt(topic)
        if rebuild is not None and rebuild.namespace in self._bundles and rest in cycle_record.BUNDLED:
            self.received += 1
            return  # from a subscription made before its record/cycle was taken, still queued: it comes there
        self._dispatch(topic, msgtype, data)

    def _dispatch(self, topic: str, msgtype: str, data: bytes) -> None:
        """A player's message (subscribed, or from its record/cycle), ``/clock`` or ``/diagnostics``."""
        self.received += 1
        rebuild, rest = self._rebuilt(topic)
        if rebuild is not None:
            if _is_percept_topic(rest):
                return  # from a subscription made before the rebuild began, still queued: built here
            if rest == 'raw/percept':
                self._rebuild(rebuild, data)
                if not self._excluded(rest):
                    self._take(topic, msgtype, data)
                return
            if rest == 'game_state':
                self._game_side(rebuild, data)
        self._take(topic, msgtype, data)

    def _rebuild(self, rebuild: PerceptRebuild, data: bytes) -> None:
        """Write the percept topics the player's bridge would have published for this ``raw/percept``."""
        raw = self.msgs.store.deserialize_cdr(bytes(data), 'std_msgs/msg/String').data
        for rest, msg in rebuild.messages(raw, lambda t: not self._excluded(t)):
            self._take(f'{rebuild.namespace}/{rest}', *self.msgs.cdr_of(msg))
        if rebuild.namespace == self._clock_from and rebuild.time is not None:
            self._take('/clock', 'rosgraph_msgs/msg/Clock', self.msgs.clock(round(rebuild.time * 1e9)))

    def _game_side(self, rebuild: PerceptRebuild, data: bytes) -> None:
        """The side a player's ``game_state`` names, for its rebuilt ground truth (rcssserver3d names it once)."""
        try:
            state = json.loads(self.msgs.store.deserialize_cdr(bytes(data), 'std_msgs/msg/String').data)
            rebuild.take_side(state['side'])
        except (ValueError, TypeError, KeyError, AttributeError):
            pass

    def _take(self, topic: str, msgtype: str, data: bytes) -> None:
        """One message of a player topic (received, or rebuilt), ``/clock`` or ``/diagnostics`` into the bag."""
        if topic == '/clock':
            ns = _header_ns(data)
            if ns is not None:
                self.now_ns = max(self.now_ns, ns)
                self.clock_ns, self._clock_topic = ns, True
        elif topic.endswith('/joint_states') and not self._clock_topic:  # a team without a clock player
            self.clock_ns = _header_ns(data) or 0  # the server time of the player's percept
        elif topic.endswith('/game_state') and self.monitor_clock is not None:
            self._game_state_time(data)
        self.write(topic, msgtype, data)
        if topic.endswith('/joint_states'):
            self._joint_tf(topic[: -len('/joint_states')], data)
        elif topic.endswith('/odom') and msgtype == 'nav_msgs/msg/Odometry':
            self._odom_twist(topic[1 : -len('/odom')], data)
        elif topic.endswith('/robot_description'):
            self._described(topic[: -len('/robot_description')], data)

    def _odom_twist(self, player: str, data: bytes) -> None:
        """The walk's velocity estimate, integrated into the player's ``odom -> base_link``."""
        ns = _header_ns(data)
        try:
            twist = self.msgs.odometry(data).twist.twist
        except Exception:  # noqa: BLE001 - a message rosbags cannot read is recorded, not integrated
            return
        self.odom.twist(player, self.now_ns if ns is None else ns, twist.linear.x, twist.linear.y, twist.angular.z)

    def _game_state_time(self, data: bytes) -> None:
        """A player's server time and game time of the same percept: rcssserver3d's truth goes on server time."""
        try:
            state = json.loads(self.msgs.store.deserialize_cdr(bytes(data), 'std_msgs/msg/String').data)
            self.monitor_clock.player(round(float(state['time']) * 1e9), state.get('game_time'), state.get('play_mode'))
        except (ValueError, TypeError, KeyError, AttributeError):
            pass

    def _body(self, ns_prefix: str, names: list[str], velocities: bool) -> object:
        """The player's kinematic model: ``--robot``; or (``auto``) the one its ``robot_description`` names,
        else the robot its joint states show (:func:`~robocup3d_description.guess.guess_robot`: their joint
        names, and joint velocities for RCSSServerMJ's robots; a Nao's type only from its description: the
        types share joint names, so a Nao waits :data:`DESCRIPTION_WAIT` joint states for one). None: not yet."""
        body = self._bodies.get(ns_prefix)
        if body is not None:
            return body
        from robocup3d_description.body import body_for  # noqa: PLC0415
        from robocup3d_description.guess import guess_robot  # noqa: PLC0415

        if self.args.robot != 'auto':
            body = body_for(self.args.robot)
        else:
            guess = guess_robot(names, velocities=velocities)
            try:
                body = body_for(guess.name) if guess is not None else None
            except (ValueError, OSError):
                body = None
            waited = self._undescribed[ns_prefix] = self._undescribed.get(ns_prefix, 0) + 1
            if body is not None and guess.is_nao and waited < DESCRIPTION_WAIT:
                return None
            if body is None:
                print(
                    f'record: {ns_prefix}: no robot model with joints {sorted(names)[:4]}...: no link TF',
                    file=sys.stderr,
                )
                body = False
            elif guess.is_nao:
                print(f'record: {ns_prefix}: no robot_description: link TF of {body.name}', file=sys.stderr)
        self._bodies[ns_prefix] = body
        return body

    def _described(self, ns_prefix: str, data: bytes) -> None:
        """A player's URDF: with ``--robot auto`` the robot it names is the model of its link TF."""
        if self.args.robot != 'auto':
            return
        from robocup3d_description.body import body_for  # noqa: PLC0415
        from robocup3d_description.guess import guess_robot  # noqa: PLC0415

        try:
            guess = guess_robot(urdf=self.msgs.store.deserialize_cdr(bytes(data), 'std_msgs/msg/String').data)
            if guess is None:
                raise ValueError('a URDF without the name of a robot we model')
            self._bodies[ns_prefix] = body_for(guess.name)
        except (AttributeError, ValueError, OSError) as exc:
            print(f'record: {ns_prefix}/robot_description: no model from it ({exc})', file=sys.stderr)

    def _joint_tf(self, prefix: str, data: bytes) -> None:
        """``base_link -> link`` for every link from one player's joint states (throttled)."""
        from robocup3d_description.kinematics import forward_kinematics  # noqa: PLC0415

        ns = _header_ns(data)
        if ns is None or ns < self._tf_due.get(prefix, 0):
            return
        self._tf_due[prefix] = ns + int(self.args.tf_period * 1e9)
        js = self.msgs.joint_state(data)
        body = self._body(prefix, list(js.name), len(js.velocity) > 0)
        if not body:
            return
        poses = forward_kinematics(body, dict(zip(js.name, js.position, strict=False)))
        frame = prefix.lstrip('/')
        base = f'{frame}/base_link'
        # every link, the torso too (base_link -> torso is the identity): rviz's RobotModel finds the URDF's root
        tfs = [self.msgs.transform(ns, base, f'{frame}/{link}', m) for link, m in poses.items()]
        self.write('/tf', 'tf2_msgs/msg/TFMessage', self.msgs.tf(tfs), ns)

    # -- monitor side
    def connect_monitor(self) -> None:
        if not self.args.monitor_port:
            return
        from robocup3d_bridge.link import LinkDown  # noqa: PLC0415
        from robocup3d_bridge.percept import Dialect  # noqa: PLC0415
        from robocup3d_bridge.trainer import MonitorState, TrainerClient  # noqa: PLC0415

        deadline = time.monotonic() + 15.0
        dialect = Dialect.SIMSPARK if self.args.server == 'simspark' else Dialect.MUJOCO
        while self.running:
            trainer = TrainerClient(self.args.host, self.args.monitor_port, dialect)
            try:
                trainer.connect()
                break
            except (LinkDown, OSError):
                trainer.close()
                if time.monotonic() > deadline:
                    print(
                        f'record: no monitor on {self.args.host}:{self.args.monitor_port}: no ground truth',
                        file=sys.stderr,
                    )
                    return
                time.sleep(0.3)
        self.trainer, self.monitor_state = trainer, MonitorState()
        if self.args.server != 'auto':
            self._track(self.args.server)

    def _track(self, server: str) -> None:
        """Read the monitor as ``server``'s (mujoco or simspark) from now on."""
        from robocup3d_bridge.percept import Dialect  # noqa: PLC0415
        from robocup3d_tools.monitor_truth import SceneTracker  # noqa: PLC0415
        from robocup3d_tools.simspark_truth import MonitorClock, SimsparkTracker  # noqa: PLC0415

        if server == 'simspark':
            self.trainer.dialect = Dialect.SIMSPARK
            self.tracker, self.monitor_clock = SimsparkTracker(), MonitorClock()
        else:
            self.trainer.dialect = Dialect.MUJOCO
            self.tracker = SceneTracker()
        print(f'record: ground truth from the {server} monitor stream', file=sys.stderr, flush=True)

    def poll_monitor(self) -> int:
        """Write the ground truth of the monitor messages that arrived; return how many arrived."""
        from robocup3d_bridge.link import LinkDown  # noqa: PLC0415
        from robocup3d_tools.monitor_truth import read_truths  # noqa: PLC0415
        from robocup3d_tools.simspark_truth import is_simspark_message  # noqa: PLC0415

        if self.trainer is None:
            return 0
        try:
            batch = self.trainer.receive(0.0)
            if batch and self.tracker is None:
                self._track('simspark' if is_simspark_message(batch[0]) else 'mujoco')
            if self.monitor_clock is not None and self.tracker.needs_full and time.monotonic() > self._full_asked + 1:
                self._full_asked = time.monotonic()  # a new connection starts with diffs; a misfit needs one too
                self.trainer.request_full_state()
        except LinkDown:
            print('record: the monitor connection closed: no more ground truth', file=sys.stderr)
            self.trainer.close()
            self.trainer = None
            return 0
        for ns, truth in read_truths(batch, self.monitor_state, self.tracker, self.dump):
            if self.monitor_clock is not None:
                ns = self.monitor_clock.stamp(ns, self.clock_ns, self.tracker.game_time, self.tracker.running)
                if ns <= self._truth_ns:  # while the clock's offset settles: never a stamp twice or back
                    continue
            self._truth_ns = ns
            self.now_ns = max(self.now_ns, ns)
            self._write_truth(ns, truth)
        return len(batch)

    def _write_truth(self, ns: int, truth: object) -> None:
        from robocup3d_tools.monitor_truth import game_of  # noqa: PLC0415

        s = self.monitor_state
        if truth.ball is not None:
            self.write(
                '/truth/ball', 'geometry_msgs/msg/PointStamped', self.msgs.point_stamped(ns, 'world', truth.ball), ns
            )
        tfs = []
        for (team, unum), m in sorted(truth.robots.items()):
            self.write(
                f'/truth/{team}/p{unum}/pose',
                'geometry_msgs/msg/PoseStamped',
                self.msgs.pose_stamped(ns, 'world', m),
                ns,
            )
            player = f'{team}/p{unum}'
            world_odom, odom_base = self.odom.frames(player, ns, m)
            tfs.append(self.msgs.transform(ns, 'world', f'{player}/odom', world_odom))
            tfs.append(self.msgs.transform(ns, f'{player}/odom', f'{player}/base_link', odom_base))
        if tfs:
            self.write('/tf', 'tf2_msgs/msg/TFMessage', self.msgs.tf(tfs), ns)
        game = {**game_of(s, fouls=True), 'server': self.tracker.dialect}
        key = json.dumps({k: v for k, v in game.items() if k != 'game_time'}, sort_keys=True)
        second = int(ns // 1_000_000_000)
        if (key, second) != self._last_game:
            self._last_game = (key, second)
            self.write('/truth/game', 'std_msgs/msg/String', self.msgs.string(json.dumps(game)), ns)
        self._static(ns, s.team_left, 0.0)
        self._static(ns, s.team_right, math.pi)

    def _static(self, ns: int, team: str | None, yaw: float) -> None:
        if not team or team in self._static_done:
            return
        self._static_done.add(team)
        m = np.eye(4)
        m[:2, :2] = [[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]]
        self.write(
            '/tf_static',
            'tf2_msgs/msg/TFMessage',
            self.msgs.tf([self.msgs.transform(ns, 'world', f'{team}/field', m)]),
            ns,
        )

    # -- loop
    def run(self) -> None:
        end = time.monotonic() + self.args.duration if self.args.duration else math.inf
        next_discovery = 0.0
        while self.running and time.monotonic() < end:
            if time.monotonic() >= next_discovery:
                self.discover()
                next_discovery = time.monotonic() + 1.0
            self._drain(wait=0.005)
            self.poll_sink()
            self.poll_monitor()

    def _receive(self) -> None:
        """The DDS thread: run the executor, whose callbacks queue each message for the main loop."""
        while self._receiving:
            try:
                self.executor.spin_once(timeout_sec=0.1)
            except Exception as exc:  # noqa: BLE001 - shutting down (context or executor gone), else reported
                if not self._receiving:
                    return
                print(f'record: receiving over DDS: {exc!r}', file=sys.stderr, flush=True)
                time.sleep(0.1)

    def _drain(self, most: int = 500, wait: float = 0.0) -> int:
        """Handle up to ``most`` of the messages the DDS thread queued: a sync-mode match outruns one a loop.

        ``wait``: how long to wait for the first one. Returns how many were handled.
        """
        taken = 0
        while taken < most:
            try:
                handler, args = self._inbox.get(timeout=wait) if wait > 0 and not taken else self._inbox.get_nowait()
            except queue.Empty:
                break
            handler(*args)
            taken += 1
        return taken

    def finish(self, quiet: float = 0.05, most: float = 1.0) -> None:
        """Catch up before the bag closes: what had reached the recorder when it was stopped is written too.

        A loaded recorder runs behind the players (up to 1.7 s in a sync-mode match): their messages wait in
        its subscriptions and the monitor's in its socket. Take them until ``quiet`` s pass with none, or for
        ``most`` s at the longest (a team that plays on never goes quiet).
        """
        end = time.monotonic() + most
        while time.monotonic() < end:
            if not self._drain(most=10_000, wait=quiet) + self.poll_sink() + self.poll_monitor():
                return

    def close(self) -> None:
        if self.sink is not None:
            self.sink.close()
        if self.trainer is not None:
            self.trainer.close()
        if self.writer is not None:
            self.writer.close()
        if self.dump is not None:
            self.dump.close()
        if hasattr(self, 'node'):
            self._receiving = False
            if hasattr(self, '_receiver'):
                self._receiver.join(timeout=1.0)
            self.executor.shutdown()
            self.node.destroy_node()
            self.rclpy.try_shutdown()


def record_parser() -> argparse.ArgumentParser:
    """Arguments of ``robocup3d record``."""
    p = argparse.ArgumentParser(prog='robocup3d record', description=__doc__.splitlines()[0])
    p.add_argument('--out', '-o', default=None, help='the bag directory to create (must not exist)')
    p.add_argument(
        '--publish-tf',
        action='store_true',
        help='also publish /tf and /tf_static live (needs tf2_msgs: a ROS 2 install); robocup3d tf: this, no bag',
    )
    p.add_argument('--teams', nargs='+', required=True, help='team names: every topic under /<team>/ is recorded')
    p.add_argument(
        '--monitor-port', type=int, default=0, help="the server's monitor port for the ground truth (0: none)"
    )
    p.add_argument(
        '--server',
        choices=('auto', 'mujoco', 'simspark'),
        default='auto',
        help='the monitor stream: RCSSServerMJ (mujoco), rcssserver3d (simspark), or auto: from its first message',
    )
    p.add_argument('--host', default='127.0.0.1', help='the server host (loopback)')
    p.add_argument(
        '--robot', default='auto', help="the robots' model for TF (T1, K1, nao0..nao4; auto: from the joint names)"
    )
    p.add_argument('--tf-period', type=float, default=0.1, help="s of server time between a player's link TF")
    p.add_argument(
        '--exclude',
        nargs='*',
        default=[],
        metavar='PATTERN',
        help='topics in a player\'s namespace not to record (shell patterns: "vision/objects" "world_model/*")',
    )
    p.add_argument(
        '--no-rebuild',
        dest='rebuild',
        action='store_false',
        help="subscribe to the players' percept topics (joint_states, imu, vision/*, ...) instead of rebuilding "
        'them from raw/percept: the old way, which makes every player build and send them',
    )
    p.add_argument(
        '--per-topic',
        action='store_true',
        help="subscribe to each of a player's raw/percept, raw/action, pose, ball, players and odom, not to its "
        'record/cycle that holds them (one message every 5 cycles): the way before it, which costs the players more',
    )
    p.add_argument(
        '--no-sink',
        dest='sink',
        action='store_false',
        help="take the players' record/cycle over DDS, not through a local socket (the way before it, which costs "
        'the players more; a player that does not connect to the socket goes over DDS anyway)',
    )
    p.add_argument(
        '--reliable',
        action='store_true',
        help='subscribe reliably to every topic (default: best effort but for latched topics and '
        'raw/percept, odom: what a reliable reader costs the players)',
    )
    p.add_argument('--dump-monitor', metavar='FILE', default=None, help='also write the monitor messages, one a line')
    p.add_argument('--duration', type=float, default=0.0, help='stop after this many wall seconds (0: at SIGINT)')
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d record``."""
    args = record_parser().parse_args(argv)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    if not args.out and not args.publish_tf:
        print('robocup3d record: give --out BAG (or --publish-tf for live TF only)', file=sys.stderr)
        return 2
    if args.publish_tf and importlib.util.find_spec('tf2_msgs') is None:
        print(
            'robocup3d record: --publish-tf needs tf2_msgs, which a ROS 2 install has and PyPI does not: '
            'on the pip install TF goes into bags (--out) and robocup3d view',
            file=sys.stderr,
        )
        return 2
    try:
        rec = Recorder(args)
    except (FileExistsError, OSError) as exc:
        print(f'robocup3d record: {exc}', file=sys.stderr)
        return 2

    def stop(_signum: int, _frame: object) -> None:
        rec.running = False

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        rec.start_ros()
        rec.connect_monitor()
        rec.run()
        rec.finish()
    finally:
        rec.close()
    total = sum(rec.counts.values())
    where = f'in {args.out}' if args.out else 'published live'
    print(f'robocup3d record: {total} messages on {len(rec.counts)} topics {where}', flush=True)
    if rec.monitor_clock is not None:
        how = 'the game time' if rec.monitor_clock.exact else '/clock' if rec.clock_ns else 'nothing: monitor time'
        print(f'robocup3d record: rcssserver3d truth put on server time from {how}', flush=True)
    if rec.tracker is not None and rec.tracker.errors:
        print(f'robocup3d record: {rec.tracker.errors} monitor messages did not fit the scene graph', flush=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
