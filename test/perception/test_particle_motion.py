"""The particle filter's motion between two ``See``: queued each cycle, applied once when a ``See`` reads it.

Per cycle, every particle used to move by the odometry in its own heading, scaled by 1 + N(0, odometry_noise),
plus the diffusion. Queued, the cycles' steps are composed first: the particles must end where the per-cycle
motion would take them, with the same spread (issue #19: the draws once per ``See`` instead of every cycle).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from robocup3d_perception.field import field_for
from robocup3d_perception.particle_filter import LocatorParameters, SelfLocator
from robocup3d_perception.representations import Odometry

CYCLES = 12
STEP = Odometry(dx=0.012, dy=0.003)
YAW = 0.03  # rad per cycle: a walk that curves


def _locator(n: int = 4000) -> SelfLocator:
    params = LocatorParameters(particles=n, particles_confident=n)
    loc = SelfLocator(field_for('simspark'), params, seed=3)
    loc.reset_to(1.0, -2.0, 0.4, sigma_xy=1e-9, sigma_yaw=1e-9)
    return loc


def _walked() -> tuple[float, float, float]:
    """Where the per-cycle motion puts a particle that starts at (1, -2, 0.4), without noise."""
    x, y, yaw = 1.0, -2.0, 0.4
    for _ in range(CYCLES):
        c, s = math.cos(yaw), math.sin(yaw)
        x, y, yaw = x + c * STEP.dx - s * STEP.dy, y + s * STEP.dx + c * STEP.dy, yaw + YAW
    return x, y, yaw


def test_queued_cycles_move_the_particles_where_each_cycle_would() -> None:
    loc = _locator()
    for _ in range(CYCLES):
        loc.predict(YAW, STEP)
    pose, _cov, _share = loc.estimate()  # reads the particles: the queue is applied
    x, y, yaw = _walked()
    p = loc.particles
    assert np.mean(p[:, 0]) == pytest.approx(x, abs=2e-3)
    assert np.mean(p[:, 1]) == pytest.approx(y, abs=2e-3)
    assert np.mean(p[:, 2]) == pytest.approx(yaw, abs=2e-3)
    assert math.dist(pose[:2], (x, y)) < 2e-3


def test_queued_cycles_spread_the_particles_as_each_cycle_would() -> None:
    pr = LocatorParameters()
    loc = _locator()
    for _ in range(CYCLES):
        loc.predict(YAW, STEP, noise_scale=2.0)
    loc.estimate()
    p = loc.particles
    want_yaw = pr.diffusion_yaw * 2.0 * math.sqrt(CYCLES)
    assert np.std(p[:, 2]) == pytest.approx(want_yaw, rel=0.05)
    # across the walk: the diffusion alone; along it, the odometry's relative noise adds its share
    _, _, yaw = _walked()
    heading = 0.4 + YAW * (CYCLES - 1) / 2
    across = -math.sin(heading) * (p[:, 0] - p[:, 0].mean()) + math.cos(heading) * (p[:, 1] - p[:, 1].mean())
    assert np.std(across) == pytest.approx(pr.diffusion_xy * 2.0 * math.sqrt(CYCLES), rel=0.1)
    step = math.hypot(STEP.dx, STEP.dy)
    along_odometry = pr.odometry_noise * step * math.sqrt(CYCLES)
    along = math.cos(heading) * (p[:, 0] - p[:, 0].mean()) + math.sin(heading) * (p[:, 1] - p[:, 1].mean())
    want = math.hypot(pr.diffusion_xy * 2.0 * math.sqrt(CYCLES), along_odometry)
    assert np.std(along) == pytest.approx(want, rel=0.1)
    assert yaw > 0.4


def test_a_locator_that_was_reset_forgets_the_queued_motion() -> None:
    loc = _locator()
    for _ in range(CYCLES):
        loc.predict(YAW, STEP)
    loc.reset_to(-3.0, 1.0, -1.0, sigma_xy=1e-9, sigma_yaw=1e-9)
    loc.estimate()
    assert np.allclose(loc.particles.mean(axis=0), (-3.0, 1.0, -1.0), atol=1e-6)
