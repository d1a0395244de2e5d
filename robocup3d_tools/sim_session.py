"""One robot in the running graph: a server, a player process, and an observer here.

Used by ``robocup3d optimize``, ``bench/bench_walk.py`` and the live walk tests. The
server runs in sync mode as fast as it goes; the player is the real ``robocup3d player``
process (bridge + motion + strategy); this process talks to it over DDS like any other
node (``cmd_vel``, ``walk_target``, ``motion_request``) and reads the robot's true pose
from the server (scoring only, the player never uses it). The trainer (monitor port)
starts play and places the robot.

* RCSSServerMJ (``server='mujoco'``, robots T1/K1; ``--sync --no-realtime``): the torso
  ``pos``/``quat`` the bridge republishes as ``ground_truth/pose``, one per cycle; or, with
  ``truth='monitor'``, the torso in the monitor stream's scene (every other cycle), so that the
  player sends nothing for the observer, as in a match (the per-cycle CPU benches).
* rcssserver3d (``server='simspark'``, the Nao of ``robot_type`` 0-4; env ``SIMSPARK_SYNC=1
  SIMSPARK_REALTIME=0``): the trainer asks for a full scene (``reqfullstate``) as soon as
  the last one arrived, about every cycle or two, and reads the torso from it
  (:func:`robocup3d_bridge.trainer.simspark_torso_poses`). The clock is the game time of
  the monitor stream, so the session keeps the server in ``PlayOn`` (and resets the game
  time when it places the robot, clear of half time).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from robocup3d_bridge.percept import Dialect
from robocup3d_bridge.trainer import parse_monitor_message, simspark_ball, simspark_torso_poses
from robocup3d_tools.monitor_truth import SceneTracker
from robocup3d_tools.ros_env import ros_environment
from robocup3d_tools.servers import (
    END_WITH_PARENT,
    connect_trainer,
    free_port,
    start_mujoco_server,
    start_simspark_server,
    stop_process,
)

__all__ = ['Pose', 'SimSession', 'yaw_of']

REPO = Path(__file__).resolve().parents[1]
CYCLE = 0.02  # s of server time per agent cycle
#: wall s between two sends of a drive's command while it waits for the next pose (rcssserver3d's full
#: scenes come as far apart as the monitor stream lags: a command per scene could lapse, cmd_timeout)
RESEND_S = 0.01
SERVERS = ('mujoco', 'simspark')
REST_S = 20.0  # s of server time a placement waits for a get-up under way to end
PLACE_TRIES = 3  # placements until the robot stands upright after settling
#: torso height (m) at which the trainer puts a robot on its feet
PLACE_Z = {'T1': 0.68, 'K1': 0.57, 'nao': 0.36}
#: torso height (m) at which the trainer lays a robot down (RCSSServerMJ)
LYING_Z = {'T1': 0.25, 'K1': 0.2}
# Where ``place`` puts the ball on RCSSServerMJ: far from any walk task's path (its field is 55 x 36 m).
# Its 0.2.1 crashes when the ball touches a K1 (the K1's collision geoms have no names: an
# AttributeError in its contact filter ends the simulation), and a ball in the path is an obstacle.
BALL_ASIDE = (20.0, 15.0, 0.12)


@dataclass(frozen=True, slots=True)
class Pose:
    """Torso ground truth: position (m), heading (rad), how upright it is (z of its z axis) and which way it leans."""

    t: float  # server seconds since the session started (cycles * 0.02)
    x: float
    y: float
    z: float
    yaw: float
    up: float
    forward: float = 0.0  # its z axis along the heading (+: leaning forwards; sin of the lean)
    left: float = 0.0  # and across it (+: leaning to the left)


def _lean(yaw: float, ux: float, uy: float) -> tuple[float, float]:
    """The torso z axis's ground components (``ux``, ``uy``) along and left of the heading ``yaw``."""
    c, s = math.cos(yaw), math.sin(yaw)
    return c * ux + s * uy, -s * ux + c * uy


def yaw_of(w: float, x: float, y: float, z: float) -> float:
    """Heading of a (w, x, y, z) orientation: the torso x axis projected on the ground."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


class SimSession:
    """Server + one player process + observer; ``with SimSession(...) as s:`` starts and stops it."""

    def __init__(
        self,
        robot: str = 'T1',
        walk_config: str | Path | None = None,
        team: str = '',
        unum: int = 2,
        fast: bool = True,
        log_dir: Path | None = None,
        server: str = 'mujoco',
        robot_type: int = 0,
        player_args: tuple[str, ...] = (),
        play: bool = False,
        truth: str = 'player',
        kick_off: bool = True,
    ) -> None:
        if server not in SERVERS:
            raise ValueError(f'server must be one of {SERVERS}, got {server!r}')
        if truth not in ('player', 'monitor'):
            raise ValueError(f"truth must be 'player' or 'monitor', got {truth!r}")
        if server == 'simspark':
            robot = 'nao'
        # a team name of its own: sessions running side by side (other tests, other domains
        # that happen to collide) never share topics
        team = team or f'S{os.getpid() % 100000}'
        self.robot, self.team, self.unum, self.fast = robot, team, unum, fast
        self.server_kind, self.robot_type = server, robot_type
        self.walk_config = str(walk_config) if walk_config else ''
        self.player_args = tuple(player_args)  # more player options, e.g. ``('--world-model',)``
        self.play = play  # the player's strategy plays (else this process drives the robot)
        # RCSSServerMJ: leave BeforeKickOff at the start (else the player's strategy beams it every second)
        self.kick_off = kick_off
        # RCSSServerMJ's torso pose: from the player's ``ground_truth/pose`` (one a cycle: exact, but the
        # player builds and sends a message a cycle for it), or from the monitor stream (every other
        # cycle; the player sends nothing for it, as in a match: the per-cycle CPU benches use it)
        self.truth = 'player' if server == 'simspark' else truth
        self._scene: SceneTracker | None = None
        self._server_t0: float | None = None  # monitor truth: server time of the first scene
        self.log_dir = log_dir or Path(tempfile.mkdtemp(prefix='r3d_session_'))
        self.server: subprocess.Popen | None = None
        self.player: subprocess.Popen | None = None
        self.trainer = None
        self.node = None
        self.pose: Pose | None = None
        self.pose_seq = 0  # poses received so far
        self.cycles = 0
        self.drive_started = 0.0  # server time (s) of the last drive's first command
        self.state: dict = {}
        self._state_seq = 0  # motion_state messages taken
        self.strategy: dict = {}  # the player's strategy_state, when it plays
        self._game_time: float | None = None  # simspark: last game time seen
        self._truth_pending = False
        self._scenes = 0  # simspark: full scenes received so far
        self.ball: tuple[float, float, float] | None = None  # simspark: ball position (m) in the last full scene
        self.ball_t = 0.0  # its server time (s, as Pose.t)

    # -- lifecycle
    def __enter__(self) -> SimSession:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def simspark(self) -> bool:
        """True on rcssserver3d."""
        return self.server_kind == 'simspark'

    def start(self) -> SimSession:
        env = ros_environment()
        # rclpy in this process must join the same (local, per-run) domain
        os.environ.update({k: env[k] for k in ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_DOMAIN_ID')})
        env['PYTHONPATH'] = str(REPO) + os.pathsep + env.get('PYTHONPATH', '')
        env[END_WITH_PARENT] = '1'  # the server and player end with this process, however it ends
        aport, mport = free_port(), free_port()
        cmd = [sys.executable, '-m', 'robocup3d_tools.player', '--server', self.server_kind, '--port', str(aport)]
        cmd += ['--team', self.team, '--unum', str(self.unum), '--no-raw']
        if not self.play:
            cmd.append('--no-play')  # this process drives the robot
        if self.simspark:
            senv = dict(env, SIMSPARK_SYNC='1', SIMSPARK_REALTIME='0') if self.fast else env
            self.server = start_simspark_server(self.log_dir / 'server', aport, mport, env=senv)
            self.trainer = connect_trainer(mport, Dialect.SIMSPARK, timeout=30.0)
            cmd += ['--host', '127.0.0.1', '--type', str(self.robot_type)]
        else:
            extra = ['--sync', '--no-realtime'] if self.fast else []
            self.server = start_mujoco_server(self.log_dir / 'server', aport, mport, extra, env=env)
            self.trainer = connect_trainer(mport, Dialect.MUJOCO)
            if self.truth == 'monitor':
                self._scene = SceneTracker()
                self.trainer.listeners.append(self._on_monitor)
            cmd += ['--robot', self.robot]
        if self.walk_config:
            cmd += ['--walk-config', self.walk_config]
        if self.fast:
            # A server in sync mode runs as fast as the player answers, and this process, which
            # sends the commands, can fall behind it by many cycles on a loaded machine: keep a
            # command in force for 2 s of server time so that the lag does not stop the walk.
            cmd += ['--cmd-timeout', '2.0']
        if '--world-model' not in self.player_args:  # the tools measure the player without it unless asked
            cmd.append('--no-world-model')
        cmd += list(self.player_args)
        with open(self.log_dir / 'player.log', 'ab') as out:
            self.player = subprocess.Popen(
                cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._ros()
        if self.simspark:
            trainer = self.trainer
            self.spin_until(
                lambda: bool(self.state) and trainer.state.team_left == self.team, 90.0, 'the player did not come up'
            )
            trainer.set_time(0.0)
            trainer.set_play_mode('PlayOn')  # the game clock runs (our cycle count) and nobody beams
            self.spin_until(lambda: self.pose is not None, 60.0, 'no torso pose in the monitor stream')
        else:
            self.spin_until(lambda: self.pose is not None, 60.0, f'no torso pose from the {self.truth}')
            if self.play:  # the strategy beams in BeforeKickOff: its pose estimate settles within a second (a match
                self.wait_cycles(100)  # waits too, robocup3d_tools.match.SETTLE_S), then our kick-off
            if self.kick_off:
                self.trainer.send('(kickOff Left)')  # leave BeforeKickOff (the strategy beams there)
        self.wait_cycles(25)
        return self

    def _ros(self) -> None:
        import rclpy  # noqa: PLC0415 - after the domain is set
        from geometry_msgs.msg import PoseStamped, Twist  # noqa: PLC0415
        from sensor_msgs.msg import JointState  # noqa: PLC0415
        from std_msgs.msg import String  # noqa: PLC0415

        from robocup3d_bridge.node_main import LATCHED  # noqa: PLC0415

        self._rclpy = rclpy
        if not rclpy.ok():
            rclpy.init(args=[])
        self.node = rclpy.create_node('sim_session')
        ns = f'/{self.team}/p{self.unum}'
        if not self.simspark and self.truth == 'player':
            self.node.create_subscription(PoseStamped, f'{ns}/ground_truth/pose', self._on_pose, 10)
        self._watch = [
            (String, f'{ns}/motion_state', self._on_state, LATCHED),
            (String, f'{ns}/strategy_state', self._on_strategy, LATCHED),
        ]
        self._watching = [self.node.create_subscription(*w) for w in self._watch]
        self.pub_cmd = self.node.create_publisher(Twist, f'{ns}/cmd_vel', 1)
        self.pub_target = self.node.create_publisher(PoseStamped, f'{ns}/walk_target', 1)
        self.pub_request = self.node.create_publisher(String, f'{ns}/motion_request', 10)
        self.pub_targets = self.node.create_publisher(JointState, f'{ns}/joint_targets', 1)
        self._Twist, self._PoseStamped, self._String, self._JointState = Twist, PoseStamped, String, JointState

    def close(self) -> None:
        """Stop the player and the server; safe to call twice."""
        try:
            if self.node is not None:
                self.node.destroy_node()
                self.node = None
        finally:
            if self.player is not None:
                stop_process(self.player)
            if self.trainer is not None:
                self.trainer.close()
            if self.server is not None:
                stop_process(self.server, timeout=0.0 if self.simspark else 5.0)  # rcssserver3d ignores SIGTERM

    # -- inputs
    def _on_pose(self, msg: object) -> None:
        p, o = msg.pose.position, msg.pose.orientation
        self.cycles += 1
        up = 1.0 - 2.0 * (o.x * o.x + o.y * o.y)
        yaw = yaw_of(o.w, o.x, o.y, o.z)
        lean = _lean(yaw, 2.0 * (o.x * o.z + o.w * o.y), 2.0 * (o.y * o.z - o.w * o.x))
        self.pose = Pose(self.cycles * CYCLE, p.x, p.y, p.z, yaw, up, *lean)
        self.pose_seq += 1

    def _on_monitor(self, message: bytes) -> None:
        """RCSSServerMJ's monitor stream as the torso truth: the clock from its server time, the pose from its scene."""
        scene, state = self._scene, self.trainer.state
        if scene is None or not scene.update(message) or state.server_time is None:
            return
        if self._server_t0 is None:
            self._server_t0 = state.server_time
        self.cycles = max(self.cycles, round((state.server_time - self._server_t0) / CYCLE))
        m = scene.truth().robots.get((self.team, self.unum))
        if m is None:
            return
        yaw = math.atan2(m[1, 0], m[0, 0])
        forward, left = _lean(yaw, m[0, 2], m[1, 2])
        x, y, z, up = (float(v) for v in (m[0, 3], m[1, 3], m[2, 3], m[2, 2]))
        self.pose = Pose(self.cycles * CYCLE, x, y, z, float(yaw), up, float(forward), float(left))
        self.pose_seq += 1

    def _poll_simspark(self) -> None:
        """Read the rcssserver3d monitor stream: game time (cycles) and requested full scenes (pose)."""
        trainer = self.trainer
        for msg in trainer.receive(0.0):
            with contextlib.suppress(ValueError):
                parse_monitor_message(msg, Dialect.SIMSPARK, trainer.state)
            gt = trainer.state.game_time
            if self._game_time is None or gt != self._game_time:
                step = round((gt - self._game_time) / CYCLE) if self._game_time is not None else 0
                self.cycles += step if step > 0 else 1  # the clock was reset (or stands): one cycle
                self._game_time = gt
            if self._truth_pending and b'(RSG ' in msg[:4000]:
                self._truth_pending = False
                self._scenes += 1
                torso = simspark_torso_poses(msg).get(('Left', self.unum))
                ball = simspark_ball(msg)
                if ball is not None:
                    self.ball, self.ball_t = ball, self.cycles * CYCLE
                if torso is not None:
                    (x, y, z), up, yaw = torso
                    self.pose = Pose(self.cycles * CYCLE, x, y, z, yaw, up[2], *_lean(yaw, up[0], up[1]))
                    self.pose_seq += 1
        if not self._truth_pending:
            trainer.request_full_state()
            self._truth_pending = True

    def _on_state(self, msg: object) -> None:
        self._state_seq += 1
        try:
            self.state = json.loads(msg.data)
        except ValueError:
            pass

    def _on_strategy(self, msg: object) -> None:
        try:
            self.strategy = json.loads(msg.data)
        except ValueError:
            self.strategy = {'error': msg.data[:200]}

    def spin_until(self, pred: Callable[[], bool], timeout: float, what: str = '') -> bool:
        """Spin until ``pred()``; raise ``TimeoutError(what)`` (or return False) after ``timeout`` s."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.simspark:
                self._rclpy.spin_once(self.node, timeout_sec=0.001)
                self._poll_simspark()
            else:
                self._rclpy.spin_once(self.node, timeout_sec=0.01)
                if self.trainer.poll(0.0) and self.trainer.state.ball is not None:
                    # RCSSServerMJ: the ball as the monitor stream's scene last moved it
                    self.ball, self.ball_t = self.trainer.state.ball, self.cycles * CYCLE
            if pred():
                return True
            if self.player is not None and self.player.poll() is not None:
                raise RuntimeError(f'player exited with {self.player.returncode}; see {self.log_dir}/player.log')
        if what:
            raise TimeoutError(f'{what} (logs in {self.log_dir})')
        return False

    def catch_up(self, timeout: float = 60.0) -> None:
        """rcssserver3d: wait for a full scene the server made after this call.

        The monitor stream lags the server when this process falls behind (a loaded machine; the
        server in sync mode runs on at the player's pace): until then the clock (``cycles``), ``pose``
        and ``ball`` are as they were that long ago, while ``state`` (DDS) is current. After it they are
        at least as new as the call. RCSSServerMJ: nothing to do.
        """
        if not self.simspark:
            return
        # a request already out may have been sent before this call: its answer does not count
        goal = self._scenes + (2 if self._truth_pending else 1)
        self.spin_until(lambda: self._scenes >= goal, timeout, 'no full scene from the monitor stream')

    @contextlib.contextmanager
    def unwatched(self) -> Iterator[None]:
        """Within the block this process does not subscribe to the player's ``motion_state`` and ``strategy_state``
        (``state`` and ``strategy`` keep their last values), so that the player builds and sends neither, as in a
        match: a CPU bench then measures the player, not what watching it costs."""
        for sub in self._watching:
            self.node.destroy_subscription(sub)
        self._watching = []
        try:
            yield
        finally:
            seq = self._state_seq
            self._watching = [self.node.create_subscription(*w) for w in self._watch]
            self.spin_until(lambda: self._state_seq > seq, 2.0)  # the latched state, then a fresh one
            self.wait_cycles(3)

    def wait_cycles(self, n: int) -> None:
        """Wait for ``n`` server cycles, whatever the pace."""
        goal = self.cycles + n
        self.spin_until(lambda: self.cycles >= goal, 60.0 + n * 0.1, 'pose stream stopped')

    # -- commands
    def velocity(self, vx: float, vy: float = 0.0, wz: float = 0.0) -> None:
        """Publish one ``cmd_vel`` (robot frame)."""
        msg = self._Twist()
        msg.linear.x, msg.linear.y, msg.angular.z = float(vx), float(vy), float(wz)
        self.pub_cmd.publish(msg)

    def walk_to(self, x: float, y: float, yaw: float) -> None:
        """Publish one ``walk_target`` relative to the robot (base_footprint)."""
        msg = self._PoseStamped()
        msg.header.frame_id = 'base_footprint'
        msg.pose.position.x, msg.pose.position.y = float(x), float(y)
        msg.pose.orientation.w, msg.pose.orientation.z = math.cos(yaw / 2.0), math.sin(yaw / 2.0)
        self.pub_target.publish(msg)

    def request(self, text: str) -> None:
        """Publish one ``motion_request`` (once the motion node listens: requests are not latched)."""
        self.spin_until(lambda: self.pub_request.get_subscription_count() > 0, 10.0, 'no motion node listens')
        self.pub_request.publish(self._String(data=text))

    def hold_pose(self, targets_deg: dict[str, float]) -> None:
        """Publish stand targets (degrees) on ``joint_targets``; ``{}`` returns to the hold pose."""
        names = list(targets_deg)
        self.pub_targets.publish(self._JointState(name=names, position=[math.radians(targets_deg[n]) for n in names]))

    def lay_down(self, x: float, y: float, yaw: float, pitch: float, roll: float = 0.0, z: float = 0.0) -> None:
        """RCSSServerMJ: put the robot down lying (torso turned by ``pitch`` then ``roll`` rad, facing ``yaw``)."""
        if self.simspark:
            raise ValueError('rcssserver3d places robots upright only: knock the Nao over with hold_pose')
        cy, sy = math.cos(yaw / 2.0), math.sin(yaw / 2.0)
        cp, sp = math.cos(pitch / 2.0), math.sin(pitch / 2.0)
        cr, sr = math.cos(roll / 2.0), math.sin(roll / 2.0)
        # q = yaw(z) * pitch(y) * roll(x)
        w = cy * cp * cr + sy * sp * sr
        qx = cy * cp * sr - sy * sp * cr
        qy = cy * sp * cr + sy * cp * sr
        qz = sy * cp * cr - cy * sp * sr
        z = z or LYING_Z.get(self.robot, 0.25)
        move = f'(move3d {x:.4f} {y:.4f} {z:.4f} {w:.6f} {qx:.6f} {qy:.6f} {qz:.6f})'
        self.trainer.send(f'(agent (unum {self.unum}) (team {self.team}) {move})')

    def place(
        self,
        x: float,
        y: float,
        yaw: float = 0.0,
        settle_cycles: int = 150,
        ball: tuple[float, float, float] | None = BALL_ASIDE,
    ) -> None:
        """Put the robot upright at (x, y) facing ``yaw`` (trainer), the ball at ``ball`` (RCSSServerMJ; default
        aside, None: where it is), and let it stand.

        On RCSSServerMJ the game is put in ``PlayOn`` first (the ball dropped), as the referee moves a
        player off the field that stands in the other half during our kick-off.
        """
        z = PLACE_Z.get(self.robot, 0.7)
        # let a walk come to rest first: dropped from the stand height, a crouched robot lands hard
        self.request('stand')
        if self.simspark:
            self.spin_until(lambda: self.state.get('skill') == 'stand' and not self.state.get('fallen'), 5.0)
            self.wait_cycles(40)  # and the stand has risen out of the walk's crouch (0.5 s)
            self._place_simspark(x, y, yaw, z, settle_cycles)
            return
        for _ in range(PLACE_TRIES):
            self._rest()
            self.wait_cycles(40)  # and the stand has risen out of the walk's crouch (0.5 s)
            self._move(x, y, yaw, z, ball)
            self.wait_cycles(settle_cycles)
            if self.pose is not None and self.pose.up > 0.9 and self._standing():
                return

    def _standing(self) -> bool:
        return self.state.get('skill') == 'stand' and not self.state.get('fallen') and not self.state.get('getup')

    def _rest(self) -> None:
        """Wait, in server cycles (up to :data:`REST_S` s), for the robot to stand: a robot that fell is
        getting up (a T1 in 3-11 s), and lifted upright by the trainer while its get-up runs it is thrown
        over again. A wait in wall seconds ended before the get-up on a loaded machine (the server waits
        for the player in sync mode), and the next run (a random course's next part, the next candidate of
        an optimize batch) fell at once."""
        end = self.cycles + round(REST_S / CYCLE)
        while self.cycles < end and not self._standing():
            self.wait_cycles(5)

    def _move(self, x: float, y: float, yaw: float, z: float, ball: tuple[float, float, float] | None) -> None:
        """RCSSServerMJ: the trainer puts the robot at (x, y, z) facing ``yaw``, the ball at ``ball``."""
        if (self.trainer.state.play_mode or '').lower() not in ('playon', 'play_on'):
            # the session starts with our kick-off, when the referee moves a player in the other half off the field
            self.trainer.drop_ball()
            self.spin_until(lambda: (self.trainer.state.play_mode or '').lower() in ('playon', 'play_on'), 5.0)
        w, qz = math.cos(yaw / 2.0), math.sin(yaw / 2.0)
        self.trainer.send(
            f'(agent (unum {self.unum}) (team {self.team}) (move3d {x:.4f} {y:.4f} {z:.4f} {w:.6f} 0 0 {qz:.6f}))'
        )
        if ball is not None:
            self.trainer.move_ball(*ball)

    def _place_simspark(self, x: float, y: float, yaw: float, z: float, settle_cycles: int) -> None:
        """Hold the Nao on its feet until no get-up runs, then let it settle (game clock reset to 0)."""
        trainer = self.trainer
        trainer.set_time(0.0)  # clear of half time
        trainer.set_play_mode('PlayOn')
        for _ in range(100):  # let a running walk come to rest first (a set switch starts afresh)
            if not self.state.get('walk', {}).get('moving'):
                break
            self.velocity(0.0)
            self.wait_cycles(5)
        for _ in range(4):
            for _ in range(100):  # a get-up still running would throw it over again
                trainer.move_agent(self.unum, 'Left', x, y, z, math.degrees(yaw) - 90.0)  # it faces theta + 90
                self.wait_cycles(5)
                if not self.state.get('getup') and not self.state.get('fallen'):
                    break
            self.wait_cycles(settle_cycles)
            seq = self.pose_seq
            self.spin_until(lambda seq=seq: self.pose_seq > seq, 30.0, 'no torso pose in the monitor stream')
            assert self.pose is not None
            if self.pose.up > 0.9 and not self.state.get('fallen') and not self.state.get('getup'):
                return

    def drive(
        self,
        seconds: float,
        command: Callable[[float], tuple[float, float, float]],
        fallen_up: float = 0.5,
        keep_alive: float = 0.0,
    ) -> list[Pose]:
        """Send ``command(t)`` as cmd_vel every cycle until the poses cover ``seconds`` of server time.

        Returns the ground-truth trajectory from the first command on (``drive_started``, s);
        stops early when the torso's z axis tips below ``fallen_up`` (a fall). RCSSServerMJ
        sends a pose every cycle; rcssserver3d's poses (full scenes on request) lag its clock,
        flat out by up to 0.7 s (more on a loaded machine), so the drive starts on a caught-up
        clock (:meth:`catch_up`), sends the command again every ``RESEND_S`` wall s between poses,
        and goes on until a pose from ``seconds`` on arrives.

        ``keep_alive`` > 0: send a command only when it changes, and the same again after ``keep_alive`` s of
        server time (well inside the player's ``--cmd-timeout``), as a strategy asks for a walk; a CPU bench then
        measures the player and not a message a cycle from this process. (Counted in wall s, as it was until
        session 44, the commands lapsed in sync mode, where the server runs 7-8 times faster than real time.)
        """
        trajectory: list[Pose] = []
        self.catch_up()  # the first command's time is the server's, not a lagging stream's
        start = self.cycles
        self.drive_started = start * CYCLE
        last: list = [None, 0.0]  # the command sent last and when (wall s)
        gap = keep_alive if keep_alive > 0.0 else RESEND_S

        def send(cmd: tuple[float, float, float], every_cycle: bool) -> None:
            now = self.cycles * CYCLE if keep_alive > 0.0 else time.monotonic()
            if (every_cycle and keep_alive <= 0.0) or cmd != last[0] or now - last[1] >= gap:
                self.velocity(*cmd)
                last[:] = [cmd, now]

        while not trajectory or trajectory[-1].t - self.drive_started < seconds - 1e-9:
            t = (self.cycles - start) * CYCLE
            send(command(t), True)
            seq = self.pose_seq

            def posed(seq: int = seq) -> bool:
                # the command again every RESEND_S while the next pose is on its way: it stays in force
                # however far apart the full scenes come (a lapse stops a sprint, and a stop is no sprint)
                if self.pose_seq > seq:
                    return True
                send(command((self.cycles - start) * CYCLE), False)
                return False

            self.spin_until(posed, 60.0, 'pose stream stopped')
            assert self.pose is not None
            if self.pose.t <= self.drive_started:  # seen before the first command
                continue
            trajectory.append(self.pose)
            if self.pose.up < fallen_up:
                break
        return trajectory
