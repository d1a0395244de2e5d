"""``robocup3d optimize --task dribble``: the dribble's values as a kicks file, its score, and a real candidate run."""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
from pathlib import Path

import pytest
from search_support import given_results_pool

from robocup3d_bridge.config_files import ConfigError
from robocup3d_motion.kick_config import ball_skills_for, load_kicks_config
from robocup3d_tools import optimize
from robocup3d_tools.dribble_search import dribble_score, dribble_space, run_dribble_candidate


@pytest.mark.parametrize(
    ('robot', 'server', 'types'), [('T1', 'mujoco', (0,)), ('K1', 'mujoco', (0,)), ('nao', 'simspark', range(5))]
)
def test_every_corner_of_the_dribble_space_is_a_kicks_file_the_player_loads(
    tmp_path: Path, robot: str, server: str, types: range
) -> None:
    space = dribble_space(robot)
    assert set(space.names) == {'ball_x', 'ball_y', 'speed', 'lateral', 'ahead'}
    shipped = load_kicks_config()[robot]
    again = load_kicks_config(str(space.write(space.x0(), tmp_path / 'x0')))[robot]
    assert again.dribble == shipped.dribble  # the start is the shipped dribble
    for corner in (0.0, 1.0):
        path = str(space.write([corner] * len(space.names), tmp_path / f'c{corner}'))
        bound = dict(zip(space.names, space.lo if corner == 0.0 else space.hi, strict=True))
        for robot_type in types:
            skills = ball_skills_for(load_kicks_config(path), robot, robot_type, server)
            d = skills.dribble
            assert (d.ball[0], d.ball[1], d.speed) == pytest.approx((bound['ball_x'], bound['ball_y'], bound['speed']))
            assert (d.lateral, d.ahead) == pytest.approx((bound['lateral'], bound['ahead']))
            assert skills.kicks == ball_skills_for(load_kicks_config(), robot, robot_type, server).kicks  # as shipped
    with pytest.raises(ConfigError, match='not a dribble value'):
        dribble_space('T1', ['speed', 'period'])


def test_a_dribble_scores_its_speed_less_falls_and_a_ball_left_behind() -> None:
    def run(speed: float, falls: int = 0, apart: float = 0.8) -> dict:
        return {'speed_mps': speed, 'falls': falls, 'max_apart_m': apart}

    assert dribble_score({'dribbles': [run(0.3)]}) < dribble_score({'dribbles': [run(0.2)]})
    assert dribble_score({'dribbles': [run(0.3, falls=1)]}) == pytest.approx(-0.2)
    assert dribble_score({'dribbles': [run(0.3, apart=2.0)]}) == pytest.approx(-0.2)  # 1 m too far
    assert dribble_score({'dribbles': [run(0.0, apart=math.nan)]}) == 0.0  # the ball never moved
    assert dribble_score({'error': 'TimeoutExpired'}) == 1.0


def test_optimize_runs_the_dribble_task_and_writes_the_best_kicks_file(tmp_path: Path, monkeypatch) -> None:
    """The search's wiring, with its candidates' results given (the candidate run itself is the next test)."""

    def results(jobs: list[tuple]) -> list[dict]:  # faster the higher the speed value asked for
        space = jobs[0][0]
        speeds = [space.values(job[1])['speed'] / 2 for job in jobs]
        return [{'dribbles': [{'speed_mps': v, 'falls': 0, 'max_apart_m': 0.5}]} for v in speeds]

    monkeypatch.setattr(optimize, 'RayPool', given_results_pool(results))
    out = tmp_path / 't1_dribble'
    argv = ['--task', 'dribble', '--popsize', '4', '--generations', '3', '--trace', '--out', str(out)]
    assert optimize.main(argv) == 0
    rows = [json.loads(line) for line in out.with_suffix('.jsonl').read_text().splitlines()]
    assert len(rows) == 12 and {r['generation'] for r in rows} == {0, 1, 2}
    best = min(rows, key=lambda r: r['score'])
    written = load_kicks_config(str(out.with_suffix('.yaml')))['T1'].dribble
    assert written.speed == pytest.approx(best['params']['speed'])


needs_rcssservermj = pytest.mark.skipif(
    shutil.which('rcssservermj') is None and not (Path(sys.executable).parent / 'rcssservermj').exists(),
    reason='RCSSServerMJ is not installed (pip install rcsssmj)',
)


@needs_rcssservermj
@pytest.mark.flaky(reruns=1)  # a robot on a server may fall: one more run, as test/conftest.py gives live modules
def test_a_dribble_candidate_runs_on_the_server_and_moves_the_ball_towards_its_target(tmp_path: Path) -> None:
    space = dribble_space('T1')
    path = space.write(space.x0(), tmp_path / 'shipped')
    domain = int(os.environ.get('ROS_DOMAIN_ID', '0') or 0)
    result = run_dribble_candidate(path, 'mujoco', 'T1', 0, trials=3, seed=3, domain=domain, distance=3.0)
    assert 'error' not in result, result
    runs = result['dribbles']
    assert len(runs) == 3, runs
    # the shipped dribble is not reliable yet (issue #20): of 15 such trials (2026-11-30) 10 moved the ball 2.4-2.7 m of
    # 3 without a fall, 4 fell 2-6 times (stepping onto a ball that had stopped), 1 had it 1.5 m on when time ran out
    best = max(runs, key=lambda r: r['progress_m'])
    assert best['progress_m'] > 1.5, runs
    assert dribble_score({'dribbles': [best]}) < 0.0  # a working dribble scores below 0 (faster: lower)
