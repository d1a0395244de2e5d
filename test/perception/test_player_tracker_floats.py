"""The player tracker on floats is the general 4x4 Kalman filter of each robot.

The reference below is the tracker as it was written with numpy over each track's whole state (the
velocity-decay model's ``F``, its process noise, :func:`kalman_update` and its gate); both are driven by
the same random mix of sightings near and far (resets), teammates' reports, estimates at odd times and
tracks forgotten, and must agree on every estimate.
"""

from __future__ import annotations

import numpy as np
import pytest

from robocup3d_perception.ball_tracker import kalman_update, rolling_transition
from robocup3d_perception.player_tracker import PlayerTracker, PlayerTrackerParameters


class _Reference:
    """The tracker with one numpy filter per robot: state (4,), covariance (4, 4)."""

    def __init__(self, p: PlayerTrackerParameters) -> None:
        self.p = p
        self.tracks: dict[tuple, list] = {}  # key: [x, cov, time, updated]

    def _predict(self, t: list, time: float) -> None:
        dt = time - t[2]
        if dt <= 0:
            return
        f, _, _ = rolling_transition(dt, self.p.velocity_decay)
        q = self.p.sigma_accel**2 * dt
        t[0] = f @ t[0]
        t[1] = f @ t[1] @ f.T + np.diag([q * dt * dt / 3, q * dt * dt / 3, q, q])
        t[2] = time

    def observe(self, time: float, key: tuple, xy: np.ndarray, sigma: float) -> bool:
        """Fuse a position; True when an existing track was started again (beyond the gate)."""
        t = self.tracks.get(key)
        if t is not None:
            self._predict(t, time)
            x, p, d2 = kalman_update(t[0], t[1], np.asarray(xy[:2], dtype=float), np.eye(2) * sigma**2)
            if d2 <= self.p.gate:
                t[0], t[1], t[3] = x, p, time
                return False
        self.tracks[key] = [np.array([xy[0], xy[1], 0.0, 0.0]), np.diag([sigma**2, sigma**2, 0.25, 0.25]), time, time]
        return t is not None

    def estimates(self, time: float) -> list[tuple]:
        for key in [k for k, t in self.tracks.items() if time - t[3] > self.p.forget_after]:
            del self.tracks[key]
        out = []
        for key, t in sorted(self.tracks.items(), key=lambda kv: (str(kv[0][0]), kv[0][1] or 0)):
            self._predict(t, time)
            out.append((key, t[0].copy(), t[1].copy(), t[3]))
        return out


@pytest.mark.parametrize('seed', [1, 2, 3])
def test_the_float_tracker_is_the_full_kalman_filter(seed: int) -> None:
    rng = np.random.default_rng(seed)
    params = PlayerTrackerParameters()
    fast, ref = PlayerTracker(params), _Reference(params)
    robots = {('Us', u): rng.uniform(-8, 8, 2) for u in range(2, 7)}
    robots |= {('Them', u): rng.uniform(-8, 8, 2) for u in (1, 4, 9)}
    keys = sorted(robots)
    t, resets, forgotten = 0.0, 0, 0
    for step in range(800):
        t += float(rng.choice([0.02, 0.04, 0.06, 0.0, 0.2, 1.5]))
        for k in keys:
            robots[k] = robots[k] + rng.normal(0, 0.03, 2)
        key = keys[int(rng.integers(len(keys)))]
        kind = rng.random()
        if kind < 0.04:
            robots[key] = rng.uniform(-8, 8, 2)  # moved by the referee: both must start the track again
        if kind < 0.6:
            z = robots[key] + rng.normal(0, 0.05, 2)
            sigma = float(rng.uniform(0.05, 0.6))
            fast.observe(t, key, z, sigma)
            resets += ref.observe(t, key, z, sigma)
        elif kind < 0.8:
            z = robots[key] + rng.normal(0, 0.15, 2)
            fast.observe_report(t, key, (float(z[0]), float(z[1])), fallen=bool(kind < 0.65), intent='none')
            resets += ref.observe(t, key, z, params.sigma_report)
        else:
            before = len(ref.tracks)
            got, want = fast.estimates(t, 'Us'), ref.estimates(t)
            forgotten += before - len(want)
            assert [(e.team, e.unum) for e in got] == [k for k, *_ in want], step
            for e, (_, x, cov, updated) in zip(got, want, strict=True):
                assert e.last_update == updated, step
                np.testing.assert_allclose(np.concatenate([e.position, e.velocity]), x, rtol=0, atol=1e-9)
                np.testing.assert_allclose(e.covariance, cov, rtol=1e-9, atol=1e-12)
                assert e.teammate == (e.team == 'Us')
    assert resets > 10 and forgotten > 0  # both paths were taken
