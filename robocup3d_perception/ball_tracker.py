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

from robocup3d_perception.representations import BallModel

__all__ = [
    'BallTracker',
    'BallTrackerParameters',
    'PerAxisState',
    'block_covariance',
    'kalman_update',
    'rolling_transition',
]

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


class PerAxisState:
    """A filter on plain floats: the state ``px, py, vx, vy`` and the per-axis covariance block
    ``[[cp, cpv], [cpv, cv]]`` over (position, velocity), the same for x and y; as arrays for readers."""

    __slots__ = ()
    px: float
    py: float
    vx: float
    vy: float
    cp: float
    cpv: float
    cv: float

    @property
    def x(self) -> np.ndarray:
        """The state ``(x, y, vx, vy)`` (a copy)."""
        return np.array([self.px, self.py, self.vx, self.vy])

    @property
    def cov(self) -> np.ndarray:
        """The state's 4x4 covariance (a copy)."""
        return np.array(block_covariance(self.cp, self.cpv, self.cv))

    def fuse(self, zx: float, zy: float, sigma: float, gate: float | None) -> bool:
        """Fuse a position measurement; False (and nothing changed) beyond ``gate`` (squared Mahalanobis)."""
        a, b, c = self.cp, self.cpv, self.cv
        s = a + sigma * sigma
        yx, yy = zx - self.px, zy - self.py
        if gate is not None and (yx * yx + yy * yy) / s > gate:
            return False
        ka, kb = a / s, b / s
        self.px += ka * yx
        self.py += ka * yy
        self.vx += kb * yx
        self.vy += kb * yy
        self.cp, self.cpv, self.cv = a - ka * a, b - ka * b, c - kb * b
        return True


class BallTracker(PerAxisState):
    """Kalman filter for the ball (absolute frame), on plain floats.

    Every noise the filter meets is the same along x and y (isotropic sightings and
    reports, the same process noise per axis, square resets), and the rolling model
    moves each axis alone, so the 4x4 covariance is always one 2x2 block per axis,
    the same for both: ``[[a, b], [b, c]]`` over (position, velocity). The filter keeps
    those three numbers, which is the general filter exactly (``test_ball_tracker_floats``
    holds it to :func:`kalman_update` and :func:`rolling_transition`) at a fraction of
    numpy's per-call cost.
    """

    requires = ('LevelObservations', 'RobotPose', 'TeammateReport')
    provides = ('BallModel',)

    def __init__(self, params: BallTrackerParameters | None = None) -> None:
        self.p = params or BallTrackerParameters()
        self.px = self.py = self.vx = self.vy = 0.0
        self.cp, self.cpv, self.cv = 100.0, 0.0, 1.0  # per-axis covariance: position, cross, velocity
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
        self.px, self.py, self.vx, self.vy, self.cp, self.cpv, self.cv = self._ahead(dt)
        q = self.p.sigma_accel**2 * dt
        self.cp += q * dt * dt / 3
        self.cv += q
        self.time = time

    def _ahead(self, dt: float) -> tuple[float, float, float, float, float, float, float]:
        """State and covariance rolled ``dt`` s on, without process noise."""
        k = self.p.friction
        e = math.exp(-k * dt)
        al = (1.0 - e) / k if k > 0 else dt
        a, b, c = self.cp, self.cpv, self.cv
        return (
            self.px + al * self.vx,
            self.py + al * self.vy,
            e * self.vx,
            e * self.vy,
            a + 2.0 * al * b + al * al * c,
            e * (b + al * c),
            e * e * c,
        )

    def _cap_speed(self) -> None:
        speed = math.hypot(self.vx, self.vy)
        if speed > self.p.max_speed:
            f = self.p.max_speed / speed
            self.vx *= f
            self.vy *= f

    def observe(self, time: float, position: np.ndarray, sigma: float, own: bool = True) -> bool:
        """Fuse one position measurement (m, absolute); return whether it reset the filter.

        A measurement with a non-finite position or sigma is not taken (it would spread NaN through the
        filter, since NaN is never beyond the gate).
        """
        zx, zy = float(position[0]), float(position[1])
        if not (math.isfinite(zx) and math.isfinite(zy) and math.isfinite(sigma)):
            return False
        self.predict(time)
        reset = self.last_update is None or not self.fuse(zx, zy, sigma, self.p.gate)
        if reset:
            self._start(zx, zy, sigma)
        self._cap_speed()
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
        lx, ly, lz = float(level[0]), float(level[1]), float(level[2])
        c, s = math.cos(yaw), math.sin(yaw)
        world = (x + c * lx - s * ly, y + s * lx + c * ly, z + lz)
        sigma = math.hypot(self.p.sigma_position + self.p.sigma_position_rel * math.hypot(lx, ly), pose_sigma)
        return self.observe(time, world, sigma, own=True)

    def unseen(self, time: float) -> None:
        """A ``See`` that should have shown the ball where it is estimated did not: it is not there,
        so where it is becomes vaguer (by ``miss_growth`` in sigma each time)."""
        self.predict(time)
        self.cp *= self.p.miss_growth**2
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
        if self.fuse(float(z[0]), float(z[1]), sigma, self.p.gate):
            self._cap_speed()
            self.last_update = time
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

    def place(self, time: float, x: float, y: float, sigma: float) -> None:
        """The ball is known to lie at rest at ``(x, y)`` within ``sigma`` m (where the rules put it)."""
        self.predict(time)
        self._start(x, y, sigma)
        self.last_update = time

    def _start(self, x: float, y: float, sigma: float) -> None:
        """The filter starts again at ``(x, y)``, at rest."""
        self.px, self.py, self.vx, self.vy = x, y, 0.0, 0.0
        self.cp, self.cpv, self.cv = sigma * sigma, 0.0, 1.0
        self.resets += 1

    def _reset(self, time: float, xy: np.ndarray, sigma: float) -> None:
        self._start(float(xy[0]), float(xy[1]), sigma)
        self.last_update = time

    def stop_point(self) -> np.ndarray:
        """Where the ball comes to rest (m): ``p + v / k``."""
        k = self.p.friction
        if k <= 0:
            return np.array([self.px, self.py])
        return np.array([self.px + self.vx / k, self.py + self.vy / k])

    def model(self, time: float) -> BallModel:
        """The current estimate, predicted to ``time`` (without changing the filter)."""
        if self.time is not None and time > self.time:
            px, py, vx, vy, a, b, c = self._ahead(time - self.time)
        else:
            px, py, vx, vy, a, b, c = self.px, self.py, self.vx, self.vy, self.cp, self.cpv, self.cv
        k = self.p.friction
        return BallModel(
            time=time,
            position=_frozen([px, py, self.z]),
            velocity=_frozen([vx, vy]),
            stop=_frozen([px + vx / k, py + vy / k] if k > 0 else [px, py]),
            covariance=_frozen(block_covariance(a, b, c)),
            last_seen=self.last_seen,
            last_update=self.last_update,
            valid=self.last_update is not None,
        )


def block_covariance(a: float, b: float, c: float) -> list[list[float]]:
    """The 4x4 covariance over (x, y, vx, vy) of the per-axis block ``[[a, b], [b, c]]``."""
    return [[a, 0.0, b, 0.0], [0.0, a, 0.0, b], [b, 0.0, c, 0.0], [0.0, b, 0.0, c]]


def _frozen(values: list) -> np.ndarray:
    """A read-only float array of ``values`` (a list of floats, or of lists)."""
    a = np.array(values)
    a.setflags(write=False)
    return a
