"""Self-localization: a particle filter over the torso's (x, y, yaw) in the absolute frame.

As in the seeds (UT Austin Villa's ``PFLocalization``): each cycle the particles move
by the odometry (walk odometry when there is one, the gyro's yaw change always) plus
diffusion; each ``See`` reweights them by how well the seen landmarks (and, on
SimSpark, the seen field lines) fit; they are resampled (low-variance) when the
effective sample size drops, and fresh particles are injected.

Injection (sensor resetting): landmark names are unique, so two or more seen landmarks
give the pose in closed form (a weighted 2-D rigid fit); one landmark gives the
position for any assumed heading. A few particles are always drawn around that
candidate; when the candidate explains the observations clearly better than the best
particle (a beam, a referee move, a trainer kidnap), most of the cloud is replaced,
so the filter recovers at the next ``See`` or two.

Lines are scored with a precomputed distance map of the field lines (5 cm cells), so
a line costs a table lookup per particle and sample point. Everything is vectorised
over the particles.

Direct fits (``exact_fit``, both servers): while a ``See`` holds two landmarks or more and
their rigid fit explains them, the fit is the measurement of a small Kalman filter over
(x, y, yaw) and the particles rest; a ``See`` without such a fit wakes them around that
filter's estimate and the particle filter takes over again. RCSSServerMJ's vision has no
noise, so its fits are exact (``exact_sigma_xy`` 1 cm); rcssserver3d's is noisy, and its fits
are weighted as measurements of 5 cm and 0.02 rad (:func:`locator_parameters`). There the
particles alone, with the lines, were half as accurate at twice the cost (docs/benchmarks.md,
Perception, session 37).

REQUIRES: LevelObservations, yaw change, Odometry. PROVIDES: RobotPose (x, y, yaw, cov).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from robocup3d_perception.field import FieldModel
from robocup3d_perception.representations import LevelObservations, Odometry

__all__ = ['LocatorParameters', 'SelfLocator', 'line_distance_map', 'locator_parameters']


@dataclass(frozen=True, slots=True)
class LocatorParameters:
    """Tuning of :class:`SelfLocator` (m, rad, per cycle unless said otherwise)."""

    particles: int = 300  # while unsure (start, kidnap, poor fit)
    particles_confident: int = 100  # while the estimate fits well and is tight
    confident_score: float = -0.5  # per-observation log-likelihood of the estimate above which ...
    confident_spread: float = 0.15  # m ... and position spread below which the filter is confident
    sigma_distance: float = 0.04  # m, landmark distance error at 0 m
    sigma_distance_rel: float = 0.025  # landmark distance error per metre
    sigma_bearing: float = 0.02  # rad
    sigma_line: float = 0.08  # m, distance of a seen line point to the nearest field line
    sigma_line_rel: float = 0.01  # per metre of distance
    outlier: float = 0.02  # likelihood floor of one observation (robustness)
    diffusion_xy: float = 0.004  # m per cycle
    diffusion_yaw: float = 0.003  # rad per cycle
    odometry_noise: float = 0.1  # relative
    inject_always: float = 0.03  # fraction of particles drawn around the candidate every See
    inject_kidnap: float = 0.7  # fraction when the candidate is clearly better
    kidnap_margin: float = 1.0  # per-observation log-likelihood margin that means "kidnapped"
    max_line_points: int = 40  # sample points from seen lines per update
    max_line_range: float = 12.0  # m; farther line points are ignored
    exact_fit: bool = False  # a good rigid fit of the landmarks is measured directly (see the module)
    exact_fit_score: float = -1.0  # per-observation log-likelihood a fit needs to be taken directly
    exact_sigma_xy: float = 0.01  # m, error of such a fit (RCSSServerMJ; docs/benchmarks.md, Perception: 1.6 cm median)
    exact_sigma_yaw: float = 0.005  # rad
    exact_fit_gate: float = 4.0  # sigmas of disagreement beyond which the fit replaces the estimate (a kidnap)
    fit_line_score: float = -1.0  # mean log-likelihood of the seen line points a fit's pose needs (lines seen)


def locator_parameters(noisy_vision: bool) -> LocatorParameters:
    """The server's defaults: direct fits on both, weighted as exact (RCSSServerMJ) or as noisy
    (rcssserver3d, ``noisy_vision``: the error of its fits as a match's rerun found it)."""
    if noisy_vision:
        return LocatorParameters(exact_fit=True, exact_sigma_xy=0.05, exact_sigma_yaw=0.02)
    return LocatorParameters(exact_fit=True)


@cache
def line_distance_map(fld: FieldModel, cell: float = 0.05, margin: float = 2.0) -> tuple[np.ndarray, float, float]:
    """Distance (m) from each cell to the nearest field line: ``(grid, x0, y0)``, grid[ix, iy]."""
    xs = np.arange(-fld.half_length - margin, fld.half_length + margin + cell, cell)
    ys = np.arange(-fld.half_width - margin, fld.half_width + margin + cell, cell)
    gx, gy = np.meshgrid(xs, ys, indexing='ij')
    best = np.full(gx.shape, np.inf)
    for x1, y1, x2, y2 in fld.lines:
        dx, dy = x2 - x1, y2 - y1
        t = np.clip(((gx - x1) * dx + (gy - y1) * dy) / (dx * dx + dy * dy), 0.0, 1.0)
        np.minimum(best, np.hypot(gx - (x1 + t * dx), gy - (y1 + t * dy)), out=best)
    for cx, cy, r in fld.circles:
        np.minimum(best, np.abs(np.hypot(gx - cx, gy - cy) - r), out=best)
    best = best.astype(np.float32)
    best.setflags(write=False)
    return best, float(xs[0]), float(ys[0])


#: np.linspace(0, 1, k + 1) for the 1-6 pieces a seen line is cut into
_FRACTIONS = {k: np.linspace(0.0, 1.0, k + 1) for k in range(1, 7)}
#: the 5-degree heading grid of a single landmark's candidates (read-only)
_HEADINGS = np.linspace(-np.pi, np.pi, 72, endpoint=False)
_HEADINGS.setflags(write=False)


@cache
def _spread(n: int, k: int) -> np.ndarray:
    """``k`` indices spread evenly over ``range(n)`` (read-only; the same few ``n`` come again and again)."""
    idx = np.linspace(0, n - 1, k).astype(int)
    idx.setflags(write=False)
    return idx


def _wrap(a: np.ndarray) -> np.ndarray:
    return (a + np.pi) % (2 * np.pi) - np.pi


def _wrap_f(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


class SelfLocator:
    """Particle filter for the torso pose.

    Args:
        fld: the field model (landmarks and lines).
        params: tuning.
        seed: random seed (tests, offline runs are reproducible).
        use_lines: score seen field lines (SimSpark); MJ sends none.
    """

    requires = ('LevelObservations', 'yaw_delta', 'Odometry')
    provides = ('RobotPose',)

    def __init__(
        self,
        fld: FieldModel,
        params: LocatorParameters | None = None,
        seed: int | None = 0,
        use_lines: bool = True,
    ) -> None:
        self.field = fld
        self.p = params or LocatorParameters()
        self.rng = np.random.default_rng(seed)
        self.use_lines = use_lines and len(fld.lines) > 0
        self._dmap = line_distance_map(fld) if self.use_lines else None
        n = self.p.particles
        self.particles = np.empty((n, 3))
        self.weights = np.full(n, 1.0 / n)
        # motion not yet applied to the particles: step x, y (in the heading at its start), yaw, the steps'
        # summed squares, the diffusion's summed variances in x/y and yaw (predict, _move_particles)
        self._queue = [0.0] * 6
        self.spread_uniform()
        self.last_score = -10.0  # per-observation log-likelihood of the estimate at the last See
        self.kidnaps = 0
        self._ref = self.particles[0].copy()  # centre of the cluster the estimate follows
        self._estimate: tuple[np.ndarray, np.ndarray, float] | None = None  # valid until the next update
        self.resting = False  # exact fit: the particles rest, the estimate is the Kalman filter's
        self.fits = 0  # Sees taken as an exact fit

    # -- initialisation -------------------------------------------------------------

    def spread_uniform(self) -> None:
        """Spread the particles over the whole field (no idea where we are)."""
        n = self.p.particles
        f = self.field
        self.particles[:, 0] = self.rng.uniform(-f.half_length - f.border, f.half_length + f.border, n)
        self.particles[:, 1] = self.rng.uniform(-f.half_width - f.border, f.half_width + f.border, n)
        self.particles[:, 2] = self.rng.uniform(-np.pi, np.pi, n)
        self.weights.fill(1.0 / n)
        self._ref = self.particles[0].copy()
        self._estimate = None
        self.resting = False
        self._drop_motion()

    def reset_to(self, x: float, y: float, yaw: float, sigma_xy: float = 0.1, sigma_yaw: float = 0.1) -> None:
        """Put all particles around a known pose (e.g. after our own beam)."""
        n = self.p.particles
        self.particles = self._around(np.array([x, y, yaw]), n, sigma_xy, sigma_yaw)
        self.weights = np.full(n, 1.0 / n)
        self._ref = np.array([x, y, yaw], dtype=float)
        self._estimate = None
        self.resting = False
        self._drop_motion()

    def _around(self, pose: np.ndarray, n: int, sigma_xy: float, sigma_yaw: float) -> np.ndarray:
        out = np.empty((n, 3))
        out[:, :2] = pose[:2] + self.rng.normal(0.0, sigma_xy, (n, 2))
        out[:, 2] = _wrap(pose[2] + self.rng.normal(0.0, sigma_yaw, n))
        return out

    # -- prediction -----------------------------------------------------------------

    def predict(self, yaw_delta: float, odometry: Odometry | None = None, noise_scale: float = 1.0) -> None:
        """Move every particle by the odometry (torso frame) and the gyro's yaw change, plus diffusion.

        Headings are left unwrapped here (everything that compares them wraps). The
        estimate moves by the same motion, its covariance grows by the diffusion, at once. The
        particles, read only by the next ``See``, move then (:meth:`_move_particles`): by the
        cycles' motion composed, with the odometry's relative noise and the diffusion summed
        over those cycles (the same spread, drawn once instead of every cycle).
        """
        pr = self.p
        moved = odometry is not None and (odometry.dx or odometry.dy)
        if not self.resting:
            q = self._queue
            if moved:  # the step in the frame of the heading when the queue began
                c, s = math.cos(q[2]), math.sin(q[2])
                q[0] += c * odometry.dx - s * odometry.dy
                q[1] += s * odometry.dx + c * odometry.dy
                q[3] += odometry.dx * odometry.dx + odometry.dy * odometry.dy
            q[2] += yaw_delta
            q[4] += (pr.diffusion_xy * noise_scale) ** 2
            q[5] += (pr.diffusion_yaw * noise_scale) ** 2
        for r in (self._ref, None if self._estimate is None else self._estimate[0]):
            if r is None:
                continue
            if moved:
                c0, s0 = math.cos(r[2]), math.sin(r[2])
                r[0] += c0 * odometry.dx - s0 * odometry.dy
                r[1] += s0 * odometry.dx + c0 * odometry.dy
            r[2] = (r[2] + yaw_delta + math.pi) % (2 * math.pi) - math.pi
        if self._estimate is not None:
            cov = self._estimate[1]
            dxy, dyaw = pr.diffusion_xy * noise_scale, pr.diffusion_yaw * noise_scale
            cov[0, 0] += dxy * dxy
            cov[1, 1] += dxy * dxy
            cov[2, 2] += dyaw * dyaw

    def _drop_motion(self) -> None:
        """Forget the queued motion: the particles have taken it, or were placed anew."""
        self._queue = [0.0] * 6

    def _move_particles(self) -> None:
        """Apply the motion :meth:`predict` queued since the particles last moved."""
        dx, dy, dyaw, odo_sq, var_xy, var_yaw = self._queue
        if not var_xy and not var_yaw and not dyaw and not odo_sq:
            return
        self._drop_motion()
        p = self.particles
        n = len(p)
        step = math.hypot(dx, dy)
        if step > 1e-12:
            c, s = np.cos(p[:, 2]), np.sin(p[:, 2])
            # each cycle's step scaled by 1 + N(0, odometry_noise): the sum's spread along the whole step
            k = 1.0 + self.rng.normal(0.0, self.p.odometry_noise * math.sqrt(odo_sq) / step, n)
            p[:, 0] += k * (c * dx - s * dy)
            p[:, 1] += k * (s * dx + c * dy)
        noise = self.rng.normal(0.0, 1.0, (n, 3))
        noise[:, :2] *= math.sqrt(var_xy)
        noise[:, 2] *= math.sqrt(var_yaw)
        noise[:, 2] += dyaw
        p += noise

    # -- observation ----------------------------------------------------------------

    def _log_likelihood(self, poses: np.ndarray, obs: LevelObservations) -> tuple[np.ndarray, int]:
        """Summed log-likelihood per pose, and how many observations went in."""
        pr = self.p
        total = np.zeros(len(poses))
        count = 0
        c, s = np.cos(poses[:, 2]), np.sin(poses[:, 2])
        known = [i for i, n in enumerate(obs.landmark_names) if n in self.field.landmarks]
        if known:
            names = [obs.landmark_names[i] for i in known]
            f = self.field.landmark_array(names)[:, :2]  # (k, 2)
            o = obs.landmarks[known, :2]  # (k, 2)
            d_obs = np.hypot(o[:, 0], o[:, 1])
            b_obs = np.arctan2(o[:, 1], o[:, 0])
            dx = f[None, :, 0] - poses[:, None, 0]
            dy = f[None, :, 1] - poses[:, None, 1]
            d_pred = np.hypot(dx, dy)
            b_pred = np.arctan2(dy, dx) - poses[:, None, 2]
            sd = pr.sigma_distance + pr.sigma_distance_rel * d_obs
            e2 = ((d_pred - d_obs) / sd) ** 2 + (_wrap(b_pred - b_obs) / pr.sigma_bearing) ** 2
            total += np.log(np.exp(-0.5 * e2) + pr.outlier).sum(axis=1)
            count += len(known)
        if self._dmap is not None and len(obs.lines):
            pts = self._line_points(obs)
            if len(pts):
                # Line points are many and correlated: they count as a third of an observation each.
                total += self._line_log_likelihoods(poses, c, s, pts).sum(axis=1) / 3.0
                count += max(1, len(pts) // 3)
        if count:
            margin = self.field.border
            off = np.maximum(np.abs(poses[:, 0]) - self.field.half_length - margin, 0.0) + np.maximum(
                np.abs(poses[:, 1]) - self.field.half_width - margin, 0.0
            )
            total -= 50.0 * off * count
        return total, count

    def _line_points(self, obs: LevelObservations) -> np.ndarray:
        """Ground points (m, level frame) sampled along the seen lines."""
        pr = self.p
        a, b = obs.lines[:, 0, :2], obs.lines[:, 1, :2]
        length = np.hypot(*(b - a).T)
        # about every 0.5 m (a length that is not finite: one piece, as np.clip made of it)
        k = [min(max(math.ceil(v / 0.5), 1), 6) if math.isfinite(v) else 1 for v in length.tolist()]
        # k + 1 points from end to end of each line (np.linspace(0, 1, k + 1)'s fractions), all lines at once
        t = np.concatenate([_FRACTIONS[n] for n in k])
        line = np.repeat(np.arange(len(a)), [n + 1 for n in k])
        start = a[line]
        pts = (start + (b[line] - start) * t[:, None]).reshape(-1, 2)
        pts = pts[np.hypot(pts[:, 0], pts[:, 1]) < pr.max_line_range]
        if len(pts) > pr.max_line_points:
            pts = pts[_spread(len(pts), pr.max_line_points)]
        return pts

    def candidates(self, obs: LevelObservations, heading_hint: float | None = None) -> np.ndarray:
        """Poses (k, 3) that fit the seen landmarks exactly; empty without landmarks.

        Two or more landmarks: the weighted rigid fit (one pose). One landmark: the
        position that fits it for each heading of a 5-degree grid plus ``heading_hint``
        (the likelihood, with the lines, picks among them).
        """
        known = [i for i, n in enumerate(obs.landmark_names) if n in self.field.landmarks]
        if not known:
            return np.zeros((0, 3))
        f = self.field.landmark_array([obs.landmark_names[i] for i in known])[:, :2]
        o = obs.landmarks[known, :2]
        if len(known) >= 2 and (f.max(axis=0) - f.min(axis=0)).max() > 0.5:  # np.ptp, without its overhead
            w = 1.0 / (self.p.sigma_distance + self.p.sigma_distance_rel * np.hypot(o[:, 0], o[:, 1])) ** 2
            w = w / w.sum()
            fc, oc = w @ f, w @ o
            h = ((o - oc) * w[:, None]).T @ (f - fc)  # 2x2 cross-covariance
            yaws = np.array([math.atan2(h[0, 1] - h[1, 0], h[0, 0] + h[1, 1])])
        else:
            fc, oc = f[0], o[0]
            yaws = _HEADINGS if heading_hint is None else np.append(_HEADINGS, heading_hint)
        c, s = np.cos(yaws), np.sin(yaws)
        x = fc[0] - (c * oc[0] - s * oc[1])
        y = fc[1] - (s * oc[0] + c * oc[1])
        return np.stack([x, y, yaws], axis=1)

    def update(self, obs: LevelObservations, heading_hint: float | None = None) -> None:
        """Reweight by one ``See``, resample when needed, inject particles around the candidate."""
        pr = self.p
        if pr.exact_fit and self._take_exact_fit(obs):
            return
        if self.resting:
            self._wake()
        self._move_particles()
        before, self._estimate = self._estimate, None
        score_before = self.last_score
        n = len(self.particles)
        cands = self.candidates(obs, heading_hint)
        poses = np.vstack([self.particles, cands]) if len(cands) else self.particles
        ll, count = self._log_likelihood(poses, obs)
        if count == 0:
            return
        ll_particles = ll[:n]
        logw = np.log(self.weights + 1e-300) + ll_particles
        logw -= logw.max()
        w = np.exp(logw)
        self.weights = w / w.sum()
        best = float(ll_particles.max()) / count
        self.last_score = best
        self._ref = self.particles[int(np.argmax(self.weights))].copy()
        inject, cand, kidnapped = 0.0, None, False
        if len(cands):
            # One landmark fits any heading of the grid equally: while the last See was explained well, the
            # candidate at the gyro's heading (the hint, last) is the one; any other is a wrong place.
            hinted = len(cands) > 1 and heading_hint is not None and score_before >= pr.confident_score
            j = len(cands) - 1 if hinted else int(np.argmax(ll[n:]))
            cand, cand_score = cands[j], float(ll[n + j]) / count
            inject = pr.inject_always
            if cand_score > best + pr.kidnap_margin:
                inject = pr.inject_kidnap
                kidnapped = True
                self.kidnaps += 1
                self._ref = cand.copy()
                self.last_score = cand_score
        n_eff = 1.0 / float(np.sum(self.weights**2))
        target = pr.particles if kidnapped else self._particle_count(before)
        if n_eff < n / 2 or inject > 0 or target != n:
            self._resample(cand, inject, target)

    def _take_exact_fit(self, obs: LevelObservations) -> bool:
        """Fuse the rigid fit of two or more landmarks into the estimate; False when there is no good fit."""
        pr = self.p
        fit = self._exact_fit(obs)
        if fit is None:
            return False
        z, score = fit
        if not score >= pr.exact_fit_score or not math.isfinite(float(z.sum())):  # NaN-safe
            return False  # something seen does not fit (a wrong name, a bad camera pose): the particles judge
        r = (pr.exact_sigma_xy**2, pr.exact_sigma_xy**2, pr.exact_sigma_yaw**2)
        innov = None
        if self._estimate is not None and self.resting:
            innov = z - self._estimate[0]
            innov[2] = _wrap_f(innov[2])
        cov = None if innov is None else self._estimate[1]
        expected = innov is not None and all(abs(innov[i]) <= 2.0 * math.sqrt(cov[i, i] + r[i]) for i in range(3))
        if not expected and not self._lines_agree(obs, z):
            # A surprising fit (the first after the particles, or far from the estimate) whose landmarks agree among
            # themselves but not with the lines: a camera pose off by a degree or two shifts every landmark alike.
            # The particles, which weigh both, judge.
            return False
        if innov is None:
            self._estimate = (z.copy(), np.diag(r), 1.0)
        elif any(abs(innov[i]) > pr.exact_fit_gate * math.sqrt(cov[i, i] + r[i]) for i in range(3)):
            self.kidnaps += 1  # moved by the referee or the trainer, or fallen: the fit as it is
            self._estimate = (z.copy(), np.diag(r), 1.0)
        else:
            pose = self._estimate[0]
            for i in range(3):  # a Kalman update axis by axis (the fit measures each; cov stays diagonal)
                gain = cov[i, i] / (cov[i, i] + r[i])
                pose[i] += gain * innov[i]
                cov[i, i] = max(cov[i, i] * (1.0 - gain), 1e-8)
            pose[2] = _wrap_f(pose[2])
        pose = self._estimate[0]
        self._ref = pose.copy()
        self.last_score = score
        self.resting = True
        self.fits += 1
        return True

    def _lines_agree(self, obs: LevelObservations, pose: np.ndarray) -> bool:
        """Whether the seen field lines' points lie on the map's lines from ``pose`` (mean log-likelihood at
        least ``fit_line_score``, as :meth:`_log_likelihood` scores them); True without lines."""
        if self._dmap is None or not len(obs.lines):
            return True
        pts = self._line_points(obs)
        if not len(pts):
            return True
        poses = pose[None, :]
        ll = self._line_log_likelihoods(poses, np.cos(poses[:, 2]), np.sin(poses[:, 2]), pts)
        return float(ll.mean()) >= self.p.fit_line_score

    def _line_log_likelihoods(self, poses: np.ndarray, c: np.ndarray, s: np.ndarray, pts: np.ndarray) -> np.ndarray:
        """Log-likelihood (n, k) of each seen line point (k, 2; level frame) from each pose (n, 3; ``c``, ``s``: the
        cosines and sines of their headings): its distance to the nearest field line, read from the distance map."""
        pr = self.p
        grid, x0, y0 = self._dmap
        gx = poses[:, None, 0] + c[:, None] * pts[None, :, 0] - s[:, None] * pts[None, :, 1]
        gy = poses[:, None, 1] + s[:, None] * pts[None, :, 0] + c[:, None] * pts[None, :, 1]
        # the cell of each point, clamped to the map (np.minimum/np.maximum: np.clip's own overhead was
        # a tenth of the particles' likelihood), read from the flat map
        ix = ((gx - x0) * 20.0).astype(np.int32)
        np.minimum(np.maximum(ix, 0, out=ix), grid.shape[0] - 1, out=ix)
        iy = ((gy - y0) * 20.0).astype(np.int32)
        np.minimum(np.maximum(iy, 0, out=iy), grid.shape[1] - 1, out=iy)
        ix *= grid.shape[1]
        ix += iy
        dist = grid.ravel().take(ix)
        sl = pr.sigma_line + pr.sigma_line_rel * np.hypot(pts[:, 0], pts[:, 1])
        return np.log(np.exp(-0.5 * (dist / sl) ** 2) + pr.outlier)

    def _exact_fit(self, obs: LevelObservations) -> tuple[np.ndarray, float] | None:
        """The weighted rigid fit of the seen landmarks and its per-observation log-likelihood, as
        :meth:`candidates` and :meth:`_log_likelihood` compute them, on plain floats (a See has a few
        landmarks: numpy's per-call cost was most of the work); None without two landmarks apart."""
        pr, marks = self.p, self.field.landmarks
        seen = [(marks[n], o) for n, o in zip(obs.landmark_names, obs.landmarks.tolist(), strict=True) if n in marks]
        if len(seen) < 2:
            return None
        fx = [float(f[0]) for f, _ in seen]
        fy = [float(f[1]) for f, _ in seen]
        if max(max(fx) - min(fx), max(fy) - min(fy)) <= 0.5:
            return None  # the landmarks lie too close together for a heading
        ox = [o[0] for _, o in seen]
        oy = [o[1] for _, o in seen]
        d_obs = [math.hypot(x, y) for x, y in zip(ox, oy, strict=True)]
        sd = [pr.sigma_distance + pr.sigma_distance_rel * d for d in d_obs]
        w = [1.0 / (v * v) for v in sd]
        total = sum(w)
        w = [v / total for v in w]
        fcx, fcy = sum(a * b for a, b in zip(w, fx, strict=True)), sum(a * b for a, b in zip(w, fy, strict=True))
        ocx, ocy = sum(a * b for a, b in zip(w, ox, strict=True)), sum(a * b for a, b in zip(w, oy, strict=True))
        h00 = h01 = h10 = h11 = 0.0
        for wi, a, b, c, d in zip(w, ox, oy, fx, fy, strict=True):
            a, b, c, d = wi * (a - ocx), wi * (b - ocy), c - fcx, d - fcy
            h00, h01, h10, h11 = h00 + a * c, h01 + a * d, h10 + b * c, h11 + b * d
        yaw = math.atan2(h01 - h10, h00 + h11)
        c, s = math.cos(yaw), math.sin(yaw)
        x, y = fcx - (c * ocx - s * ocy), fcy - (s * ocx + c * ocy)
        ll = 0.0
        for a, b, dist, sdi, ox_i, oy_i in zip(fx, fy, d_obs, sd, ox, oy, strict=True):
            dx, dy = a - x, b - y
            e_d = (math.hypot(dx, dy) - dist) / sdi
            e_b = _wrap_f(math.atan2(dy, dx) - yaw - math.atan2(oy_i, ox_i)) / pr.sigma_bearing
            ll += math.log(math.exp(-0.5 * (e_d * e_d + e_b * e_b)) + pr.outlier)
        f = self.field
        off = max(abs(x) - f.half_length - f.border, 0.0) + max(abs(y) - f.half_width - f.border, 0.0)
        k = len(seen)
        return np.array([x, y, yaw]), (ll - 50.0 * off * k) / k

    def _wake(self) -> None:
        """Put the resting particles back around the estimate, as wide as its covariance."""
        pose, cov, _ = self._estimate if self._estimate is not None else (self._ref, np.diag([0.01] * 3), 1.0)
        n = self._particle_count(self._estimate)
        sxy = max(math.sqrt(max(cov[0, 0] + cov[1, 1], 0.0)), 0.05)
        self.particles = self._around(pose, n, sxy, max(math.sqrt(max(cov[2, 2], 0.0)), 0.03))
        self.weights = np.full(n, 1.0 / n)
        self.resting = False
        self._drop_motion()

    def _particle_count(self, estimate: tuple[np.ndarray, np.ndarray, float] | None) -> int:
        """Fewer particles while the estimate (before this update) was tight and fits well, all otherwise."""
        pr = self.p
        if estimate is None or self.last_score < pr.confident_score:
            return pr.particles
        _, cov, share = estimate
        tight = cov[0, 0] + cov[1, 1] < pr.confident_spread**2 and share > 0.8
        return pr.particles_confident if tight else pr.particles

    def _resample(self, cand: np.ndarray | None, inject: float, n: int) -> None:
        m = round(inject * n) if cand is not None else 0
        keep = n - m
        # low-variance (systematic) resampling
        positions = (self.rng.random() + np.arange(keep)) / keep
        idx = np.searchsorted(np.cumsum(self.weights), positions)
        idx = np.minimum(idx, len(self.particles) - 1)
        new = self.particles[idx]
        new[:, 2] = _wrap(new[:, 2])
        if m:
            new = np.vstack([new, self._around(cand, m, 0.15, 0.08)])
        self.particles = new
        self.weights = np.full(n, 1.0 / n)
        self._estimate = None

    # -- estimate -------------------------------------------------------------------

    def estimate(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(pose (3,), covariance (3, 3), weight share of the main cluster)``.

        The pose is the weighted mean of the particles near the heaviest one (so a
        second cluster after an injection does not pull the estimate between them).
        Between updates it is the last one moved by the odometry (see :meth:`predict`).
        """
        if self._estimate is not None:
            pose, cov, share = self._estimate
            return pose.copy(), cov.copy(), share
        self._move_particles()
        p, w = self.particles, self.weights
        ref = self._ref
        near = (np.hypot(p[:, 0] - ref[0], p[:, 1] - ref[1]) < 0.6) & (np.abs(_wrap(p[:, 2] - ref[2])) < 0.4)
        if not near.any():
            near = np.ones(len(p), dtype=bool)
        wn = w[near]
        share = float(wn.sum())
        wn = wn / share
        q = p[near]
        mx, my = wn @ q[:, 0], wn @ q[:, 1]
        yaw = math.atan2(wn @ np.sin(q[:, 2]), wn @ np.cos(q[:, 2]))
        d = np.stack([q[:, 0] - mx, q[:, 1] - my, _wrap(q[:, 2] - yaw)], axis=1)
        cov = (d * wn[:, None]).T @ d + np.diag([1e-4, 1e-4, 1e-4])
        self._ref = np.array([mx, my, yaw])
        self._estimate = (np.array([mx, my, yaw]), cov, share)
        return np.array([mx, my, yaw]), cov.copy(), share
