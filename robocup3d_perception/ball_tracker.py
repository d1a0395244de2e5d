"""Ball tracking: a Kalman filter over (x, y, vx, vy) with rolling friction.

A rolling ball slows down exponentially: ``v(t) = v0 exp(-k t)``, so it travels
``v0 / k`` in all and stops at ``p + v / k``. On rcssserver3d, k = 1.06 /s fits the
ground-truth capture's kick (``(ball (pos 2 1 0.04) (vel 1 0.5 0))``, 3 mm rms; see
``test/perception/test_ball_tracker.py``). The model is linear, so the filter is a
plain Kalman filter:

    F = [[1, 0, a, 0], [0, 1, 0, a], [0, 0, e, 0], [0, 0, 0, e]],  e = exp(-k dt), a = (1 - e) / k

Measurements are positions (absolute frame) from our own vision, with noise growing
with distance and with the self-localization's uncertainty, and from teammates'
reports (noisier, older). An own sighting far outside the predicted covariance (the
ball was moved by the referee or a trainer) resets the filter to it; a ``See``
without the ball where the estimate lies in plain view makes it vaguer (negative
information: the ball was taken away, or never was where we thought). A report that
far out is only a claim: it is held back, and moves the ball only once another
teammate reports the ball at the same place (``corroborating_reports`` teammates
in all, within ``corroborate_window`` s and ``corroborate_radius`` m); a lone
report, forged or wrong, never moves it. The height is not filtered: it is the last
seen height, low-passed.

REQUIRES: ball in the level frame, RobotPose, TeammateReport. PROVIDES: BallModel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robocup3d_perception.representations import BallModel, frozen_array

__all__ = ['BallTracker', 'BallTrackerParameters', 'kalman_update', 'rolling_transition']

BALL_RADIUS = 0.04  # m (rcssserver3d); the MJ ball has about 0.11


@dataclass(frozen=True, slots=True)
class BallTrackerParameters:
    """Tuning of :class:`BallTracker`."""

    friction: float = 1.06  # 1/s, exponential velocity decay while rolling
    sigma_accel: float = 2.0  # m/s^2, process noise on the velocity (kicks, bumps)
    sigma_position: float = 0.03  # m, vision noise at 0 m
    sigma_position_rel: float = 0.02  # per metre of distance
    sigma_report: float = 0.3  # m, a teammate's report
    gate: float = 25.0  # squared Mahalanobis distance beyond which a sighting resets the filter
    max_speed: float = 15.0  # m/s
    corroborating_reports: int = 2  # teammates that must agree before a report beyond the gate is taken
    corroborate_radius: float = 1.0  # m, how close their ball positions must be
    corroborate_window: float = 1.0  # s, how recent the others' reports must be
    miss_growth: float = 1.5  # sigma factor for each See that shows no ball where it should be in view


def rolling_transition(dt: float, friction: float) -> tuple[np.ndarray, float, float]:
    """``(F, e, a)`` of the rolling model over ``dt`` seconds."""
    e = math.exp(-friction * dt)
    a = (1.0 - e) / friction if friction > 0 else dt
    f = np.array([[1.0, 0, a, 0], [0, 1.0, 0, a], [0, 0, e, 0], [0, 0, 0, e]])
    return f, e, a


def kalman_update(x: np.ndarray, p: np.ndarray, z: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Position measurement update (H = [I 0]); returns ``(x, P, squared Mahalanobis distance)``."""
    y = z - x[:2]
    s = p[:2, :2] + r
    det = s[0, 0] * s[1, 1] - s[0, 1] * s[1, 0]
    s_inv = np.array([[s[1, 1], -s[0, 1]], [-s[1, 0], s[0, 0]]]) / det  # 2x2: closed form
    d2 = float(y @ s_inv @ y)
    k = p[:, :2] @ s_inv  # P H^T S^-1 with H = [I 0]
    x = x + k @ y
    p = p - k @ p[:2, :]
    return x, 0.5 * (p + p.T), d2


class BallTracker:
    """Kalman filter for the ball (absolute frame)."""

    requires = ('LevelObservations', 'RobotPose', 'TeammateReport')
    provides = ('BallModel',)

    def __init__(self, params: BallTrackerParameters | None = None) -> None:
        self.p = params or BallTrackerParameters()
        self.x = np.zeros(4)
        self.cov = np.diag([100.0, 100.0, 1.0, 1.0])
        self.z = BALL_RADIUS
        self.time: float | None = None
        self.last_seen: float | None = None
        self.last_update: float | None = None
        self.resets = 0
        self.rejected = 0  # reports beyond the gate held back (not corroborated)
        self.misses = 0  # Sees without the ball where it was estimated in plain view
        self._held: list[tuple[float, int | None, np.ndarray]] = []  # (time, teammate, xy) of held reports

    def predict(self, time: float) -> None:
        """Advance the state to ``time`` (s)."""
        if self.time is None:
            self.time = time
            return
        dt = time - self.time
        if dt <= 0:
            return
        f, _, _ = rolling_transition(dt, self.p.friction)
        q = self.p.sigma_accel**2 * dt
        qm = np.diag([q * dt * dt / 3, q * dt * dt / 3, q, q])
        self.x = f @ self.x
        self.cov = f @ self.cov @ f.T + qm
        self.time = time

    def observe(self, time: float, position: np.ndarray, sigma: float, own: bool = True) -> bool:
        """Fuse one position measurement (m, absolute); return whether it reset the filter."""
        self.predict(time)
        z = np.asarray(position[:2], dtype=float)
        r = np.eye(2) * sigma**2
        reset = self.last_update is None
        if not reset:
            x, p, d2 = kalman_update(self.x, self.cov, z, r)
            if d2 > self.p.gate:
                reset = True
            else:
                self.x, self.cov = x, p
        if reset:
            self.x = np.array([z[0], z[1], 0.0, 0.0])
            self.cov = np.diag([sigma**2, sigma**2, 1.0, 1.0])
            self.resets += 1
        speed = math.hypot(self.x[2], self.x[3])
        if speed > self.p.max_speed:
            self.x[2:] *= self.p.max_speed / speed
        if own and len(position) > 2:
            self.z = 0.5 * self.z + 0.5 * float(position[2])
            self.last_seen = time
        self.last_update = time
        return reset

    def observe_relative(
        self, time: float, pose: tuple[float, float, float, float], level: np.ndarray, pose_sigma: float
    ) -> bool:
        """A sighting in the level frame, placed with the robot pose ``(x, y, z, yaw)``."""
        x, y, z, yaw = pose
        c, s = math.cos(yaw), math.sin(yaw)
        world = np.array([x + c * level[0] - s * level[1], y + s * level[0] + c * level[1], z + level[2]])
        dist = math.hypot(level[0], level[1])
        sigma = math.hypot(self.p.sigma_position + self.p.sigma_position_rel * dist, pose_sigma)
        return self.observe(time, world, sigma, own=True)

    def unseen(self, time: float) -> None:
        """A ``See`` that should have shown the ball where it is estimated did not: it is not there,
        so where it is becomes vaguer (by ``miss_growth`` in sigma each time)."""
        self.predict(time)
        self.cov[:2, :2] *= self.p.miss_growth**2
        self.misses += 1

    def observe_report(
        self, time: float, ball_xy: tuple[float, float], age: float = 0.0, teammate: int | None = None
    ) -> str:
        """A teammate's ball position; returns what became of it.

        ``'ignored'``: our own sighting is fresher than 0.5 s; ``'fused'``: it agrees with the
        estimate (or there is none yet); ``'held'``: it is far off and nobody else says so yet;
        ``'corroborated'``: enough teammates say so, the filter starts again there.
        """
        if self.last_seen is not None and time - self.last_seen < 0.5:
            return 'ignored'
        z = np.asarray(ball_xy, dtype=float)[:2]
        if not np.all(np.isfinite(z)):
            return 'ignored'
        sigma = self.p.sigma_report + 0.5 * age
        self.predict(time)
        if self.last_update is None:
            self.observe(time, z, sigma, own=False)
            return 'fused'
        x, p, d2 = kalman_update(self.x, self.cov, z, np.eye(2) * sigma**2)
        if d2 <= self.p.gate:
            self._fuse(time, x, p)
            return 'fused'
        # Far off: held back until other teammates (each counted once; an unknown speaker never counts) agree.
        window, radius = self.p.corroborate_window, self.p.corroborate_radius
        self._held = [h for h in self._held if time - h[0] <= window and (teammate is None or h[1] != teammate)]
        agree = {h[1]: h[2] for h in self._held if h[1] is not None and np.linalg.norm(h[2] - z) <= radius}
        if teammate is None or len(agree) + 1 < self.p.corroborating_reports:
            self._held.append((time, teammate, z))
            self.rejected += 1
            return 'held'
        self._held = []
        self._reset(time, np.mean([*agree.values(), z], axis=0), sigma)
        return 'corroborated'

    def _fuse(self, time: float, x: np.ndarray, p: np.ndarray) -> None:
        self.x, self.cov = x, p
        speed = math.hypot(self.x[2], self.x[3])
        if speed > self.p.max_speed:
            self.x[2:] *= self.p.max_speed / speed
        self.last_update = time

    def _reset(self, time: float, xy: np.ndarray, sigma: float) -> None:
        self.x = np.array([xy[0], xy[1], 0.0, 0.0])
        self.cov = np.diag([sigma**2, sigma**2, 1.0, 1.0])
        self.resets += 1
        self.last_update = time

    def stop_point(self) -> np.ndarray:
        """Where the ball comes to rest (m): ``p + v / k``."""
        k = self.p.friction
        return self.x[:2] + (self.x[2:] / k if k > 0 else 0.0)

    def model(self, time: float) -> BallModel:
        """The current estimate, predicted to ``time`` (without changing the filter)."""
        x, cov = self.x, self.cov
        if self.time is not None and time > self.time:
            f, _, _ = rolling_transition(time - self.time, self.p.friction)
            x, cov = f @ x, f @ cov @ f.T
        k = self.p.friction
        return BallModel(
            time=time,
            position=frozen_array([x[0], x[1], self.z]),
            velocity=frozen_array(x[2:]),
            stop=frozen_array(x[:2] + x[2:] / k),
            covariance=frozen_array(cov),
            last_seen=self.last_seen,
            last_update=self.last_update,
            valid=self.last_update is not None,
        )
