"""Live test of ``robocup3d match --server simspark --opponent-cmd``: a short match on a real rcssserver3d.

The opponent is one of our players started by a shell command in the background (as a team's
start script does), so the match must stop it through its process group. Afterwards no process
the match started may be left: server, our players, the opponent's shell and player.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from simspark_support import REPO, kill_pid

pytestmark = [
    pytest.mark.simspark,
    pytest.mark.skipif(shutil.which('rcssserver3d') is None, reason='rcssserver3d (SimSpark) is not on PATH'),
]

OPPONENT = (
    f'{sys.executable} -m robocup3d_tools.player --server simspark --host {{host}} --port {{port}} '
    '--team {team} --unum 1 --robot nao --type 0 --no-raw & wait'
)


def _pids(pattern: str) -> list[int]:
    out = subprocess.run(['pgrep', '-f', pattern], capture_output=True, text=True, check=False).stdout
    return [int(p) for p in out.split()]


def _started_by(port: int) -> list[int]:
    """Every process that names the match's agent port: rcssserver3d, players, the opponent's shell."""
    return _pids(rf'(--agent-port|--port) {port}( |$)')


def test_match_against_opponent_command(tmp_path: Path) -> None:
    """Two halves against a team given by its start command: both teams, each half's score and the match
    statistics in the summary, and nothing left running afterwards."""
    env = dict(os.environ)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(REPO), env.get('PYTHONPATH', '')) if p)
    cmd = [sys.executable, '-m', 'robocup3d_tools.cli', 'match', '--server', 'simspark', '--players', '2']
    cmd += ['--halves', '2', '--half-time', '4', '--teams', 'Alpha', 'Beta', '--run-dir', str(tmp_path / 'run')]
    cmd += ['--opponent-players', '1', '--opponent-timeout', '40', '--opponent-cmd', OPPONENT]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=150, check=False)
    out = proc.stdout + proc.stderr
    port = re.search(r'agents 127\.0\.0\.1:(\d+)', out)
    left = _started_by(int(port.group(1))) if port else []
    for pid in left:  # a failed run must not leave them behind for the next test
        kill_pid(pid)
    assert proc.returncode == 0, out
    assert '=== Alpha 0 : 0 Beta ===' in out or re.search(r'=== Alpha \d+ : \d+ Beta ===', out), out
    assert re.search(r'^half 1: \d+ : \d+', out, re.M) and re.search(r'^half 2: \d+ : \d+', out, re.M), out
    assert 'rcssserver3d in real time mode' in out, out
    assert 'right team: 1 agents of' in out, out
    assert '/Alpha/p1' in out and '/Alpha/p2' in out, out
    assert re.search(r'play modes: .*KickOff_Left.*KickOff_Right.*GameOver', out), out
    # the statistics from rcssserver3d's monitor stream (each team's kicks, falls and fouls; possession only counts
    # in play, and a 4 s half may pass in its kick-off)
    assert re.search(r'^Alpha: \d+ kicks, \d+ shots, \d+ passes to a teammate, \d+ falls.*, fouls: ', out, re.M), out
    assert not left, f'processes left running after the match: {left}'


def test_failed_opponent_command_is_one_clear_error(tmp_path: Path) -> None:
    """An opponent command that cannot start ends the match with exit 2 and one line saying so."""
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    env.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))
    cmd = [sys.executable, '-m', 'robocup3d_tools.cli', 'match', '--server', 'simspark', '--players', '1']
    cmd += ['--run-dir', str(tmp_path / 'run'), '--opponent-cmd', 'no-such-team-start-script {port}']
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    port = re.search(r'agents 127\.0\.0\.1:(\d+)', proc.stdout)
    left = _started_by(int(port.group(1))) if port else []
    for pid in left:
        kill_pid(pid)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and 'opponent command exited with 127' in lines[0], proc.stderr
    assert 'not found' in lines[0], proc.stderr
    assert not left, f'processes left running after the match: {left}'
