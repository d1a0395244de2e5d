"""The in-walk kick: the walk's kick step, its config, the kick task that asks for it, the motion core."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from robocup3d_bridge.config_files import load_config
from robocup3d_description.body import body_for
from robocup3d_description.kinematics import foot_pose
from robocup3d_description.robots import robot_spec
from robocup3d_motion.ball_skills import Action, KickTask, View, kick_pose
from robocup3d_motion.core import MotionCore
from robocup3d_motion.kick_config import ApproachSpec, BallSkills, KickSpec, load_kicks_config
from robocup3d_motion.motion_config import load_robots_config, load_walk_config
from robocup3d_motion.requests import Kick
from robocup3d_motion.walk import KickSwing, WalkEngine, walk_sets

DT = 0.02
BODY = body_for('T1', 0)
SETS, DEFAULT = walk_sets(load_config('walk.yaml'), 'T1')
SWING = KickSwing(reach=0.15, back=0.05, at=0.7, lift=0.02, slow=2.0, land=0.05)
WALK_SPEC = KickSpec(
    ball=(0.37, -0.09),
    stop=False,
    walk={'reach': 0.15, 'back': 0.05, 'at': 0.7, 'slow': 2.0, 'speed': 0.2, 'window': [0.3, 0.42]},
    distance={'mean': 4.0, 'sd': 2.0},
)


def _walking(speed: float = 0.2, cycles: int = 100) -> WalkEngine:
    w = WalkEngine(BODY, SETS[DEFAULT])
    w.set_command(speed, 0.0, 0.0)
    for _ in range(cycles):
        w.step(DT)
    return w


def _foot_x(side: str, q: dict[str, float]) -> float:
    return float(foot_pose(BODY, side, q)[0, 3])


# -- the swing


def test_the_kick_swing_draws_back_thrusts_to_its_reach_and_lands_where_the_step_does() -> None:
    assert SWING.offset(0.0) == (0.0, 0.0) and SWING.offset(1.0) == (0.0, 0.0)
    assert SWING.offset(0.35)[0] == pytest.approx(-0.05)  # drawn back half way to the peak
    assert SWING.offset(0.7)[0] == pytest.approx(0.15)  # furthest forward at ``at``
    xs = [SWING.offset(i / 100)[0] for i in range(101)]
    assert max(xs) == pytest.approx(0.15) and min(xs) == pytest.approx(-0.05)
    assert SWING.offset(0.5)[1] == pytest.approx(0.02)  # the extra lift, highest mid swing


def test_the_kicking_foot_swings_further_forward_than_in_a_plain_step_and_the_step_lasts_longer() -> None:
    plain, kicking = _walking(), _walking()
    kicking.kick('r', SWING)
    reach = {}
    steps = {}
    for name, w in (('plain', plain), ('kicking', kicking)):
        xs, t_steps = [], []
        for _ in range(60):
            before = w.steps
            q = w.step(DT)
            xs.append(_foot_x('r', q))
            if w.steps != before:
                t_steps.append(w._period)
        reach[name], steps[name] = max(xs), t_steps
    assert reach['kicking'] > reach['plain'] + 0.12
    assert kicking.kicks == 1 and plain.kicks == 0
    assert max(steps['kicking']) == pytest.approx(2.0 * SETS[DEFAULT].period)
    assert max(steps['plain']) == pytest.approx(SETS[DEFAULT].period)


def test_the_kick_waits_for_its_foots_step_and_reports_asked_swinging_then_nothing() -> None:
    w = _walking()
    swing_now = 'l' if w.support == 'r' else 'r'
    w.kick(swing_now, SWING)  # the foot swinging now kicks in its next step, not this one
    assert w.kick_state == 'asked'
    states = []
    for _ in range(80):
        w.step(DT)
        states.append(w.kick_state)
    assert states[0] == 'asked' and 'swinging' in states and states[-1] == ''
    first_swing = states.index('swinging')
    assert 'asked' not in states[first_swing:]


def test_from_rest_the_first_step_is_the_kick() -> None:
    for side in ('l', 'r'):
        w = WalkEngine(BODY, SETS[DEFAULT])
        w.kick(side, SWING)
        w.set_command(0.1, 0.0, 0.0)
        while not w.walking:
            w.step(DT)
        assert w.kick_state == 'swinging' and w.support != side


def test_a_ball_too_far_waits_a_step_and_one_too_near_misses_the_kick() -> None:
    w = _walking()
    swing_next = w.support  # the foot that swings in the next step
    w.kick(swing_next, SWING, ball_x=0.5, window=(0.3, 0.4))
    for _ in range(200):
        w.step(DT)
        if w.kick_state != 'asked':
            break
    assert w.kick_state == 'swinging'
    assert 0.3 <= w.kick_x <= 0.4  # the ball, brought nearer by the walk's odometry, as the step began
    near = _walking()
    near.kick(near.support, SWING, ball_x=0.2, window=(0.3, 0.4))
    for _ in range(30):
        near.step(DT)
    assert near.kick_state == 'missed' and near.kicks == 0
    near.cancel_kick()
    assert near.kick_state == ''


def test_a_kick_to_no_such_foot_is_refused() -> None:
    with pytest.raises(ValueError, match='side'):
        _walking(cycles=1).kick('x', SWING)


# -- config


@pytest.mark.parametrize(
    ('values', 'why'),
    [
        ({'ball': (0.3, -0.1), 'distance': {'mean': 1.0}}, 'skills'),
        ({'ball': (0.3, -0.1), 'distance': {'mean': 1.0}, 'walk': {'at': 0.99}}, 'within 0.1-0.95'),
        ({'ball': (0.3, -0.1), 'distance': {'mean': 1.0}, 'walk': {'window': [0.4, 0.3]}}, 'near < far'),
        ({'ball': (0.3, -0.1), 'distance': {'mean': 1.0}, 'walk': {'slow': 0.0}}, '> 0'),
    ],
)
def test_a_kick_without_skills_or_a_swing_or_with_a_bad_swing_is_refused(values: dict, why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        KickSpec(**values)


def test_the_shipped_t1_has_an_in_walk_kick() -> None:
    walk = load_kicks_config()['T1'].kicks['walk']
    assert walk.walk is not None and not walk.right and not walk.left


# -- the task


def test_the_task_asks_the_walk_for_the_kick_with_the_ball_and_is_done_once_the_step_has_swung() -> None:
    task = KickTask(1, 0.0, ApproachSpec(clear=0.4), WALK_SPEC, 'walk', (10.0, 0.0))
    pose = kick_pose((0.0, 0.0), 0.0, WALK_SPEC.spot('right'))
    act = task.step(View(0.0, pose, (0.0, 0.0), walking=True))
    assert act.walk_kick == ('right', pytest.approx(0.37)) and act.velocity == (0.2, 0.0, 0.0)
    assert act.skill is None and task.phase == 'kicking'
    assert task.step(View(0.1, pose, (0.0, 0.0), walking=True, walk_kick='asked')).velocity == (0.2, 0.0, 0.0)
    task.step(View(0.3, pose, (0.0, 0.0), walking=True, walk_kick='swinging'))
    assert task.phase == 'kicking'
    task.step(View(0.6, pose, (2.0, 0.0), walking=True, walk_kick=''))
    assert task.phase == 'done'


def test_a_missed_kick_lines_up_again_and_one_the_walk_never_takes_fails() -> None:
    task = KickTask(1, 0.0, ApproachSpec(clear=0.4), WALK_SPEC, 'walk', (10.0, 0.0))
    pose = kick_pose((0.0, 0.0), 0.0, WALK_SPEC.spot('right'))
    task.step(View(0.0, pose, (0.0, 0.0), walking=True))
    assert task.step(View(0.1, pose, (0.0, 0.0), walking=True, walk_kick='missed')) == Action()
    assert task.phase == 'approaching'
    task.step(View(0.2, pose, (0.0, 0.0), walking=True))  # asks again
    assert task.phase == 'kicking'
    task.step(View(2.0, pose, (0.0, 0.0), walking=False, walk_kick=''))
    assert task.phase == 'failed' and 'no kick step' in task.reason


# -- the motion core


def _core() -> MotionCore:
    return MotionCore(
        robot_spec('mujoco', 'T1', 0),
        load_robots_config('robots.yaml'),
        walk_cfg=load_walk_config('walk.yaml'),
        ball_skills=BallSkills(kicks={'walk': WALK_SPEC}),
    )


def test_the_core_takes_an_in_walk_kick_without_skills_and_hands_the_swing_to_the_walk() -> None:
    core = _core()
    assert core.request(Kick(target=(10.0, 0.0), kick='walk', id=3).to_text()) == ''
    pose = kick_pose((0.0, 0.0), 0.0, WALK_SPEC.spot('right'))
    core.on_imu(0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 9.81), wall=0.0)
    core.on_pose(0.0, *pose)
    core.on_ball(0.0, 0.0, 0.0, 0.1)
    core.step(0.0, {}, wall=0.0)
    assert core.task.phase == 'kicking'
    assert core.walk.kick_state in ('asked', 'swinging')
    state = core.state_dict()
    assert state['walk']['kick'] in ('asked', 'swinging')


def test_a_kick_left_asked_is_forgotten_once_its_task_is_cancelled() -> None:
    core = _core()
    core.request(Kick(target=(10.0, 0.0), kick='walk', id=3).to_text())
    core.walk.kick('r', SWING, 0.5, (0.3, 0.4))
    core.task.phase = 'kicking'
    core.request('stand')  # cancels the task
    core.on_imu(0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 9.81), wall=0.0)
    core.step(0.0, {}, wall=0.0)
    assert core.walk.kick_state == '' and not math.isnan(core.now)
