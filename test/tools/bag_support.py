"""Reading recorded bags in tests: every message decoded by topic, and TF transforms as matrices."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

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
