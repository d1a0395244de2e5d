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
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from simspark_support import REPO, count_agents, kill_pid, player_pids, simspark_server, wait_until

pytestmark = [
    pytest.mark.simspark,
    pytest.mark.skipif(shutil.which('rcssserver3d') is None, reason='rcssserver3d (SimSpark) is not on PATH'),
    pytest.mark.skipif(shutil.which('bash') is None, reason='the scripts need bash'),
]

SCRIPTS = REPO / 'scripts'


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (killed, not yet reaped by its parent) counts as gone.
    with contextlib.suppress(OSError):
        return Path(f'/proc/{pid}/stat').read_text().split(')')[-1].split()[0] != 'Z'
    return True


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
        f'exec "{sys.executable}" -m robocup3d_tools.cli "$@"\n'
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
    with simspark_server() as server:
        port, trainer = server.agent_port, server.trainer
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
                full = server.read_monitor(1.0)
                agents = count_agents(full) if full else agents
                assert server.alive(), 'rcssserver3d died'
            logs = scripts / 'logs'
            assert agents == 11, f'{agents} of 11 agents on the field; runner log:\n' + (
                logs / f'team_{team}.log'
            ).read_text(errors='replace')
            assert len(player_pids(port, team=team)) == 11
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
            assert wait_until(lambda: not player_pids(port, team=team), 5.0), (
                f'player processes left after kill.sh: {player_pids(port, team=team)}'
            )
            assert not pid_file.exists()
            assert 'robocup3d team: stopped' in (logs / f'team_{team}.log').read_text(errors='replace')
            assert server.alive(), 'rcssserver3d died'
        finally:
            if pid_file.exists():
                with contextlib.suppress(ValueError):
                    kill_pid(int(pid_file.read_text()))
            for pid in player_pids(port, team=team):
                kill_pid(pid)
