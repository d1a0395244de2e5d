"""Perceive-to-act latency of a player against the real RCSSServerMJ, and CPU time per cycle.

Run: ``python bench/bench_latency.py [--seconds 20] [--mode separate|composed|both]``.

* ``separate``: ``player --bridge-only`` and ``motion_node`` in two processes (joint states and
  commands cross DDS between processes);
* ``composed``: ``player`` with bridge, motion and strategy on one executor in one process.

The bridge connects to the server through a relay in this process, which timestamps every server
message and the agent's reply: latency = reply received - perception forwarded (server side, TCP
loopback included). The bridge's own ``/diagnostics`` (percept received -> action sent, over its
whole run, warm-up included) are printed too. CPU ms/cycle comes from ``/proc/<pid>/stat``.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robocup3d_bridge.framing import recv_frame  # noqa: E402
from robocup3d_tools.servers import cpu_seconds, free_port, stop_process  # noqa: E402

PYTHON = sys.executable
SERVER = Path(PYTHON).with_name('rcssservermj')
TEAM = 'Bench'


# --- helpers --------------------------------------------------------------------------------------------------------


def ros_env(domain: int, log_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        'ROS_DOMAIN_ID': str(domain),
        'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
        'PYTHONPATH': str(ROOT),
        'ROS_LOG_DIR': str(log_dir),
    }


@contextmanager
def process(cmd: list[str], env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen:
    """Start a process; on the way out SIGINT it, then SIGKILL after 5 s."""
    with open(log, 'wb') as fh:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        stop_process(proc)


# --- the server and the relay ---------------------------------------------------------------------------------------


@contextmanager
def real_server(workdir: Path) -> int:
    """RCSSServerMJ on loopback; returns its agent port once the first simulation step is out."""
    aport, mport = free_port(), free_port()
    cmd = [str(SERVER), '--host', '127.0.0.1', '--aport', str(aport), '--mport', str(mport), '--no-render']
    with process(cmd, dict(os.environ), workdir, workdir / 'server.log') as proc:
        monitor = connect_retry(mport, proc)
        # The server crashes if an agent connects before its first step: wait for the monitor's first message.
        if recv_frame(monitor, with_prefix=True) is None:
            raise RuntimeError('the server closed the monitor connection')
        threading.Thread(target=drain, args=(monitor,), daemon=True).start()
        try:
            yield aport, proc.pid
        finally:
            monitor.close()


def connect_retry(port: int, proc: subprocess.Popen, timeout: float = 30.0) -> socket.socket:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f'rcssservermj exited with {proc.returncode}')
        try:
            return socket.create_connection(('127.0.0.1', port), timeout=5)
        except OSError:
            time.sleep(0.2)
    raise RuntimeError('rcssservermj did not open its monitor port')


def drain(sock: socket.socket) -> None:
    while recv_frame(sock, with_prefix=True) is not None:
        pass


@dataclass
class Relay:
    """Forwards one agent connection to the server and timestamps both directions."""

    server_port: int
    port: int = field(default_factory=free_port)
    cycles: int = 0  # server messages forwarded
    latencies: deque = field(default_factory=lambda: deque(maxlen=100_000))  # s
    _sent_at: list = field(default_factory=list)  # when each server message was forwarded
    _replies: int = 0

    def start(self) -> None:
        self._listener = socket.create_server(('127.0.0.1', self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        try:
            agent, _ = self._listener.accept()
        except OSError:
            return
        server = socket.create_connection(('127.0.0.1', self.server_port))
        for s in (agent, server):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=self._down, args=(server, agent), daemon=True).start()
        self._up(agent, server)

    def _down(self, server: socket.socket, agent: socket.socket) -> None:
        while (msg := recv_frame(server, with_prefix=True)) is not None:
            self._sent_at.append(time.perf_counter())  # before sending: the reply cannot overtake it
            self.cycles += 1
            try:
                agent.sendall(msg)
            except OSError:  # the agent went away (end of the run)
                return

    def _up(self, agent: socket.socket, server: socket.socket) -> None:
        first = True
        while (msg := recv_frame(agent, with_prefix=True)) is not None:
            now = time.perf_counter()
            try:
                server.sendall(msg)
            except OSError:
                return
            if first:  # the init, sent before any perception
                first = False
                continue
            if self._replies < len(self._sent_at):  # the k-th reply answers the k-th perception
                self.latencies.append(now - self._sent_at[self._replies])
            self._replies += 1


# --- the bridge's diagnostics ---------------------------------------------------------------------------------------


class DiagnosticsListener:
    """Keeps the latest ``/diagnostics`` values of the bridge (own rclpy context)."""

    def __init__(self, domain: int) -> None:
        import rclpy  # noqa: PLC0415 - only needed here
        from diagnostic_msgs.msg import DiagnosticArray  # noqa: PLC0415
        from rclpy.context import Context  # noqa: PLC0415
        from rclpy.executors import SingleThreadedExecutor  # noqa: PLC0415

        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        self._rclpy = rclpy
        self.ctx = Context()
        rclpy.init(context=self.ctx, domain_id=domain)
        self.node = rclpy.create_node('bench_latency', context=self.ctx)
        self.values: dict[str, str] = {}
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diag, 10)
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.executor.add_node(self.node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _on_diag(self, msg: object) -> None:
        for status in msg.status:
            if status.name.endswith('/bridge'):
                self.values = {kv.key: kv.value for kv in status.values}

    def _spin(self) -> None:
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.executor.shutdown()
        self.node.destroy_node()
        self._rclpy.shutdown(context=self.ctx)


# --- one measurement ------------------------------------------------------------------------------------------------


@dataclass
class Result:
    mode: str
    cycles: int
    latencies_ms: np.ndarray
    cpu_ms_per_cycle: dict[str, float]
    diagnostics: dict[str, str]


def agent_commands(mode: str, port: int) -> dict[str, list[str]]:
    """The processes of one player, by name."""
    player = [PYTHON, '-m', 'robocup3d_tools.player', '--server', 'mujoco', '--port', str(port)]
    player += ['--team', TEAM, '--unum', '1', '--robot', 'T1']
    if mode == 'composed':
        return {'player (bridge+motion+strategy)': player}
    motion = [PYTHON, '-m', 'robocup3d_motion.motion_node', '--ros-args', '-r', f'__ns:=/{TEAM}/p1']
    motion += ['-p', 'server:=mujoco', '-p', 'robot:=T1']
    return {'player --bridge-only': [*player, '--bridge-only'], 'motion_node': motion}


def measure(mode: str, seconds: float, warmup: float) -> Result:
    """Run one player configuration against a fresh server; measure over ``seconds`` after ``warmup``."""
    domain = random.randint(1, 100)
    with tempfile.TemporaryDirectory(prefix='bench_latency_') as tmp, ExitStack() as stack:
        work = Path(tmp)
        aport, server_pid = stack.enter_context(real_server(work))
        relay = Relay(aport)
        relay.start()
        stack.callback(relay.close)
        env = ros_env(domain, work / 'roslog')
        pids = {'rcssservermj': server_pid}
        procs = {}
        for name, cmd in agent_commands(mode, relay.port).items():
            procs[name] = stack.enter_context(process(cmd, env, ROOT, work / f'{name.split()[0]}.log'))
            pids[name] = procs[name].pid
        diag = DiagnosticsListener(domain)
        stack.callback(diag.close)
        time.sleep(warmup)
        check_running(procs, relay, work)
        cpu0 = {n: cpu_seconds(p) for n, p in pids.items()}
        c0, n0 = relay.cycles, len(relay.latencies)
        time.sleep(seconds)
        cycles = relay.cycles - c0
        cpu = {n: (cpu_seconds(p) - cpu0[n]) * 1e3 / max(cycles, 1) for n, p in pids.items()}
        lat = np.array(list(relay.latencies)[n0:]) * 1e3
        time.sleep(1.1 - seconds % 1.0 if seconds % 1.0 else 0.0)  # a fresh diagnostics message
        return Result(mode, cycles, lat, cpu, dict(diag.values))


def check_running(procs: dict[str, subprocess.Popen], relay: Relay, work: Path) -> None:
    """Fail loudly when a node process has exited or no cycle has gone through."""
    for name, proc in procs.items():
        if proc.poll() is not None:
            log = (work / f'{name.split()[0]}.log').read_text(errors='replace')[-2000:]
            raise RuntimeError(f'{name} exited with {proc.returncode} during warm-up:\n{log}')
    if relay.cycles == 0:
        raise RuntimeError('no server message reached the player during warm-up')


def report(r: Result) -> None:
    """Print one configuration's numbers."""
    lat = r.latencies_ms if r.latencies_ms.size else np.zeros(1)
    d = r.diagnostics
    print(f'\n== {r.mode}: {r.cycles} cycles ({r.cycles * 0.02:.1f} s of server time)')
    print(
        f'  server side (relay), perception -> reply: p50 {np.percentile(lat, 50):.2f} ms, '
        f'p99 {np.percentile(lat, 99):.2f} ms, max {lat.max():.2f} ms ({r.latencies_ms.size} replies)'
    )
    if d:
        print(
            f'  bridge /diagnostics (whole run): p50 {d.get("latency_p50_ms")} ms, p99 {d.get("latency_p99_ms")} ms, '
            f'on time {d.get("replies_on_time")}, fallback {d.get("replies_fallback")}, cycles {d.get("cycles")}'
        )
    else:
        print('  bridge /diagnostics: none received')
    for name, ms in r.cpu_ms_per_cycle.items():
        print(f'  CPU {name:<34} {ms:6.2f} ms/cycle')


def main() -> int:
    """Measure the chosen configurations and print the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--seconds', type=float, default=20.0, help='measurement window per configuration')
    ap.add_argument('--warmup', type=float, default=5.0, help='seconds before the window starts')
    ap.add_argument('--mode', choices=('separate', 'composed', 'both'), default='both')
    args = ap.parse_args()
    if not SERVER.is_file():
        print(f'rcssservermj not found next to {PYTHON}', file=sys.stderr)
        return 1
    modes = ('separate', 'composed') if args.mode == 'both' else (args.mode,)
    for mode in modes:
        report(measure(mode, args.seconds, args.warmup))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
