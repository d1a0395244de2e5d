"""``robocup3d optimize``: how candidates are scored, and one real generation on RCSSServerMJ."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from robocup3d_bridge.config_files import ConfigError, load_config
from robocup3d_motion.walk import walk_params, walk_sets
from robocup3d_tools.optimize import _yaml_values, decode, encode, main, score, task_jobs, total_score


def _result(task: str, forward: float = 0.0, lateral: float = 0.0, turned: float = 0.0, falls: int = 0) -> dict:
    return {'task': task, 'seconds': 10.0, 'forward': forward, 'lateral': lateral, 'turned': turned, 'falls': falls}


def test_score_rewards_speed_along_the_tasks_own_axis() -> None:
    assert score(_result('forward', forward=5.0), 10.0) == pytest.approx(-0.5)
    assert score(_result('forward', forward=5.0, lateral=1.0), 10.0) > score(_result('forward', forward=5.0), 10.0)
    # sideways to either side is as good; forward drift counts against it
    assert score(_result('sideways', lateral=-0.8), 10.0) == pytest.approx(-0.08)
    assert score(_result('sideways', lateral=0.8, forward=0.5), 10.0) > score(_result('sideways', lateral=0.8), 10.0)
    assert score(_result('turn', turned=-3.0), 10.0) == pytest.approx(-0.3)
    # results written before tasks were named are forward runs
    assert score({k: v for k, v in _result('forward', forward=4.0).items() if k != 'task'}, 10.0) == pytest.approx(-0.4)


def test_a_fall_outweighs_any_speed_and_an_early_one_weighs_more() -> None:
    fast_fall = dict(_result('forward', forward=9.0, falls=1), seconds=9.0)
    early_fall = dict(_result('forward', forward=1.0, falls=1), seconds=2.0)
    assert score(fast_fall, 10.0) > score(_result('forward', forward=0.5), 10.0)
    assert score(early_fall, 10.0) > score(fast_fall, 10.0)
    assert score({'error': 'exit 1'}, 10.0) > score(early_fall, 10.0)


def test_random_courses_score_their_falls_and_add_up_with_the_other_tasks() -> None:
    jobs = task_jobs(['forward', 'random'], 10.0, 20.0, [3, 4])
    assert jobs == [('forward', 10.0, 1), ('random', 20.0, 3), ('random', 20.0, 4)]
    course = dict(_result('random', forward=2.0), seconds=20.0)
    results = [_result('forward', forward=5.0), dict(course, falls=2), course]
    assert total_score(results, jobs) == pytest.approx(-0.5 + 2.0)


def test_the_fast_part_of_a_set_is_searched_by_its_own_names_and_written_back_over_the_set() -> None:
    start = walk_params({'period': 0.25, 'max_vx': 0.5, 'boost_from': 0.3, 'boost_to': 0.45, 'fast': {'period': 0.22}})
    names = ['fast.period', 'max_vx']
    x = encode(start, start, names)
    assert decode(x, start, names) == start
    moved = decode([1.0, 0.0], start, names)
    assert moved.fast is not None and moved.fast.period == 0.5 and moved.max_vx == 0.4 and moved.period == 0.25
    again = walk_params(_yaml_values(moved))  # the walk file's values (degrees, rounded) read back
    assert again.fast is not None and (again.fast.period, again.max_vx, again.boost_to) == (0.5, 0.4, 0.45)
    assert again.fast.torso_pitch == pytest.approx(moved.fast.torso_pitch, abs=1e-6)
    written = _yaml_values(moved)['fast']
    assert written['period'] == 0.5 and 'torso_pitch' not in written  # only what differs from the set
    assert moved.fast.max_vx == 0.4  # inherited from the set, it goes along with the set's
    own = walk_params({'max_vx': 0.5, 'boost_from': 0.3, 'boost_to': 0.45, 'fast': {'max_vx': 0.7}})
    assert decode([0.0], own, ['max_vx']).fast.max_vx == 0.7  # the fast part's own top speed stays
    with pytest.raises(ConfigError, match='no fast part'):
        encode(start, walk_params({}), names)


def test_the_turn_limits_are_searched_in_rad_and_written_back_in_degrees() -> None:
    from robocup3d_tools.optimize import search_space  # noqa: PLC0415

    space = search_space('mujoco')
    names = ['max_wz', 'accel_w', 'turn_scale', 'max_vy', 'accel_y']
    assert set(names) <= set(space)
    start = walk_sets(load_config('walk.yaml'), 'T1')[0]['positioning']
    x = encode(start, start, names, space)
    assert all(0.0 < xi < 1.0 for xi in x)  # the shipped values lie inside the ranges
    back = decode(x, start, names, space)
    assert math.isclose(back.max_wz, start.max_wz) and math.isclose(back.accel_w, start.accel_w)
    top = decode([1.0] * len(names), start, names, space)
    assert math.isclose(top.max_wz, 1.75)  # rad/s
    values = _yaml_values(top)
    assert math.isclose(values['max_wz'], math.degrees(1.75), abs_tol=1e-4)  # walk.yaml keeps degrees
    assert walk_params({'max_wz': values['max_wz']}).max_wz == pytest.approx(1.75, abs=1e-6)


def test_one_generation_on_the_real_server_writes_a_walk_file_the_player_loads(tmp_path: Path) -> None:
    """Two candidates of a short forward walk, run by walk_tasks on its own RCSSServerMJ."""
    pytest.importorskip('cma')
    pytest.importorskip('rcsssmj')
    out = tmp_path / 'walk_T1.yaml'
    domain = str(101 + int(os.environ['ROS_DOMAIN_ID']) % 100)  # clear of the other tests' domains (1-100)
    argv = ['--robot', 'T1', '--set', 'positioning', '--task', 'forward', '--seconds', '3', '--generations', '1']
    argv += ['--popsize', '2', '--workers', '1', '--batch', '2', '--params', 'period', 'step_height']
    argv += ['--trace', '--domain-base', domain, '--out', str(out)]
    assert main(argv) == 0
    trace = [json.loads(line) for line in out.with_suffix('.jsonl').read_text().splitlines()]
    assert len(trace) == 2
    for row in trace:
        (run,) = row['result']
        assert 'error' not in run, run
        assert run['task'] == 'forward' and run['seconds'] > 0.0
        assert math.isfinite(row['score'])
    sets, default = walk_sets(load_config(out), 'T1')
    assert default == 'positioning'
    best = min(trace, key=lambda r: r['score'])
    assert sets['positioning'].period == pytest.approx(best['params']['period'], abs=1e-4)
    assert 0.18 <= sets['positioning'].period <= 0.5  # inside the search range


def test_goto_courses_score_the_metres_gained_per_second_and_a_fall_costs_more() -> None:
    from robocup3d_tools.optimize import GOTO_FALL  # noqa: PLC0415

    jobs = task_jobs(['goto'], 10.0, 40.0, [1, 2])
    assert jobs == [('goto', 40.0, 1), ('goto', 40.0, 2)]
    course = {'task': 'goto', 'seconds': 40.0, 'forward': 8.0, 'lateral': 0.0, 'turned': 0.0, 'falls': 0}
    assert score(course, 40.0) == pytest.approx(-0.2)
    assert score(dict(course, falls=1), 40.0) == pytest.approx(-0.2 + GOTO_FALL)
    assert score(dict(course, forward=10.0), 40.0) < score(course, 40.0)


def test_goto_targets_are_seeded_1_to_4_m_apart_and_stay_on_the_field() -> None:
    from robocup3d_tools.walk_tasks import GOTO_FIELD, goto_targets  # noqa: PLC0415

    targets = goto_targets(3, 200, (-6.0, 0.0, 0.0))
    assert targets == goto_targets(3, 200, (-6.0, 0.0, 0.0)) != goto_targets(4, 200, (-6.0, 0.0, 0.0))
    x0, x1, y0, y1 = GOTO_FIELD
    assert all(x0 <= x <= x1 and y0 <= y <= y1 and -math.pi <= h <= math.pi for x, y, h in targets)
    before = [(-6.0, 0.0, 0.0), *targets[:-1]]
    steps = [math.hypot(b[0] - a[0], b[1] - a[1]) for a, b in zip(before, targets, strict=True)]
    assert max(steps) <= 4.0 + 1e-9 and sorted(steps)[len(steps) // 2] > 1.0  # clipped at the edges only
