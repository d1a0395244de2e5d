"""``robocup3d replay BAG --rerun world-model`` on bags recorded from a real RCSSServerMJ."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    cmd = [sys.executable, '-m', 'robocup3d_tools.cli', *args]
    env = {**os.environ, 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)


@pytest.fixture(scope='module')
def match_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 10 s match of one T1 a side on RCSSServerMJ, recorded as a user would: ``match --record``."""
    for package in ('rcsssmj', 'rosbags'):
        if importlib.util.find_spec(package) is None:
            pytest.skip(f'{package} not installed')
    run = tmp_path_factory.mktemp('rerun')
    cmd = [sys.executable, '-m', 'robocup3d_tools.cli', 'match', '--players', '1', '--half-time', '10']
    cmd += ['--record', str(run / 'bag'), '--run-dir', str(run)]
    env = {**os.environ, 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
    with open(run / 'match.log', 'wb') as log:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=300)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the match, its server, players and recorder
            proc.wait()
    assert proc.returncode == 0, (run / 'match.log').read_text()[-3000:]
    return run / 'bag'


def test_the_rerun_reproduces_the_live_localization_error(match_bag: Path, tmp_path: Path) -> None:
    """Both players are rerun, and the rerun's errors are the live ones within the noise.

    The rerun equals the live run for a player whose every cycle is in the bag (the seed is the node's);
    a player whose first cycles came before the recorder subscribed is rerun from a fresh model and
    draws other noise. Measured (2026-11-24, 8 players of three matches): position medians rerun/live
    0.043/0.038, 0.088/0.106, 0.070/0.070, 0.178/0.182, 0.034/0.036, 0.115/0.115, 0.039/0.039,
    0.052/0.052 m (at most 0.018 apart); heading medians within 0.1 deg, ball medians within 0.021 m.
    """
    out = _cli('replay', str(match_bag), '--rerun', 'world-model', '--json', str(tmp_path / 'rerun.json'))
    assert out.returncode == 0, out.stderr
    assert 'rerun' in out.stdout and 'live' in out.stdout, out.stdout
    players = json.loads((tmp_path / 'rerun.json').read_text())['players']
    assert sorted(players) == ['Robo3dA/p1', 'Robo3dB/p1'], out.stdout
    for name, figures in players.items():
        rerun, live = figures['rerun'], figures['live']
        assert live is not None, (name, out.stdout)
        # both are scored on the same cycles, and every cycle with a live estimate was rerun
        assert rerun['samples'] == live['samples'] > 100 and figures['cycles'] >= live['samples'], (name, out.stdout)
        for est in (rerun, live):  # both localize: a T1 on an RCSSServerMJ field sees its landmarks
            assert est['position_m']['p50'] < 0.5 and est['heading_deg']['p50'] < 10.0, (name, out.stdout)
        assert abs(rerun['position_m']['p50'] - live['position_m']['p50']) < 0.05, (name, out.stdout)
        assert abs(rerun['heading_deg']['p50'] - live['heading_deg']['p50']) < 2.0, (name, out.stdout)
        if live['ball_m'] is not None:  # the ball, on the cycles it was seen
            assert abs(rerun['ball_m']['p50'] - live['ball_m']['p50']) < 0.1, (name, out.stdout)


def test_a_bag_without_the_percepts_gets_one_line_and_exit_2(recorded_bag: Path) -> None:
    """The shared fixture's player runs with ``--no-raw``: its bag has no ``raw/percept``."""
    out = _cli('replay', str(recorded_bag), '--rerun', 'world-model')
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and 'raw/percept' in lines[0] and str(recorded_bag) in lines[0], out.stderr


@pytest.mark.parametrize(
    ('capture', 'server', 'robot'),
    [
        ('rcssservermj/capture_T1.txt', 'mujoco', 'T1'),
        ('rcssservermj/capture_K1.txt', 'mujoco', 'K1'),  # a K1's joints are the T1's but its waist: not a T1
        ('simspark/type2_single_agent.txt', 'simspark', 'nao0'),
        ('simspark/type4_single_agent.txt', 'simspark', 'nao4'),
    ],
)
def test_without_a_description_the_rerun_takes_the_robot_its_percepts_show(
    shared_dir: Path, capture: str, server: str, robot: str
) -> None:
    from robocup3d_bridge.perception import parse_percept  # noqa: PLC0415
    from robocup3d_tools.rerun import _robot_of  # noqa: PLC0415

    lines = [m for m in (shared_dir / 'captures' / capture).read_text().splitlines() if m.startswith('(')][:50]
    joints = set().union(*(parse_percept(m).joint_positions for m in lines))
    assert _robot_of(joints, server, None) == robot
    assert _robot_of(joints, server, '<robot name="nao3">') == 'nao3'  # the description wins
    assert _robot_of(set(), server, None) == ('T1' if server == 'mujoco' else 'nao0')
