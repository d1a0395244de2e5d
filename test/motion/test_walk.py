"""The walk engine, its commander and its place in the motion core (pure Python, no server)."""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import pairwise

import pytest

from robocup3d_bridge.config_files import ConfigError, load_config
from robocup3d_description.body import body_for
from robocup3d_description.kinematics import foot_pose
from robocup3d_description.robots import robot_spec
from robocup3d_motion.core import MotionCore
from robocup3d_motion.walk import (
    WalkEngine,
    WalkParams,
    boost_weight,
    in_place,
    stop_speed,
    top_vx,
    top_wz,
    walk_params,
    walk_sets,
)
from robocup3d_motion.walk_control import WalkCommander

DT = 0.02
WALK_CFG = load_config('walk.yaml')


def _sets(robot: str) -> dict[str, WalkParams]:
    return walk_sets(WALK_CFG, robot)[0]


def _sole(body: object, side: str, q: dict[str, float]) -> tuple[float, float, float]:
    """Sole centre in the ground-aligned frame under the torso (undoing the walk's torso lean)."""
    t = foot_pose(body, side, q)
    p = t[:3, :3] @ body.leg(side).sole + t[:3, 3]
    return float(p[0]), float(p[1]), float(p[2])


def _level(p: tuple[float, float, float], lean: float) -> tuple[float, float, float]:
    c, s = math.cos(lean), math.sin(lean)
    return (c * p[0] + s * p[2], p[1], -s * p[0] + c * p[2])


# -- parameters


def test_shipped_walk_file_has_valid_sets_for_the_mujoco_robots() -> None:
    for robot in ('T1', 'K1'):
        sets, default = walk_sets(WALK_CFG, robot)
        assert default in sets, robot
        for name, p in sets.items():
            assert 0.1 < p.period < 0.8 and p.sole_z < 0.0 < p.foot_y, (robot, name)
            assert p.max_vx > 0.0 >= p.min_vx, (robot, name)


def test_walk_params_convert_degrees_and_refuse_nonsense() -> None:
    p = walk_params({'torso_pitch': 10, 'max_wz': 90, 'period': 0.3})
    assert p.torso_pitch == pytest.approx(math.radians(10)) and p.max_wz == pytest.approx(math.pi / 2)
    assert p.period == 0.3
    with pytest.raises(ConfigError, match='unknown walk parameters'):
        walk_params({'stride': 0.1})
    with pytest.raises(ConfigError, match='finite number'):
        walk_params({'period': 'fast'})
    with pytest.raises(ConfigError, match='finite number'):
        walk_params({'period': float('nan')})
    with pytest.raises(ConfigError, match='period'):
        walk_params({'period': 0.0})
    with pytest.raises(ConfigError, match='default names unknown set'):
        walk_sets({'T1': {'default': 'nope', 'sets': {'a': {}}}}, 'T1')
    with pytest.raises(ConfigError, match='sets'):
        walk_sets({'T1': {'base': {}}}, 'T1')
    assert walk_sets({}, 'T1') == ({}, '')


# -- the gait, checked through forward kinematics of the joint targets


@pytest.mark.parametrize('robot', ['T1', 'K1'])
def test_feet_follow_the_gait_forward(robot: str) -> None:
    body = body_for(robot)
    p = replace(_sets(robot)[walk_sets(WALK_CFG, robot)[1]], gyro_pitch=0.0, gyro_roll=0.0, arm_swing=0.0)
    eng = WalkEngine(body, p)
    eng.blend = 1.0
    v = 0.8 * p.max_vx
    eng.set_command(v, 0.0, 0.0)
    lifts = {'l': 0.0, 'r': 0.0}
    width = []
    for _ in range(int(6.0 / DT)):
        q = eng.step(DT)
        soles = {s: _level(_sole(body, s, q), p.torso_pitch) for s in 'lr'}
        for s in 'lr':
            lifts[s] = max(lifts[s], soles[s][2] - p.sole_z)
        width.append(soles['l'][1] - soles['r'][1])
        # the support foot stays on the ground, whatever the swing foot does
        support = eng.support
        if eng.walking:
            assert soles[support][2] == pytest.approx(p.sole_z, abs=2e-3)
    assert eng.speed[0] == pytest.approx(v)  # reached the command in steps of accel_x
    for s in 'lr':  # both feet were lifted by the step height
        assert lifts[s] == pytest.approx(p.step_height, abs=3e-3)
    assert min(width) == pytest.approx(2 * p.foot_y, abs=2e-3)  # no sideways step: feet keep their track
    assert max(width) == pytest.approx(2 * p.foot_y, abs=2e-3)


def test_support_foot_moves_back_by_one_step_per_period() -> None:
    body = body_for('T1')
    p = replace(_sets('T1')['positioning'], gyro_pitch=0.0, gyro_roll=0.0, accel_x=10.0, lipm_x=0.0)
    eng = WalkEngine(body, p)
    eng.blend = 1.0
    eng.set_command(0.3, 0.0, 0.0)
    for _ in range(50):  # steady state
        eng.step(DT)
    steps = eng.steps
    while eng.steps == steps:  # to the start of a step
        eng.step(DT)
    side = eng.support
    x0 = _level(_sole(body, side, eng.last), p.torso_pitch)[0]
    for _ in range(round(p.period / DT) - 1):
        eng.step(DT)
    x1 = _level(_sole(body, side, eng.last), p.torso_pitch)[0]
    assert x0 - x1 == pytest.approx(0.3 * (p.period - DT), abs=4e-3)


@pytest.mark.parametrize('margin', [0.0, 0.3])
def test_turning_a_foot_near_the_ground_keeps_its_yaw_and_turns_in_the_air(margin: float) -> None:
    """With ``yaw_margin``, the swing foot turns with the support foot (so both keep their yaw on the ground,
    the body turning over them) except in the middle of its swing, and lands at its target all the same."""
    p = replace(_sets('T1')['positioning'], gyro_pitch=0.0, gyro_roll=0.0, accel_w=10.0, yaw_margin=margin, spin_wz=0.0)
    eng = WalkEngine(body_for('T1'), p)
    eng.blend = 1.0
    eng.set_command(0.0, 0.0, p.max_wz)
    for _ in range(50):  # steady turning
        eng.step(DT)
    ds = p.double_support * max(0.0, 1.0 - abs(eng.speed[2]) / p.max_wz)
    checked = landed = 0
    prev = None
    for _ in range(round(4 * p.period / DT)):
        steps = eng.steps
        eng.step(DT)
        feet, _ = eng._feet_now()
        swing = 'l' if eng.support == 'r' else 'r'
        s = min(1.0, max(0.0, (eng.t_in_step / eng._period - ds / 2) / (1 - ds)))  # how far the swing is
        near = -1 if s <= margin else 1 if s >= 1.0 - margin else 0  # near the ground: at its start or end
        now = (eng.steps, near, feet[swing].yaw - feet[eng.support].yaw)
        if eng.steps != steps:  # a step began: the swing foot landed where the step before aimed it
            landed += 1
            assert eng.feet[eng.support].yaw == pytest.approx(eng._start[eng.support][2])
        elif prev is not None and prev[:2] == now[:2] and near:
            checked += 1  # near the ground: the soles keep their yaw against each other
            assert now[2] == pytest.approx(prev[2], abs=1e-9)
        prev = now
    assert landed >= 3
    assert checked >= (8 if margin else 0)
    assert abs(eng.speed[2]) == pytest.approx(p.max_wz)


def test_a_turn_in_place_takes_its_own_limit_and_yaw_schedule_a_moving_one_the_sets() -> None:
    """``spin_wz`` limits a turn in place, ``max_wz`` one on the move (fading in between, over ``spin_speed``);
    a step in place takes the ``yaw_margin`` schedule, a moving one the swing foot's yaw of before."""
    base = replace(_sets('T1')['positioning'], combo_limit=1.0, yaw_margin=0.3, spin_speed=0.0, spin_wz=0.0)
    p = replace(base, spin_speed=0.1, spin_wz=2.0 * base.max_wz)
    assert in_place(p, 0.0, 0.0) == 1.0
    assert in_place(p, 0.03, 0.04) == pytest.approx(0.5)
    assert in_place(p, 0.2, 0.0) == 0.0
    assert in_place(base, 0.0, 0.0) == 0.0  # no spin_speed: no turn in place of its own
    assert top_wz(p, 0.0, 0.0) == pytest.approx(p.spin_wz)
    assert top_wz(p, 0.05, 0.0) == pytest.approx(1.5 * base.max_wz)
    assert top_wz(p, 0.3, 0.0) == pytest.approx(base.max_wz)
    assert top_wz(base, 0.0, 0.0) == pytest.approx(base.max_wz)
    eng = WalkEngine(body_for('T1'), p)
    eng.set_command(0.0, 0.0, 10.0)
    assert eng.command == (0.0, 0.0, pytest.approx(p.spin_wz))  # in place: its own limit, not cut by the blend
    eng.set_command(0.3, 0.0, 10.0)
    assert abs(eng.command[2]) < base.max_wz  # on the move: the set's, cut further by the blend of motions
    eng.speed, eng.support = (0.0, 0.0, p.max_wz), 'l'
    eng._start = {'l': (0.0, 0.0, 0.1), 'r': (0.0, 0.0, -0.1)}
    eng._target = {'l': (0.0, 0.0, -0.1), 'r': (0.0, 0.0, 0.1)}
    before = -0.1 + 0.2 * (0.5 - 0.5 * math.cos(math.pi * 0.2))  # the yaw of before at 0.2 of the swing
    assert eng._swing_yaw(-0.1, 0.1, -0.04, 0.2) == pytest.approx(-0.14)  # in place: turns with the support foot
    eng.speed = (0.05, 0.0, p.max_wz)
    assert eng._swing_yaw(-0.1, 0.1, -0.04, 0.2) == pytest.approx(0.5 * (before - 0.14))
    eng.speed = (0.3, 0.0, p.max_wz)
    assert eng._swing_yaw(-0.1, 0.1, -0.04, 0.2) == pytest.approx(before)


def test_toe_push_off_rolls_the_support_foot_over_its_toe_joint_with_the_toe_flat() -> None:
    """Nao type 4: late in the support the heel rises about the toe joint, which stays on the ground."""
    body = body_for('nao', 4)
    p = replace(_sets('nao4')['positioning'], gyro_pitch=0.0, gyro_roll=0.0, accel_x=10.0, toe_push=0.1)
    eng = WalkEngine(body, p)
    eng.blend = 1.0
    eng.set_command(0.2, 0.0, 0.0)
    for _ in range(40):
        eng.step(DT)
    heel_up = []
    for _ in range(40):
        q = eng.step(DT)
        side = eng.support
        joint, _, pivot = eng._toes[side]
        t = foot_pose(body, side, q)
        toe_in_foot = [a + b for a, b in zip(body.leg(side).sole, pivot, strict=True)]  # the pivot: floats
        toe = _level(tuple(t[:3, :3] @ toe_in_foot + t[:3, 3]), p.torso_pitch)
        sole = _level(_sole(body, side, q), p.torso_pitch)
        pitch = eng.feet_pitch[side]
        assert toe[2] == pytest.approx(p.sole_z, abs=2e-3)  # the toe joint stays down
        assert sole[2] - p.sole_z == pytest.approx(math.hypot(*pivot[:2]) * math.sin(pitch), abs=2e-3)
        assert q.get(joint, 0.0) == pytest.approx(pitch)  # the toe bends back as far: flat on the ground
        heel_up.append(pitch)
        swing = 'l' if side == 'r' else 'r'
        if eng.t_in_step > 0.5 * p.period:  # the swing foot is flat again half way through its swing
            assert eng.feet_pitch[swing] == pytest.approx(0.0)
    assert min(heel_up) == 0.0 and max(heel_up) > 0.8 * p.toe_push
    flat = WalkEngine(body_for('nao', 0), p)  # no toes: the same set walks flat-footed
    assert not flat._toes


def test_feet_go_back_under_the_body_in_proportion_to_forward_speed() -> None:
    """``sole_x_fwd``: walking forward, the CoM goes ahead of the feet; standing, nothing moves."""
    body = body_for('T1')
    base = replace(_sets('T1')['positioning'], gyro_pitch=0.0, gyro_roll=0.0, accel_x=10.0)

    def mean_sole_x(p: WalkParams, v: float) -> float:
        eng = WalkEngine(body, p)
        eng.blend = 1.0
        eng.set_command(v, 0.0, 0.0)
        for _ in range(50):  # steady state
            eng.step(DT)
        xs = []
        for _ in range(round(2 * p.period / DT)):  # two whole steps
            q = eng.step(DT)
            xs += [_level(_sole(body, s, q), p.torso_pitch)[0] for s in 'lr']
        return sum(xs) / len(xs)

    shifted = replace(base, sole_x_fwd=0.03)
    assert mean_sole_x(shifted, 0.4) - mean_sole_x(base, 0.4) == pytest.approx(-0.03 * 0.4, abs=1e-3)
    assert mean_sole_x(shifted, 0.0) == pytest.approx(mean_sole_x(base, 0.0), abs=1e-6)


def test_a_fast_part_is_read_over_its_set_and_refused_without_a_speed_range() -> None:
    p = walk_params({'period': 0.3, 'torso_pitch': 5, 'boost_from': 0.3, 'boost_to': 0.5, 'fast': {'period': 0.2}})
    assert p.fast is not None and p.fast.period == 0.2 and p.fast.fast is None
    assert p.fast.torso_pitch == pytest.approx(math.radians(5))  # the rest as the set's own
    with pytest.raises(ConfigError, match='boost_to > boost_from'):
        walk_params({'fast': {'period': 0.2}})
    with pytest.raises(ConfigError, match='fast: unknown walk parameters'):
        walk_params({'boost_to': 0.5, 'fast': {'stride': 0.2}})


def test_boost_weight_grows_with_forward_speed_and_fades_when_turning_or_sidestepping() -> None:
    p = walk_params({'boost_from': 0.3, 'boost_to': 0.5, 'boost_turn': 0.4, 'boost_side': 0.1, 'fast': {}})
    assert boost_weight(p, (0.2, 0.0, 0.0)) == 0.0
    assert boost_weight(p, (0.4, 0.0, 0.0)) == pytest.approx(0.5)
    assert boost_weight(p, (0.7, 0.0, 0.0)) == 1.0
    assert boost_weight(p, (0.7, 0.0, 0.2)) == pytest.approx(0.5)
    assert boost_weight(p, (0.7, 0.05, -0.2)) == pytest.approx(0.25)
    assert boost_weight(p, (0.7, 0.0, 0.5)) == 0.0
    assert boost_weight(replace(p, fast=None), (0.7, 0.0, 0.0)) == 0.0


def test_fast_straight_steps_take_the_fast_gait_and_turning_ones_their_own() -> None:
    """Speed scheduling: at full speed straight ahead the steps last the fast part's period."""
    base = replace(_sets('T1')['positioning'], accel_x=10.0, accel_w=10.0, max_vx=0.6, kp_legs=300.0)
    p = replace(base, boost_from=0.2, boost_to=0.4, fast=replace(base, period=0.16, kp_legs=500.0))

    def step_ticks(vx: float, wz: float) -> tuple[int, float]:
        eng = WalkEngine(body_for('T1'), p)
        eng.blend = 1.0
        eng.set_command(vx, 0.0, wz)
        for _ in range(40):
            eng.step(DT)
        steps, ticks = eng.steps, 0
        while eng.steps < steps + 2:  # ticks of the next whole step
            eng.step(DT)
            ticks += eng.steps > steps
        return ticks - 1, eng.gait.kp_legs

    assert step_ticks(0.6, 0.0) == (round(0.16 / DT), 500.0)
    assert step_ticks(0.6, 0.5) == (round(base.period / DT), 300.0)  # turning: no boost
    assert step_ticks(0.1, 0.0) == (round(base.period / DT), 300.0)  # slow: no boost


def test_the_fast_parts_top_speed_holds_straight_ahead_and_the_sets_own_while_turning() -> None:
    p = walk_params(
        {'max_vx': 0.35, 'max_wz': 30, 'combo_limit': 0, 'boost_from': 0.1, 'boost_to': 0.2, 'fast': {'max_vx': 0.6}}
    )
    eng = WalkEngine(body_for('T1'), p)
    eng.set_command(1.0, 0.0, 0.0)
    assert eng.command[0] == pytest.approx(0.6)
    eng.set_command(1.0, 0.0, 0.15)  # half of boost_turn: half way between the limits
    assert eng.command[0] == pytest.approx(0.475)
    eng.set_command(1.0, 0.0, 0.5)
    assert eng.command[0] == pytest.approx(0.35)
    assert top_vx(replace(p, fast=None)) == 0.35


@pytest.mark.parametrize(('boost_hold', 'period'), [(0.0, 0.16), (1.0, None)])
def test_holding_the_heading_against_drift_counts_as_a_turn_as_boost_hold_says(
    boost_hold: float, period: float | None
) -> None:
    """Told to go straight, the turn that steers against the gyro's drift counts for the scheduling as
    ``boost_hold`` says (0: not at all, the Nao's sets: its gait wavered between the sets step by step)."""
    base = replace(_sets('T1')['positioning'], accel_x=10.0, accel_w=10.0, max_vx=0.6, heading_gain=1.0)
    p = replace(base, boost_from=0.2, boost_to=0.4, boost_turn=0.3, boost_hold=boost_hold)
    p = replace(p, fast=replace(base, period=0.16))
    eng = WalkEngine(body_for('T1'), p)
    eng.blend = 1.0
    eng.set_command(0.6, 0.0, 0.0)
    holds = []
    for _ in range(100):
        eng.step(DT, gyro=(0.0, 0.0, 0.4))  # drifting left at 0.4 rad/s
        holds.append(eng.speed[2])
    assert min(holds) < -0.3  # it steers right, harder than boost_turn ...
    assert eng.gait.period == pytest.approx(period or base.period)  # ... in the fast gait, or out of it


def test_a_launch_from_rest_straight_ahead_speeds_up_faster_until_the_command_turns() -> None:
    p = replace(_sets('T1')['positioning'], accel_x=0.05, launch_x=0.15, max_vx=0.6, combo_limit=0.0)

    def speeds(commands: list[tuple[float, float, float]], params: WalkParams = p) -> list[float]:
        eng = WalkEngine(body_for('T1'), params)
        eng.blend = 1.0
        out = []
        for cmd in commands:
            eng.set_command(*cmd)
            steps = eng.steps
            while eng.steps == steps:  # to the next step
                eng.step(DT)
            out.append(round(eng.speed[0], 6))
        return out

    assert speeds([(0.6, 0.0, 0.0)] * 5) == [0.15, 0.3, 0.45, 0.6, 0.6]
    assert speeds([(0.6, 0.0, 0.3)] * 2) == [0.05, 0.1]  # turning: no launch
    # a turn ends the launch for good; straight again, the speed rises at accel_x
    assert speeds([(0.6, 0.0, 0.0), (0.6, 0.0, 0.3), (0.6, 0.0, 0.0)]) == [0.15, 0.2, 0.25]
    assert speeds([(0.6, 0.0, 0.0)] * 2, replace(p, launch_x=0.0)) == [0.05, 0.1]  # unset: accel_x
    # the step under way limits the change: a fast part launches on more gently (half blended at 0.3 m/s)
    boosted = replace(p, boost_from=0.2, boost_to=0.4, fast=replace(p, launch_x=0.05))
    assert speeds([(0.6, 0.0, 0.0)] * 4, boosted) == [0.15, 0.3, 0.4, 0.45]


def test_slowing_down_in_a_fast_gait_goes_no_faster_than_its_brake() -> None:
    """A fast part's ``brake`` (m/s²) limits how fast the forward speed falls while a step is in the
    fast gait; below ``boost_from`` (the set's own steps) and speeding up, accel_x rules as before."""
    p = replace(_sets('T1')['positioning'], accel_x=0.2, max_vx=0.6, combo_limit=0.0, boost_from=0.1, boost_to=0.2)
    fast = replace(p, period=0.1, max_vx=0.6)

    def speeds(commands: list[float], params: WalkParams) -> list[float]:
        eng = WalkEngine(body_for('T1'), params)
        eng.blend = 1.0
        out = []
        for vx in commands:
            eng.set_command(vx, 0.0, 0.0)
            steps = eng.steps
            for _ in range(50):  # to the next step (none once it has come to rest)
                eng.step(DT)
                if eng.steps != steps:
                    break
            out.append(round(eng.speed[0], 6))
        return out

    up, down = [0.6] * 3, [0.0] * 6
    assert speeds(up + down, replace(p, fast=fast)) == [0.2, 0.4, 0.6, 0.4, 0.2, 0.0, 0.0, 0.0, 0.0]
    braked = speeds(up + down, replace(p, fast=replace(fast, brake=1.0)))  # 0.1 m/s a step of 0.1 s
    assert braked == [0.2, 0.4, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]  # at 0.1: out of the fast gait, accel_x
    assert speeds([0.3, 0.0], replace(p, fast=replace(fast, brake=1.0))) == [0.2, 0.1]  # from 0.2 (fast) at brake


def test_brake_is_a_fast_part_value_and_the_commander_plans_its_stops_with_it() -> None:
    with pytest.raises(ConfigError, match='brake'):
        walk_params({'brake': 0.5})
    with pytest.raises(ConfigError, match='brake'):
        walk_params({'boost_from': 0.1, 'boost_to': 0.2, 'fast': {'brake': -1.0}})
    p = walk_params({'period': 0.2, 'accel_x': 0.2, 'boost_from': 0.1, 'boost_to': 0.2, 'fast': {'brake': 0.25}})
    assert p.brake == 0.0 and p.fast is not None and p.fast.brake == 0.25
    # the set slows at 1 m/s² (0.2 m/s a step of 0.2 s): from 0.1 m/s in 5 mm; above it at 0.25 m/s²
    assert stop_speed(p, 0.005) == pytest.approx(0.1)
    assert stop_speed(p, 0.005 + (0.5**2 - 0.1**2) / 0.5) == pytest.approx(0.5)
    no_brake = replace(p, fast=replace(p.fast, brake=0.0))
    assert stop_speed(no_brake, 0.125) == pytest.approx(0.5)  # as before: the set's accel_x per step
    assert stop_speed(p, -1.0) == 0.0


def test_odometry_counts_backward_steps_at_their_own_scale() -> None:
    p = replace(_sets('T1')['positioning'], min_vx=-0.3, odom_scale=0.8, odom_scale_back=0.25, accel_x=10.0)
    eng = WalkEngine(body_for('T1'), p)
    eng.blend = 1.0
    for v, k in ((-0.2, 0.25), (0.3, 0.8)):
        eng.set_command(v, 0.1, 0.0)
        for _ in range(30):
            eng.step(DT)
        assert eng.speed[0] == pytest.approx(v)
        assert eng.odometry[0] == pytest.approx(k * v) and eng.odometry[1] == pytest.approx(0.8 * eng.speed[1])
    eng.set_params(replace(p, odom_scale_back=0.0))  # unset: backward steps count at odom_scale
    eng.set_command(-0.2, 0.0, 0.0)
    for _ in range(30):
        eng.step(DT)
    assert eng.odometry[0] == pytest.approx(0.8 * -0.2)


def test_a_blend_of_motions_near_their_limits_is_scaled_into_the_ellipsoid() -> None:
    p = replace(_sets('T1')['positioning'], combo_limit=1.0)
    eng = WalkEngine(body_for('T1'), p)
    eng.set_command(p.max_vx, 0.0, 0.0)  # one motion at its limit: untouched
    assert eng.command == (p.max_vx, 0.0, 0.0)
    eng.set_command(0.0, 9.0, -9.0)  # sidestep and turn, both clipped to their limits, then scaled
    vy, wz = eng.command[1:]
    assert math.hypot(vy / p.max_vy, wz / p.max_wz) == pytest.approx(1.0)
    assert vy > 0.0 > wz and vy / p.max_vy == pytest.approx(-wz / p.max_wz)
    eng = WalkEngine(body_for('T1'), replace(p, combo_limit=0.0))  # 0: off
    eng.set_command(0.0, 9.0, -9.0)
    assert eng.command == (0.0, p.max_vy, -p.max_wz)
    eng = WalkEngine(body_for('T1'), replace(p, combo_power=1.0))  # a diamond: the shares add up to 1
    eng.set_command(p.max_vx, 0.0, p.max_wz)
    vx, _, wz = eng.command
    assert vx / p.max_vx + wz / p.max_wz == pytest.approx(1.0) and vx > 0.0 and wz > 0.0
    eng.set_command(0.0, -p.max_vy, 0.0)
    assert eng.command == (0.0, -p.max_vy, 0.0)
    with pytest.raises(ConfigError, match='combo_power'):
        walk_params({'combo_power': 0})


def test_walk_starts_from_rest_only_once_the_body_is_still() -> None:
    eng = WalkEngine(body_for('T1'), _sets('T1')['positioning'])
    eng.blend = 1.0
    eng.set_command(0.3, 0.0, 0.0)
    for _ in range(20):  # still rocking (pitch rate 1 rad/s): no first step
        eng.step(DT, gyro=(0.0, 1.0, 0.0))
    assert not eng.walking and eng.steps == 0
    eng.step(DT, gyro=(0.0, 0.05, 0.0))
    assert eng.walking and eng.steps == 1


def test_a_launch_steps_off_while_still_crouching_other_starts_wait_for_the_stance() -> None:
    p = replace(_sets('nao0')['sprint'], ramp=0.6, launch_blend=0.0)

    def first_step(command: tuple[float, float, float], params: WalkParams = p) -> float:
        eng = WalkEngine(body_for('nao', 0), params)
        eng.set_command(*command)
        for k in range(100):
            eng.step(DT, gyro=(0.0, 0.0, 0.0))
            if eng.steps:
                return round((k + 1) * DT, 2)
        raise AssertionError('no step in 2 s')

    assert first_step((0.5, 0.0, 0.0)) == 0.02  # straight ahead: at once
    assert first_step((0.5, 0.0, 0.0), replace(p, launch_blend=0.5)) == pytest.approx(0.3, abs=0.03)  # half way
    for command in ((0.0, 0.1, 0.0), (0.0, 0.0, 0.5), (0.5, 0.05, 0.0)):  # sideways, turning, a blend
        assert first_step(command) == pytest.approx(0.6, abs=0.03)  # the whole ramp
    assert first_step((0.5, 0.0, 0.0), replace(p, launch_blend=1.0)) == pytest.approx(0.6, abs=0.03)  # unset


def test_core_caps_the_leg_speed_only_while_walking_a_set_that_asks_for_it() -> None:
    core = MotionCore(robot_spec('simspark', 'nao', 2), load_config('robots.yaml'), walk_cfg=WALK_CFG)
    assert core.walk.params.leg_speed == 0.0 and core.speed_caps() is None  # positioning: none
    assert core.request('walk_set sprint') == ''
    cap = core.walk.params.leg_speed
    assert 0.0 < cap < 8.0  # below type 2's ankle pitch (8.81 rad/s)
    assert core.speed_caps() is None  # standing
    t = 0.0
    for _ in range(5):
        t += DT
        core.set_velocity(0.5, 0.0, 0.0, now=t)
        _cycle(core, t, _Imu.upright())
    caps = core.speed_caps()
    assert caps is not None and set(caps) == set(core.walk.leg_joints) and set(caps.values()) == {cap}
    with pytest.raises(ConfigError, match='leg_speed is a set value'):
        walk_params({'boost_to': 0.2, 'fast': {'leg_speed': 6.0}})


def test_core_stiffens_the_legs_along_with_the_blend_into_the_walk() -> None:
    core = MotionCore(robot_spec('mujoco', 'T1'), load_config('robots.yaml'), walk_cfg=WALK_CFG)
    p, knee = core.walk.params, 'llj4'
    stand_kp = core.gains()[0][knee]
    assert p.kp_legs > stand_kp
    t, seen = 0.0, []
    for _ in range(round(p.ramp / DT) + 5):
        t += DT
        core.set_velocity(0.3, 0.0, 0.0, now=t)
        _cycle(core, t, _Imu.upright())
        seen.append(core.gains()[0][knee])
    assert all(b >= a for a, b in pairwise(seen))  # no jump: rises with the blend
    assert seen[0] < stand_kp + 0.2 * (p.kp_legs - stand_kp) and seen[-1] == pytest.approx(p.kp_legs)


def test_nao_sprint_straight_ahead_stiffens_the_legs_p_gain_of_its_fast_gait() -> None:
    """rcssserver3d: the fast gait's kp_legs is the P gain of the leg velocity commands."""
    core = MotionCore(robot_spec('simspark', 'nao', 0), load_config('robots.yaml'), walk_cfg=WALK_CFG)
    assert core.request('walk_set sprint') == ''
    fast, knee = core.walk.params.fast, 'llj4'
    assert fast is not None and fast.kp_legs > core.settings.kp[knee]
    t = 0.0
    for _ in range(100):
        t += DT
        core.set_velocity(1.0, 0.0, 0.0, now=t)
        _cycle(core, t, _Imu.upright())
    assert core.walk.gait.period == pytest.approx(fast.period)
    kp = core.gains()[0]
    assert kp[knee] == pytest.approx(fast.kp_legs) and kp['laj1'] == core.settings.kp['laj1']
    out = core.controller.command({knee: -0.5}, {knee: -0.45}, kp)
    assert dict(zip(out.names, out.velocity, strict=True))[knee] == pytest.approx(-0.05 * fast.kp_legs)


def test_commands_are_clipped_and_speed_changes_gradually() -> None:
    p = replace(_sets('T1')['positioning'], combo_limit=0.0)
    eng = WalkEngine(body_for('T1'), p)
    eng.set_command(9.0, -9.0, float('nan'))
    assert eng.command == (p.max_vx, -p.max_vy, 0.0)
    eng.blend = 1.0
    speeds = []
    steps = 0
    for _ in range(200):
        eng.step(DT)
        if eng.steps != steps:
            steps = eng.steps
            speeds.append(eng.speed)
    for a, b in pairwise(speeds):
        assert abs(b[0] - a[0]) <= p.accel_x + 1e-9 and abs(b[1] - a[1]) <= p.accel_y + 1e-9


def test_walk_stops_with_feet_side_by_side() -> None:
    body = body_for('T1')
    p = _sets('T1')['positioning']
    eng = WalkEngine(body, p)
    eng.blend = 1.0
    eng.set_command(p.max_vx, 0.1, 0.3)
    for _ in range(150):
        eng.step(DT)
    eng.set_command(0.0, 0.0, 0.0)
    for _ in range(int(8.0 / DT)):
        eng.step(DT)
        if not eng.moving:
            break
    assert not eng.moving
    left, right = (_level(_sole(body, s, eng.last), p.torso_pitch) for s in 'lr')
    assert left[0] == pytest.approx(right[0], abs=1e-3) and left[1] - right[1] == pytest.approx(2 * p.foot_y, abs=1e-3)


# -- commander


def test_velocity_lapses_after_the_timeout() -> None:
    c = WalkCommander(timeout=0.5)
    p = WalkParams()
    c.set_velocity(0.3, 0.0, 0.1, now=10.0)
    assert c.velocity(10.4, p, (0.0, 0.0, 0.0), DT) == (0.3, 0.0, 0.1)
    assert c.velocity(10.6, p, (0.0, 0.0, 0.0), DT) == (0.0, 0.0, 0.0)
    assert not c.active(10.6)


def test_far_target_steering_grows_from_zero_beyond_the_dead_band() -> None:
    """No jump at the band's edge: a jump of turn rate at full speed rocked the T1 sprint over (6 of 6 long squares)."""
    p = WalkParams(max_vx=0.7, max_wz=1.0)

    def turn_for(bearing: float) -> float:
        c = WalkCommander()
        c.set_target(5.0 * math.cos(bearing), 5.0 * math.sin(bearing), 0.0, now=0.0)
        return c.velocity(0.1, p, (0.0, 0.0, 0.0), DT)[2]

    assert turn_for(0.1) == 0.0
    assert 0.0 < turn_for(0.16) < 0.02
    assert turn_for(-0.5) == pytest.approx(-1.5 * 0.35, abs=1e-3)


@pytest.mark.parametrize('target', [(2.0, 1.0, 1.0), (-0.4, 0.3, -0.5), (0.0, 0.0, math.pi / 2)])
def test_walk_target_is_reached_with_its_own_odometry(target: tuple[float, float, float]) -> None:
    """The commander steers to a relative pose when the robot moves exactly as commanded."""
    c = WalkCommander()
    p = WalkParams(max_vx=0.5, max_vy=0.2, max_wz=1.0)
    c.set_target(*target, now=0.0)
    x, y, th = 0.0, 0.0, 0.0  # the robot in the frame where the target was given
    moved = (0.0, 0.0, 0.0)  # what the robot did last cycle: the walk's odometry
    for _ in range(3000):
        vx, vy, wz = c.velocity(1.0, p, moved, DT)
        if not c.active(1.0):
            break
        vx, vy, wz = min(max(vx, p.min_vx), p.max_vx), min(max(vy, -p.max_vy), p.max_vy), min(max(wz, -1.0), 1.0)
        x += (vx * math.cos(th) - vy * math.sin(th)) * DT
        y += (vx * math.sin(th) + vy * math.cos(th)) * DT
        th += wz * DT
        moved = (vx, vy, wz)
    assert not c.active(1.0)
    assert math.hypot(x - target[0], y - target[1]) < 0.08
    assert abs(math.atan2(math.sin(th - target[2]), math.cos(th - target[2]))) < 0.12


# -- the motion core: walk, fall, get up, resume, stop


class _Imu:
    """Synthetic upright or lying IMU readings (REP-103)."""

    @staticmethod
    def upright() -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 9.81)

    @staticmethod
    def on_front() -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        return (0.0, 0.0, 0.0), (9.81, 0.0, 0.0)


def _cycle(core: MotionCore, t: float, imu: tuple, wall: float | None = None) -> dict[str, float]:
    core.on_imu(t, imu[0], imu[1], t if wall is None else wall)
    return core.step(t, dict(core.last_cmd), t if wall is None else wall)


def test_core_walks_on_cmd_vel_stops_when_it_lapses_and_eases_back_to_the_hold_pose() -> None:
    core = MotionCore(robot_spec('mujoco', 'T1'), load_config('robots.yaml'), walk_cfg=WALK_CFG)
    t = 0.0
    for _ in range(10):
        t += DT
        _cycle(core, t, _Imu.upright())
    assert core.skill == 'stand'
    assert core.set_velocity(0.3, 0.0, 0.0, now=t) == ''
    for _ in range(round(core.walk.params.ramp / DT) + 10):  # into the stance, then stepping
        t += DT
        core.set_velocity(0.3, 0.0, 0.0, now=t)
        _cycle(core, t, _Imu.upright())
    assert core.skill == 'walk' and core.walk.walking and core.state_dict()['walk']['command'][0] == 0.3
    kp, _ = core.gains()
    assert kp['llj4'] >= core.walk.params.kp_legs
    for _ in range(int(6.0 / DT)):  # no more commands: the walk stops, then the stand takes over
        t += DT
        cmd = _cycle(core, t, _Imu.upright())
    assert core.skill == 'stand' and not core.walk.moving
    assert cmd['llj4'] == pytest.approx(core.settings.hold_pose['llj4'], abs=1e-6)


def _walk_then_rest(core: MotionCore, t: float) -> float:
    """Walk 2 s on cmd_vel, then no commands until the walk has come to rest; the time then."""
    for _ in range(int(2.0 / DT)):
        t += DT
        core.set_velocity(0.3, 0.0, 0.0, now=t)
        _cycle(core, t, _Imu.upright())
    while core.walk.moving:
        t += DT
        _cycle(core, t, _Imu.upright())
    return t


def test_core_lingers_in_the_walk_stance_so_a_new_command_walks_on_from_there() -> None:
    """Commands with gaps: the walk stops, rests in its stance, and walks on without a new start."""
    core = MotionCore(robot_spec('mujoco', 'T1'), load_config('robots.yaml'), walk_cfg=WALK_CFG)
    t = _walk_then_rest(core, 0.0)
    steps = core.walk.steps
    for _ in range(int(0.5 * core.walk_linger / DT)):  # resting, within the linger
        t += DT
        _cycle(core, t, _Imu.upright())
    assert core.skill == 'walk' and not core.walk.walking
    core.set_velocity(0.3, 0.0, 0.0, now=t)
    for _ in range(5):
        t += DT
        _cycle(core, t, _Imu.upright())
    assert core.skill == 'walk' and core.walk.walking and core.walk.steps > steps  # no ramp into the stance again
    t = _walk_then_rest(core, t)
    for _ in range(int(core.walk_linger / DT) + 2):  # past the linger: the stand takes over
        t += DT
        _cycle(core, t, _Imu.upright())
    assert core.skill == 'stand'


def test_core_a_standing_robot_told_zero_cmd_vel_stands_still_however_the_commands_come() -> None:
    """Zeros every cycle, or with gaps past ``cmd_timeout`` (a sync-mode server outrunning its client): the
    robot stays in the stand. Before, each zero after a gap crouched it into the walk's stance and the lapse
    stood it up again, and a T1 so rocked fell within 30 s on the server."""
    core = MotionCore(robot_spec('mujoco', 'T1'), load_config('robots.yaml'), walk_cfg=WALK_CFG)
    t, skills = 0.0, set()
    for i in range(int(20.0 / DT)):
        t += DT
        if i < 100 or i % 150 == 0:  # every cycle for 2 s, then one every 3 s
            assert core.set_velocity(0.0, 0.0, 0.0, now=t) == ''
        _cycle(core, t, _Imu.upright())
        skills.add(core.skill)
    assert skills == {'stand'}
    core.set_velocity(0.3, 0.0, 0.0, now=t)  # a real command still walks
    t += DT
    _cycle(core, t, _Imu.upright())
    assert core.skill == 'walk'


def test_core_a_walking_robot_told_zero_cmd_vel_comes_to_rest_in_the_walk_stance() -> None:
    core = MotionCore(robot_spec('mujoco', 'T1'), load_config('robots.yaml'), walk_cfg=WALK_CFG)
    t = 0.0
    for _ in range(int(2.0 / DT)):
        t += DT
        core.set_velocity(0.3, 0.0, 0.0, now=t)
        _cycle(core, t, _Imu.upright())
    for _ in range(int(3.0 / DT)):  # zeros every cycle: the walk brakes and waits in its stance
        t += DT
        core.set_velocity(0.0, 0.0, 0.0, now=t)
        _cycle(core, t, _Imu.upright())
    assert core.skill == 'walk' and not core.walk.moving


def test_core_a_stand_request_ends_the_walk_without_lingering() -> None:
    core = MotionCore(robot_spec('mujoco', 'T1'), load_config('robots.yaml'), walk_cfg=WALK_CFG)
    t = _walk_then_rest(core, 0.0)
    assert core.skill == 'walk'
    assert core.request('stand') == ''
    t += DT
    _cycle(core, t, _Imu.upright())
    assert core.skill == 'stand'


def test_core_refuses_bad_commands_and_unknown_sets() -> None:
    core = MotionCore(robot_spec('mujoco', 'T1'), load_config('robots.yaml'), walk_cfg=WALK_CFG)
    assert 'non-finite' in core.set_velocity(float('nan'), 0.0, 0.0, now=0.0)
    assert 'non-finite' in core.set_walk_target(1.0, float('inf'), 0.0, now=0.0)
    assert 'unknown walk set' in core.request('walk_set moonwalk')
    assert core.request('walk_set sprint') == '' and core.walk_set == 'sprint'
    assert core.walk.params == core.walk_sets['sprint']
    plain = MotionCore(robot_spec('mujoco', 'T1'), load_config('robots.yaml'))  # no walk file: no walk
    assert 'no walk parameters' in plain.set_velocity(0.2, 0.0, 0.0, now=0.0)


def test_core_interrupts_the_walk_on_a_fall_and_resumes_after() -> None:
    core = MotionCore(robot_spec('mujoco', 'T1'), load_config('robots.yaml'), walk_cfg=WALK_CFG, getup_pause=0.0)
    core.skills.clear()  # no get-up skill: the core stands still while fallen
    t = 0.0
    for _ in range(round(core.walk.params.ramp / DT) + 10):
        t += DT
        core.set_velocity(0.3, 0.0, 0.0, now=t)
        _cycle(core, t, _Imu.upright())
    assert core.skill == 'walk'
    for _ in range(60):  # lying on its front, still commanded to walk
        t += DT
        core.set_velocity(0.3, 0.0, 0.0, now=t)
        _cycle(core, t, _Imu.on_front())
    assert core.state.fallen and core.skill == 'stand'
    for _ in range(200):  # upright again (as after a get-up): the walk resumes
        t += DT
        core.set_velocity(0.3, 0.0, 0.0, now=t)
        _cycle(core, t, _Imu.upright())
    assert not core.state.fallen and core.skill == 'walk' and core.walk.walking


# -- server time stamps


def test_cycle_clock_recovers_whole_cycles_from_truncated_stamps() -> None:
    from robocup3d_motion.cycle_clock import CycleClock  # noqa: PLC0415

    clock = CycleClock()
    # RCSSServerMJ's stamps: 5 ms float steps truncated to two decimals (as captured on the wire)
    t, stamps = 0.0, []
    for _ in range(400):
        for _ in range(4):
            t += 0.005
        stamps.append(int(t * 100) / 100.0)
    assert {round(b - a, 3) for a, b in pairwise(stamps)} > {0.02}  # the raw differences jitter
    steps = [clock.step(s) for s in stamps]
    assert all(s == pytest.approx(0.02) for s in steps)
    assert clock.step(stamps[-1] + 0.06) == pytest.approx(0.06)  # two missed cycles
    assert clock.step(0.5) == pytest.approx(0.02)  # time went back (a restarted server): start again
    assert clock.step(0.52) == pytest.approx(0.02)


def test_the_blend_into_the_stance_compounds_from_the_engines_own_output() -> None:
    """Entering the walk, each cycle blends from the one before: the crouch is mostly done early
    (the shipped sets are tuned to it), whatever pose the caller passes after the first cycle."""
    p = replace(_sets('T1')['positioning'], ramp=1.0)
    stance = WalkEngine(body_for('T1'), p)
    stance.blend = 1.0
    knee = stance.step(DT)['llj4']
    start = {'llj4': knee - 0.5}

    def progress(pass_every_cycle: bool) -> list[float]:
        eng = WalkEngine(body_for('T1'), p)
        out = [eng.step(DT, start_pose=start)['llj4']]
        for _ in range(49):
            out.append(eng.step(DT, start_pose=start if pass_every_cycle else None)['llj4'])
        return [(q - start['llj4']) / 0.5 for q in out]

    once, always = progress(False), progress(True)
    assert once == pytest.approx(always)
    assert 0.6 < once[16] < 0.95  # 0.35 ramp: most of the way (a plain smooth ramp: 0.25)
    assert once[-1] == pytest.approx(1.0, abs=0.01)


@pytest.mark.parametrize('robot', ['nao0', 'nao4', 'T1', 'K1'])
def test_the_closed_form_leg_ik_leaves_the_walk_as_the_iterative_one_made_it(
    robot: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same joint targets (1e-6 rad) over starts, turns, sidesteps and stops, with gyro feedback."""
    from robocup3d_description.reference_ik import reference_legs_ik  # noqa: PLC0415 - the test's reference
    from robocup3d_motion import walk as walk_module  # noqa: PLC0415

    sets, default = walk_sets(WALK_CFG, robot)
    commands = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.5, 0.2, 0.8), (-0.3, -0.3, -1.0), (0.0, 0.0, 0.0)]

    def run() -> list[dict[str, float]]:
        eng = WalkEngine(body_for(robot), sets[default])
        out = []
        for k, cmd in enumerate(commands):
            eng.set_command(*cmd)
            for i in range(int(1.5 / DT)):
                gyro = (0.2 * math.sin(0.3 * i + k), 0.3 * math.cos(0.2 * i), 0.0)
                out.append(eng.step(DT, gyro=gyro, pitch=0.05))
        return out

    fast = run()
    monkeypatch.setattr(walk_module, 'legs_ik', reference_legs_ik)
    reference = run()
    assert len(fast) == len(reference)
    moved = 0.0
    for a, b in zip(fast, reference, strict=True):
        assert a.keys() == b.keys()
        assert max(abs(a[j] - b[j]) for j in a) < 1e-6
        moved = max(moved, abs(a['llj4'] - fast[0]['llj4']))  # the knee
    assert moved > 0.1  # it walked


def test_combo_step_keeps_each_steps_speed_within_the_limit() -> None:
    from robocup3d_motion.walk import combo_norm  # noqa: PLC0415

    p = replace(_sets('T1')['positioning'], combo_limit=1.0, combo_power=1.0, max_vx=0.4, accel_x=0.1)
    p = replace(p, accel_w=p.max_wz, heading_gain=0.0)  # the turn could jump to its limit in one step
    for combo_step, within in ((0.0, False), (1.0, True)):
        eng = WalkEngine(body_for('T1'), replace(p, combo_step=combo_step))
        eng.set_command(p.max_vx, 0.0, 0.0)
        for _ in range(200):
            eng.step(DT)
        assert eng.speed[0] == pytest.approx(p.max_vx)
        eng.set_command(0.0, 0.0, p.max_wz)  # turn in place: forward slows by accel_x a step, the turn ramps at once
        norms = []
        for _ in range(100):
            eng.step(DT)
            norms.append(combo_norm(eng.params, eng.speed))
        assert (max(norms) <= 1.0 + 1e-6) is within
        assert eng.speed[2] == pytest.approx(p.max_wz) and eng.speed[0] == pytest.approx(0.0)  # it gets there


def test_step_within_combo_lets_the_growing_motion_give_way() -> None:
    from robocup3d_motion.walk import combo_norm, step_within_combo  # noqa: PLC0415

    p = replace(_sets('T1')['positioning'], combo_limit=1.0, combo_power=1.0, spin_wz=0.0)
    before = (p.max_vx, 0.0, 0.0)
    after = (0.8 * p.max_vx, 0.0, 0.6 * p.max_wz)
    vx, vy, wz = step_within_combo(p, before, after)
    assert vx == after[0] and vy == 0.0  # the shrinking forward speed keeps its ramp
    assert 0.0 < wz < after[2] and combo_norm(p, (vx, vy, wz)) == pytest.approx(1.0, abs=1e-3)
    assert step_within_combo(p, before, (0.5 * p.max_vx, 0.0, 0.1)) == (0.5 * p.max_vx, 0.0, 0.1)  # within: as is
