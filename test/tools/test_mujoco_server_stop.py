"""RCSSServerMJ as our tools start it ends when it is told to, and when the process that started it dies.

Before, a server started to end with its parent (``ROBOCUP3D_END_WITH_PARENT``) took SIGTERM as
``SystemExit`` in its main thread, which was waiting on the simulation thread: the interpreter then
waited for that thread for ever, and the orphaned server stepped an empty field at 14 % of a core.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from robocup3d_bridge.percept import Dialect
from robocup3d_tools.servers import END_WITH_PARENT, connect_trainer, free_port

pytestmark = pytest.mark.skipif(importlib.util.find_spec('rcsssmj') is None, reason='rcsssmj not installed')

REPO = Path(__file__).resolve().parents[2]

#: a parent that starts the server to end with it, says the server's pid, and waits to be killed
PARENT = """
import os, sys, time
from pathlib import Path
from robocup3d_tools.servers import END_WITH_PARENT, start_mujoco_server
env = {**os.environ, END_WITH_PARENT: '1'}
proc = start_mujoco_server(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), env=env)
print(proc.pid, flush=True)
time.sleep(600)
"""


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0]
        except OSError:
            return True
        if state == 'Z':
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize('how', ['parent killed', 'sigterm'])
def test_a_server_that_ends_with_its_parent_ends(how: str, tmp_path: Path) -> None:
    aport, mport = free_port(), free_port()
    env = {**os.environ, 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
    env.pop(END_WITH_PARENT, None)
    parent = subprocess.Popen(
        [sys.executable, '-c', PARENT, str(tmp_path), str(aport), str(mport)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    server_pid = int(parent.stdout.readline())
    try:
        trainer = connect_trainer(mport, Dialect.MUJOCO, timeout=60.0)  # serving: its threads are running
        trainer.close()
        if how == 'sigterm':
            os.kill(server_pid, signal.SIGTERM)
        else:
            parent.kill()
        assert _gone(server_pid, 20.0), (
            f'the server ({how}) is still running:\n' + (tmp_path / 'server.out').read_text()[-2000:]
        )
    finally:
        if not _gone(server_pid, 0.0):
            os.kill(server_pid, signal.SIGKILL)
        parent.kill()
        parent.wait()


@pytest.mark.parametrize('frames', [2, 5])
def test_the_monitor_gets_a_scene_every_given_frames(frames: int, tmp_path: Path) -> None:
    """``--monitor-interval`` (``robocup3d match --monitor-interval``): fewer scenes for a match's trainer."""
    from robocup3d_tools.servers import start_mujoco_server, stop_process  # noqa: PLC0415

    aport, mport = free_port(), free_port()
    server = start_mujoco_server(tmp_path, aport, mport, ['--monitor-interval', str(frames)])
    try:
        trainer = connect_trainer(mport, Dialect.MUJOCO, timeout=60.0)
        times: list[float] = []
        deadline = time.monotonic() + 30.0
        while len(times) < 20 and time.monotonic() < deadline:
            trainer.poll(0.5)
            if trainer.state.server_time is not None and (not times or trainer.state.server_time > times[-1]):
                times.append(trainer.state.server_time)
        trainer.close()
        steps = sorted(round((b - a) / 0.02) for a, b in itertools.pairwise(times[1:]))
        assert steps and steps[len(steps) // 2] == frames, steps
    finally:
        stop_process(server)


def test_a_monitor_interval_that_does_not_divide_250_is_refused() -> None:
    from robocup3d_tools.mujoco_server import set_monitor_interval  # noqa: PLC0415

    with pytest.raises(ValueError, match='divide 250'):
        set_monitor_interval(3)
