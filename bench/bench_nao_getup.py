"""Nao get-up and stand benchmark on rcssserver3d, through the running graph.

Per Nao type, one server and the real player process (``python -m
robocup3d_tools.player --server simspark --type N``: bridge, motion and strategy
nodes). The trainer (monitor port) keeps the game in ``PlayOn`` (no beams), puts the
robot on its feet at a random place and heading, and is the ground truth. A ROS node in
this process watches ``motion_state`` and knocks the robot over by publishing a falling
pose on ``joint_targets`` (``front``: hips flexed hard, arms swung back; ``back``: hips
extended, knees bent; ``left``/``right``: both hips rolled to that side); it clears the pose
as soon as the motion node reports the fall.
The motion node's own fall detector (:mod:`robocup3d_motion.nao_fall`) then picks the
get-up skill (``skills/data/nao/getup_*.skl``), played by the skill engine through the
P joint controller, and we time how long it takes to be upright.

*Upright* is judged from the server's scene graph (ground truth, never given to the
controller): the torso's z axis within 25 degrees of vertical and the torso at least
``UPRIGHT_Z`` m above the ground, with the motion node neither fallen nor getting up,
held for ``HOLD`` (0.5 s) of game time. The time to upright is from the motion node's
fall report to the start of that hold. A trial fails if the robot is not upright
``TIMEOUT`` s after the fall, or is not still standing 1 s later; the ``refall`` column counts
the trials in which the motion node reported a fall within ``REFALL`` (2 s) after the hold.

    PYTHONPATH=. python bench/bench_nao_getup.py --fast --trials 20 [--types 0 1 2 3 4]
        [--directions front back left right] [--seed 1] [--params FILE...] [-v] [--trace]
    PYTHONPATH=. python bench/bench_nao_getup.py --fast --stand 60     # stand test only

``--fast`` runs the server with ``SIMSPARK_SYNC=1 SIMSPARK_REALTIME=0`` (flat out; the
agent sets the pace); without it the server runs in real time as in a match. Set
``ROS_DOMAIN_ID`` (default 87) and ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``.
``--own-loop`` is a search aid: no player process, our own loop here (ServerLink + skill
engine + fall detector + the motion node's JointController, with its P gain and target-velocity
feed-forward, and its pause between get-up attempts), much faster. It still differs from the
graph (no balance controller while standing, no late bridge replies, a different knock-down), so
confirm through the graph.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from robocup3d_bridge.config_files import load_config  # noqa: E402
from robocup3d_bridge.link import LinkDown, ServerLink  # noqa: E402
from robocup3d_bridge.percept import Dialect  # noqa: E402
from robocup3d_bridge.perception import parse_percept  # noqa: E402
from robocup3d_bridge.protocol import Action, JointCommand, make_protocol  # noqa: E402
from robocup3d_bridge.trainer import TrainerClient, parse_monitor_message, simspark_torsos  # noqa: E402
from robocup3d_description.robots import RobotSpec, nao  # noqa: E402
from robocup3d_motion.fall import fall_direction  # noqa: E402
from robocup3d_motion.getup import getup_skill_for  # noqa: E402
from robocup3d_motion.joint_control import JointController, control_settings  # noqa: E402
from robocup3d_motion.landing import LandingRule, LandingWatch  # noqa: E402
from robocup3d_motion.nao_fall import NaoFallDetector  # noqa: E402
from robocup3d_motion.skills.engine import SkillPlayer, SkillRegistry, load_nao_registry  # noqa: E402
from robocup3d_tools.servers import connect_trainer, free_port, start_simspark_server  # noqa: E402

_D2R = math.pi / 180.0

UPRIGHT_Z = 0.30  # m, torso height (standing Nao ~0.34-0.38 with bent knees; sitting < 0.25)
UPRIGHT_COS = math.cos(25 * _D2R)
HOLD = 0.5  # s
TIMEOUT = 10.0  # s after the fall is detected
REFALL = 2.0  # s after the hold in which a reported fall counts as falling again (graph trials)
GETUP_PAUSE = 0.3  # s between get-up attempts (the motion node's default getup_pause)


ROBOTS_CFG = load_config(REPO / 'config' / 'robots.yaml')


def _config_kp() -> float:
    """The Nao's P gain (1/s) from ``config/robots.yaml``, as the motion node uses it."""
    kp = (ROBOTS_CFG.get('nao') or {}).get('controller', {}).get('kp', 8.0)
    return float(kp['default'] if isinstance(kp, dict) else kp)


KP = _config_kp()  # 1/s, P gain of the velocity controller: v = kp * (target - angle)

#: Our standing pose (deg), as SKILL_NAO_STAND ends.
STAND_DEG = {
    'hj1': 0,
    'hj2': 0,
    'laj1': -90,
    'laj2': 10,
    'laj3': -90,
    'laj4': -30,
    'raj1': -90,
    'raj2': -10,
    'raj3': 90,
    'raj4': 30,
    'llj1': 0,
    'llj2': 0,
    'llj3': 20,
    'llj4': -40,
    'llj5': 20,
    'llj6': 0,
    'rlj1': 0,
    'rlj2': 0,
    'rlj3': 20,
    'rlj4': -40,
    'rlj5': 20,
    'rlj6': 0,
}

#: Poses that throw the robot over (deg); held until the detector reports the fall.
KNOCK_DEG = {
    # Upper body pitched forward over the toes, arms back: falls on its face.
    'front': {'llj3': 70, 'rlj3': 70, 'llj4': 0, 'rlj4': 0, 'llj5': 30, 'rlj5': 30, 'laj1': 90, 'raj1': 90},
    # Hips extended, knees bent, ankles toes-up: sits back and rolls onto the back.
    'back': {'llj3': -25, 'rlj3': -25, 'llj4': -60, 'rlj4': -60, 'llj5': -45, 'rlj5': -45, 'laj1': -120, 'raj1': -120},
    # Both legs rolled to one side (hip roll, the ankles the other way), the arm on that side up.
    'left': {'llj2': -35, 'rlj2': -35, 'llj6': 25, 'rlj6': 25, 'raj2': -90},
    'right': {'llj2': 35, 'rlj2': 35, 'llj6': -25, 'rlj6': -25, 'laj2': 90},
}


# ----------------------------------------------------------------------------- server


@dataclass
class Sim:
    """A running rcssserver3d (started from a temp cwd) and a trainer on its monitor port."""

    proc: subprocess.Popen
    agent_port: int
    monitor_port: int
    cwd: Path
    trainer: TrainerClient
    full_state: bytes = b''

    def poll(self, timeout: float = 0.0) -> None:
        """Drain the monitor stream (it must be read or the server's send buffer fills)."""
        for _ in range(100):
            batch = self.trainer.receive(timeout)
            if not batch:
                return
            timeout = 0.0
            for msg in batch:
                with contextlib.suppress(ValueError):
                    parse_monitor_message(msg, 'simspark', self.trainer.state)
                if b'(RSG ' in msg[:20000]:
                    self.full_state = msg

    def request_state(self) -> None:
        self.full_state = b''
        self.trainer.request_full_state()

    def log_tail(self) -> str:
        log = self.cwd / 'server.log'
        lines = log.read_text(errors='replace').splitlines() if log.exists() else []
        return '\n'.join(line for line in lines if 'Material2DTexture' not in line)[-2000:]


@contextlib.contextmanager
def simspark(fast: bool = False) -> Iterator[Sim]:
    """rcssserver3d on free loopback ports; SIGKILLed (by PID) afterwards."""
    cwd = Path(tempfile.mkdtemp(prefix='r3d_nao_getup_'))
    agent_port, monitor_port = free_port(), free_port()
    env = dict(os.environ)
    if fast:
        env.update(SIMSPARK_SYNC='1', SIMSPARK_REALTIME='0')
    proc = start_simspark_server(cwd, agent_port, monitor_port, env=env)
    trainer = None
    try:
        trainer = connect_trainer(monitor_port, Dialect.SIMSPARK, timeout=20.0)
        yield Sim(proc, agent_port, monitor_port, cwd, trainer)
    finally:
        if trainer is not None:
            trainer.close()
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)  # it ignores SIGTERM
        proc.wait(10)
        shutil.rmtree(cwd, ignore_errors=True)


# ----------------------------------------------------------------------------- ground truth


@dataclass(frozen=True, slots=True)
class Torso:
    """Torso pose from the monitor scene graph: position (m) and the torso z axis in the world."""

    pos: tuple[float, float, float]
    up: tuple[float, float, float]

    @property
    def upright(self) -> bool:
        return self.pos[2] >= UPRIGHT_Z and self.up[2] >= UPRIGHT_COS


def torsos(message: bytes | str) -> dict[tuple[str, int], Torso]:
    """Torso poses ``{('Left'|'Right', unum): Torso}`` from a full ``(RSG 0 1)`` monitor message."""
    return {k: Torso(pos, up) for k, (pos, up) in simspark_torsos(message).items()}


# ----------------------------------------------------------------------------- agent


class NaoAgent:
    """One Nao on the agent port: sense, control towards targets (hinge velocities), syn.

    The velocities come from the motion node's own :class:`JointController` (P gain of
    ``config/robots.yaml`` plus its target-velocity feed-forward), so skills move the
    joints here as they do through the player process.
    """

    def __init__(self, sim: Sim, robot_type: int, unum: int = 1, team: str = 'Bench') -> None:
        self.sim = sim
        self.robot: RobotSpec = nao(robot_type)
        self.proto = make_protocol(self.robot, team, unum)
        self.unum = unum
        self.controller = JointController(self.robot, control_settings(self.robot, ROBOTS_CFG))
        self.link = ServerLink('127.0.0.1', sim.agent_port, 5.0)
        self.percept = None
        self.t = 0.0
        self.joints: dict[str, float] = {}

    def connect(self) -> None:
        self.link.connect()
        for m in self.proto.hello():
            self.link.send(m)
        self._recv()
        for m in self.proto.after_first_message():
            self.link.send(m)

    def close(self) -> None:
        self.link.close()

    def _recv(self) -> None:
        msgs: list[bytes] = []
        deadline = time.monotonic() + 10.0
        while not msgs:
            if time.monotonic() > deadline:
                raise LinkDown('no message from the server for 10 s')
            msgs = [m for m in self.link.receive(0.5) if m is not None]  # None: a frame dropped unread
            self.sim.poll()
        p = parse_percept(
            msgs[-1], 'simspark'
        )  # REP-103 IMU axes; a late agent may find several queued: act on the newest
        self.percept = p
        if p.time is not None:
            self.t = p.time
        self.joints.update(p.joint_positions)

    def step(self, targets: dict[str, float], kp: float = 0.0) -> None:
        """Send velocities towards ``targets`` (rad; unnamed joints: the hold pose), then sense.

        ``kp``: a skill's own P gain for every joint (1/s; 0: the robot's), as ``MotionCore.gains``."""
        gains = dict.fromkeys(self.controller.settings.kp, kp) if kp > 0.0 else None
        cmd = self.controller.command(targets, self.joints, kp=gains)
        vel = dict(zip(cmd.names, cmd.velocity, strict=True))
        self.link.send(self.proto.encode(Action(joints=JointCommand(velocity=vel))).text)
        self._recv()


# ----------------------------------------------------------------------------- trial logic


def registry(robot_type: int, extra_params: tuple[str, ...] = ()) -> SkillRegistry:
    """The Nao skills as the motion node loads them for ``robot_type`` (plus ``extra_params`` files)."""
    return load_nao_registry(robot_type, extra_params)


def stand_targets() -> dict[str, float]:
    return {k: v * _D2R for k, v in STAND_DEG.items()}


@dataclass
class Controller:
    """The robot-side loop: fall detection (IMU only) and get-up/stand skill selection."""

    agent: NaoAgent
    skills: SkillRegistry
    detector: NaoFallDetector = field(default_factory=NaoFallDetector)
    player: SkillPlayer | None = None
    reset: bool = False
    targets: dict[str, float] = field(default_factory=stand_targets)
    getup_started: float | None = None
    getups: int = 0
    pause_until: float = -math.inf
    on_cycle: Callable[[NaoAgent], None] | None = None
    land: LandingWatch | None = None  # the fall's landing watch (MotionCore's), if its get-up waits for it
    fell_to: str = 'none'

    def sense(self) -> None:
        p = self.agent.percept
        was_fallen = self.detector.fallen
        self.state = self.detector.update(p.gyro, p.accel, 0.02, p.forces)
        if not self.state.fallen:
            self.land = None
        elif not was_fallen:  # the fall report: watch for the landing if its get-up waits for it
            self.fell_to = self.state.direction
            played = self.skills.played(f'GETUP_{self.fell_to.upper()}')
            rule = LandingRule.from_params(self.skills.param, played.lower())
            self.land = LandingWatch(rule, self.agent.t) if rule.active and self.fell_to in ('front', 'back') else None
        if self.land is not None and p.gyro is not None:
            self.land.update(self.agent.t, p.gyro, p.accel)

    def landed(self, name: str) -> bool:
        """Whether get-up ``name`` may start (``MotionCore._landed``)."""
        return self.land is None or name != f'GETUP_{self.fell_to.upper()}' or self.land.ready(self.agent.t)

    def cycle(self, override: dict[str, float] | None = None) -> None:
        """One cycle: if fallen and idle, start the get-up; play it; else stand.

        As the motion node: the skill is chosen from the side the torso lies on now, and
        after a get-up ends the next one waits ``GETUP_PAUSE``."""
        self.sense()
        if override is None:
            lying = fall_direction(self.state.up)
            name = getup_skill_for(lying, self.skills) if self.state.fallen else None
            if self.player is None and name is not None and self.agent.t >= self.pause_until and self.landed(name):
                self.player = SkillPlayer(self.skills[self.skills.played(name)], self.agent.robot)
                self.reset, self.getups = True, self.getups + 1
                self.getup_started = self.agent.t
            if self.player is not None:
                out, done = self.player.execute(self.reset, self.agent.t, self.agent.joints)
                self.reset = False
                self.targets.update(out)
                if done:
                    self.player = None
                    self.targets = stand_targets()
                    self.pause_until = self.agent.t + GETUP_PAUSE
        targets = dict(self.targets)
        if override:
            targets.update(override)
        kp = 0.0
        if self.player is not None and not override:
            kp = self.skills.param(f'{self.player.skill.name.lower()}_kp', 0.0)
        self.agent.step(targets, kp)
        if self.on_cycle:
            self.on_cycle(self.agent)


def truth(sim: Sim, unum: int, step: Callable[[], None], timeout: float = 5.0) -> Torso | None:
    """The agent's torso pose, from a requested full monitor state; ``step`` runs the agent meanwhile
    (in sync mode the server only moves on, and answers, when the agent does)."""
    sim.request_state()
    deadline = time.monotonic() + timeout
    while not sim.full_state and time.monotonic() < deadline:
        step()
    if not sim.full_state:
        return None
    return torsos(sim.full_state).get(('Left', unum))


class TruthTracker:
    """Samples the ground truth every ``period`` s of server time while the agent runs."""

    def __init__(self, sim: Sim, unum: int, period: float = 0.1) -> None:
        self.sim, self.unum, self.period = sim, unum, period
        self.next_t = -1.0
        self.pending = False
        self.last: Torso | None = None
        self.last_t = 0.0
        self.samples: list[tuple[float, Torso]] = []

    def __call__(self, agent: NaoAgent) -> None:
        if self.pending and self.sim.full_state:
            tor = torsos(self.sim.full_state).get(('Left', self.unum))
            self.pending = False
            if tor is not None:
                self.last, self.last_t = tor, agent.t
                self.samples.append((agent.t, tor))
        if not self.pending and agent.t >= self.next_t:
            self.sim.request_state()
            self.pending = True
            self.next_t = agent.t + self.period


def settle_stand(ctrl: Controller, seconds: float) -> None:
    t_end = ctrl.agent.t + seconds
    while ctrl.agent.t < t_end:
        ctrl.agent.step(stand_targets())


def place(ctrl: Controller, x: float = 0.0, y: float = 0.0, theta: float = 0.0) -> None:
    """Put the robot on its feet at (x, y) with the stand pose, and let it settle."""
    agent = ctrl.agent
    for _ in range(3):
        agent.sim.trainer.move_agent(agent.unum, 'Left', x, y, 0.40, theta)
        agent.step(stand_targets())
    settle_stand(ctrl, 1.0)
    ctrl.detector.reset()
    ctrl.player, ctrl.targets, ctrl.pause_until = None, stand_targets(), -math.inf


#: notes of trials that measured no get-up: the bench could not set up the fall
NOT_PLACED = 'could not be put on its feet'
NOT_KNOCKED = 'did not fall'


@dataclass
class Trial:
    robot_type: int
    direction: str
    detected: str = ''  # fall direction the detector reported
    success: bool = False
    time_to_upright: float | None = None  # s from the fall detection
    note: str = ''
    attempts: int = 0  # get-ups played
    refall: bool = False  # graph trials: a fall reported within REFALL s after the hold
    trace: list[str] = field(default_factory=list)  # graph trials: truth and motion state every 0.1 s


def run_trial(sim: Sim, ctrl: Controller, direction: str, rng: random.Random) -> Trial:
    agent = ctrl.agent
    trial = Trial(agent.robot.robot_type, direction)
    place(ctrl, rng.uniform(-8, -2), rng.uniform(-5, 5), rng.uniform(-180, 180))  # own half: BeforeKickOff rules
    knock = {k: v * _D2R for k, v in KNOCK_DEG[direction].items()}
    # Knock it over: hold the falling pose until the detector reports the fall.
    t0 = agent.t
    while not ctrl.detector.fallen:
        ctrl.cycle(override=knock)
        if agent.t - t0 > 4.0:
            trial.note = NOT_KNOCKED
            return trial
    trial.detected = ctrl.detector.direction
    t_fall = agent.t
    getups0 = ctrl.getups
    tracker = TruthTracker(sim, agent.unum)
    ctrl.on_cycle = tracker
    upright_since: float | None = None
    try:
        seen = 0
        held = False
        while upright_since is not None or agent.t - t_fall < TIMEOUT:  # as run_graph_trial
            ctrl.cycle()
            tor = tracker.last
            if len(tracker.samples) > seen:
                seen = len(tracker.samples)
                name = ctrl.player.skill.name if ctrl.player is not None else 'stand'
                trial.trace.append(
                    f'{tracker.last_t - t_fall:5.1f}s z={tor.pos[2]:.2f} up={tor.up[2]:+.2f} skill={name} '
                    f'fallen={ctrl.state.fallen} tilt_deg={math.degrees(ctrl.state.tilt):.0f}'
                )
            if tor is not None and tor.upright and ctrl.player is None:
                if upright_since is None and tracker.last_t - t_fall < TIMEOUT:
                    upright_since = tracker.last_t
                if upright_since is not None and tracker.last_t - upright_since >= HOLD:
                    held = True
                    break
            elif tor is not None and tracker.last_t > (upright_since or -1):
                upright_since = None
        if not held:
            trial.attempts = ctrl.getups - getups0
            tor = tracker.last
            trial.note = (
                f'not upright after {TIMEOUT:.0f} s (torso z={tor.pos[2]:.2f} up={tor.up[2]:.2f})'
                if tor
                else 'no truth'
            )
            return trial
        trial.time_to_upright = upright_since - t_fall
        # Still standing 1 s later?
        t1 = agent.t
        while agent.t - t1 < 1.0 or tracker.last_t < t1 + 1.0:  # a truth sample from 1 s on
            ctrl.cycle()
            if len(tracker.samples) > seen:
                seen = len(tracker.samples)
                tor = tracker.last
                trial.trace.append(f'{tracker.last_t - t_fall:5.1f}s z={tor.pos[2]:.2f} up={tor.up[2]:+.2f} (hold)')
            if agent.t - t1 > 5.0:
                break
        trial.attempts = ctrl.getups - getups0
        tor = tracker.last if tracker.last_t >= t1 + 1.0 else None
        trial.success = bool(tor and tor.upright)
        if not trial.success:
            trial.note = 'fell again after getting up'
        return trial
    finally:
        ctrl.on_cycle = None


# ----------------------------------------------------------------------------- through the graph

TEAM = 'Bench'
#: Torso height (m) at which the trainer puts the robot back on its feet (a standing Nao: ~0.35).
PLACE_Z = 0.36


def default_domain_id() -> int:
    """ROS domain for the bench: ``ROS_DOMAIN_ID`` if set, else 87."""
    return int(os.environ.get('ROS_DOMAIN_ID') or 87)


class GraphRig:
    """The real player process (``python -m robocup3d_tools.player --server simspark``) on a
    server, watched and steered from outside: the trainer places the robot and is the ground
    truth; a ROS node in this process reads ``motion_state`` and knocks the robot over by
    publishing a falling pose on ``joint_targets`` (cleared as soon as the fall is reported).

    Time is the server's game time (the trainer keeps the server in ``PlayOn``, where it runs
    and no beam can stand the robot up).
    """

    def __init__(
        self, sim: Sim, robot_type: int, domain_id: int, unum: int = 1, skill_params: tuple[str, ...] = ()
    ) -> None:
        self.sim, self.robot_type, self.unum, self.domain_id = sim, robot_type, unum, domain_id
        self.skill_params = skill_params
        self.robot = nao(robot_type)
        self.proc: subprocess.Popen | None = None
        self.state: dict = {}
        self.falls: list[tuple[float, str]] = []  # (game time, direction) of each fallen report
        self.bridge: dict[str, str] = {}  # the bridge's latest diagnostics (replies_fallback, ...)
        self._node = self._executor = self._context = self._pub = None

    # -- life cycle
    def start(self, timeout: float = 60.0) -> None:
        env = dict(os.environ)
        env.update(
            PYTHONPATH=os.pathsep.join(p for p in (str(REPO), env.get('PYTHONPATH', '')) if p),
            ROS_DOMAIN_ID=str(self.domain_id),
            ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
        )
        cmd = [sys.executable, '-m', 'robocup3d_tools.player', '--server', 'simspark', '--host', '127.0.0.1']
        cmd += ['--port', str(self.sim.agent_port), '--team', TEAM, '--unum', str(self.unum)]
        cmd += ['--type', str(self.robot_type), '--no-raw', '--no-world-model', '--no-play']  # this harness drives it
        if self.skill_params:
            cmd += ['--skill-params', *self.skill_params]
        with open(self.sim.cwd / 'player.log', 'ab') as out:
            self.proc = subprocess.Popen(
                cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._ros_up()
        if not self.spin_until(lambda: bool(self.state) and self.sim.trainer.state.team_left == TEAM, timeout):
            raise RuntimeError(f'player did not come up:\n{self.player_log()}')
        self.sim.trainer.set_play_mode('PlayOn')

    def close(self) -> None:
        if self._executor is not None:
            import rclpy  # noqa: PLC0415

            self._executor.shutdown()
            self._node.destroy_node()
            rclpy.shutdown(context=self._context)
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def player_log(self) -> str:
        log = self.sim.cwd / 'player.log'
        return log.read_text(errors='replace')[-3000:] if log.exists() else ''

    def _ros_up(self) -> None:
        import json  # noqa: PLC0415

        import rclpy  # noqa: PLC0415
        from diagnostic_msgs.msg import DiagnosticArray  # noqa: PLC0415
        from rclpy.context import Context  # noqa: PLC0415
        from rclpy.executors import SingleThreadedExecutor  # noqa: PLC0415
        from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: PLC0415
        from rclpy.signals import SignalHandlerOptions  # noqa: PLC0415
        from sensor_msgs.msg import JointState  # noqa: PLC0415
        from std_msgs.msg import String  # noqa: PLC0415

        self._context = Context()
        rclpy.init(context=self._context, domain_id=self.domain_id, signal_handler_options=SignalHandlerOptions.NO)
        self._node = rclpy.create_node(f'bench_nao_getup_{os.getpid()}', context=self._context)
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self._node)
        ns = f'/{TEAM}/p{self.unum}'
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)

        def on_state(msg: String) -> None:
            st = json.loads(msg.data)
            if st.get('fallen') and not self.state.get('fallen'):
                self.falls.append((self.now, st.get('direction', '')))
            self.state = st

        self._node.create_subscription(String, f'{ns}/motion_state', on_state, latched)

        def on_diagnostics(msg: DiagnosticArray) -> None:
            for status in msg.status:
                if status.name == f'{ns}/bridge':
                    self.bridge = {kv.key: kv.value for kv in status.values}

        self._node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, 10)
        self._pub = self._node.create_publisher(JointState, f'{ns}/joint_targets', 1)
        self._JointState = JointState

    # -- io
    @property
    def now(self) -> float:
        """Server game time (s)."""
        return self.sim.trainer.state.game_time

    def pump(self, timeout: float = 0.005) -> None:
        """Drain the monitor stream and handle ROS messages once."""
        self.sim.poll()
        self._executor.spin_once(timeout_sec=timeout)
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f'player process exited ({self.proc.returncode}):\n{self.player_log()}')

    def spin_until(self, pred: Callable[[], bool], timeout: float) -> bool:
        """Pump until ``pred()`` or ``timeout`` wall seconds."""
        deadline = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > deadline:
                return False
            self.pump()
        return True

    def run_for(self, seconds: float, wall_timeout: float = 120.0) -> None:
        """Pump for ``seconds`` of game time."""
        t_end = self.now + seconds
        if not self.spin_until(lambda: self.now >= t_end, wall_timeout):
            raise RuntimeError(
                f'game time stuck at {self.now:.2f} (play mode {self.sim.trainer.state.play_mode}), '
                f'motion state {self.state}; player log:\n{self.player_log()}'
            )

    def truth(self, wall_timeout: float = 10.0) -> Torso | None:
        """The torso pose from a freshly requested full monitor state."""
        self.sim.request_state()
        if not self.spin_until(lambda: bool(self.sim.full_state), wall_timeout):
            return None
        return torsos(self.sim.full_state).get(('Left', self.unum))

    def set_targets(self, targets_deg: dict[str, float]) -> None:
        """Publish stand targets (deg) on ``joint_targets``; ``{}`` goes back to the hold pose."""
        names = list(targets_deg)
        self._pub.publish(self._JointState(name=names, position=[targets_deg[n] * _D2R for n in names]))

    # -- trials
    def place(self, x: float, y: float, theta: float, tries: int = 6) -> bool:
        """Put the robot on its feet (trainer) and wait until it stands still, not getting up."""
        trainer = self.sim.trainer
        before = self.now
        trainer.set_time(0.0)  # keep clear of half time (and the beams of the kick-off after it)
        trainer.set_play_mode('PlayOn')
        # Wait for the monitor to report the reset: run_for() counts from the time it last saw.
        if before > 1.0 and not self.spin_until(lambda: self.now < before - 0.5, 30.0):
            raise RuntimeError(f'the server did not take (time 0): game time {self.now:.2f}')
        self.run_for(0.1)
        for _ in range(tries):
            # A get-up still running would throw the robot over again: hold it on its feet until it ends.
            for _ in range(200):
                trainer.move_agent(self.unum, 'Left', x, y, PLACE_Z, theta)
                self.run_for(0.1)
                if not self.state.get('getup'):
                    break
            self.run_for(1.5)
            tor = self.truth()
            if tor is not None and tor.upright and not self.state.get('fallen') and not self.state.get('getup'):
                return True
        return False


def run_graph_trial(rig: GraphRig, direction: str, rng: random.Random) -> Trial:
    """Knock the player over ``direction`` and time its get-up (as :func:`run_trial`, through the graph)."""
    trial = Trial(rig.robot_type, direction)
    if not rig.place(rng.uniform(-8, -2), rng.uniform(-5, 5), rng.uniform(-180, 180)):
        trial.note = NOT_PLACED
        return trial
    getups0 = rig.state.get('getups', 0)
    late0 = int(rig.bridge.get('replies_fallback', 0))
    rig.falls.clear()
    rig.set_targets(KNOCK_DEG[direction])
    t0 = rig.now
    try:
        if not rig.spin_until(lambda: bool(rig.falls) or rig.now - t0 > 4.0, 60.0) or not rig.falls:
            trial.note = NOT_KNOCKED
            return trial
    finally:
        rig.set_targets({})
    t_fall, trial.detected = rig.falls[0]
    upright_since: float | None = None
    next_truth = t_fall
    wall_deadline = time.monotonic() + 120.0
    held = False
    # Until TIMEOUT, or the end of the hold of an upright spell that began before it (the monitor's
    # answers take a while, so the last sample may come after TIMEOUT).
    while upright_since is not None or rig.now - t_fall < TIMEOUT:
        if time.monotonic() > wall_deadline:
            raise RuntimeError(f'game time stuck at {rig.now:.2f} (play mode {rig.sim.trainer.state.play_mode})')
        rig.pump()
        if rig.now < next_truth:
            continue
        next_truth = rig.now + 0.1
        t = rig.now
        tor = rig.truth()
        st = rig.state
        trial.trace.append(
            f'{t - t_fall:5.1f}s z={tor.pos[2]:.2f} up={tor.up[2]:+.2f} ' if tor else f'{t - t_fall:5.1f}s no truth '
        )
        shown = ('skill', 'fallen', 'direction', 'getup', 'tilt_deg', 'landing')
        trial.trace[-1] += ' '.join(f'{k}={st.get(k)}' for k in shown)
        if tor is not None and tor.upright and not st.get('getup') and not st.get('fallen'):
            upright_since = t if upright_since is None and t - t_fall < TIMEOUT else upright_since
            if upright_since is not None and t - upright_since >= HOLD:
                held = True
                break
        else:
            upright_since = None
    if not held:
        tor = rig.truth()
        trial.note = (
            f'not upright after {TIMEOUT:.0f} s (torso z={tor.pos[2]:.2f} up={tor.up[2]:.2f}, '
            f'{rig.state.get("getups", 0) - getups0} get-ups)'
            if tor
            else 'no truth'
        )
        trial.trace.append(f'late bridge replies: {int(rig.bridge.get("replies_fallback", 0)) - late0}')
        return trial
    trial.time_to_upright = upright_since - t_fall
    trial.attempts = rig.state.get('getups', 0) - getups0
    falls0 = len(rig.falls)
    rig.run_for(1.0)
    trial.trace.append(f'late bridge replies: {int(rig.bridge.get("replies_fallback", 0)) - late0}')
    tor = rig.truth()
    trial.success = bool(tor and tor.upright)
    if not trial.success:
        trial.note = 'fell again after getting up'
    rig.run_for(REFALL - 1.0)
    trial.refall = len(rig.falls) > falls0
    return trial


@contextlib.contextmanager
def graph(
    robot_type: int, fast: bool, domain_id: int | None = None, skill_params: tuple[str, ...] = ()
) -> Iterator[GraphRig]:
    """A server, the player process of ``robot_type`` and the watching node; all stopped afterwards."""
    with simspark(fast) as sim:
        rig = GraphRig(sim, robot_type, default_domain_id() if domain_id is None else domain_id, 1, skill_params)
        try:
            rig.start()
            yield rig
        finally:
            rig.close()


@dataclass(frozen=True)
class Plan:
    """What a bench run does per type: ``trials`` knock-downs per direction, in order."""

    directions: tuple[str, ...]
    trials: int
    fast: bool
    seed: int
    verbose: bool = False
    skill_params: tuple[str, ...] = ()
    trace: bool = False  # print every trial's truth trace, not only those of failures and second attempts

    def rng(self, robot_type: int) -> random.Random:
        """The placements' random source for ``robot_type`` (same seed, same places)."""
        return random.Random(self.seed * 100 + robot_type)

    def run(self, trial: Callable[[str], Trial]) -> list[Trial]:
        """``trial(direction)`` for every direction and trial, printed as they end if verbose."""
        out: list[Trial] = []
        for direction in self.directions:
            for i in range(self.trials):
                out.append(trial(direction))
                if self.verbose or self.trace:
                    _print_trial(out[-1], i, self.trace)
        return out


def run_type_graph(robot_type: int, plan: Plan) -> list[Trial]:
    """``plan``'s trials of ``robot_type`` through the player process."""
    rng = plan.rng(robot_type)
    with graph(robot_type, plan.fast, skill_params=plan.skill_params) as rig:
        return plan.run(lambda direction: run_graph_trial(rig, direction, rng))


@dataclass
class StandResult:
    robot_type: int
    seconds: float  # game time watched
    falls: int  # falls the motion node reported
    samples: int  # ground-truth samples (one a second)
    not_upright: int  # samples in which the torso was not upright
    lowest: Torso | None  # the sample with the lowest torso
    final: Torso | None

    @property
    def ok(self) -> bool:
        return self.falls == 0 and self.not_upright == 0 and self.final is not None and self.final.upright


def stand_graph(robot_type: int, seconds: float = 60.0, fast: bool = True) -> StandResult:
    """The player process stands for ``seconds`` of game time; ground truth sampled every second."""
    with graph(robot_type, fast) as rig:
        if not rig.place(-4.0, 0.0, 0.0):
            return StandResult(robot_type, 0.0, 0, 0, 0, None, rig.truth())
        getups0, t0 = rig.state.get('getups', 0), rig.now
        rig.falls.clear()
        seen: list[Torso] = []
        while rig.now - t0 < seconds:
            rig.run_for(1.0)
            tor = rig.truth()
            if tor is not None:
                seen.append(tor)
        falls = max(len(rig.falls), rig.state.get('getups', 0) - getups0)
        lowest = min(seen, key=lambda tor: tor.pos[2], default=None)
        bad = sum(not tor.upright for tor in seen)
        return StandResult(robot_type, rig.now - t0, falls, len(seen), bad, lowest, rig.truth())


def _print_trial(tr: Trial, i: int, trace: bool = False) -> None:
    tt = f'{tr.time_to_upright:.2f}s' if tr.time_to_upright is not None else '-'
    print(
        f'  type {tr.robot_type} {tr.direction:5s} #{i + 1:2d}: detected={tr.detected or "-":5s} '
        f'{"ok  " if tr.success else "FAIL"} {tt} {tr.attempts} get-up(s) {tr.note}',
        flush=True,
    )
    if tr.trace and (trace or not tr.success or tr.attempts > 1):
        print('\n'.join(f'      {line}' for line in tr.trace), flush=True)


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return math.nan
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def run_type(robot_type: int, plan: Plan) -> list[Trial]:
    """``plan``'s trials of ``robot_type`` in our own loop (the search aid)."""
    rng = plan.rng(robot_type)
    skills = registry(robot_type, plan.skill_params)
    with simspark(plan.fast) as sim:
        agent = NaoAgent(sim, robot_type)
        agent.connect()
        try:
            ctrl = Controller(agent, skills)
            settle_stand(ctrl, 0.5)
            return plan.run(lambda direction: run_trial(sim, ctrl, direction, rng))
        finally:
            agent.close()


def table(results: list[Trial]) -> str:
    lines = [
        'type  direction  success   first-try  detected-as      median_s  p90_s   max_s   refall',
        '----  ---------  --------  ---------  ---------------  --------  ------  ------  ------',
    ]
    keys = sorted({(r.robot_type, r.direction) for r in results})
    for t, d in keys:
        rs = [r for r in results if (r.robot_type, r.direction) == (t, d)]
        ok = [r for r in rs if r.success]
        first = sum(r.attempts == 1 for r in ok)
        times = [r.time_to_upright for r in ok if r.time_to_upright is not None]
        det = {}
        for r in rs:
            det[r.detected or 'none'] = det.get(r.detected or 'none', 0) + 1
        dets = ','.join(f'{k}:{v}' for k, v in sorted(det.items()))
        med = statistics.median(times) if times else math.nan
        lines.append(
            f'{t:<4d}  {d:<9s}  {len(ok):>2d}/{len(rs):<2d}     {first:>2d}/{len(rs):<2d}      {dets:<15s}  '
            f'{med:8.2f}  '
            f'{percentile(times, 0.9):6.2f}  {max(times) if times else math.nan:6.2f}  '
            f'{sum(r.refall for r in rs):>2d}/{len(rs):<2d}'
        )
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--trials', type=int, default=20)
    ap.add_argument('--types', type=int, nargs='+', default=[0, 1, 2, 3, 4])
    ap.add_argument('--directions', nargs='+', default=['front', 'back'], choices=list(KNOCK_DEG))
    ap.add_argument('--fast', action='store_true', help='SIMSPARK_SYNC=1 SIMSPARK_REALTIME=0')
    ap.add_argument('--own-loop', action='store_true', help='search aid: our own loop instead of the player process')
    ap.add_argument('--stand', type=float, metavar='S', help='only the stand test: S s of game time per type')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--params', nargs='+', default=[], metavar='FILE', help='extra skill parameter files (tuning)')
    ap.add_argument('-v', '--verbose', action='store_true')
    ap.add_argument(
        '--trace',
        action='store_true',
        help="every trial's ground-truth trace (torso height and uprightness every 0.1 s of game time; without "
        '--fast, as the monitor answers in time); -v prints it for failures and second attempts only',
    )
    args = ap.parse_args(argv)
    # SIGTERM (timeout, kill) unwinds like Ctrl-C, so the server and the player process are stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.stand:
        ok = True
        for t in args.types:
            r = stand_graph(t, args.stand, args.fast)
            ok &= r.ok
            low = f'z={r.lowest.pos[2]:.2f} up={r.lowest.up[2]:.2f}' if r.lowest else '-'
            fin = f'z={r.final.pos[2]:.2f} up={r.final.up[2]:.2f}' if r.final else '-'
            print(
                f'type {t}: {"stands" if r.ok else "FAILS"} {r.seconds:.0f} s, falls {r.falls}, '
                f'lowest torso {low}, final {fin}',
                flush=True,
            )
        return 0 if ok else 1
    results: list[Trial] = []
    run = run_type if args.own_loop else run_type_graph
    plan = Plan(tuple(args.directions), args.trials, args.fast, args.seed, args.verbose, tuple(args.params), args.trace)
    for t in args.types:
        t0 = time.monotonic()
        results += run(t, plan)
        print(f'type {t} done in {time.monotonic() - t0:.0f} s wall', flush=True)
    print(
        f'{"own loop" if args.own_loop else "player process"}; upright = monitor scene-graph torso z >= '
        f'{UPRIGHT_Z} m and tilt <= 25 deg, held {HOLD} s; time from the fall report (IMU) to the start of that hold'
    )
    print(table(results))
    return 0 if all(r.success for r in results) else 1


if __name__ == '__main__':
    sys.exit(main())
