"""Team-play scenarios on a real RCSSServerMJ (sync mode), set up through the trainer.

The player runs whole (bridge, world model, motion, strategy) and plays on its own; the test
only places robot and ball and reads the server's ground truth.
"""

from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

import pytest

from robocup3d_bridge.config_files import load_config
from robocup3d_strategy.decision import GUARD_DEPTH
from robocup3d_strategy.formation import formation_pose
from robocup3d_tools.ball_tasks import clear_kick_off
from robocup3d_tools.sim_session import SimSession

pytestmark = pytest.mark.skipif(
    shutil.which('rcssservermj') is None and not (Path(sys.executable).parent / 'rcssservermj').exists(),
    reason='RCSSServerMJ is not installed (pip install rcsssmj)',
)


def test_the_goalie_moves_to_cover_a_ball_near_our_goal(tmp_path: Path) -> None:
    """The goalie steps along its goal towards the ball's side, staying within the depth it guards from.

    A T1 sidesteps at about 0.12 m/s and creeps forward as it steps (it cannot step back, so it guards at its own
    depth, up to ``GUARD_DEPTH`` out); put down mid-step by the trainer it may fall first: the cover took 12-29 s
    of game time in three probes, 2.1-2.5 m in front of the goal line after a fall (2026-11-29)."""
    line_x = -27.5 + 0.4  # RCSSServerMJ's field: its goal line, and the line the goalie guards
    with SimSession('T1', unum=1, log_dir=tmp_path, player_args=('--world-model',), play=True) as s:
        s.trainer.drop_ball()  # play on
        s.place(-26.5, -1.0, 0.0)
        s.trainer.move_ball(-17.0, 5.0, 0.11)  # outside the 9 m box: it guards (inside, it would come out)
        start = s.cycles
        covered = False
        while (s.cycles - start) * 0.02 < 60.0 and not covered:
            s.wait_cycles(25)
            covered = s.pose is not None and s.pose.y > 0.5 and s.pose.up > 0.5
        assert covered, f'goalie at {s.pose}, motion {s.state.get("task")}, strategy {s.strategy}'
        assert line_x - 0.2 < s.pose.x < line_x + GUARD_DEPTH, f'not in front of its goal: {s.pose}'
        assert s.strategy.get('reason') == 'guard', s.strategy


def test_in_their_kick_off_our_player_keeps_out_of_the_centre_circle(tmp_path: Path) -> None:
    """RCSSServerMJ moves any of our players within 5.5 m of the ball in the opponents' set plays (kick-off,
    throw-in, corner, free kick) to the touchline, at once. Our kick-off taker, 8 m from the ball, must
    not walk in while they kick off (it used to go to 2.5 m and be put off the field)."""
    with SimSession('T1', unum=2, log_dir=tmp_path, player_args=('--world-model',), play=True) as s:
        s.place(-8.0, 0.0, 0.0)
        s.trainer.move_ball(0.0, 0.0, 0.11)
        s.trainer.kick_off('Right')
        start, nearest = s.cycles, float('inf')
        while (s.cycles - start) * 0.02 < 12.0:
            s.wait_cycles(10)
            assert s.state.get('task'), 'the player plays'
            nearest = min(nearest, math.hypot(s.pose.x, s.pose.y))
            assert abs(s.pose.y) < 17.0, f'put off the field at {s.pose}: it came within 5.5 m of the ball'
        assert nearest > 5.5
        assert s.strategy.get('phase') == 'theirs', s.strategy


@pytest.mark.parametrize('robot', ['T1', 'K1'])
def test_our_kick_off_is_a_long_kick_forwards_and_to_the_side_taken_at_once(tmp_path: Path, robot: str) -> None:
    """The session starts as a match does: the player beams to its kick-off place, its robot's long-kick spot
    (config/formations.yaml), stands 2 s, and the kick-off is ours. The kick comes after its rest, with no
    walk-up (from 3 m a walk-up took 11 s and nudged the ball: the kick-off was lost without a kick)."""
    with SimSession(robot, unum=2, log_dir=tmp_path, player_args=('--world-model',), play=True) as s:
        x, y, _ = formation_pose(load_config('formations.yaml'), 'mujoco', 2, robot)
        assert math.hypot(s.pose.x - x, s.pose.y - y) < 0.1, f'not beamed to its kick-off place: {s.pose}'
        start = s.cycles
        while (s.cycles - start) * 0.02 < 10.0 and math.hypot(*s.ball[:2]) < 5.0:
            s.wait_cycles(10)
        s.wait_cycles(100)  # it rolls on
        bx, by = s.ball[:2]
        assert bx > 4.0 and by > 1.0, (f'ball at ({bx:.2f}, {by:.2f}) after the kick-off', s.strategy, s.state)
        assert not s.trainer.state.fouls, s.trainer.state.fouls


def test_a_forward_3_m_behind_the_ball_4_m_before_their_goal_scores_within_40_s(tmp_path: Path) -> None:
    """Issue #21's scenario (bench/bench_score.py runs it many times): the player decides to shoot, walks up and
    kicks; the referee's score says it went in."""
    goal_x, ball = 27.5, (23.5, 0.0, 0.11)
    with SimSession('T1', unum=2, log_dir=tmp_path, player_args=('--world-model',), play=True) as s:
        clear_kick_off(s, goal_x - 7.0, 0.0, 0.0, ball)
        s.trainer.drop_ball()
        s.place(goal_x - 7.0, 0.0, 0.0, ball=ball)
        start, reasons = s.cycles, []
        while (s.cycles - start) * 0.02 < 40.0 and s.trainer.state.score_left == 0:
            s.wait_cycles(10)
            if s.strategy.get('reason') not in reasons[-1:]:
                reasons.append(s.strategy.get('reason'))
        assert s.trainer.state.score_left == 1, (reasons, s.ball, s.trainer.state.play_mode, s.trainer.state.fouls)
        assert 'shoot' in reasons
