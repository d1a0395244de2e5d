"""The ball tracker on floats is the general 4x4 Kalman filter, exactly.

The reference below is the filter written out with numpy over the whole state (the
rolling model's ``F``, the process noise, :func:`kalman_update` with its gate); both
are driven by the same random mix of sightings near and far (resets), teammates'
reports, Sees without the ball and odd time steps, and must agree on every step.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from robocup3d_perception.ball_tracker import BallTracker, BallTrackerParameters, kalman_update, rolling_transition


class _Reference:
    """The ball filter over the full state and covariance (numpy)."""

    def __init__(self, p: BallTrackerParameters) -> None:
        self.p = p
        self.x = np.zeros(4)
        self.cov = np.diag([100.0, 100.0, 1.0, 1.0])
        self.time: float | None = None
        self.started = False

    def predict(self, time: float) -> None:
        dt = 0.0 if self.time is None else time - self.time  # the first call only sets the clock
        if dt > 0:
            f, _, _ = rolling_transition(dt, self.p.friction)
            q = self.p.sigma_accel**2 * dt
            self.x = f @ self.x
            self.cov = f @ self.cov @ f.T + np.diag([q * dt * dt / 3, q * dt * dt / 3, q, q])
        if self.time is None or dt > 0:
            self.time = time

    def observe(self, time: float, z: np.ndarray, sigma: float) -> bool:
        self.predict(time)
        reset = not self.started
        if not reset:
            x, p, d2 = kalman_update(self.x, self.cov, z[:2], np.eye(2) * sigma**2)
            reset = d2 > self.p.gate
            if not reset:
                self.x, self.cov = x, p
        if reset:
            self.x = np.array([z[0], z[1], 0.0, 0.0])
            self.cov = np.diag([sigma**2, sigma**2, 1.0, 1.0])
        speed = math.hypot(self.x[2], self.x[3])
        if speed > self.p.max_speed:
            self.x[2:] *= self.p.max_speed / speed
        self.started = True
        return reset

    def unseen(self, time: float) -> None:
        self.predict(time)
        self.cov[:2, :2] *= self.p.miss_growth**2


@pytest.mark.parametrize('seed', [1, 2, 3])
def test_the_float_filter_is_the_full_kalman_filter(seed: int) -> None:
    rng = np.random.default_rng(seed)
    params = BallTrackerParameters(max_speed=4.0)  # low, so that the speed cap is met too
    fast, ref = BallTracker(params), _Reference(params)
    t, ball = 0.0, np.array([1.0, -2.0])
    resets = 0
    for step in range(600):
        t += float(rng.choice([0.02, 0.04, 0.06, 0.0, 0.2]))
        ball = ball + rng.normal(0, 0.05, 2)
        kind = rng.random()
        if kind < 0.05:
            ball = rng.uniform(-10, 10, 2)  # moved by the referee: both must reset
        if kind < 0.7:
            z = np.array([*(ball + rng.normal(0, 0.03, 2)), 0.11])
            sigma = float(rng.uniform(0.02, 0.5))
            got = fast.observe(t, z, sigma)
            assert got == ref.observe(t, z, sigma), step
            resets += got
        elif kind < 0.85:
            fast.unseen(t)
            ref.unseen(t)
        else:
            fast.predict(t)
            ref.predict(t)
        np.testing.assert_allclose(fast.x, ref.x, rtol=1e-9, atol=1e-9, err_msg=f'state, step {step}')
        np.testing.assert_allclose(fast.cov, ref.cov, rtol=1e-9, atol=1e-12, err_msg=f'covariance, step {step}')
        ahead = fast.model(t + 0.5)
        f, _, _ = rolling_transition(0.5, params.friction)
        np.testing.assert_allclose(ahead.position[:2], (f @ ref.x)[:2], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(ahead.covariance, f @ ref.cov @ f.T, rtol=1e-9, atol=1e-12)
    assert resets > 10  # the gate and the teleports were exercised


def test_the_model_is_read_only_and_says_where_the_ball_stops() -> None:
    bt = BallTracker()
    for i in range(20):
        bt.observe(i * 0.04, np.array([0.1 * i, 0.0, 0.11]), 0.03)
    m = bt.model(0.8)
    assert m.valid and m.velocity[0] == pytest.approx(2.5, abs=0.3)
    np.testing.assert_allclose(m.stop, m.position[:2] + m.velocity / bt.p.friction)
    with pytest.raises(ValueError):
        m.position[0] = 0.0


def test_a_non_finite_sighting_is_not_taken() -> None:
    bt = BallTracker()
    bt.observe(0.0, np.array([1.0, 2.0, 0.11]), 0.05)
    before = bt.x, bt.cov
    assert not bt.observe(0.02, np.array([float('nan'), 2.0, 0.11]), 0.05)
    assert not bt.observe(0.04, np.array([1.0, 2.0, 0.11]), float('inf'))
    np.testing.assert_array_equal(bt.x, before[0])
    np.testing.assert_array_equal(bt.cov, before[1])
    assert bt.model(0.1).valid and np.all(np.isfinite(bt.model(0.1).covariance))
