"""The chase walk task's course and fall classes (pure Python; the task itself needs a server)."""

from __future__ import annotations

from robocup3d_tools.walk_tasks import CHASE_HOLD, TASKS, chase_course, fall_class


def test_chase_course_is_seeded_and_covers_the_time() -> None:
    course = chase_course(3, 120.0)
    assert course == chase_course(3, 120.0) != chase_course(4, 120.0)
    assert course[0].kind == 'jump'
    assert sum(s.hold for s in course) >= 120.0 > sum(s.hold for s in course[:-1])
    assert all(CHASE_HOLD[0] <= s.hold <= CHASE_HOLD[1] for s in course)
    kinds = {s.kind for s in chase_course(1, 600.0)}
    assert kinds == {'jump', 'nudge', 'stop'}
    assert all(0.5 <= s.dist <= 4.0 for s in course if s.kind == 'jump')
    assert all(s.dist <= 1.0 for s in course if s.kind == 'nudge')
    assert 'chase' in TASKS


def test_fall_class() -> None:
    fall = {'kind': 'jump', 'since': 1.5, 'speed': [0.3, 0.0, 0.0], 'from_rest': False}
    assert fall_class(fall) == 'steady'
    assert fall_class(dict(fall, speed=[0.3, 0.0, 0.6])) == 'turn at speed'
    assert fall_class(dict(fall, speed=[0.0, 0.0, -0.6])) == 'turn in place'
    assert fall_class(dict(fall, since=0.3)) == 'change'
    assert fall_class(dict(fall, since=-0.3)) == 'steady'  # it began to tip before the change
    assert fall_class(dict(fall, from_rest=True)) == 'start'
    assert fall_class(dict(fall, kind='stop', since=0.3)) == 'stop'
