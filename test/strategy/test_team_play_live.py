"""Team-play scenarios on a real RCSSServerMJ (sync mode), set up through the trainer.

The player runs whole (bridge, world model, motion, strategy) and plays on its own; the test
only places robot and ball and reads the server's ground truth.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from robocup3d_tools.sim_session import SimSession

pytestmark = pytest.mark.skipif(
    shutil.which('rcssservermj') is None and not (Path(sys.executable).parent / 'rcssservermj').exists(),
    reason='RCSSServerMJ is not installed (pip install rcsssmj)',
)


def test_the_goalie_moves_to_cover_a_ball_near_our_goal(tmp_path: Path) -> None:
    with SimSession('T1', unum=1, log_dir=tmp_path, player_args=('--world-model',), play=True) as s:
        s.trainer.drop_ball()  # play on
        s.place(-26.5, -1.0, 0.0)
        s.trainer.move_ball(-17.0, 5.0, 0.11)  # outside the 9 m box: it guards (inside, it would come out)
        start = s.cycles
        covered = False
        while (s.cycles - start) * 0.02 < 40.0 and not covered:
            s.wait_cycles(25)
            covered = s.pose is not None and s.pose.y > 0.5 and s.pose.x < -25.0
        assert covered, f'goalie at {s.pose}, motion {s.state.get("task")}, strategy {s.strategy}'
        assert s.pose.up > 0.5
