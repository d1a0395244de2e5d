"""Get-up benchmark through the running graph (server + player process + trainer).

For each robot (T1, K1) and fall direction (front, back; left, right), the trainer lays the
player down (``move3d`` with the torso rotated 90 degrees about its pitch axis, or its roll axis
for a side, a random yaw) and we measure, from ``ground_truth/pose`` (scoring only; the controller
never sees it), the time until the torso is upright again: torso height above
``UPRIGHT_Z`` of standing and its z axis within ~25 degrees of vertical, for 1 s. A trial
fails if that has not happened within ``TIMEOUT`` (12 s of server time; the stated limit of
issue #3). Each trial starts from a standing robot (placed again if a failed get-up left it
down or still playing its skill).

    PYTHONPATH=. python bench/bench_getup.py --trials 20 [--robots T1 K1] [--fast] [--directions back]
        [--skill-params FILE ...] [--knock]

``--knock`` (T1 and K1, front and back): the robot falls from a stand instead, tipped over by a pose held on
``joint_targets`` until the fall is reported, as a trip throws it; the time counts from the report.

``--fast`` runs the server in ``--sync --no-realtime`` mode (the graph sets the pace).
Prints success rate and time to upright (mean / median / max) per robot and direction.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from robocup3d_bridge.percept import Dialect  # noqa: E402
from robocup3d_tools.servers import connect_trainer, free_port, start_mujoco_server, stop_process  # noqa: E402

#: Standing torso height (m) of each robot; upright means above UPRIGHT_Z * this.
STAND_Z = {'T1': 0.65, 'K1': 0.54}
UPRIGHT_Z = 0.85
UPRIGHT_UP = 0.9  # z component of the torso's z axis (cos 25.8 deg)
LYING_Z = {'T1': 0.25, 'K1': 0.2}
TIMEOUT = 12.0  # s of server time to be up (for 1 s) after the knock-down
#: ``--knock``: joint angles (deg) held until the fall is reported, per robot and direction: the ankles tip the
#: stiff-legged robot over forwards or backwards as a trip does (no side pose found that falls to the side)
_TIP = {
    'front': {'llj1': 0, 'rlj1': 0, 'llj4': 0, 'rlj4': 0, 'llj5': -50, 'rlj5': -50},
    'back': {'llj1': 0, 'rlj1': 0, 'llj4': 0, 'rlj4': 0, 'llj5': 20, 'rlj5': 20},
}
KNOCK_DEG = {'T1': _TIP, 'K1': _TIP}
KNOCK_SCALE = (0.85, 1.15)
#: the torso's turn for each way of lying (w, x, y, z): on its face, its back, its left or its right side
LAID = {
    'front': (math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0),
    'back': (math.cos(math.pi / 4), 0.0, -math.sin(math.pi / 4), 0.0),
    'left': (math.cos(math.pi / 4), -math.sin(math.pi / 4), 0.0, 0.0),
    'right': (math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0),
}


def up_z(q: tuple[float, float, float, float]) -> float:
    """z component of the torso z axis for an orientation (w, x, y, z)."""
    _, x, y, _ = q
    return 1.0 - 2.0 * (x * x + y * y)


def qmul(a: tuple, b: tuple) -> tuple:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return (
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    )


def qaxis(axis: tuple[float, float, float], angle: float) -> tuple:
    s = math.sin(angle / 2)
    return (math.cos(angle / 2), axis[0] * s, axis[1] * s, axis[2] * s)


@dataclass
class Graph:
    """A server, one player process (bridge+motion+strategy) and an observer in this process."""

    robot: str
    fast: bool = False
    team: str = 'Bench'
    unum: int = 2
    skill_params: tuple[str, ...] = ()  # skill files the player loads over the shipped ones
    log_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix='r3d_motion_')))

    def start(self) -> Graph:
        self.env = dict(os.environ)
        self.env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        self.env.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))
        os.environ.update({k: self.env[k] for k in ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_DOMAIN_ID')})
        self.env['PYTHONPATH'] = str(REPO) + os.pathsep + self.env.get('PYTHONPATH', '')
        aport, mport = free_port(), free_port()
        extra = ['--sync', '--no-realtime'] if self.fast else []
        self.server = start_mujoco_server(self.log_dir / 'server', aport, mport, extra, env=self.env)
        self.player = None
        self.trainer = connect_trainer(mport, Dialect.MUJOCO)
        with open(self.log_dir / f'player_{self.robot}.log', 'ab') as out:
            self.player = subprocess.Popen(
                [
                    sys.executable,
                    '-m',
                    'robocup3d_tools.player',
                    '--server',
                    'mujoco',
                    '--port',
                    str(aport),
                    '--team',
                    self.team,
                    '--unum',
                    str(self.unum),
                    '--robot',
                    self.robot,
                    '--no-raw',
                    '--no-world-model',  # this harness drives the robot and measures motion alone
                    '--no-play',
                    *(['--skill-params', *self.skill_params] if self.skill_params else []),
                ],
                cwd=REPO,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        import rclpy  # noqa: PLC0415 - after the domain is set
        from geometry_msgs.msg import PoseStamped  # noqa: PLC0415
        from sensor_msgs.msg import JointState  # noqa: PLC0415
        from std_msgs.msg import String  # noqa: PLC0415

        from robocup3d_bridge.node_main import LATCHED  # noqa: PLC0415

        self._rclpy = rclpy
        if not rclpy.ok():
            rclpy.init(args=[])
        self.node = rclpy.create_node('bench_getup')
        ns = f'/{self.team}/p{self.unum}'
        self.pose: tuple | None = None
        self.pose_count = 0
        self.state: dict = {}
        self.states_seen: list[dict] = []
        self.node.create_subscription(PoseStamped, f'{ns}/ground_truth/pose', self._on_pose, 5)
        self.node.create_subscription(String, f'{ns}/motion_state', self._on_state, LATCHED)
        self.pub_request = self.node.create_publisher(String, f'{ns}/motion_request', 10)
        self.pub_targets = self.node.create_publisher(JointState, f'{ns}/joint_targets', 1)
        self._JointState = JointState
        self.spin_until(lambda: self.pose is not None, 60.0, 'no ground_truth/pose from the player')
        # Leave BeforeKickOff: the strategy node beams the player there every second.
        self.trainer.send('(kickOff Left)')
        self.wait(1.0)
        return self

    def _on_pose(self, msg: object) -> None:
        p, o = msg.pose.position, msg.pose.orientation
        self.pose = ((p.x, p.y, p.z), (o.w, o.x, o.y, o.z), time.monotonic())
        self.pose_count += 1

    def _on_state(self, msg: object) -> None:
        try:
            self.state = json.loads(msg.data)
        except ValueError:
            return
        self.states_seen.append(self.state)
        del self.states_seen[:-200]

    def spin_until(self, pred: object, timeout: float, what: str = '') -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self._rclpy.spin_once(self.node, timeout_sec=0.02)
            try:
                self.trainer.poll(0.0)
            except Exception:  # noqa: BLE001 - the monitor stream is only drained here
                pass
            if pred():
                return True
            if self.player is not None and self.player.poll() is not None:
                raise RuntimeError(f'player exited with {self.player.returncode}; see {self.log_dir}')
        if what:
            raise TimeoutError(what)
        return False

    def wait(self, seconds: float) -> None:
        self.spin_until(lambda: False, seconds)

    def sim_wait(self, cycles: int) -> None:
        """Wait for ``cycles`` pose messages (server cycles, whatever the pace)."""
        n = self.pose_count + cycles
        self.spin_until(lambda: self.pose_count >= n, 120.0, 'pose stream stopped')

    def upright(self) -> bool:
        if self.pose is None:
            return False
        pos, q, _ = self.pose
        return pos[2] > UPRIGHT_Z * STAND_Z[self.robot] and up_z(q) > UPRIGHT_UP

    def place(self, x: float, y: float, z: float, q: tuple) -> None:
        self.trainer.send(
            f'(agent (unum {self.unum}) (team {self.team}) '
            f'(move3d {x:.4f} {y:.4f} {z:.4f} {q[0]:.6f} {q[1]:.6f} {q[2]:.6f} {q[3]:.6f}))'
        )

    def stand_up_placed(self, attempts: int = 3) -> bool:
        """Put the robot upright at (-3, 0) and let it settle (2 s); True once it stands.

        A get-up still playing would throw it over again: wait (up to 10 s of server time)
        for the motion node to be back in ``stand`` first. Then place it, up to ``attempts``
        times, until it stands with the motion node in ``stand``; should it fall over right
        after a place, the get-up that follows may stand it up as well: that counts too."""
        for _ in range(attempts):
            self._wait_getup_over()
            self.place(-3.0, 0.0, STAND_Z[self.robot] + 0.03, (1.0, 0.0, 0.0, 0.0))
            self.sim_wait(100)
            if self.state.get('getup') or self.state.get('fallen'):
                self._wait_getup_over()
                self.sim_wait(100)
            if self.upright() and self.state.get('skill') == 'stand' and not self.state.get('fallen'):
                return True
        return False

    def _wait_getup_over(self, cycles: int = 500) -> None:
        """Wait (at most ``cycles`` of server time) until no get-up is playing."""
        for _ in range(cycles):
            if not self.state.get('getup'):
                return
            self.sim_wait(1)

    def getup_trial(self, direction: str, rng: random.Random, timeout: float = TIMEOUT) -> float | None:
        """Lay the robot down; seconds (server cycles * 0.02) until upright for 1 s, or None."""
        if not self.upright() or self.state.get('skill') != 'stand' or self.state.get('fallen'):
            self.stand_up_placed()
        yaw = rng.uniform(-math.pi, math.pi)
        q = qmul(qaxis((0, 0, 1), yaw), LAID[direction])
        self.place(-3.0 + rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), LYING_Z[self.robot], q)
        start = self.pose_count
        self.sim_wait(3)
        return self._up_after(start, timeout)

    def knock_trial(self, direction: str, rng: random.Random, timeout: float = TIMEOUT) -> float | None:
        """Knock the standing robot over (:data:`KNOCK_DEG`, scaled by a random factor within :data:`KNOCK_SCALE`, held
        on ``joint_targets`` until the motion node reports the fall); seconds from the report until upright for 1 s."""
        self.stand_up_placed()
        self.place(-3.0, 0.0, STAND_Z[self.robot] + 0.03, qaxis((0, 0, 1), rng.uniform(-math.pi, math.pi)))
        self.sim_wait(round(rng.uniform(60, 100)))
        scale = rng.uniform(*KNOCK_SCALE)
        pose = {j: math.radians(v * scale) for j, v in KNOCK_DEG[self.robot][direction].items()}
        start = self.pose_count
        while not self.state.get('fallen') and self.pose_count - start < 200:
            self.pub_targets.publish(self._JointState(name=list(pose), position=list(pose.values())))
            self.sim_wait(1)
        self.pub_targets.publish(self._JointState(name=[], position=[]))  # back to the motion node's own targets
        if not self.state.get('fallen'):
            return None
        return self._up_after(self.pose_count, timeout)

    def _up_after(self, start: int, timeout: float) -> float | None:
        """Seconds from pose ``start`` until upright for 1 s (server cycles * 0.02), or None after ``timeout``."""
        up_since: int | None = None
        while (self.pose_count - start) * 0.02 < timeout:
            self.sim_wait(1)
            if self.upright():
                up_since = self.pose_count if up_since is None else up_since
                if self.pose_count - up_since >= 50:
                    return (up_since - start) * 0.02
            else:
                up_since = None
        return None

    def stand_trial(self, seconds: float) -> dict:
        """Stand ``seconds`` (server time): fell?, torso tilt sway (deg) and drift (m)."""
        self.stand_up_placed()
        tilts, xs, ys, fell = [], [], [], False
        start = self.pose_count
        while (self.pose_count - start) * 0.02 < seconds:
            self.sim_wait(1)
            pos, q, _ = self.pose
            tilts.append(math.degrees(math.acos(max(-1.0, min(1.0, up_z(q))))))
            xs.append(pos[0])
            ys.append(pos[1])
            if not self.upright():
                fell = True
                break
        mean = sum(tilts) / len(tilts)
        sd = math.sqrt(sum((t - mean) ** 2 for t in tilts) / len(tilts))
        return {
            'fell': fell,
            'seconds': (self.pose_count - start) * 0.02,
            'tilt_mean_deg': mean,
            'tilt_sd_deg': sd,
            'tilt_max_deg': max(tilts),
            'drift_m': math.hypot(xs[-1] - xs[0], ys[-1] - ys[0]),
            'getups_started': self.state.get('getups', 0),
        }

    def close(self) -> None:
        try:
            if getattr(self, 'node', None) is not None:
                self.node.destroy_node()
        finally:
            if self.player is not None:
                stop_process(self.player)
            self.trainer.close()
            stop_process(self.server)


def run_getup(
    robot: str,
    trials: int,
    fast: bool,
    seed: int = 1,
    directions: tuple = ('front', 'back'),
    log: object = print,
    skill_params: tuple[str, ...] = (),
    knock: bool = False,
) -> dict[str, list[float | None]]:
    if knock and any(d not in KNOCK_DEG.get(robot, {}) for d in directions):
        raise SystemExit(f'--knock: no falling pose for {robot} {directions} (have {sorted(KNOCK_DEG.get(robot, {}))})')
    rng = random.Random(seed)
    g = Graph(robot, fast, skill_params=tuple(skill_params)).start()
    results: dict[str, list[float | None]] = {d: [] for d in directions}
    try:
        g.stand_up_placed()
        for i in range(trials):
            for d in directions:
                t = g.knock_trial(d, rng) if knock else g.getup_trial(d, rng)
                results[d].append(t)
                log(f'{robot} {d} trial {i + 1}: ' + (f'up after {t:.2f} s' if t is not None else 'FAILED'))
    finally:
        g.close()
    return results


def summary(robot: str, results: dict[str, list[float | None]]) -> list[str]:
    lines = []
    for d, ts in results.items():
        ok = [t for t in ts if t is not None]
        rate = len(ok) / len(ts) if ts else 0.0
        times = (
            f'mean {sum(ok) / len(ok):.2f} s, median {statistics.median(ok):.2f} s, max {max(ok):.2f} s'
            if ok
            else 'n/a'
        )
        lines.append(
            f'{robot:3s} {d:5s}: success (up within {TIMEOUT:g} s) {len(ok)}/{len(ts)} = {rate:.0%}, '
            f'time to upright {times}'
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--robots', nargs='+', default=['T1', 'K1'])
    ap.add_argument('--trials', type=int, default=20)
    ap.add_argument('--fast', action='store_true', help='server in --sync --no-realtime mode')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--directions', nargs='+', default=['front', 'back'], choices=list(LAID))
    ap.add_argument('--skill-params', nargs='*', default=[], metavar='FILE', help='skill files the player loads')
    ap.add_argument(
        '--knock',
        action='store_true',
        help='knock the standing robot over with a falling pose (front and back) and time from the fall report, '
        'instead of laying it down',
    )
    args = ap.parse_args(argv)
    lines = []
    for robot in args.robots:
        results = run_getup(
            robot,
            args.trials,
            args.fast,
            args.seed,
            tuple(args.directions),
            skill_params=tuple(args.skill_params),
            knock=args.knock,
        )
        lines += summary(robot, results)
    print('\n'.join(lines))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
