"""The world model of one player (pure Python, no rclpy): where am I, the ball, the others.

Modules run in a fixed order each cycle (``MODULE_ORDER``, checked by a test):

1. ``OrientationFilter``: tilt and yaw change from gyro and accelerometer.
2. ``CameraModel``: the ``See`` in the level frame (neck forward kinematics + tilt).
3. ``SelfLocator``: particle filter predict (odometry, yaw change) and, on a ``See``,
   update, resampling and injection.
4. ``BallTracker``: Kalman filter fed by the ball sighting and teammates' reports.
5. ``PlayerTracker``: one Kalman filter per other robot.

While the body turns fast (falling, being knocked over) the vision is not used: the
tilt estimate lags and would place everything wrongly; the particles diffuse more.

Everything is estimated in the absolute (server) frame; ``WorldState.side`` says
which way we attack (conversions turn it into the published ``field`` frame).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robocup3d_motion.body import Body
from robocup3d_perception.ball_tracker import BallTracker, BallTrackerParameters
from robocup3d_perception.field import FieldModel
from robocup3d_perception.orientation import OrientationFilter
from robocup3d_perception.particle_filter import LocatorParameters, SelfLocator
from robocup3d_perception.player_tracker import PlayerTracker, PlayerTrackerParameters
from robocup3d_perception.representations import CycleInput, LevelObservations, RobotPose, WorldState, frozen_array
from robocup3d_perception.vision_geometry import CameraModel

__all__ = ['MODULE_ORDER', 'WorldModel', 'WorldModelParameters', 'module_order']


@dataclass(frozen=True, slots=True)
class WorldModelParameters:
    """Tuning of the world model as a whole."""

    max_rate_for_vision: float = 1.0  # rad/s; above it a See is not used
    fallen_upright: float = 0.5  # cos of the torso tilt below which we count as fallen
    confidence_spread: float = 0.3  # m; position spread at which confidence drops to 1/e
    confidence_memory: float = 10.0  # s without landmarks for confidence to drop to 1/e
    seed: int | None = 0


def module_order(modules: list[type]) -> list[str]:
    """Topological order of modules by their ``requires``/``provides`` (B-Human style).

    Inputs nobody provides are external (from the cycle input). Raises ``ValueError``
    on a cycle or a representation provided twice.
    """
    provider: dict[str, str] = {}
    for m in modules:
        for rep in m.provides:
            if rep in provider:
                raise ValueError(f'{rep} is provided by both {provider[rep]} and {m.__name__}')
            provider[rep] = m.__name__
    deps = {m.__name__: {provider[r] for r in m.requires if r in provider} - {m.__name__} for m in modules}
    order: list[str] = []
    while deps:
        ready = sorted(n for n, d in deps.items() if not d - set(order))
        if not ready:
            raise ValueError(f'cyclic module dependencies among {sorted(deps)}')
        order += ready
        for n in ready:
            del deps[n]
    return order


MODULE_ORDER = (OrientationFilter, CameraModel, SelfLocator, BallTracker, PlayerTracker)


class WorldModel:
    """One player's world model.

    Args:
        body: kinematic model of our robot (for the camera pose).
        fld: field model of the server.
        use_lines: score field lines (SimSpark).
    """

    def __init__(
        self,
        body: Body,
        fld: FieldModel,
        use_lines: bool = True,
        params: WorldModelParameters | None = None,
        locator: LocatorParameters | None = None,
        ball: BallTrackerParameters | None = None,
        players: PlayerTrackerParameters | None = None,
    ) -> None:
        self.p = params or WorldModelParameters()
        self.field = fld
        self.orientation = OrientationFilter()
        self.camera = CameraModel(body)
        self.locator = SelfLocator(fld, locator, seed=self.p.seed, use_lines=use_lines)
        self.ball = BallTracker(ball)
        self.players = PlayerTracker(players)
        self.time: float | None = None
        self.torso_z = 0.0
        self.last_landmarks: float | None = None  # s, last See with a known landmark
        self.last_level: LevelObservations | None = None

    def update(self, inp: CycleInput) -> WorldState:
        """Run all modules on one cycle's input; return the new world state."""
        dt = 0.0 if self.time is None else max(0.0, inp.time - self.time)
        self.time = inp.time
        od = inp.odometry
        walking = od is not None and (od.dx != 0.0 or od.dy != 0.0 or od.dyaw != 0.0)
        yaw_delta = self.orientation.update(inp.gyro, inp.accel, dt, walking)
        rate = self.orientation.rate
        moving_fast = rate > self.p.max_rate_for_vision
        if dt > 0:
            self.locator.predict(yaw_delta, inp.odometry, noise_scale=3.0 if moving_fast else 1.0)
        pose, cov, share = self.locator.estimate()
        if inp.vision is not None and not moving_fast:
            level = self.camera.to_level(inp.vision, inp.joints, self.orientation.tilt)
            self.last_level = level
            self.locator.update(level, heading_hint=float(pose[2]))
            pose, cov, share = self.locator.estimate()
            self._update_height(level)
            pos_sigma = math.sqrt(max(cov[0, 0] + cov[1, 1], 0.0))
            yaw_sigma = math.sqrt(max(cov[2, 2], 0.0))
            if level.ball is not None:
                d = math.hypot(level.ball[0], level.ball[1])
                self.ball.observe_relative(
                    inp.time,
                    (pose[0], pose[1], self.torso_z, pose[2]),
                    level.ball,
                    math.hypot(pos_sigma, d * yaw_sigma),
                )
            for team, unum, xyz in level.players:
                if team == inp.team and unum == inp.unum:
                    continue  # our own arms and feet (SimSpark)
                d = math.hypot(xyz[0], xyz[1])
                self.players.observe_relative(
                    inp.time, (team, unum), (pose[0], pose[1], pose[2]), xyz, math.hypot(pos_sigma, d * yaw_sigma)
                )
        for r in inp.reports:
            if r.unum == inp.unum:
                continue
            if r.ball is not None:
                seen = r.time if r.ball_time is None else r.ball_time
                self.ball.observe_report(inp.time, r.ball, max(0.0, inp.time - seen))
            if r.position is not None:
                self.players.observe_report(r.time, (inp.team, r.unum), r.position)
        self.ball.predict(inp.time)
        return WorldState(
            time=inp.time,
            side=inp.side,
            pose=self._pose(inp.time, pose, cov, share),
            ball=self.ball.model(inp.time),
            players=self.players.estimates(inp.time, inp.team),
        )

    def _update_height(self, level: LevelObservations) -> None:
        known = [i for i, n in enumerate(level.landmark_names) if n in self.field.landmarks]
        if not known:
            return
        f = self.field.landmark_array([level.landmark_names[i] for i in known])
        z = float(np.mean(f[:, 2] - level.landmarks[known, 2]))
        self.torso_z = z if self.last_landmarks is None else 0.7 * self.torso_z + 0.3 * z
        self.last_landmarks = self.time

    def _pose(self, time: float, pose: np.ndarray, cov: np.ndarray, share: float) -> RobotPose:
        o = self.orientation
        spread = math.sqrt(max(cov[0, 0] + cov[1, 1], 0.0))
        conf = share * math.exp(-spread / self.p.confidence_spread)
        if self.locator.last_score < -3.0:
            conf *= 0.5
        if self.last_landmarks is None:
            conf = 0.0
        else:
            conf *= math.exp(-(time - self.last_landmarks) / self.p.confidence_memory)
        cam_yaw = self.last_level.camera_yaw if self.last_level is not None else 0.0  # as of the last See
        return RobotPose(
            time=time,
            x=float(pose[0]),
            y=float(pose[1]),
            z=self.torso_z,
            yaw=float(pose[2]),
            roll=o.roll,
            pitch=o.pitch,
            camera_yaw=_wrap(float(pose[2]) + cam_yaw),
            covariance=frozen_array(cov),
            confidence=float(min(1.0, max(0.0, conf))),
            fallen=o.upright < self.p.fallen_upright,
        )


def _wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi
