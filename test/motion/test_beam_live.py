"""A walking T1 that is beamed lands standing at its place (RCSSServerMJ, sync mode, the real player).

In BeforeKickOff the player's strategy beams it to its kick-off place every second, as it does after a goal. The
server drops a beamed robot upright in its initial joint pose; the walk used to play on from there, and the landing
read as a fall: after each goal of a 7 v 7 half every walking player fell, 2-4 times each (session 42).
"""

from __future__ import annotations

import math
import shutil
import sys
import time
from pathlib import Path

import pytest

from robocup3d_strategy.formation import formation_pose, load_formations
from robocup3d_tools.sim_session import SimSession

pytestmark = pytest.mark.skipif(
    shutil.which('rcssservermj') is None and not (Path(sys.executable).parent / 'rcssservermj').exists(),
    reason='RCSSServerMJ is not installed (pip install rcsssmj)',
)


def test_a_walking_t1_beamed_lands_standing_at_its_place(tmp_path: Path) -> None:
    with SimSession('T1', log_dir=tmp_path, kick_off=False) as s:  # BeforeKickOff: beamed each second
        getups = s.state.get('getups', 0)
        for _ in range(60):  # 6 s of walking forward at 0.45 m/s, through 5-6 beams
            s.velocity(0.45)
            s.wait_cycles(5)
        s.wait_cycles(150)  # 3 s of server time: the walk's command (2 s) runs out
        # the strategy beams once a wall second: in sync mode on a quiet machine 3 s of server time can pass in
        # under a wall second, so wait for a beam after the walk has stopped, then for the robot to stand
        until = time.monotonic() + 2.5
        s.spin_until(lambda: time.monotonic() > until, 30.0, 'wall clock')
        s.wait_cycles(100)
        x, y, _ = formation_pose(load_formations('formations.yaml'), 'mujoco', s.unum, 'T1')
        print(f'pose {s.pose}, state {s.state}')
        assert s.state.get('getups', 0) == getups and not s.state.get('fallen')
        assert s.pose.up > 0.9  # upright
        assert math.hypot(s.pose.x + abs(x), s.pose.y - y) < 0.5  # at its place (the left team's half)
