"""``robocup3d_tools.lineup``: the lining-up courses and their creep, and how ``robocup3d optimize`` scores them."""

from __future__ import annotations

import math

from robocup3d_tools.lineup import ARRIVE, IN_PLACE, LIMITS, course, drift, in_place
from robocup3d_tools.optimize import WALK_TASKS, score, task_jobs


def test_a_course_is_seeded_and_its_commands_stay_within_the_lining_up_limits() -> None:
    a, b = course(3), course(3)
    assert a == b and a != course(4)
    assert tuple(a[: len(ARRIVE)]) == ARRIVE
    rest = a[len(ARRIVE) :]
    assert sum(h for _, h in rest) >= 10.0
    assert all(0.5 <= h <= 1.5 for _, h in rest)
    assert all(abs(v) <= m for cmd, _ in rest for v, m in zip(cmd, LIMITS, strict=True))
    kinds = {'stop' if cmd == (0.0, 0.0, 0.0) else 'in place' if cmd == IN_PLACE else 'step' for c in range(1, 30)
             for cmd, _ in course(c)[len(ARRIVE) :]}  # fmt: skip
    assert kinds == {'stop', 'in place', 'step'}
    assert in_place(2.0)[-1] == (IN_PLACE, 2.0)


def test_drift_is_zero_for_a_robot_that_goes_where_it_is_sent_and_the_distance_for_one_that_stays() -> None:
    dt, cmd = 0.02, (0.1, 0.0, 0.5)
    poses, (x, y, h) = [], (1.0, 2.0, 0.3)
    for _ in range(51):
        poses.append((x, y, h))
        x, y, h = x + 0.1 * math.cos(h) * dt, y + 0.1 * math.sin(h) * dt, h + 0.5 * dt
    d, dw = drift(poses, cmd, dt)
    assert d < 1e-9 and dw < 1e-9
    d, dw = drift([(1.0, 2.0, 0.3)] * 51, (0.0, -0.2, 0.0), dt)
    assert math.isclose(d, 0.2) and dw == 0.0
    assert math.isclose(drift([(0.0, 0.0, 0.0)] * 51, (0.0, 0.0, 0.4), dt)[1], 0.4)


def test_optimize_scores_a_lineup_course_by_its_falls_and_creep_once_per_course_seed() -> None:
    assert 'lineup' in WALK_TASKS
    assert task_jobs(['lineup'], 10.0, 8.0, [1, 2]) == [('lineup', 8.0, 1), ('lineup', 8.0, 2)]
    still = {'task': 'lineup', 'falls': 0, 'seconds': 12.0, 'extra': {'creep': 0.05, 'creep_turn': 0.1}}
    fell = dict(still, falls=1)
    assert math.isclose(score(still, 8.0), 0.7)
    assert math.isclose(score(fell, 8.0), 1.7)
    assert score({'error': 'exit 1'}, 8.0) == 10.0
