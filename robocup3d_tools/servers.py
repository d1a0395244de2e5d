"""Start, reach and stop the simulation servers (RCSSServerMJ and rcssserver3d), on loopback only."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from robocup3d_bridge.link import LinkDown
from robocup3d_bridge.percept import Dialect
from robocup3d_bridge.trainer import TrainerClient

__all__ = [
    'connect_trainer',
    'cpu_seconds',
    'free_port',
    'start_mujoco_server',
    'start_simspark_server',
    'stop_process',
]


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start_mujoco_server(
    run_dir: Path, agent_port: int, monitor_port: int, extra: list[str] | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen:
    """Start RCSSServerMJ headless on loopback; its console log goes to ``run_dir/server.out``.

    It runs through :mod:`robocup3d_tools.mujoco_server`, which zeroes the controls of a joining
    robot that MuJoCo's recompile leaves uninitialised (the join-time "Nan, Inf or huge value in
    CTRL" warning).
    """
    if importlib.util.find_spec('rcsssmj') is None:
        raise FileNotFoundError('rcssservermj not found: pip install rcsssmj')
    run_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        '-m',
        'robocup3d_tools.mujoco_server',
        '--host',
        '127.0.0.1',
        '--aport',
        str(agent_port),
        '--mport',
        str(monitor_port),
        '--no-render',
        *(extra or []),
    ]
    with open(run_dir / 'server.out', 'ab') as out:
        return subprocess.Popen(cmd, cwd=run_dir, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def connect_trainer(port: int, dialect: Dialect, timeout: float = 15.0) -> TrainerClient:
    """Connect to the monitor port and wait for the first monitor message.

    RCSSServerMJ must have stepped once before an agent connects (an earlier agent
    crashes its simulation thread), which its first monitor message proves.
    """
    deadline = time.monotonic() + timeout
    while True:
        trainer = TrainerClient('127.0.0.1', port, dialect)
        try:
            trainer.connect()
            trainer.wait_for(lambda s: s.messages > 0, max(0.1, deadline - time.monotonic()))
            return trainer
        except (LinkDown, TimeoutError, OSError):
            trainer.close()
            if time.monotonic() > deadline:
                raise TimeoutError(f'no monitor stream on 127.0.0.1:{port} within {timeout} s') from None
            time.sleep(0.2)


def stop_process(proc: subprocess.Popen, timeout: float = 5.0) -> None:
    """SIGINT a process (its whole group if it leads one), SIGKILL it after ``timeout``."""
    if proc.poll() is not None:
        return
    try:
        group = os.getpgid(proc.pid) == proc.pid  # started with start_new_session
    except ProcessLookupError:
        proc.wait()
        return

    def send(sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig) if group else proc.send_signal(sig)

    send(signal.SIGINT)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        proc.wait()


def start_simspark_server(
    run_dir: Path, agent_port: int, monitor_port: int, env: dict[str, str] | None = None
) -> subprocess.Popen:
    """Start rcssserver3d (must be on PATH) from ``run_dir``; it reads ``.rb`` files there first.

    It ignores SIGTERM: stop it with ``stop_process(proc, timeout=0)`` (SIGKILL).
    """
    exe = shutil.which('rcssserver3d')
    if exe is None:
        raise FileNotFoundError('rcssserver3d is not on PATH')
    run_dir.mkdir(parents=True, exist_ok=True)
    cmd = [exe, '--agent-port', str(agent_port), '--server-port', str(monitor_port)]
    with open(run_dir / 'server.log', 'ab') as out:
        return subprocess.Popen(
            cmd,
            cwd=run_dir,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, s) a process has used so far (Linux ``/proc``); NaN if it is gone."""
    try:
        fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    except OSError:
        return float('nan')
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')  # utime + stime
