"""A beam stops whatever the robot does: it lands at its place standing, and the landing is no fall.

RCSSServerMJ drops a beamed robot upright at its place in the server's initial joint pose. In a 7 v 7 half
(session 42) every walking player was beamed after each goal: the walk played on from the dropped pose, the
landing's jolt read as a fall, and the get-up played on an upright robot threw it down, 2-4 falls each.
"""

from __future__ import annotations

import math

from robocup3d_description.robots import robot_spec
from robocup3d_motion.core import BEAM_SETTLE, MotionCore
from robocup3d_motion.motion_config import load_robots_config, load_walk_config
from robocup3d_motion.requests import GoTo

G = 9.81
UPRIGHT = (0.0, 0.0, G)
ON_ITS_BACK = (G, 0.0, 0.0)


def _walking_core() -> tuple[MotionCore, dict[str, float], float]:
    """A T1 walking a go-to task; returns the core, its joints and the time."""
    spec = robot_spec('mujoco', 'T1', 0)
    core = MotionCore(spec, load_robots_config('robots.yaml'), walk_cfg=load_walk_config('walk.yaml'))
    joints = dict(core.settings.hold_pose)
    core.on_pose(0.0, 0.0, 0.0, 0.0)
    assert core.request(GoTo(x=5.0, y=0.0, theta=0.0, id=7).to_text()) == ''
    t = 0.0
    for _ in range(100):
        t += 0.02
        core.on_imu(t, (0.0, 0.0, 0.0), UPRIGHT, wall=t)
        core.on_pose(t, 0.0, 0.0, 0.0)
        joints = core.step(t, joints, wall=t)
    assert core.skill == 'walk' and core.walk.walking
    return core, joints, t


def test_a_beam_stops_the_task_and_the_walk_and_the_robot_stands() -> None:
    core, joints, t = _walking_core()
    core.on_beam()
    state = core.state_dict()
    assert core.skill == 'stand' and not core.walk.walking
    assert state['task']['phase'] == 'cancelled' and state['task']['reason'] == 'beamed'
    t += 0.02
    core.on_imu(t, (0.0, 0.0, 0.0), UPRIGHT, wall=t)
    cmd = core.step(t, joints, wall=t)
    assert core.skill == 'stand'
    assert all(math.isclose(cmd[n], v, abs_tol=0.2) for n, v in core.settings.hold_pose.items())


def test_the_landing_after_a_beam_starts_no_getup_but_a_robot_still_down_after_it_gets_up() -> None:
    core, joints, t = _walking_core()
    core.on_beam()
    start = t
    tilted = (G * math.sin(1.1), 0.0, G * math.cos(1.1))  # 63 deg back, as the body rocks on landing
    while t < start + BEAM_SETTLE + 0.5:
        t += 0.02
        if t < start + 0.1:
            gyro, accel = (3.0, -2.0, 0.5), (20.0, 3.0, 2.0)  # the jolt
        elif t < start + 0.4:
            gyro, accel = (0.1, 0.0, 0.0), tilted  # rocking back: a calm reading, far from upright
        else:
            gyro, accel = (0.0, 0.0, 0.0), UPRIGHT
        core.on_imu(t, gyro, accel, wall=t)
        joints = core.step(t, joints, wall=t)
        assert not core.is_getup, round(t - start, 2)
    for _ in range(150):  # then it falls onto its back and lies there: the get-up comes
        t += 0.02
        core.on_imu(t, (0.0, 0.0, 0.0), ON_ITS_BACK, wall=t)
        joints = core.step(t, joints, wall=t)
        if core.is_getup:
            break
    assert core.is_getup and core.skill == 'GETUP_BACK'


def test_after_a_beam_the_tilt_estimate_starts_upright_and_one_odd_reading_is_no_fall() -> None:
    """Session 44: the estimate waited for a calm accelerometer reading after the beam; a T1 that walked off at once
    gave none for 1.5 s (hard accelerations, a busy gyro), then one that read 52-60 deg tilted while it walked upright:
    the estimate started there, the robot counted as fallen and its back get-up threw it down."""
    core, joints, t = _walking_core()
    core.on_beam()
    start = t
    hard = (5.0, 0.0, 14.0)  # |a| 1.5 g: walking off, not trusted
    while t < start + BEAM_SETTLE + 0.5:
        t += 0.02
        sway = math.sin(2.0 * math.pi * (t - start) / 0.5)  # the steps' sway, about 0.5 s a stride
        core.on_imu(t, (0.6 * sway, 0.3 * sway, 0.0), hard, wall=t)
        joints = core.step(t, joints, wall=t)
    odd = (G * math.sin(math.radians(60.0)), 0.0, G * math.cos(math.radians(60.0)))  # magnitude g, 60 deg off
    for _ in range(6):
        t += 0.02
        core.on_imu(t, (0.0, 0.0, 0.0), odd, wall=t)
        joints = core.step(t, joints, wall=t)
        assert not core.state.fallen and not core.is_getup


def test_a_beam_during_a_getup_ends_it() -> None:
    """Dropped upright at its place, a robot that was getting up stands instead of playing its get-up on."""
    core, joints, t = _walking_core()
    for _ in range(150):
        t += 0.02
        core.on_imu(t, (0.0, 0.0, 0.0), ON_ITS_BACK, wall=t)
        joints = core.step(t, joints, wall=t)
        if core.is_getup:
            break
    assert core.is_getup
    core.on_beam()
    for _ in range(5):
        t += 0.02
        core.on_imu(t, (0.0, 0.0, 0.0), UPRIGHT, wall=t)
        joints = core.step(t, joints, wall=t)
    assert not core.is_getup and core.skill == 'stand'
