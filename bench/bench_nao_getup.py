"""Nao get-up benchmark on rcssserver3d (no ROS: core + ServerLink + TrainerClient).

For each Nao type and fall direction, one agent stands, is knocked down by a falling
motion of its own (``front``: hips flexed hard and arms swung back; ``back``: hips
extended and knees bent), the fall detector of :mod:`robocup3d_motion.fall` sees the
fall and picks the get-up skill (``skills/data/nao/getup_*.skl``, played by the skill
engine through the P joint controller), and we time how long it takes to be upright.

*Upright* is judged from the server's own scene graph (ground truth, never given to the
controller): the torso's z axis within 25 degrees of vertical and the torso at least
``UPRIGHT_Z`` m above the ground, held for ``HOLD`` (0.5 s) of server time. The time to
upright is from the moment the fall was detected to the start of that hold. A trial
fails if the robot is not upright ``TIMEOUT`` s after the fall, or is not still standing
1 s later.

    PYTHONPATH=. python bench/bench_nao_getup.py --trials 20 [--types 0 1 2 3 4]
        [--directions front back] [--fast] [--seed 1]

``--fast`` runs the server with ``SIMSPARK_SYNC=1 SIMSPARK_REALTIME=0`` (flat out; the
agent sets the pace); without it the server runs in real time as in a match.
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
from robocup3d_motion.getup import getup_skill_for  # noqa: E402
from robocup3d_motion.nao_fall import NaoFallDetector  # noqa: E402
from robocup3d_motion.robots import RobotSpec, nao  # noqa: E402
from robocup3d_motion.skills.engine import DATA_DIR, SkillPlayer, SkillRegistry, load_registry  # noqa: E402
from robocup3d_strategy.servers import connect_trainer, free_port, start_simspark_server  # noqa: E402

NAO_SKILLS = DATA_DIR / 'nao'
_D2R = math.pi / 180.0

UPRIGHT_Z = 0.30  # m, torso height (standing Nao ~0.34-0.38 with bent knees; sitting < 0.25)
UPRIGHT_COS = math.cos(25 * _D2R)
HOLD = 0.5  # s
TIMEOUT = 10.0  # s after the fall is detected


def _config_kp() -> float:
    """The Nao's P gain (1/s) from ``config/robots.yaml``, as the motion node uses it."""
    kp = (load_config(REPO / 'config' / 'robots.yaml').get('nao') or {}).get('controller', {}).get('kp', 8.0)
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
            batch = self.trainer.link.receive(timeout)
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
    """One Nao on the agent port: sense, P-control towards targets (hinge velocities), syn."""

    def __init__(self, sim: Sim, robot_type: int, unum: int = 1, team: str = 'Bench', kp: float = KP) -> None:
        self.sim = sim
        self.robot: RobotSpec = nao(robot_type)
        self.proto = make_protocol(self.robot, team, unum)
        self.unum = unum
        self.kp = kp
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
            msgs = self.link.receive(0.5)
            self.sim.poll()
        p = parse_percept(
            msgs[-1], 'simspark'
        )  # REP-103 IMU axes; a late agent may find several queued: act on the newest
        self.percept = p
        if p.time is not None:
            self.t = p.time
        self.joints.update(p.joint_positions)

    def step(self, targets: dict[str, float], kp: dict[str, float] | None = None) -> None:
        """Send velocities towards ``targets`` (rad; unnamed joints hold the stand pose), then sense."""
        vel = {}
        for j in self.robot.joints:
            goal = targets.get(j.name, STAND_DEG.get(j.name, 0.0) * _D2R)
            goal = min(max(goal, j.lower), j.upper)
            q = self.joints.get(j.name)
            k = (kp or {}).get(j.name, self.kp)
            vel[j.name] = 0.0 if q is None else max(-j.max_speed, min(j.max_speed, k * (goal - q)))
        self.link.send(self.proto.encode(Action(joints=JointCommand(velocity=vel))).text)
        self._recv()


# ----------------------------------------------------------------------------- trial logic


def registry() -> SkillRegistry:
    return load_registry([NAO_SKILLS])


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
    on_cycle: Callable[[NaoAgent], None] | None = None

    def sense(self) -> None:
        p = self.agent.percept
        self.state = self.detector.update(p.gyro, p.accel, 0.02, p.forces)

    def cycle(self, override: dict[str, float] | None = None) -> None:
        """One cycle: if fallen and idle, start the get-up; play it; else stand."""
        self.sense()
        if override is None:
            name = getup_skill_for(self.state.direction, self.skills) if self.state.fallen else None
            if self.player is None and name is not None:
                self.player = SkillPlayer(self.skills[name], self.agent.robot)
                self.reset, self.getups = True, self.getups + 1
                self.getup_started = self.agent.t
            if self.player is not None:
                out, done = self.player.execute(self.reset, self.agent.t, self.agent.joints)
                self.reset = False
                self.targets.update(out)
                if done:
                    self.player = None
                    self.targets = stand_targets()
        targets = dict(self.targets)
        if override:
            targets.update(override)
        self.agent.step(targets)
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
    ctrl.player, ctrl.targets = None, stand_targets()


@dataclass
class Trial:
    robot_type: int
    direction: str
    detected: str = ''  # fall direction the detector reported
    success: bool = False
    time_to_upright: float | None = None  # s from the fall detection
    note: str = ''


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
            trial.note = 'did not fall'
            return trial
    trial.detected = ctrl.detector.direction
    t_fall = agent.t
    tracker = TruthTracker(sim, agent.unum)
    ctrl.on_cycle = tracker
    upright_since: float | None = None
    try:
        while agent.t - t_fall < TIMEOUT:
            ctrl.cycle()
            tor = tracker.last
            if tor is not None and tor.upright and ctrl.player is None:
                upright_since = tracker.last_t if upright_since is None else upright_since
                if tracker.last_t - upright_since >= HOLD:
                    break
            elif tor is not None and tracker.last_t > (upright_since or -1):
                upright_since = None
        if upright_since is None or agent.t - t_fall >= TIMEOUT:
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
        while agent.t - t1 < 1.0:
            ctrl.cycle()
        tor = truth(sim, agent.unum, ctrl.cycle)
        trial.success = bool(tor and tor.upright)
        if not trial.success:
            trial.note = 'fell again after getting up'
        return trial
    finally:
        ctrl.on_cycle = None


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return math.nan
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def run_type(
    robot_type: int, directions: list[str], trials: int, fast: bool, seed: int, verbose: bool = False
) -> list[Trial]:
    rng = random.Random(seed * 100 + robot_type)
    out: list[Trial] = []
    skills = registry()
    with simspark(fast) as sim:
        agent = NaoAgent(sim, robot_type)
        agent.connect()
        try:
            ctrl = Controller(agent, skills)
            settle_stand(ctrl, 0.5)
            for direction in directions:
                for i in range(trials):
                    tr = run_trial(sim, ctrl, direction, rng)
                    out.append(tr)
                    if verbose:
                        tt = f'{tr.time_to_upright:.2f}s' if tr.time_to_upright is not None else '-'
                        print(
                            f'  type {robot_type} {direction:5s} #{i + 1:2d}: detected={tr.detected or "-":5s} '
                            f'{"ok  " if tr.success else "FAIL"} {tt} {tr.note}',
                            flush=True,
                        )
        finally:
            agent.close()
    return out


def table(results: list[Trial]) -> str:
    lines = [
        'type  direction  success   detected-as      median_s  p90_s   max_s',
        '----  ---------  --------  ---------------  --------  ------  ------',
    ]
    keys = sorted({(r.robot_type, r.direction) for r in results})
    for t, d in keys:
        rs = [r for r in results if (r.robot_type, r.direction) == (t, d)]
        ok = [r for r in rs if r.success]
        times = [r.time_to_upright for r in ok if r.time_to_upright is not None]
        det = {}
        for r in rs:
            det[r.detected or 'none'] = det.get(r.detected or 'none', 0) + 1
        dets = ','.join(f'{k}:{v}' for k, v in sorted(det.items()))
        med = statistics.median(times) if times else math.nan
        lines.append(
            f'{t:<4d}  {d:<9s}  {len(ok):>2d}/{len(rs):<2d}     {dets:<15s}  {med:8.2f}  '
            f'{percentile(times, 0.9):6.2f}  {max(times) if times else math.nan:6.2f}'
        )
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--trials', type=int, default=20)
    ap.add_argument('--types', type=int, nargs='+', default=[0, 1, 2, 3, 4])
    ap.add_argument('--directions', nargs='+', default=['front', 'back'], choices=['front', 'back'])
    ap.add_argument('--fast', action='store_true', help='SIMSPARK_SYNC=1 SIMSPARK_REALTIME=0')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('-v', '--verbose', action='store_true')
    args = ap.parse_args(argv)
    results: list[Trial] = []
    for t in args.types:
        t0 = time.monotonic()
        results += run_type(t, args.directions, args.trials, args.fast, args.seed, args.verbose)
        print(f'type {t} done in {time.monotonic() - t0:.0f} s wall', flush=True)
    print(
        f'upright = monitor scene-graph torso z >= {UPRIGHT_Z} m and tilt <= 25 deg, held {HOLD} s; '
        f'time from fall detection (IMU) to the start of that hold'
    )
    print(table(results))
    return 0 if all(r.success for r in results) else 1


if __name__ == '__main__':
    sys.exit(main())
