"""REP-105 frames from odometry and ground truth (pure): the chain gives the truth, odom drifts with the walk."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robocup3d_tools.odom_frames import OdomFrames, planar

SECOND = 1_000_000_000


def _tilted(x: float, y: float, yaw: float, z: float, pitch: float) -> np.ndarray:
    c, s = math.cos(pitch), math.sin(pitch)
    m = planar(x, y, yaw, z)
    m[:3, :3] = m[:3, :3] @ np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return m


def test_odometry_follows_the_twist_and_world_odom_takes_the_drift() -> None:
    odom = OdomFrames()
    start = _tilted(-3.0, 1.0, math.pi / 2, 0.6, 0.1)
    world_odom, odom_base = odom.frames('A/p1', 0, start)
    assert world_odom == pytest.approx(np.eye(4), abs=1e-9)  # the odometry starts where the robot is
    assert odom_base == pytest.approx(start, abs=1e-9)
    odom.twist('A/p1', 0, 0.5, 0.0, 0.0)  # the walk says: 0.5 m/s ahead (the robot faces +y)
    truth = _tilted(-3.0, 1.8, math.pi / 2, 0.58, -0.05)  # it got only 0.8 m in 2 s (slipped)
    world_odom, odom_base = odom.frames('A/p1', 2 * SECOND, truth)
    assert odom_base[:3, 3] == pytest.approx((-3.0, 2.0, 0.58), abs=1e-9)  # the odometry's 1 m
    assert (world_odom @ odom_base) == pytest.approx(truth, abs=1e-9)  # the chain is the truth
    assert world_odom[:3, 3] == pytest.approx((0.0, -0.2, 0.0), abs=1e-9)  # the drift, on the ground
    assert world_odom[:3, :3] == pytest.approx(np.eye(3), abs=1e-9)


def test_a_turn_is_integrated_and_bad_twists_are_ignored() -> None:
    odom = OdomFrames()
    odom.twist('B/p2', 0, 0.0, 0.0, math.pi / 4)  # heard before the first truth: kept until it comes
    odom.frames('B/p2', 0, planar(0.0, 0.0, 0.0, 0.5))
    odom.twist('B/p2', SECOND, float('nan'), 0.0, 0.0)  # ignored: the turn goes on
    odom.twist('B/p2', SECOND, 1e6, 0.0, 0.0)
    truth = planar(0.1, 0.0, math.pi / 3, 0.5)
    world_odom, odom_base = odom.frames('B/p2', 2 * SECOND, truth)
    assert math.atan2(odom_base[1, 0], odom_base[0, 0]) == pytest.approx(math.pi / 2)
    assert odom_base[:2, 3] == pytest.approx((0.0, 0.0), abs=1e-9)
    assert math.atan2(world_odom[1, 0], world_odom[0, 0]) == pytest.approx(-math.pi / 6)
    assert (world_odom @ odom_base) == pytest.approx(truth, abs=1e-9)
