"""Recorded bags in tests: a recorded RCSSServerMJ session to make one (:func:`recorded_session`), every
message decoded by topic, and TF transforms as matrices."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def robocup3d(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """``robocup3d ARGS`` as a user runs it (from the repo), its output captured as text."""
    cmd = [sys.executable, '-m', 'robocup3d_tools.cli', *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False)


def read_bag(bag: Path) -> dict[str, list[tuple[int, object]]]:
    """Every message of ``bag`` decoded with rosbags: ``{topic: [(bag time ns, message), ...]}``."""
    from rosbags.highlevel import AnyReader  # noqa: PLC0415 - an optional package, after the tests' skips

    out: dict[str, list[tuple[int, object]]] = {}
    with AnyReader([bag]) as reader:
        for conn, t, raw in reader.messages():
            out.setdefault(conn.topic, []).append((t, reader.deserialize(raw, conn.msgtype)))
    return out


def matrix_of(p: object, q: object) -> np.ndarray:
    """The 4x4 of a position and a (geometry_msgs) quaternion."""
    from robocup3d_description.kinematics import quat_matrix  # noqa: PLC0415

    m = np.eye(4)
    m[:3, :3] = np.asarray(quat_matrix((q.w, q.x, q.y, q.z)))[:3, :3]
    m[:3, 3] = (p.x, p.y, p.z)
    return m


def stamp_ns(stamp: object) -> int:
    """A builtin_interfaces/Time in ns."""
    return stamp.sec * 10**9 + stamp.nanosec


def start_recording(out: Path, teams: list[str], monitor_port: int, env: dict, log: Path, **kw: object):
    """``robocup3d record`` of ``teams`` into the bag ``out`` as its own process (log in ``log``); ``kw`` as
    :func:`robocup3d_tools.recorder.record_command` takes them."""
    from robocup3d_tools.recorder import record_command  # noqa: PLC0415 - an optional package, after the skips

    with open(log, 'ab') as f:
        return subprocess.Popen(
            record_command(out, teams, monitor_port, **kw),
            cwd=REPO,
            env=env,
            stdout=f,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


@dataclass
class RecordedSession:
    """A sync-mode RCSSServerMJ on free loopback ports, its trainer (``trainer``: the monitor) and its
    recorders (``recorders``: bag name -> process, each recording into ``run / name``); see
    :func:`recorded_session`."""

    run: Path
    env: dict[str, str]
    agent_port: int
    trainer: object
    recorders: dict[str, subprocess.Popen] = field(default_factory=dict)
    runners: list = field(default_factory=list)

    def add_team(
        self, team: str, log_dir: Path | None = None, extra_args: Sequence[str] = (), clock_player: int | None = None
    ) -> None:
        """One T1 (unum 1) of ``team`` from a :class:`~robocup3d_tools.team_runner.TeamRunner` (logs in ``log_dir``,
        default ``run``; its players' ``extra_args``, ``clock_player``), and wait until the server has it."""
        from robocup3d_tools.team_config import PlayerConfig, TeamConfig  # noqa: PLC0415 - optional packages
        from robocup3d_tools.team_runner import TeamRunner  # noqa: PLC0415

        config = TeamConfig('mujoco', team, '127.0.0.1', self.agent_port, (PlayerConfig(1, 'T1'),))
        runner = TeamRunner(
            config, log_dir or self.run, env=self.env, extra_args=list(extra_args), clock_player=clock_player
        )
        runner.start()
        self.runners.append(runner)
        self.trainer.wait_for(lambda s: team in (s.team_left, s.team_right), 90.0)

    def let_recorders_subscribe(self) -> None:
        """Wait until the recorders have found the players' topics (they look once a second)."""
        time.sleep(2.0)
        self.trainer.poll(0.1)

    def play(self, seconds: float, wall_seconds: float = 0.0, wall_limit: float = 120.0) -> None:
        """Read the monitor for ``seconds`` of server time and at least ``wall_seconds`` of wall time (a
        sync-mode server runs at the players' pace: on an idle machine far ahead of the wall clock, while a
        recorder finds a topic up to a second after it appears), at most ``wall_limit`` s."""
        t0, w0 = self.trainer.state.server_time, time.monotonic()
        end = w0 + wall_limit
        while (
            self.trainer.state.server_time - t0 < seconds or time.monotonic() - w0 < wall_seconds
        ) and time.monotonic() < end:
            self.trainer.poll(0.1)

    def log(self, name: str) -> str:
        """The output of the recorder of bag ``name``."""
        return (self.run / f'{name}.log').read_text()


@contextmanager
def recorded_session(run: Path, bags: dict[str, dict], teams: list[str]) -> Iterator[RecordedSession]:
    """A :class:`RecordedSession` in ``run``: a sync-mode RCSSServerMJ, its trainer and one ``robocup3d record``
    of ``teams`` per bag (name -> :func:`start_recording`'s keywords; the bag ``run / name``, its log
    ``run / name.log``), started before the teams (:meth:`RecordedSession.add_team`).

    On leaving, the recorders are stopped first (SIGINT closes their bags), then the teams, the trainer and
    the server; then, if the block raised nothing, each recorder must have exited 0. Skips the test without
    ``rcsssmj`` or ``rosbags``.
    """
    for package in ('rcsssmj', 'rosbags'):
        if importlib.util.find_spec(package) is None:
            pytest.skip(f'{package} not installed: pip install {package}')
    from robocup3d_bridge.percept import Dialect  # noqa: PLC0415 - optional packages, after the skip
    from robocup3d_tools.ros_env import ros_environment  # noqa: PLC0415
    from robocup3d_tools.servers import connect_trainer, free_port, start_mujoco_server, stop_process  # noqa: PLC0415

    env = ros_environment()
    aport, mport = free_port(), free_port()
    server = start_mujoco_server(run / 'server', aport, mport, ['--sync', '--no-realtime'], env=env)
    session: RecordedSession | None = None
    try:
        session = RecordedSession(run, env, aport, connect_trainer(mport, Dialect.MUJOCO))
        for name, kw in bags.items():
            session.recorders[name] = start_recording(run / name, teams, mport, env, run / f'{name}.log', **kw)
        yield session
    finally:
        if session is not None:
            for recorder in session.recorders.values():
                stop_process(recorder, timeout=20.0)
            for runner in session.runners:
                runner.stop()
            session.trainer.close()
        stop_process(server)
    for name, recorder in session.recorders.items():
        assert recorder.returncode == 0, session.log(name)
