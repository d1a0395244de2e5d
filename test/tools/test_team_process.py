"""A whole team in one process (``robocup3d team --one-process``): a player whose link dies gets a new one there."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip('rclpy')

from robocup3d_tools.fuzz import FakeServer, FuzzFigures, Mutator, load_lines
from robocup3d_tools.servers import END_WITH_PARENT, stop_process

CAPTURES = Path(__file__).resolve().parents[2] / '..' / 'shared' / 'captures'

pytestmark = pytest.mark.skipif(not CAPTURES.is_dir(), reason=f'shared captures not found in {CAPTURES}')


def test_a_player_whose_link_dies_is_started_again_and_the_process_plays_on(tmp_path: Path) -> None:
    """The link thread dies every 40 cycles (an injected fault); the team process starts it again each time."""
    server = FakeServer('mujoco', load_lines(CAPTURES, 'mujoco'), Mutator(random.Random(1), rate=0.0))
    player = f'--server mujoco --port {server.port} --team OneProc --unum 1 --no-raw'
    cmd = [sys.executable, '-m', 'robocup3d_tools.team_process', '--player', player]
    cmd += ['--ros-args', '-p', 'fail_link_after_cycles:=40']
    log = tmp_path / 'team.log'
    with open(log, 'ab') as out:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ, **{END_WITH_PARENT: '1'})
        )
    figures = FuzzFigures('mujoco')
    try:
        server.run(130, figures, rejoin_timeout=20.0)
        alive = proc.poll() is None
    finally:
        stop_process(proc, timeout=10.0)
        server.close()
    text = log.read_text(errors='replace')
    assert alive, text[-3000:]
    assert figures.gave_up_at is None, text[-3000:]  # it came back every time
    assert figures.link_deaths >= 2, (figures, text[-3000:])
    assert 'player 1: server link died; started again (2/5)' in text, text[-3000:]
    assert figures.answered_ratio >= 0.9, figures
