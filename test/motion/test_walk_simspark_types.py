"""Every other Nao type's sprint on a real rcssserver3d (sync mode, flat out), one session per type.

Its own module: a session left idle while others run (a module fixture) lets the server's monitor
stream back up until it stops.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from robocup3d_tools.sim_session import SimSession
from robocup3d_tools.walk_tasks import run_task

pytestmark = pytest.mark.skipif(shutil.which('rcssserver3d') is None, reason='rcssserver3d (SimSpark) is not on PATH')

#: The walk issue's target, 0.7 m/s over 10 s from standstill (type 0: test_walk_simspark.py). Measured
#: 2026-11-23 (bench/bench_walk.py, two benches): 0.81, 0.73, 0.81-0.82, 0.73 m/s for types 1-4.
FORWARD_10S_M = 7.0


@pytest.mark.parametrize('robot_type', [1, 2, 3, 4])
def test_every_other_nao_type_sprints_10_s_at_0_7_m_s_without_falling(robot_type: int, tmp_path: Path) -> None:
    with SimSession(server='simspark', robot_type=robot_type, log_dir=tmp_path) as session:
        session.request('walk_set sprint')
        result = run_task(session, 'forward', 0.0, 10.0)
    print(f'Nao type {robot_type} forward: {result.as_dict()}')
    assert result.falls == 0
    assert result.forward >= FORWARD_10S_M
    assert abs(result.lateral) < 0.3 * result.forward
