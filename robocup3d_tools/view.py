"""``robocup3d view``: serve a match to Foxglove over its WebSocket protocol (PyPI ``foxglove-sdk``, 127.0.0.1).

From a bag (``--bag BAG``, played on its recorded timing, ``--rate``) or live (subscribing with rclpy
to the running teams' topics in this ROS domain, and with ``--monitor-port`` to the server's monitor
for the ground truth; ``/truth/*`` topics are taken too when something publishes them, such as
``robocup3d replay``). Channels:

* ``/field`` (foxglove.SceneUpdate): grass, lines, centre circle, goals; once a second;
* ``/truth/scene`` (SceneUpdate): every robot (box, post, label) and the ball from the ground truth;
* ``/robots/links`` (SceneUpdate): every robot from its model (the Nao's primitives, the T1/K1 meshes, which
  the server hands out itself over ``fetchAsset``), each link locked to its TF frame, so the limbs move;
* ``/<team>/p<unum>/beliefs`` (SceneUpdate): that player's pose (arrow), its ball, the robots it tracks;
* ``/game`` (JSON): play mode, game time, score, teams;
* ``/tf`` (foxglove.FrameTransforms): the bag's ``/tf`` and ``/tf_static``; live, ``world -> <team>/p<unum>/odom
  -> base_link`` from the ground truth (:mod:`robocup3d_tools.odom_frames`, with no odometry) and
  ``world -> <team>/field``.

Messages carry server time (``log_time``) and the server broadcasts it (``time`` capability), so
Foxglove's clock follows the match. In Foxglove: Open connection, Foxglove WebSocket, ``ws://127.0.0.1:PORT``.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

from robocup3d_tools.match_data import player_of
from robocup3d_tools.odom_frames import OdomFrames
from robocup3d_tools.replay import BagError, _why, open_bag, scan
from robocup3d_tools.view_robots import MeshAssets, RobotModels, robot_scene
from robocup3d_tools.view_scene import (
    ViewState,
    belief_scene,
    field_scene,
    frame_transforms,
    transform,
    truth_scene,
)

__all__ = ['ViewServer', 'main', 'play_bag', 'run_live']

_BELIEF_TOPICS = ('pose', 'ball', 'players', 'game_state')
_TRUTH = re.compile(r'^/truth/[^/]+/p\d+/pose$')


def _wanted(topic: str) -> bool:
    if topic in ('/truth/ball', '/truth/game', '/tf', '/tf_static') or _TRUTH.match(topic):
        return True
    who = player_of(topic)
    return who is not None and who[1] in _BELIEF_TOPICS


def _transform_of(ns: int, parent: str, child: str, m: object) -> object:
    from robocup3d_tools.monitor_truth import matrix_quaternion  # noqa: PLC0415

    return transform(ns, parent, child, tuple(float(v) for v in m[:3, 3]), matrix_quaternion(m))


class ViewServer:
    """The Foxglove server, its channels and the :class:`ViewState` they are drawn from."""

    def __init__(self, host: str, port: int, field: object, truth_period: float = 0.04, belief_period: float = 0.1):
        import foxglove  # noqa: PLC0415 - optional package ([viz] extra)
        from foxglove.channels import FrameTransformsChannel, SceneUpdateChannel  # noqa: PLC0415
        from foxglove.websocket import ServerListener  # noqa: PLC0415

        self._fg = foxglove
        self._scene_channel = SceneUpdateChannel
        self.ctx = foxglove.Context()
        self.subscribed = threading.Event()
        outer = self

        class _Listener(ServerListener):
            def on_subscribe(self, client: object, channel: object) -> None:
                outer.subscribed.set()

        self.assets, self.models = MeshAssets(), RobotModels()
        self.server = foxglove.start_server(
            name='robocup3d',
            host=host,
            port=port,
            context=self.ctx,
            capabilities=[foxglove.Capability.Time],
            server_listener=_Listener(),
            asset_handler=self.assets,
        )
        self.field = field
        self.state = ViewState()
        self.field_ch = SceneUpdateChannel('/field', context=self.ctx)
        self.truth_ch = SceneUpdateChannel('/truth/scene', context=self.ctx)
        self.tf_ch = FrameTransformsChannel('/tf', context=self.ctx)
        self.links_ch = SceneUpdateChannel('/robots/links', context=self.ctx)
        self.link_frames: set[str] = set()  # '<team>/p<unum>/<link>' seen below a base_link
        self.game_ch = foxglove.Channel(
            '/game',
            message_encoding='json',
            schema={'type': 'object', 'title': 'robocup3d game state'},
            context=self.ctx,
        )
        self.belief_ch: dict[str, object] = {}
        self._channel_lock = threading.Lock()
        self.static_tf: dict[str, object] = {}  # child -> FrameTransform of /tf_static, sent again each second
        self.truth_period, self.belief_period = int(truth_period * 1e9), int(belief_period * 1e9)
        self._last_truth = -(10**18)
        self._last_belief: dict[str, int] = {}
        self._last_tick = -(10**18)
        self.now_ns = 0
        self.sent = 0

    @property
    def port(self) -> int:
        """The port the server listens on (127.0.0.1)."""
        return self.server.port

    def handle(self, topic: str, t_ns: int, msg: object) -> None:
        """Take one decoded message and publish what it changes."""
        self.now_ns = max(self.now_ns, t_ns)
        if topic in ('/tf', '/tf_static'):
            tfs = frame_transforms(msg)
            if topic == '/tf_static':
                for tr, out in zip(msg.transforms, tfs, strict=True):
                    self.static_tf[tr.child_frame_id] = out
            self.log_transforms(tfs, t_ns)
            new = {tr.child_frame_id for tr in msg.transforms if tr.header.frame_id.endswith('/base_link')}
            if not new <= self.link_frames:
                self.link_frames |= new
                self.publish_links(t_ns)
        changed = self.state.update(topic, t_ns, msg)
        if changed == 'truth':
            self.publish_truth(t_ns)
        elif changed == 'game':
            self.game_ch.log({k: v for k, v in self.state.game.items() if k != 'source'}, log_time=t_ns)
            self.sent += 1
        elif changed is not None and abs(t_ns - self._last_belief.get(changed, -(10**18))) >= self.belief_period:
            self._last_belief[changed] = t_ns
            self.belief_channel(changed).log(belief_scene(self.state, changed, t_ns), log_time=t_ns)
            self.sent += 1
        self.tick(t_ns)

    def log_transforms(self, transforms: list[object], t_ns: int) -> None:
        """FrameTransform messages on ``/tf``."""
        self.tf_ch.log(self._fg.messages.FrameTransforms(transforms=transforms), log_time=t_ns)
        self.sent += 1

    def belief_channel(self, player: str) -> object:
        """The channel of a player's beliefs (``/<team>/p<unum>/beliefs``), made on first use."""
        with self._channel_lock:  # the ROS discovery and message threads both ask: one channel, never two
            ch = self.belief_ch.get(player)
            if ch is None:
                ch = self.belief_ch[player] = self._scene_channel(f'/{player}/beliefs', context=self.ctx)
        return ch

    def publish_truth(self, t_ns: int, force: bool = False) -> None:
        """The ground-truth scene, at most every ``truth_period``."""
        if force or abs(t_ns - self._last_truth) >= self.truth_period:  # abs: live time may start on the wall clock
            self._last_truth = t_ns
            self.truth_ch.log(truth_scene(self.state, t_ns), log_time=t_ns)
            self.sent += 1

    def tick(self, t_ns: int) -> None:
        """Once a second of match time: the field and the static transforms again (for clients that join late)."""
        self.server.broadcast_time(t_ns)
        if abs(t_ns - self._last_tick) < 1_000_000_000:
            return
        self._last_tick = t_ns
        self.field_ch.log(field_scene(self.field, t_ns), log_time=t_ns)
        if self.static_tf:
            self.log_transforms(list(self.static_tf.values()), t_ns)
        if self.link_frames:
            self.publish_links(t_ns)

    def publish_links(self, t_ns: int) -> None:
        """Every robot from its model on the link frames the TF names (frame-locked: TF moves them)."""
        scene = robot_scene(self.link_frames, self.state.sides, self.models, self.assets, t_ns)
        self.links_ch.log(scene, log_time=t_ns)
        self.sent += 1

    def refresh(self, t_ns: int) -> None:
        """Everything again (after the bag's end, for clients that connect then): field, TF, truth, game, beliefs."""
        self._last_tick = -(10**18)
        self.tick(t_ns)
        self.publish_truth(t_ns, force=True)
        if self.state.game:
            self.game_ch.log({k: v for k, v in self.state.game.items() if k != 'source'}, log_time=t_ns)
        for player, ch in self.belief_ch.items():
            ch.log(belief_scene(self.state, player, t_ns), log_time=t_ns)

    def stop(self) -> None:
        """Close the server."""
        self.server.stop()


def play_bag(view: ViewServer, bag: Path, rate: float, start: float, stop: threading.Event) -> int:
    """Publish the bag on its recorded timing (scaled by ``rate``); returns the number of messages used."""
    from rosbags.typesys import Stores, get_typestore  # noqa: PLC0415 - optional package ([ros] extra)

    store = get_typestore(Stores.ROS2_KILTED)
    reader = open_bag(bag)
    used = 0
    try:
        wanted = {c.id for c in reader.connections if _wanted(c.topic)}
        for c in reader.connections:  # every channel advertised before the first message
            who = player_of(c.topic)
            if who is not None and who[1] in ('pose', 'ball', 'players'):
                view.belief_channel(who[0])
        start_ns = reader.start_time + int(start * 1e9)
        wall0 = t0 = None
        messages = reader.messages(start=start_ns)
        while not stop.is_set():
            try:
                item = next(messages, None)
                if item is None:
                    break
                conn, t, raw = item
                if conn.id not in wanted:
                    continue
                msg = store.deserialize_cdr(raw, conn.msgtype)
            except Exception as exc:  # noqa: BLE001 - a damaged bag found while playing: one line
                raise BagError(
                    f'{reader.bag_name}: corrupted or truncated data after {used} messages ({_why(exc)})'
                ) from None
            if wall0 is None:
                wall0, t0 = time.monotonic(), t
            delay = wall0 + (t - t0) / 1e9 / rate - time.monotonic()
            if delay > 0 and stop.wait(delay):
                break
            view.handle(conn.topic, t, msg)
            used += 1
    finally:
        reader.close()
    return used


class _Monitor:
    """Ground truth from the server's monitor port into the view (as ``robocup3d record`` reads it).

    ``server``: ``mujoco``, ``simspark`` or ``auto`` (from the first message). rcssserver3d's monitor
    has no server time: its truth is shown at the latest time the view has (the players' ``/clock``).
    """

    def __init__(self, host: str, port: int, server: str = 'auto') -> None:
        from robocup3d_bridge.link import LinkDown  # noqa: PLC0415
        from robocup3d_bridge.percept import Dialect  # noqa: PLC0415
        from robocup3d_bridge.trainer import MonitorState, TrainerClient  # noqa: PLC0415

        self.where = f'{host}:{port}'
        self.trainer = TrainerClient(host, port, Dialect.SIMSPARK if server == 'simspark' else Dialect.MUJOCO)
        try:
            self.trainer.connect()
        except (LinkDown, OSError) as exc:
            self.trainer.close()
            raise ConnectionError(f'no monitor on {self.where} ({_why(exc)})') from None
        self.tracker = None if server == 'auto' else self._tracker(server)
        self.state = MonitorState()
        self.odom = OdomFrames()  # no twists live: world -> odom carries the motion, as in a bag without odom
        self._game_key = None
        self._full_asked = 0.0

    def _tracker(self, server: str) -> object:
        from robocup3d_bridge.percept import Dialect  # noqa: PLC0415
        from robocup3d_tools.monitor_truth import SceneTracker  # noqa: PLC0415
        from robocup3d_tools.simspark_truth import SimsparkTracker  # noqa: PLC0415

        self.trainer.dialect = Dialect.SIMSPARK if server == 'simspark' else Dialect.MUJOCO
        return SimsparkTracker() if server == 'simspark' else SceneTracker()

    def poll(self, view: ViewServer) -> None:
        from robocup3d_bridge.link import LinkDown  # noqa: PLC0415
        from robocup3d_tools.monitor_truth import game_of, matrix_quaternion, read_truths  # noqa: PLC0415

        if self.trainer is None:
            return
        from robocup3d_tools.simspark_truth import is_simspark_message  # noqa: PLC0415

        try:
            batch = self.trainer.receive(0.0)
            if batch and self.tracker is None:
                self.tracker = self._tracker('simspark' if is_simspark_message(batch[0]) else 'mujoco')
            if getattr(self.tracker, 'needs_full', False) and time.monotonic() > self._full_asked + 1.0:
                self._full_asked = time.monotonic()  # a new rcssserver3d connection starts with diffs
                self.trainer.request_full_state()
        except LinkDown:
            print(f'robocup3d view: the monitor on {self.where} closed: no more ground truth', file=sys.stderr)
            self.trainer.close()
            self.trainer = None
            return
        if self.tracker is None:
            return
        simspark = self.tracker.dialect == 'simspark'
        for ns, truth in read_truths(batch, self.state, self.tracker):
            if simspark and view.now_ns:
                ns = view.now_ns  # no server time in rcssserver3d's monitor: the players' latest
            s = self.state
            game = game_of(s)
            view.state.set_game(game)
            key = (s.play_mode, s.score_left, s.score_right, s.team_left, s.team_right, int(s.game_time or 0))
            if key != self._game_key:
                self._game_key = key
                view.game_ch.log(game, log_time=ns)
            view.state.ball = truth.ball
            view.state.robots = {
                f'{team}/p{unum}': (tuple(float(v) for v in m[:3, 3]), matrix_quaternion(m))
                for (team, unum), m in truth.robots.items()
            }
            tfs = []
            for (team, unum), m in sorted(truth.robots.items()):
                p = f'{team}/p{unum}'
                world_odom, odom_base = self.odom.frames(p, ns, m)
                tfs.append(_transform_of(ns, 'world', f'{p}/odom', world_odom))
                tfs.append(_transform_of(ns, f'{p}/odom', f'{p}/base_link', odom_base))
            for team, side in view.state.sides.items():
                yaw = 0.0 if side == 'left' else math.pi
                tfs.append(
                    transform(
                        ns, 'world', f'{team}/field', (0.0, 0.0, 0.0), (0, 0, math.sin(yaw / 2), math.cos(yaw / 2))
                    )
                )
            if tfs:
                view.log_transforms(tfs, ns)
            view.now_ns = max(view.now_ns, ns)
            view.publish_truth(ns)
            view.tick(ns)

    def close(self) -> None:
        if self.trainer is not None:
            self.trainer.close()


def run_live(view: ViewServer, args: argparse.Namespace, stop: threading.Event) -> None:
    """Subscribe to the teams' topics (found once a second) until ``stop``; the monitor too with ``--monitor-port``."""
    import rclpy  # noqa: PLC0415 - optional package ([ros] extra)
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: PLC0415
    from rclpy.signals import SignalHandlerOptions  # noqa: PLC0415

    monitor = _Monitor(args.host, args.monitor_port, args.server) if args.monitor_port else None
    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('robocup3d_view')
    subs: dict[str, object] = {}
    clock = {'ns': 0}

    def on_message(topic: str, msg: object) -> None:
        header = getattr(msg, 'header', None)
        ns = header.stamp.sec * 10**9 + header.stamp.nanosec if header is not None else 0
        view.handle(topic, max(ns, clock['ns'], view.now_ns), msg)  # server time, never back

    def on_clock(msg: object) -> None:
        clock['ns'] = msg.clock.sec * 10**9 + msg.clock.nanosec

    def discover() -> None:
        for topic, types in node.get_topic_names_and_types():
            if topic in subs or not types:
                continue
            who = player_of(topic)
            team = who[0].split('/', 1)[0] if who else topic.split('/')[2] if _TRUTH.match(topic) else None
            wanted = topic in ('/clock', '/truth/ball', '/truth/game') or (
                (_TRUTH.match(topic) or (who is not None and who[1] in _BELIEF_TOPICS))
                and (not args.teams or team in args.teams)
            )
            if not wanted:
                continue
            try:
                pkg, _, name = types[0].split('/')
                cls = getattr(importlib.import_module(f'{pkg}.msg'), name)
            except (ValueError, ImportError, AttributeError):
                subs[topic] = None
                continue
            pubs = node.get_publishers_info_by_topic(topic)
            best_effort = any(p.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT for p in pubs)
            latched = pubs and all(p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in pubs)
            qos = QoSProfile(
                depth=10,
                reliability=ReliabilityPolicy.BEST_EFFORT if best_effort else ReliabilityPolicy.RELIABLE,
                durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
            )
            callback = on_clock if topic == '/clock' else (lambda m, t=topic: on_message(t, m))
            subs[topic] = node.create_subscription(cls, topic, callback, qos)
            who = player_of(topic)
            if who is not None and who[1] in ('pose', 'ball', 'players'):
                view.belief_channel(who[0])  # advertised now, before its first message

    try:
        next_discovery = 0.0
        while not stop.is_set():
            if time.monotonic() >= next_discovery:
                discover()
                next_discovery = time.monotonic() + 1.0
                if not view.now_ns:  # nothing with a time yet: the field at least
                    view.refresh(clock['ns'])
            rclpy.spin_once(node, timeout_sec=0.01)
            if monitor is not None:
                monitor.poll(view)
    finally:
        if monitor is not None:
            monitor.close()
        node.destroy_node()
        rclpy.try_shutdown()


def view_parser() -> argparse.ArgumentParser:
    """Arguments of ``robocup3d view``."""
    p = argparse.ArgumentParser(prog='robocup3d view', description=__doc__.splitlines()[0])
    p.add_argument('--bag', type=Path, default=None, help='play this bag (directory or .mcap); without: live')
    p.add_argument('--port', type=int, default=8765, help='WebSocket port on 127.0.0.1 (0: a free one; default 8765)')
    p.add_argument('--rate', type=float, default=1.0, help='bag: speed factor (2: twice as fast)')
    p.add_argument('--start', type=float, default=0.0, help="bag: start this many seconds after the bag's start")
    p.add_argument('--no-wait', action='store_true', help='bag: play at once, not when the first client subscribes')
    p.add_argument('--exit-at-end', action='store_true', help='bag: stop at its end (default: serve until Ctrl-C)')
    p.add_argument('--teams', nargs='*', default=[], help='live: only these teams (default: every /<team>/p<n>/pose)')
    p.add_argument('--monitor-port', type=int, default=0, help="live: the server's monitor port for the ground truth")
    p.add_argument('--host', default='127.0.0.1', help='live: the server host for --monitor-port (loopback)')
    p.add_argument(
        '--server',
        choices=['auto', 'mujoco', 'simspark'],
        default='auto',
        help="the server: its field, and how to read --monitor-port (auto: from the bag; live, RCSSServerMJ's "
        'field and the monitor stream told apart by its first message)',
    )
    p.add_argument('--rules', default='ssim', help='RCSSServerMJ rule book (field size): ssim, ssim26, fifa')
    return p


def _field(args: argparse.Namespace) -> object:
    from robocup3d_perception.field import field_for  # noqa: PLC0415

    server = args.server
    if server == 'auto':
        server = 'mujoco'
        if args.bag is not None:
            reader = open_bag(args.bag)
            try:
                if not any(c.topic.startswith('/truth/') for c in reader.connections):
                    server = 'simspark'
            finally:
                reader.close()
    return field_for(server, args.rules)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d view``: exit 2 with one line for a bag that cannot be read."""
    parser = view_parser()
    args = parser.parse_args(argv)
    if args.rate <= 0 or args.start < 0:
        parser.error('--rate must be > 0 and --start >= 0')
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    stop = threading.Event()

    def on_signal(_signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        if args.bag is not None:
            reader = open_bag(args.bag)  # the whole bag is checked before the server starts
            try:
                scan(reader)
            finally:
                reader.close()
        field = _field(args)
    except BagError as exc:
        print(f'robocup3d view: {exc}', file=sys.stderr)
        return 2
    try:
        view = ViewServer('127.0.0.1', args.port, field)
    except RuntimeError as exc:
        print(f'robocup3d view: cannot serve on 127.0.0.1:{args.port} ({exc})', file=sys.stderr)
        return 2
    print(
        f'robocup3d view: serving on ws://127.0.0.1:{view.port} (Foxglove: Open connection, Foxglove WebSocket)',
        flush=True,
    )
    try:
        if args.bag is None:
            run_live(view, args, stop)
            return 0
        if not args.no_wait:
            print('robocup3d view: the bag plays when a client subscribes', flush=True)
            while not stop.is_set() and not view.subscribed.wait(0.2):
                pass
        used = play_bag(view, args.bag, args.rate, args.start, stop)
        print(f'robocup3d view: end of the bag ({used} messages)', flush=True)
        while not args.exit_at_end and not stop.wait(1.0):
            view.refresh(view.now_ns)
        return 0
    except (BagError, ConnectionError) as exc:
        print(f'robocup3d view: {exc}', file=sys.stderr)
        return 2
    finally:
        view.stop()


if __name__ == '__main__':
    raise SystemExit(main())
