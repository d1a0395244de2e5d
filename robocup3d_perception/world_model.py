"""The world model of one player (pure Python, no rclpy): where am I, the ball, the others.

Modules run in a fixed order each cycle (``MODULE_ORDER``, checked by a test):

1. ``OrientationFilter``: tilt and yaw change from gyro and accelerometer.
2. ``CameraModel``: the ``See`` in the level frame (neck forward kinematics + tilt); where vision is exact
   (RCSSServerMJ), the tilt checked against the landmarks' heights and the ``See`` turned back by its error
   (:mod:`robocup3d_perception.tilt_fix`).
3. ``SelfLocator``: particle filter predict (odometry, yaw change) and, on a ``See``,
   update, resampling and injection.
4. ``BallTracker``: Kalman filter fed by the ball sighting and teammates' reports.
5. ``PlayerTracker``: one Kalman filter per other robot.

While the body turns fast (falling, being knocked over) the vision is not used where it is noisy
(rcssserver3d): the tilt estimate lags and would place everything wrongly; the particles diffuse more.
Where it is exact (RCSSServerMJ) each ``See`` is turned back by the tilt error its landmarks show, and is
always used.

Inputs may come late: in the node, a ``See`` can reach the world model a few IMU
cycles after its own time (on a busy machine). Time never goes back; a late ``See`` is
projected with the tilt and neck angles of its own cycle (kept for ``HISTORY_S``), then
moved into the present by the dead-reckoned motion since (:func:`shift_level`).

Everything is estimated in the absolute (server) frame; ``WorldState.side`` says
which way we attack (conversions turn it into the published ``field`` frame).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from robocup3d_description.body import Body
from robocup3d_perception.ball_tracker import BallTracker, BallTrackerParameters
from robocup3d_perception.field import FieldModel
from robocup3d_perception.orientation import OrientationFilter
from robocup3d_perception.particle_filter import LocatorParameters, SelfLocator, locator_parameters
from robocup3d_perception.player_tracker import PlayerTracker, PlayerTrackerParameters
from robocup3d_perception.representations import (
    CycleInput,
    LevelObservations,
    PlayerEstimate,
    RobotPose,
    WorldState,
    frozen_array,
)
from robocup3d_perception.tilt_fix import correct_tilt
from robocup3d_perception.vision_geometry import CameraModel, in_view, shift_level

__all__ = ['HISTORY_S', 'MODULE_ORDER', 'WorldModel', 'WorldModelParameters', 'module_order']

HISTORY_S = 0.5  # s of past tilt, neck angles and motion kept for late inputs
CYCLE_S = 0.02  # s, the server cycle of both servers
#: Play modes in which the rules hold the ball at the centre spot (both servers' names): an unknown ball is
#: there (a T1 at its kick-off place cannot see a ball 0.4 m ahead with its head level)
CENTRE_SPOT_MODES = frozenset({'BeforeKickOff', 'KickOff_Left', 'KickOff_Right'})
CENTRE_SPOT_SIGMA = 0.05  # m: how well the spot is known
CENTRE_SPOT_LOST = 0.5  # m: an estimate vaguer than this, not seen this cycle, is put on the spot in those modes


@dataclass(frozen=True, slots=True)
class WorldModelParameters:
    """Tuning of the world model as a whole."""

    # rad/s of body rate above which a See is not used (the tilt estimate lags); None: 1.0 where vision is noisy
    # (rcssserver3d), no limit where the See's tilt is fixed from its landmarks (RCSSServerMJ): a T1 walking at
    # 0.5 m/s sways at 1.1-2.3 rad/s, so with the limit it saw nothing and dead-reckoned 2 m off in a 17 m walk
    max_rate_for_vision: float | None = None
    fallen_upright: float = 0.5  # cos of the torso tilt below which we count as fallen
    confidence_spread: float = 0.3  # m; position spread at which confidence drops to 1/e
    confidence_memory: float = 10.0  # s without landmarks for confidence to drop to 1/e
    view_margin: float = math.radians(10.0)  # rad inside the view's edge an unseen ball estimate must lie to count
    seed: int | None = 0
    # a See turned back by the tilt error its landmarks' heights show (robocup3d_perception.tilt_fix); None: where
    # vision is exact (no field lines scored: RCSSServerMJ)
    tilt_from_landmarks: bool | None = None


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
        # good fits of two landmarks or more are taken directly; a server with field lines has noisy vision
        locator = locator or locator_parameters(noisy_vision=use_lines)
        self.locator = SelfLocator(fld, locator, seed=self.p.seed, use_lines=use_lines)
        fix = self.p.tilt_from_landmarks
        self._fix_tilt = not use_lines if fix is None else fix
        limit = self.p.max_rate_for_vision
        self._max_rate = limit if limit is not None else (math.inf if self._fix_tilt else 1.0)
        self.ball = BallTracker(ball)
        self.players = PlayerTracker(players)
        self.time: float | None = None
        self.torso_z = 0.0
        self.last_landmarks: float | None = None  # s, last See with a known landmark
        self.last_level: LevelObservations | None = None
        # dead-reckoned pose (x, y, yaw in a drifting frame) and, per cycle, what a late See needs
        self._dead = (0.0, 0.0, 0.0)
        self._past: deque[tuple[float, np.ndarray, dict, float, tuple[float, float, float]]] = deque()
        # as of the last See or report (predicted to then), built on the next cycle with a See: only those read it
        self._players: tuple[PlayerEstimate, ...] = ()
        self._players_due = False  # the tracks moved since _players was built

    def update(self, inp: CycleInput) -> WorldState:
        """Run all modules on one cycle's input; return the new world state.

        An input older than the last one (a late ``See``) does not turn the clock back.
        """
        late = self.time is not None and inp.time < self.time - 1e-6
        dt = 0.0 if self.time is None or late else inp.time - self.time
        if not late:
            self.time = inp.time
        now = self.time
        od = inp.odometry
        walking = od is not None and (od.dx != 0.0 or od.dy != 0.0 or od.dyaw != 0.0)
        gyro, accel = (None, None) if late else (inp.gyro, inp.accel)  # a late input's IMU is history
        yaw_delta = self.orientation.update(gyro, accel, dt, walking)
        rate = self.orientation.rate
        if dt > 0:
            spread = 3.0 if rate > self._max_rate else 1.0
            if dt > 1.5 * CYCLE_S:  # cycles went by unseen (inputs lost on a busy machine): less is known
                spread *= dt / CYCLE_S
            self.locator.predict(yaw_delta, inp.odometry, noise_scale=spread)
            tilt_now = self._remember(now, yaw_delta, od, inp.joints, rate)
        else:
            tilt_now = None
        pose, cov, share = self.locator.estimate()
        then = self._at(inp.time) if late else None
        if late and then is None:
            level = None  # older than the history: it cannot be placed any more
        else:
            if then is None and tilt_now is None:  # no cycle kept this time (the clock did not move)
                tilt_now = self.orientation.tilt
            tilt, joints, rate_then, moved = then or (tilt_now, inp.joints, rate, None)
            level = None
            if inp.vision is not None and rate_then <= self._max_rate:
                level = self.camera.to_level(inp.vision, joints, tilt)
                if self._fix_tilt:
                    level = correct_tilt(level, self.field.landmarks)
                if moved is not None:
                    level = shift_level(level, *moved)
        if level is not None:
            self.last_level = level
            self.locator.update(level, heading_hint=float(pose[2]))
            pose, cov, share = self.locator.estimate()
            self._update_height(level)
            pos_sigma = math.sqrt(max(cov[0, 0] + cov[1, 1], 0.0))
            yaw_sigma = math.sqrt(max(cov[2, 2], 0.0))
            if level.ball is not None:
                d = math.hypot(level.ball[0], level.ball[1])
                self.ball.observe_relative(
                    now,
                    (pose[0], pose[1], self.torso_z, pose[2]),
                    level.ball,
                    math.hypot(pos_sigma, d * yaw_sigma),
                )
            elif self.ball.last_update is not None:
                self._look_for_ball(now, pose, yaw_sigma, level)
            for team, unum, xyz in level.players:
                if team == inp.team and unum == inp.unum:
                    continue  # our own arms and feet (SimSpark)
                d = math.hypot(xyz[0], xyz[1])
                self.players.observe_relative(
                    now, (team, unum), (pose[0], pose[1], pose[2]), xyz, math.hypot(pos_sigma, d * yaw_sigma)
                )
        for r in inp.reports:
            if r.unum == inp.unum:
                continue
            if r.ball is not None:
                seen = r.time if r.ball_time is None else r.ball_time
                self.ball.observe_report(now, r.ball, max(0.0, now - seen), teammate=r.unum)
            if r.position is not None:
                self.players.observe_report(r.time, (inp.team, r.unum), r.position, r.fallen, r.intent)
        self.ball.predict(now)
        seen = level is not None and level.ball is not None
        if inp.play_mode in CENTRE_SPOT_MODES and not seen and self.ball.cp > CENTRE_SPOT_LOST**2:
            self.ball.place(now, 0.0, 0.0, CENTRE_SPOT_SIGMA)
        if level is not None or inp.reports or not self._players:  # they change with a See or a report only
            self.players.advance(now)
            self._players_due = True
        if self._players_due and (inp.vision is not None or not self._players):  # read with a See only
            self._players = self.players.snapshot(inp.team)
            self._players_due = False
        return WorldState(
            time=now,
            side=inp.side,
            pose=self._pose(now, pose, cov, share),
            ball=self.ball.model(now),
            players=self._players,
        )

    def _look_for_ball(self, now: float, pose: np.ndarray, yaw_sigma: float, level: LevelObservations) -> None:
        """A See without the ball: if its estimate lay in plain view (inside the view by more than the
        estimate's own angular spread), the ball is not where we thought, and the estimate grows vaguer."""
        self.ball.predict(now)
        ball = self.ball
        dx, dy = ball.px - pose[0], ball.py - pose[1]
        c, s = math.cos(pose[2]), math.sin(pose[2])
        point = np.array([c * dx + s * dy, -s * dx + c * dy, ball.z - self.torso_z])
        spread = math.sqrt(max(2.0 * ball.cp, 0.0)) / max(math.hypot(dx, dy), 0.1)
        if in_view(level, point, margin=self.p.view_margin + yaw_sigma + min(spread, 1.0)):
            self.ball.unseen(now)

    def _remember(self, t: float, yaw_delta: float, od: object, joints: dict, rate: float) -> np.ndarray:
        """Dead-reckon one cycle and keep what a late ``See`` of this cycle needs; returns the tilt kept."""
        x, y, yaw = self._dead
        if od is not None:
            c, s = math.cos(yaw), math.sin(yaw)
            x, y = x + c * od.dx - s * od.dy, y + s * od.dx + c * od.dy
        self._dead = (x, y, yaw + yaw_delta)
        past = self._past
        tilt = self.orientation.tilt
        past.append((t, tilt, joints, rate, self._dead))
        while past and past[0][0] < t - HISTORY_S:
            past.popleft()
        return tilt

    def _at(self, t: float) -> tuple[np.ndarray, dict, float, tuple[float, float, float]] | None:
        """Tilt, neck angles and body rate of the cycle at ``t``, and the motion (dx, dy, dyaw) since
        then in that cycle's level frame; ``None`` when ``t`` is no longer in the history."""
        then = next((row for row in reversed(self._past) if row[0] <= t + 1e-6), None)
        if then is None or t - then[0] > 0.05:
            return None
        (x0, y0, yaw0), (x1, y1, yaw1) = then[4], self._dead
        c, s = math.cos(yaw0), math.sin(yaw0)
        dx, dy = x1 - x0, y1 - y0
        return then[1], then[2], then[3], (c * dx + s * dy, -s * dx + c * dy, yaw1 - yaw0)

    def _update_height(self, level: LevelObservations) -> None:
        marks = self.field.landmarks
        heights = [
            float(marks[n][2]) - seen[2]
            for n, seen in zip(level.landmark_names, level.landmarks.tolist(), strict=True)
            if n in marks
        ]
        if not heights:
            return
        z = sum(heights) / len(heights)
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
