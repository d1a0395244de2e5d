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
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robocup3d_perception.ball_tracker import PerAxisState, block_covariance
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


class _Track(PerAxisState):
    """One robot's filter on plain floats: the state (x, y, vx, vy) and the per-axis covariance block
    ``[[cp, cpv], [cpv, cv]]`` over (position, velocity), the same for x and y (see :class:`PlayerTracker`)."""

    __slots__ = ('cp', 'cpv', 'cv', 'fallen', 'intent', 'px', 'py', 'time', 'updated', 'vx', 'vy')

    def __init__(self, time: float, xy: Sequence[float] | np.ndarray, sigma: float) -> None:
        self.px, self.py, self.vx, self.vy = float(xy[0]), float(xy[1]), 0.0, 0.0
        self.cp, self.cpv, self.cv = sigma * sigma, 0.0, 0.25
        self.time = time
        self.updated = time
        self.fallen, self.intent = False, 'none'  # as the robot last said (teammates)


class PlayerTracker:
    """All other robots we have seen or heard of.

    Each track is a constant-velocity Kalman filter over (x, y, vx, vy) whose velocity decays (the ball's
    rolling model with ``velocity_decay``), on plain floats as :class:`~robocup3d_perception.ball_tracker.
    BallTracker` is: a track starts with the same variance along x and y, sightings and reports are as
    precise along x as along y, the process noise is the same per axis and the model moves each axis alone,
    so the 4x4 covariance is one 2x2 block per axis, the same for both. ``test_player_tracker_floats`` holds
    the tracker to the 4x4 filter (:func:`rolling_transition`, :func:`kalman_update`).
    """

    requires = ('LevelObservations', 'RobotPose', 'TeammateReport')
    provides = ('PlayerEstimate',)

    def __init__(self, params: PlayerTrackerParameters | None = None) -> None:
        self.p = params or PlayerTrackerParameters()
        self.tracks: dict[tuple[str | None, int | None], _Track] = {}

    def _predict(self, t: _Track, time: float) -> None:
        dt = time - t.time
        if dt <= 0:
            return
        k = self.p.velocity_decay
        e = math.exp(-k * dt)
        al = (1.0 - e) / k if k > 0 else dt
        a, b, c = t.cp, t.cpv, t.cv
        q = self.p.sigma_accel**2 * dt
        t.px += al * t.vx
        t.py += al * t.vy
        t.vx *= e
        t.vy *= e
        t.cp = a + 2.0 * al * b + al * al * c + q * dt * dt / 3
        t.cpv = e * (b + al * c)
        t.cv = e * e * c + q
        t.time = time

    def observe(
        self, time: float, key: tuple[str | None, int | None], xy: Sequence[float] | np.ndarray, sigma: float
    ) -> None:
        """Fuse one position (m, absolute) of robot ``key`` = (team, number)."""
        t = self.tracks.get(key)
        if t is None:
            self.tracks[key] = _Track(time, xy, sigma)
            return
        self._predict(t, time)
        if not t.fuse(float(xy[0]), float(xy[1]), sigma, self.p.gate):
            self.tracks[key] = _Track(time, xy, sigma)
            return
        t.updated = time

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
        lx, ly = float(level[0]), float(level[1])
        xy = (x + c * lx - s * ly, y + s * lx + c * ly)
        dist = math.hypot(lx, ly)
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
        self.observe(time, key, (float(xy[0]), float(xy[1])), self.p.sigma_report)
        track = self.tracks[key]
        track.fallen, track.intent = fallen, intent

    def estimates(self, time: float, own_team: str | None) -> tuple[PlayerEstimate, ...]:
        """All live tracks predicted to ``time``; forgets old ones."""
        self.advance(time)
        return self.snapshot(own_team)

    def advance(self, time: float) -> None:
        """Forget the tracks not updated for ``forget_after`` s and predict the others to ``time``."""
        for key in [k for k, t in self.tracks.items() if time - t.updated > self.p.forget_after]:
            del self.tracks[key]
        for t in self.tracks.values():
            self._predict(t, time)

    def snapshot(self, own_team: str | None) -> tuple[PlayerEstimate, ...]:
        """The tracks as they stand (as of the last :meth:`advance`, or an observation since)."""
        out = []
        for (team, unum), t in sorted(self.tracks.items(), key=lambda kv: (str(kv[0][0]), kv[0][1] or 0)):
            x = frozen_array([t.px, t.py, t.vx, t.vy])  # one read-only array; position and velocity are views of it
            out.append(
                PlayerEstimate(
                    team=team,
                    unum=unum,
                    teammate=own_team is not None and team == own_team,
                    position=x[:2],
                    velocity=x[2:],
                    covariance=frozen_array(block_covariance(t.cp, t.cpv, t.cv)),
                    last_update=t.updated,
                    fallen=t.fallen,
                    intent=t.intent,
                )
            )
        return tuple(out)
