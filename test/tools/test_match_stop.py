"""A ``robocup3d match`` stopped from outside leaves nothing running: no server, no player."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(importlib.util.find_spec('rcsssmj') is None, reason='rcsssmj not installed')


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (by parent links in /proc)."""
    parents: dict[int, int] = {}
    for entry in Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / 'stat').read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(')', 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    out = set()
    for pid in pids:
        try:
            state = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0]
        except OSError:
            continue
        if state != 'Z':  # a zombie has ended; only its parent's wait is missing
            out.add(pid)
    return out


@pytest.mark.parametrize('sig', [signal.SIGTERM, signal.SIGKILL], ids=['sigterm', 'sigkill'])
def test_a_stopped_match_takes_its_server_and_players_with_it(sig: signal.Signals, tmp_path: Path) -> None:
    """SIGTERM ends the match through its clean-up; even SIGKILL, which nothing can catch, takes the server
    and every player down with it (they end with their parent). Before, both left a server and all players
    running, a server at 40 % of a core."""
    cmd = [sys.executable, '-m', 'robocup3d_tools.cli', 'match', '--players', '1', '--half-time', '300']
    cmd += ['--run-dir', str(tmp_path)]
    env = {**os.environ, 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
    log_path = tmp_path / 'match.log'
    with open(log_path, 'wb') as log:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    started = set()
    try:
        deadline = time.monotonic() + 180
        while 'players connected' not in log_path.read_text() and time.monotonic() < deadline:
            assert proc.poll() is None, log_path.read_text()[-3000:]
            time.sleep(0.5)
        assert 'players connected' in log_path.read_text(), log_path.read_text()[-3000:]
        started = _descendants(proc.pid)
        assert len(started) >= 3, started  # the server and a player a side
        proc.send_signal(sig)
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while _alive(started) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not _alive(started), f'still running after the match ended: {_alive(started)}'
    finally:
        for pid in _alive(started) | ({proc.pid} if proc.poll() is None else set()):
            os.kill(pid, signal.SIGKILL)
        proc.wait()
