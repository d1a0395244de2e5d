"""After a get-up the robot stands STEADY_MIN s, then walks off once it stands steady (or STEADY_MAX s after the
get-up at the latest).

In a 7 v 7 half (session 42) T1s walked off the moment their get-up ended, still leaning 19-29 degrees, and fell
again within a second, turning at full rate or on the sprint; in session 44 T1s that walked off as soon as they read
steady fell again in 7 of 22 trials, and none of 16 that stood 1 s first.
"""

from __future__ import annotations

import math

from robocup3d_description.robots import robot_spec
from robocup3d_motion.core import STEADY_MAX, STEADY_MIN, MotionCore
from robocup3d_motion.motion_config import load_robots_config, load_walk_config

G = 9.81
ON_ITS_BACK = (G, 0.0, 0.0)
UPRIGHT = (0.0, 0.0, G)


def _leaning(deg: float) -> tuple[float, float, float]:
    a = math.radians(deg)
    return (G * math.sin(a), 0.0, G * math.cos(a))


def _got_up(lean_deg: float) -> tuple[MotionCore, dict[str, float], float]:
    """A T1 that fell onto its back and got up; it leans ``lean_deg`` as its get-up ends. Returns the core, its
    joints and the time the get-up ended."""
    core = MotionCore(
        robot_spec('mujoco', 'T1', 0), load_robots_config('robots.yaml'), walk_cfg=load_walk_config('walk.yaml')
    )
    joints = dict(core.settings.hold_pose)
    t = 0.0
    while not core.is_getup:
        t += 0.02
        core.on_imu(t, (0.0, 0.0, 0.0), ON_ITS_BACK, wall=t)
        joints = core.step(t, joints, wall=t)
        assert t < 5.0
    while core.is_getup:  # the get-up plays by time; the body comes up leaning
        t += 0.02
        core.on_imu(t, (0.0, 0.0, 0.0), _leaning(lean_deg), wall=t)
        joints = core.step(t, joints, wall=t)
        assert t < 20.0
    return core, joints, t


def test_a_robot_still_leaning_after_its_getup_stands_until_steady_then_walks() -> None:
    core, joints, end = _got_up(20.0)
    t = end
    while t < end + STEADY_MIN + 0.1:  # leaning 20 deg: commanded to walk, it stands
        t += 0.02
        core.set_velocity(0.3, 0.0, 0.6, now=t)
        core.on_imu(t, (0.0, 0.0, 0.0), _leaning(20.0), wall=t)
        joints = core.step(t, joints, wall=t)
        assert core.skill == 'stand', round(t - end, 2)
    for _ in range(100):  # upright and still: it walks off (the estimate takes a few cycles to follow)
        t += 0.02
        core.set_velocity(0.3, 0.0, 0.6, now=t)
        core.on_imu(t, (0.0, 0.0, 0.0), UPRIGHT, wall=t)
        joints = core.step(t, joints, wall=t)
        if core.skill == 'walk':
            break
    assert core.skill == 'walk' and t < end + STEADY_MAX


def test_a_robot_that_stays_leaning_walks_off_after_steady_max() -> None:
    core, joints, end = _got_up(20.0)
    t = end
    while core.skill != 'walk':
        t += 0.02
        core.set_velocity(0.3, 0.0, 0.0, now=t)
        core.on_imu(t, (0.0, 0.0, 0.0), _leaning(20.0), wall=t)
        joints = core.step(t, joints, wall=t)
        assert t < end + STEADY_MAX + 0.1
    assert t >= end + STEADY_MAX - 0.02


def test_a_robot_upright_after_its_getup_stands_steady_min_then_walks() -> None:
    core, joints, end = _got_up(2.0)
    t, walked = end, None
    while walked is None and t < end + STEADY_MAX:
        t += 0.02
        core.set_velocity(0.3, 0.0, 0.0, now=t)
        core.on_imu(t, (0.0, 0.0, 0.0), _leaning(2.0), wall=t)
        joints = core.step(t, joints, wall=t)
        walked = t if core.skill == 'walk' else None
    assert walked is not None and end + STEADY_MIN - 0.02 <= walked <= end + STEADY_MIN + 0.06
