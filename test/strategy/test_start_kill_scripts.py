"""The competition scripts: ``scripts/start.sh <host> <port> <team>`` and ``scripts/kill.sh`` on a real rcssserver3d.

The scripts are copied into a temporary directory and run from there: they keep their pid
files and logs next to themselves, so the copy keeps this test away from the repository's
``scripts/`` (and from teams other people started from it), and cleans up with ``tmp_path``.
``robocup3d`` must be on PATH for start.sh; without an installed console script a shim in
``tmp_path/bin`` runs this checkout's CLI.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.simspark,
    pytest.mark.skipif(shutil.which('rcssserver3d') is None, reason='rcssserver3d (SimSpark) is not on PATH'),
    pytest.mark.skipif(shutil.which('bash') is None, reason='the scripts need bash'),
]

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / 'scripts'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def player_pids(agent_port: int, team: str) -> list[int]:
    """Our team's player processes on the server at ``agent_port``."""
    pattern = rf'robocup3d_strategy\.player .*--port {agent_port} .*--team {team} '
    out = subprocess.run(['pgrep', '-f', pattern], capture_output=True, text=True, check=False).stdout
    return [int(p) for p in out.split()]


def kill_pid(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (killed, not yet reaped by its parent) counts as gone.
    with contextlib.suppress(OSError):
        return Path(f'/proc/{pid}/stat').read_text().split(')')[-1].split()[0] != 'Z'
    return True


def wait_until(pred, timeout: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


def count_agents(full_state: bytes, side: str = 'matLeft') -> int:
    """Agents of one side in a full monitor scene (meshes with ``resetMaterials matNum<N> matLeft|matRight``)."""
    text = full_state.decode('ascii', 'replace')
    nums = set()
    for part in text.split('(resetMaterials matNum')[1:]:
        words = part.split(')')[0].split()
        if words[1:2] == [side]:
            nums.add(words[0])  # several meshes of one agent carry its number
    return len(nums)


@contextlib.contextmanager
def simspark_server() -> Iterator[tuple[subprocess.Popen, int, object]]:
    """rcssserver3d on free loopback ports plus a trainer on its monitor port; SIGKILLed after (it ignores SIGTERM)."""
    from robocup3d_bridge.link import LinkDown  # noqa: PLC0415
    from robocup3d_bridge.trainer import TrainerClient  # noqa: PLC0415

    cwd = Path(tempfile.mkdtemp(prefix='rcssserver3d_'))  # it reads .rb files from its cwd first
    agent_port, monitor_port = free_port(), free_port()
    with open(cwd / 'server.log', 'wb') as log:
        proc = subprocess.Popen(
            ['rcssserver3d', '--agent-port', str(agent_port), '--server-port', str(monitor_port)],
            cwd=cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    trainer = TrainerClient('127.0.0.1', monitor_port, 'simspark')
    try:
        deadline = time.monotonic() + 15.0
        while True:
            try:
                trainer.connect()
                break
            except (LinkDown, OSError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError('rcssserver3d did not accept a monitor connection') from None
                time.sleep(0.2)
        yield proc, agent_port, trainer
    finally:
        trainer.close()
        kill_pid(proc.pid)
        proc.wait(10)
        shutil.rmtree(cwd, ignore_errors=True)


def robocup3d_on_path(tmp_path: Path) -> str:
    """A PATH on which ``robocup3d`` runs this checkout's CLI (the installed console script if there is one)."""
    path = os.environ.get('PATH', '')
    if shutil.which('robocup3d', path=path):
        return path
    bindir = tmp_path / 'bin'
    bindir.mkdir()
    shim = bindir / 'robocup3d'
    shim.write_text(
        '#!/bin/sh\n'
        f'export PYTHONPATH="{REPO}${{PYTHONPATH:+:$PYTHONPATH}}"\n'
        f'exec "{sys.executable}" -m robocup3d_strategy.cli "$@"\n'
    )
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return f'{bindir}{os.pathsep}{path}'


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    """start.sh and kill.sh, copied to a directory of their own."""
    d = tmp_path / 'scripts'
    d.mkdir()
    for name in ('start.sh', 'kill.sh'):
        shutil.copy2(SCRIPTS / name, d / name)
    return d


def _poll_monitor(trainer: object, seconds: float) -> bytes:
    """Read the monitor for ``seconds``; return the last full-state message seen (or b'')."""
    from robocup3d_bridge.trainer import parse_monitor_message  # noqa: PLC0415

    full = b''
    deadline = time.monotonic() + seconds
    while True:
        for msg in trainer.link.receive(min(0.1, max(0.0, deadline - time.monotonic()))):
            with contextlib.suppress(ValueError):
                parse_monitor_message(msg, 'simspark', trainer.state)
            if b'(RSG ' in msg[:20000]:
                full = msg
        if time.monotonic() >= deadline:
            return full


def test_kill_sh_with_nothing_running(scripts: Path) -> None:
    res = subprocess.run(['bash', str(scripts / 'kill.sh')], capture_output=True, text=True, timeout=30, check=False)
    assert res.returncode == 0, res


def test_start_and_kill_scripts(scripts: Path, tmp_path: Path) -> None:
    """start.sh returns at once with the team running in the background; all 11 join; kill.sh stops every process."""
    team = f'SK{random.randint(0, 99999)}'
    env = dict(os.environ)
    env['PATH'] = robocup3d_on_path(tmp_path)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['ROS_DOMAIN_ID'] = str(random.randint(1, 100))
    pid_file = scripts / f'.team_{team}.pid'
    with simspark_server() as (server, port, trainer):
        try:
            t0 = time.monotonic()
            res = subprocess.run(
                ['bash', str(scripts / 'start.sh'), '127.0.0.1', str(port), team],
                env=env,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            took = time.monotonic() - t0
            assert res.returncode == 0, res
            assert took < 5.0, f'start.sh took {took:.1f} s: it must start the team in the background and return'
            assert f'started team {team}' in res.stdout, res.stdout
            runner = int(pid_file.read_text())
            assert pid_alive(runner)

            # Players connect: the monitor names the team on the left, then has all 11 of its agents.
            trainer.wait_for(lambda s: s.team_left == team, 30.0)
            agents = 0
            deadline = time.monotonic() + 35.0
            while agents < 11 and time.monotonic() < deadline:
                trainer.request_full_state()
                full = _poll_monitor(trainer, 1.0)
                agents = count_agents(full) if full else agents
                assert server.poll() is None, 'rcssserver3d died'
            logs = scripts / 'logs'
            assert agents == 11, f'{agents} of 11 agents on the field; runner log:\n' + (
                logs / f'team_{team}.log'
            ).read_text(errors='replace')
            assert len(player_pids(port, team)) == 11
            assert (logs / f'team_{team}.log').is_file()
            assert sorted(p.name for p in logs.glob(f'{team}_p*.log')) == sorted(
                f'{team}_p{u}.log' for u in range(1, 12)
            )

            # kill.sh: everything stops, the pid file goes.
            t0 = time.monotonic()
            res = subprocess.run(
                ['bash', str(scripts / 'kill.sh')], env=env, capture_output=True, text=True, timeout=60, check=False
            )
            assert res.returncode == 0, res
            assert time.monotonic() - t0 < 20.0
            assert wait_until(lambda: not pid_alive(runner), 5.0), 'the team runner survived kill.sh'
            assert wait_until(lambda: not player_pids(port, team), 5.0), (
                f'player processes left after kill.sh: {player_pids(port, team)}'
            )
            assert not pid_file.exists()
            assert 'robocup3d team: stopped' in (logs / f'team_{team}.log').read_text(errors='replace')
            assert server.poll() is None, 'rcssserver3d died'
        finally:
            if pid_file.exists():
                with contextlib.suppress(ValueError):
                    kill_pid(int(pid_file.read_text()))
            for pid in player_pids(port, team):
                kill_pid(pid)
