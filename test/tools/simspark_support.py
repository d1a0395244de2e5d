"""Helpers shared by the live rcssserver3d (SimSpark) tests in this folder.

Not a test module: ``test_simspark_team.py`` and ``test_start_kill_scripts.py`` import it as
``simspark_support`` (pytest's default ``prepend`` import mode puts this folder on ``sys.path``).
It starts rcssserver3d on free loopback ports, finds and kills our player processes by PID,
and reads agent positions from the server's monitor scene graph.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

Positions = dict[tuple[str, int], tuple[float, float, float]]


# ----------------------------------------------------------------------------- processes


def player_pids(agent_port: int, unum: int | None = None, team: str | None = None) -> list[int]:
    """PIDs of our player processes for the server on ``agent_port`` (the port makes the match unique)."""
    pattern = rf'robocup3d_tools\.player .*--port {agent_port} '
    if team is not None:
        pattern += rf'.*--team {team} '
    if unum is not None:
        pattern += rf'.*--unum {unum} '
    out = subprocess.run(['pgrep', '-f', pattern], capture_output=True, text=True, check=False).stdout
    return [int(p) for p in out.split() if int(p) != os.getpid()]


def kill_pid(pid: int) -> None:
    """SIGKILL ``pid``; a process that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def wait_until(pred: Callable[[], bool], timeout: float, step: float = 0.1) -> bool:
    """Poll ``pred`` every ``step`` seconds until it is true or ``timeout`` seconds pass; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


# ----------------------------------------------------------------------------- scene graph


def agent_positions(message: bytes | str) -> Positions:
    """Torso positions ``{('Left'|'Right', unum): (x, y, z)}`` from a full ``(RSG 0 1)`` monitor message.

    An agent's body mesh is ``(nd StaticMesh ... (load models/naobody<T>.obj) ...
    (resetMaterials matNum<N> matLeft|matRight ...))``. Its parent TRF only turns the mesh; the
    grandparent TRF is the torso, whose ``SLT`` is a column-major 4x4 matrix with the world
    translation in elements 12-14 (the agent's outer TRF is the identity).
    """
    from robocup3d_bridge.trainer import simspark_torsos  # noqa: PLC0415

    return {k: pos for k, (pos, _) in simspark_torsos(message).items()}


def count_agents(full_state: bytes, side: str = 'Left') -> int:
    """How many agents of ``side`` ('Left' or 'Right') a full monitor scene has."""
    return sum(1 for s, _ in agent_positions(full_state) if s == side)


# ----------------------------------------------------------------------------- server


@dataclass
class Server:
    """A running rcssserver3d and the trainer connected to its monitor port."""

    proc: subprocess.Popen
    agent_port: int
    monitor_port: int
    cwd: Path
    trainer: object  # TrainerClient
    full_state: bytes = b''  # last full (RSG) monitor message

    def alive(self) -> bool:
        """Whether the server process still runs."""
        return self.proc.poll() is None

    def log_tail(self) -> str:
        """The end of the server's console log, without its texture noise."""
        lines = (self.cwd / 'server.log').read_text(errors='replace').splitlines()
        return '\n'.join(line for line in lines if 'Material2DTexture' not in line)[-2000:] if lines else ''

    def died_of_agent_thread_bug(self) -> bool:
        """Whether the server died of rcssserver3d 0.7.3's known crash when an agent disconnects.

        With threaded agent control (its real-time default), an agent's thread throws
        ``boost::lock_error`` from ``AgentControl::AgentThread`` in about 1 of 10 disconnects
        (measured with raw sockets closing after 2 s of play: 3 of 30), and the server exits.
        """
        if self.alive():
            return False
        self.proc.wait(5)
        text = (self.cwd / 'server.log').read_text(errors='replace')
        return 'AgentControl::AgentThread' in text and 'lock_error' in text

    def poll(self, timeout: float = 0.0) -> None:
        """Read the monitor stream (it must be read, or the server's send buffer fills)."""
        from robocup3d_bridge.trainer import parse_monitor_message  # noqa: PLC0415

        for msg in self.trainer.receive(timeout):
            with contextlib.suppress(ValueError):
                parse_monitor_message(msg, 'simspark', self.trainer.state)
            if b'(RSG ' in msg[:20000]:
                self.full_state = msg

    def read_monitor(self, seconds: float) -> bytes:
        """Read the monitor for ``seconds``; return the last full-state message seen (or b'')."""
        self.full_state = b''
        deadline = time.monotonic() + seconds
        while True:
            self.poll(min(0.1, max(0.0, deadline - time.monotonic())))
            if time.monotonic() >= deadline:
                return self.full_state

    def positions(self, timeout: float = 5.0) -> Positions:
        """Ask for a full state and return the agents' torso positions from it."""
        self.full_state = b''
        self.trainer.request_full_state()
        deadline = time.monotonic() + timeout
        while not self.full_state and time.monotonic() < deadline:
            time.sleep(0.05)
            self.poll()
        assert self.full_state, f'no full state from the monitor within {timeout} s'
        return agent_positions(self.full_state)


@contextlib.contextmanager
def simspark_server() -> Iterator[Server]:
    """rcssserver3d on free loopback ports, with a trainer connected to its monitor port; SIGKILLed after."""
    from robocup3d_bridge.percept import Dialect  # noqa: PLC0415
    from robocup3d_tools.servers import connect_trainer, free_port, start_simspark_server  # noqa: PLC0415

    cwd = Path(tempfile.mkdtemp(prefix='rcssserver3d_'))  # it reads .rb files from its cwd first
    agent_port, monitor_port = free_port(), free_port()
    proc = start_simspark_server(cwd, agent_port, monitor_port)
    trainer = None
    try:
        trainer = connect_trainer(monitor_port, Dialect.SIMSPARK)
        yield Server(proc, agent_port, monitor_port, cwd, trainer)
    finally:
        if trainer is not None:
            trainer.close()
        kill_pid(proc.pid)  # it ignores SIGTERM
        proc.wait(10)
        for pid in player_pids(agent_port):  # players a failed test left behind
            kill_pid(pid)
        shutil.rmtree(cwd, ignore_errors=True)
