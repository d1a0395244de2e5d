"""Joint control on rcssserver3d: velocities from a P controller with the gains in force."""

from __future__ import annotations

import pytest

from robocup3d_bridge.config_files import load_config
from robocup3d_description.robots import robot_spec
from robocup3d_motion.joint_control import JointController, control_settings


def _nao_controller() -> JointController:
    robot = robot_spec('simspark', 'nao', 0)
    return JointController(robot, control_settings(robot, load_config('robots.yaml')))


def test_velocity_is_the_robots_gain_times_the_error_clamped_to_the_joint_speed() -> None:
    ctl = _nao_controller()
    kp = ctl.settings.kp['llj3']
    out = ctl.command({'llj3': -0.1}, {'llj3': 0.0})
    v = dict(zip(out.names, out.velocity, strict=True))
    assert v['llj3'] == pytest.approx(kp * -0.1)
    vmax = ctl.robot.by_name['llj3'].max_speed
    v = dict(zip(out.names, ctl.command({'llj3': -1.5}, {'llj3': 0.4}).velocity, strict=True))
    assert v['llj3'] == pytest.approx(-vmax)


def test_gains_passed_in_replace_the_robots_for_the_joints_they_name() -> None:
    ctl = _nao_controller()
    base = dict(ctl.settings.kp)
    stiff = {**base, 'llj3': 3.0 * base['llj3']}
    out = ctl.command({'llj3': -0.1, 'rlj3': -0.1}, {'llj3': 0.0, 'rlj3': 0.0}, stiff)
    v = dict(zip(out.names, out.velocity, strict=True))
    assert v['llj3'] == pytest.approx(3.0 * base['llj3'] * -0.1)
    assert v['rlj3'] == pytest.approx(base['rlj3'] * -0.1)


def test_speed_caps_passed_in_lower_the_joint_speed_but_never_raise_it() -> None:
    robot = robot_spec('simspark', 'nao', 2)  # ankle pitch 8.81 rad/s, ankle roll 3.47 rad/s
    ctl = JointController(robot, control_settings(robot, load_config('robots.yaml')))
    far = {'llj5': 1.0, 'llj6': 0.5, 'rlj5': 1.0}
    caps = {'llj5': 6.14, 'llj6': 6.14}
    v = dict(zip(ctl.robot.joint_names, ctl.command(far, dict.fromkeys(far, -0.5), None, caps).velocity, strict=True))
    assert v['llj5'] == pytest.approx(6.14)  # capped below its own 8.81
    assert v['llj6'] == pytest.approx(robot.by_name['llj6'].max_speed)  # its own 3.47 is lower: kept
    assert v['rlj5'] == pytest.approx(robot.by_name['rlj5'].max_speed)  # not named: its own
