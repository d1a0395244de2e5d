"""Ball skills through the running graph on a real RCSSServerMJ (sync mode): a T1 with its world model, a K1.

The test sends motion task requests as strategy would and scores them from the server's ground
truth (torso and ball from the monitor stream), which the player never reads.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import pytest

from robocup3d_motion.requests import Dribble, Kick
from robocup3d_tools.ball_tasks import await_ball_rest, dribble_figures, place_ball, run_request
from robocup3d_tools.kick_tasks import kick_once, kick_setup
from robocup3d_tools.sim_session import SimSession

pytestmark = pytest.mark.skipif(
    shutil.which('rcssservermj') is None and not (Path(sys.executable).parent / 'rcssservermj').exists(),
    reason='RCSSServerMJ is not installed (pip install rcsssmj)',
)


@pytest.fixture
def t1(tmp_path: Path) -> SimSession:
    with SimSession('T1', log_dir=tmp_path, player_args=('--world-model',)) as session:
        session.place(-3.0, 0.0, 0.0)
        yield session


@pytest.fixture
def k1(tmp_path: Path) -> SimSession:
    with SimSession('K1', log_dir=tmp_path) as session:
        yield session


def _running(session: SimSession) -> bool:
    """The server process is alive and its simulation still steps (the K1 ball-touch fault stops both)."""
    before = session.cycles
    session.wait_cycles(25)
    return session.server is not None and session.server.poll() is None and session.cycles >= before + 25


def test_k1_long_kick_sends_the_ball_3_m_ahead_stays_up_and_the_server_runs_on(k1: SimSession) -> None:
    """The K1's long kick (right foot) from its spot: at least 3 m along the heading (measured p10 well above),
    within 30 deg of it, the robot standing 1 s after the kick, and the server still stepping after the touch."""
    spot, swing = kick_setup('K1', 'long')
    trial = kick_once(k1, 'KICK_LONG_RIGHT', spot, swing)
    print(f'K1 long kick: {json.dumps(trial.__dict__)}')
    assert trial.kicked and not trial.early, trial
    assert trial.along >= 3.0, trial
    assert trial.angle_err_deg <= 30.0, trial
    assert trial.standing and not trial.fell, trial
    assert _running(k1), 'the server stopped after the K1 touched the ball'


def test_a_malformed_kick_request_is_refused_and_the_robot_keeps_standing(t1: SimSession) -> None:
    t1.request('{"kind": "kick", "target": [3.0]}')
    t1.spin_until(lambda: 'refused' in t1.state.get('error', ''), 10.0, 'no refusal in motion_state')
    assert 'target' in t1.state['error']
    t1.wait_cycles(50)
    assert t1.state['skill'] == 'stand' and not t1.state['fallen']
    assert t1.state.get('task') is None


def test_t1_dribbles_the_ball_3_m_towards_a_target(t1: SimSession) -> None:
    place_ball(t1, -2.0, 0.3)
    target = (3.0, 0.3)
    run = run_request(t1, Dribble(target=target, id=7), 60.0)
    figures = dribble_figures(run, target)
    print(f'T1 dribble: {json.dumps(figures)}')
    assert figures['progress_m'] >= 3.0, figures
    assert t1.pose is not None and t1.pose.up > 0.5  # standing at the end


def test_t1_placed_2_m_from_the_ball_kicks_it_to_a_target_6_m_away_and_stays_up(t1: SimSession) -> None:
    """Issue #20's kick test: the kick of chosen length (``pass``), its strength read off its distance model."""
    place_ball(t1, -1.0, 0.0)  # the robot stands at (-3, 0), facing the ball and the target
    target = (5.0, 0.0)
    run = run_request(t1, Kick(target=target, kick='pass', id=9), 40.0)
    assert run.phase == 'done', (run.phase, run.reason)
    rest = await_ball_rest(t1)
    t1.wait_cycles(50)
    miss = math.dist(rest, target)
    print(f'T1 pass kick: the ball came to rest at {rest[0]:.2f}, {rest[1]:.2f}, {miss:.2f} m from the target')
    assert miss <= 2.0
    assert t1.pose is not None and t1.pose.up > 0.5  # standing at the end
