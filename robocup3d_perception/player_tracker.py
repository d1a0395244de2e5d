"""Tracking other robots: one constant-velocity Kalman filter per (team, number).

A sighting is the mean of the robot's seen body parts projected on the ground
(absolute frame, placed with our own pose); a teammate's report of its own position
is a measurement of its track too. Velocities decay (robots stop; 2 /s by default).
A track not updated for ``forget_after`` seconds is dropped. Our own arms and feet,
which SimSpark reports as a player with our team and number, are filtered out by the
caller.

REQUIRES: players in the level frame, RobotPose, TeammateReport. PROVIDES: PlayerEstimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from robocup3d_perception.ball_tracker import kalman_update, rolling_transition
from robocup3d_perception.representations import PlayerEstimate, frozen_array

__all__ = ['PlayerTracker', 'PlayerTrackerParameters']


@dataclass(frozen=True, slots=True)
class PlayerTrackerParameters:
    """Tuning of :class:`PlayerTracker`."""

    velocity_decay: float = 2.0  # 1/s
    sigma_accel: float = 1.0  # m/s^2
    sigma_position: float = 0.08  # m at 0 m (parts are spread over the body)
    sigma_position_rel: float = 0.02  # per metre
    sigma_report: float = 0.2  # m
    gate: float = 25.0  # squared Mahalanobis distance that resets a track
    forget_after: float = 5.0  # s


@lru_cache(maxsize=256)
def _motion(dt: float, decay: float, sigma_accel: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The transition ``F``, its transpose and the process noise over ``dt`` s (read-only; every track predicts
    over the same few ``dt`` each cycle, so they are made once)."""
    f, _, _ = rolling_transition(dt, decay)
    q = sigma_accel**2 * dt
    noise = np.diag([q * dt * dt / 3, q * dt * dt / 3, q, q])
    ft = f.T.copy()
    for a in (f, ft, noise):
        a.setflags(write=False)
    return f, ft, noise


class _Track:
    __slots__ = ('cov', 'fallen', 'intent', 'time', 'updated', 'x')

    def __init__(self, time: float, xy: np.ndarray, sigma: float) -> None:
        self.x = np.array([xy[0], xy[1], 0.0, 0.0])
        self.cov = np.diag([sigma**2, sigma**2, 0.25, 0.25])
        self.time = time
        self.updated = time
        self.fallen, self.intent = False, 'none'  # as the robot last said (teammates)


class PlayerTracker:
    """All other robots we have seen or heard of."""

    requires = ('LevelObservations', 'RobotPose', 'TeammateReport')
    provides = ('PlayerEstimate',)

    def __init__(self, params: PlayerTrackerParameters | None = None) -> None:
        self.p = params or PlayerTrackerParameters()
        self.tracks: dict[tuple[str | None, int | None], _Track] = {}

    def _predict(self, t: _Track, time: float) -> None:
        dt = time - t.time
        if dt <= 0:
            return
        f, ft, noise = _motion(dt, self.p.velocity_decay, self.p.sigma_accel)
        t.x = f @ t.x
        t.cov = f @ t.cov @ ft + noise
        t.time = time

    def observe(self, time: float, key: tuple[str | None, int | None], xy: np.ndarray, sigma: float) -> None:
        """Fuse one position (m, absolute) of robot ``key`` = (team, number)."""
        t = self.tracks.get(key)
        if t is None:
            self.tracks[key] = _Track(time, xy, sigma)
            return
        self._predict(t, time)
        x, p, d2 = kalman_update(t.x, t.cov, np.asarray(xy[:2], dtype=float), np.eye(2) * sigma**2)
        if d2 > self.p.gate:
            self.tracks[key] = _Track(time, xy, sigma)
            return
        t.x, t.cov, t.updated = x, p, time

    def observe_relative(
        self,
        time: float,
        key: tuple[str | None, int | None],
        pose: tuple[float, float, float],
        level: np.ndarray,
        pose_sigma: float,
    ) -> None:
        """A sighting in the level frame, placed with the robot pose ``(x, y, yaw)``."""
        x, y, yaw = pose
        c, s = math.cos(yaw), math.sin(yaw)
        xy = np.array([x + c * level[0] - s * level[1], y + s * level[0] + c * level[1]])
        dist = math.hypot(level[0], level[1])
        sigma = math.hypot(self.p.sigma_position + self.p.sigma_position_rel * dist, pose_sigma)
        self.observe(time, key, xy, sigma)

    def observe_report(
        self,
        time: float,
        key: tuple[str | None, int | None],
        xy: tuple[float, float],
        fallen: bool = False,
        intent: str = 'none',
    ) -> None:
        """A teammate's report of its own position, and whether it is down and what it is doing."""
        self.observe(time, key, np.asarray(xy, dtype=float), self.p.sigma_report)
        track = self.tracks[key]
        track.fallen, track.intent = fallen, intent

    def estimates(self, time: float, own_team: str | None) -> tuple[PlayerEstimate, ...]:
        """All live tracks predicted to ``time``; forgets old ones."""
        for key in [k for k, t in self.tracks.items() if time - t.updated > self.p.forget_after]:
            del self.tracks[key]
        out = []
        for (team, unum), t in sorted(self.tracks.items(), key=lambda kv: (str(kv[0][0]), kv[0][1] or 0)):
            self._predict(t, time)
            x = frozen_array(t.x)  # one read-only copy; position and velocity are views of it
            out.append(
                PlayerEstimate(
                    team=team,
                    unum=unum,
                    teammate=own_team is not None and team == own_team,
                    position=x[:2],
                    velocity=x[2:],
                    covariance=frozen_array(t.cov),
                    last_update=t.updated,
                    fallen=t.fallen,
                    intent=t.intent,
                )
            )
        return tuple(out)
