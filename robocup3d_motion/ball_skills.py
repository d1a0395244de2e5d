"""Ball skills as tasks: go to a pose, kick the ball towards a point, dribble it there.

Pure Python, field frame (metres, radians). The motion core gives a task a :class:`View`
each cycle (its pose and the ball from the world model, whether it lies or a skill runs)
and carries out the :class:`Action` it returns: a walk target relative to the robot, a
velocity, a stop, or a skill to start. A task re-plans every cycle from the newest
estimates, so a ball that rolls or is nudged moves the plan with it.

A kick (:class:`KickTask`) picks the foot by cost (as UT Austin Villa's
``computeKickCost``: the walk to each foot's kick pose, and the turn to walk there, with a
margin against switching back and forth), walks to the pose behind the ball, going round the
ball when it stands in the way (facing it, when the robot is beside, ahead of or too near it),
aims along the line within the request's ``slack`` it is nearest to facing, and starts the kick
once the ball lies at the kick's spot within its tolerance (after the walk has stopped, for a
kick that needs it). An in-walk kick (the spec's ``walk``) is asked of the walk instead once the ball
lies at its spot, and the robot walks on until the kicking step has swung. Phases:
``approaching``, ``settling``, ``kicking``, then ``done``; ``failed`` with a reason (the
ball was lost, the task took too long, too many falls); ``fallen`` while the robot lies or
gets up, after which it goes on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from robocup3d_motion.kick_config import ApproachSpec, DribbleSpec, KickSpec

__all__ = ['Action', 'DribbleTask', 'GoToTask', 'KickTask', 'View', 'kick_pose', 'to_robot']

MAX_FALLS = 3
LOST_TURN = 0.5  # rad/s turning in place to find a lost ball
AVOID_RADIUS = 0.6  # m kept from other robots' centres while walking past them
GOAL_CLEAR = 0.5  # m: a robot this near the walk's goal is not walked round
FINE = 0.35  # m from the kick pose: small velocity steps instead of a walk target
KICK_STEP_WAIT = 1.5  # s an in-walk kick may wait for its step
FINE_YAW = math.radians(45.0)  # rad off the kick's heading within which those steps also turn the robot
# A goal this near is not turned round for (the walk's own near range, 0.6 m, then steps sideways and turns; beyond
# it the walk faces its target either way); one up to GOTO_BACK behind the robot counts as reached. A T1 (no steps
# back) that creeps forward while it steps in place turned round and round to reach a goal a few centimetres behind
# it (a goalie holding its place, 2026-11-28).
GOTO_NEAR = 1.0
GOTO_BACK = 0.4
HOLD_MOVE = 0.2  # m the ball may move while the robot stops for a kick; more, and it approaches again
# A far ball may be vaguer and still be walked to: its direction is what counts. Walking at a ball 15 m away, a lone
# T1 striker's estimate spread to 1.3-1.9 m between sightings; held to 1 m, it took the ball for lost every second or
# two and turned away to search, walking at it between (2026-11-29).
LOST_SIGMA_PER_M = 0.1


def ball_sigma_limit(floor: float, distance: float) -> float:
    """The vaguest ball estimate (m) still played at ``distance`` m: ``floor`` near, a tenth of the distance far."""
    return max(floor, LOST_SIGMA_PER_M * distance)


def wrap(a: float) -> float:
    return math.atan2(math.sin(a), math.cos(a))


def to_robot(pose: tuple[float, float, float], x: float, y: float) -> tuple[float, float]:
    """A field point in the robot's ground frame (x forward, y left)."""
    px, py, yaw = pose
    dx, dy = x - px, y - py
    c, s = math.cos(yaw), math.sin(yaw)
    return c * dx + s * dy, -s * dx + c * dy


def kick_pose(
    ball: tuple[float, float], heading: float, spot: tuple[float, float], angle: float = 0.0
) -> tuple[float, float, float]:
    """Where the robot stands (field x, y, yaw) to kick ``ball`` towards ``heading`` with the ball at ``spot``,
    for a kick that sends the ball ``angle`` rad off the robot's own heading."""
    yaw = heading - angle
    c, s = math.cos(yaw), math.sin(yaw)
    sx, sy = spot
    return ball[0] - (c * sx - s * sy), ball[1] - (s * sx + c * sy), yaw


@dataclass
class View:
    """What a task knows this cycle."""

    t: float
    pose: tuple[float, float, float] | None = None  # field x, y, yaw
    ball: tuple[float, float] | None = None  # field x, y (None: no usable estimate)
    fallen: bool = False  # lying or getting up
    skill: str | None = None  # the skill playing (not the walk or the stand)
    walking: bool = False  # the walk is still stepping
    speed: float = 0.0  # m/s forward the walk steps now (its odometry)
    walk_kick: str = ''  # an in-walk kick: 'asked' (waiting for its foot's step), 'swinging', 'missed', or ''


@dataclass
class Action:
    """What the motion core does for the task this cycle (nothing when all are empty)."""

    walk_target: tuple[float, float, float] | None = None  # relative to the robot
    velocity: tuple[float, float, float] | None = None  # robot frame
    stop: bool = False
    skill: str | None = None
    strength: tuple[str, float] | None = None  # a kick of chosen length: its gentle skill, 0-1 of the way to ``skill``
    overrides: dict[str, float] | None = None  # a Nao skill's $parameters (a kick of chosen length: its strength)
    walk_kick: tuple[str, float] | None = None  # kick in a walk step of this foot ('right', 'left'); the ball's x
    turn_round: bool = True  # a walk target behind a robot that cannot step back: turn round and walk there


class Task:
    """One request's life: phase, outcome and the bookkeeping all tasks share."""

    kind = 'task'

    def __init__(self, request_id: int, t: float, approach: ApproachSpec) -> None:
        self.id = request_id
        self.started = t
        self.approach = approach
        self.timeout = approach.timeout
        self.phase = 'approaching'
        self.reason = ''
        self.falls = 0
        self._lost_since: float | None = None
        self._last_ball: tuple[float, float] | None = None
        self._orbit = 0  # the way round the ball: +1 anticlockwise, -1 clockwise, 0 not going round
        self.avoid: tuple[tuple[float, float], ...] = ()  # other robots to walk round (field frame)

    @property
    def over(self) -> bool:
        return self.phase in ('done', 'failed', 'cancelled')

    def end(self, phase: str, reason: str = '') -> Action:
        self.phase, self.reason = phase, reason
        return Action(stop=True)

    def state(self) -> dict:
        return {'id': self.id, 'kind': self.kind, 'phase': self.phase, 'reason': self.reason, 'falls': self.falls}

    def step(self, v: View) -> Action:
        """This cycle's action; the shared checks first, then the task's own :meth:`act`."""
        if self.over:
            return Action()
        if v.t - self.started > self.timeout:
            return self.end('failed', f'not done in {self.timeout:g} s')
        if v.fallen:
            if self.phase != 'fallen':
                self.falls += 1
                self.phase = 'fallen'
                if self.falls > MAX_FALLS:
                    return self.end('failed', f'fell {self.falls} times')
            return Action()
        if self.phase == 'fallen':
            self.phase = 'approaching'
        return self.act(v)

    def act(self, v: View) -> Action:
        raise NotImplementedError

    def ball_or_search(self, v: View) -> tuple[float, float] | Action:
        """The ball, or (while it is lost) a turn in place to find it; failed once lost too long."""
        if v.ball is not None and v.pose is not None:
            self._lost_since, self._last_ball = None, v.ball
            return v.ball
        if self._lost_since is None:
            self._lost_since = v.t
        if v.t - self._lost_since > self.approach.lost_s:
            return self.end('failed', 'ball lost' if v.pose is not None else 'own pose unknown')
        turn = LOST_TURN
        if self._last_ball is not None and v.pose is not None:
            turn = math.copysign(LOST_TURN, math.atan2(*reversed(to_robot(v.pose, *self._last_ball))))
        return Action(velocity=(0.0, 0.0, turn))

    def orbit(self, pose: tuple[float, float, float], rel: tuple[float, float], behind: float):
        """Sidestep round the ball facing it, ``approach.clear`` away, towards the side ``behind`` it
        (rad, seen from the ball), the short way (kept unless the other becomes much shorter). Facing the
        ball, the distance is kept with forward steps only: a walk that cannot step back needs no more."""
        where = math.atan2(rel[1], rel[0])
        to_go = wrap(behind - where)
        way = 1 if to_go >= 0.0 else -1
        if self._orbit == 0 or (way != self._orbit and abs(to_go) < math.radians(150.0)):
            self._orbit = way  # the short way; near half round, the way already taken
        radius = math.hypot(*rel)
        if radius < 0.7 * self.approach.clear:  # too close to face it (no step back): walk away round it
            err = wrap(where + self._orbit * 0.3 * math.pi - pose[2])
            return 0.2 * max(0.0, math.cos(err)) ** 2, 0.0, max(-0.8, min(0.8, 1.5 * err))
        bearing = wrap(where + math.pi - pose[2])  # the ball, seen from the robot
        vx = max(0.0, min(0.2, 1.5 * (radius - self.approach.clear)))
        vy = -self._orbit * 0.15 * min(1.0, abs(to_go) / 0.3)  # anticlockwise round the ball: step right
        slow = 0.3 if abs(bearing) > 0.5 else 1.0  # face the ball first
        return slow * vx, slow * vy, max(-0.8, min(0.8, 1.5 * bearing))

    def route(self, pose: tuple[float, float, float], ball: tuple[float, float], goal: tuple[float, float, float]):
        """The walk target (relative to the robot) towards ``goal``, going round the ball when it is in the way."""
        gx, gy, gyaw = goal
        rx, ry, _ = pose
        clear = self.approach.clear
        ax, ay = ball[0] - rx, ball[1] - ry
        sx, sy = gx - rx, gy - ry
        seg2 = sx * sx + sy * sy
        u = (ax * sx + ay * sy) / seg2 if seg2 > 1e-9 else 0.0
        if 0.0 < u < 1.0 and math.hypot(ax - u * sx, ay - u * sy) < clear and math.hypot(ax, ay) > 0.5 * clear:
            a_robot = math.atan2(-ay, -ax)  # the robot's bearing seen from the ball
            delta = wrap(math.atan2(gy - ball[1], gx - ball[0]) - a_robot)
            a = a_robot + math.copysign(min(abs(delta), math.radians(60.0)), delta)
            r = clear + 0.1
            gx, gy = ball[0] + r * math.cos(a), ball[1] + r * math.sin(a)
        gx, gy = detour(pose, (gx, gy), self.avoid)
        x, y = to_robot(pose, gx, gy)
        return x, y, wrap(gyaw - pose[2])


def detour(
    pose: tuple[float, float, float], goal: tuple[float, float], robots: tuple[tuple[float, float], ...]
) -> tuple[float, float]:
    """Where to walk towards ``goal`` so as to pass the first robot in the way :data:`AVOID_RADIUS` wide.

    A robot is in the way when it is nearer than :data:`AVOID_RADIUS` to the straight path, ahead of
    the walker and not at the goal itself (one cannot walk round what stands on the goal). The
    waypoint is beside it, on the side of the path it is further from.
    """
    rx, ry = pose[0], pose[1]
    sx, sy = goal[0] - rx, goal[1] - ry
    length = math.hypot(sx, sy)
    if length < 1e-6 or not robots:
        return goal
    ux, uy = sx / length, sy / length
    first: tuple[float, float] | None = None  # (along, across) the path of the nearest robot in the way
    for ox, oy in robots:
        ax, ay = ox - rx, oy - ry
        along, across = ax * ux + ay * uy, ux * ay - uy * ax  # across: + to the left of the path
        in_way = 0.0 < along < length and abs(across) < AVOID_RADIUS
        if in_way and math.hypot(ox - goal[0], oy - goal[1]) > GOAL_CLEAR and (first is None or along < first[0]):
            first = (along, across)
    if first is None:
        return goal
    along, across = first
    lateral = across - math.copysign(AVOID_RADIUS + 0.1, across or 1.0)  # beside it, on the path's other side
    return rx + along * ux - lateral * uy, ry + along * uy + lateral * ux


def _creep(err: float, gain: float, floor: float, top: float, tol: float) -> float:
    """A speed towards ``err``: proportional, at least ``floor`` outside half the tolerance."""
    v = max(-top, min(top, gain * err))
    return math.copysign(max(abs(v), floor), err) if abs(err) > 0.5 * tol else v


def fine_velocity(
    err: tuple[float, float, float], tol: tuple[float, float, float], top_x: float = 0.2
) -> tuple[float, float, float]:
    """Small steps onto a pose ``err`` away (robot frame): slow (forward at most ``top_x`` m/s), and never too slow
    to arrive."""
    x, y, yaw = err
    vx = _creep(x, 1.5, 0.04, max(top_x, 0.04), tol[0])
    return vx, _creep(y, 1.5, 0.04, 0.15, tol[1]), _creep(yaw, 1.5, 0.15, 0.6, tol[2])


def on_line(pose: tuple[float, float, float], ball: tuple[float, float], heading: float) -> tuple[float, float, float]:
    """Where the robot stands on the line through ``ball`` along ``heading``: (along, across, off), with along
    negative behind the ball, across to its left, and off the robot's angle from the line behind it, seen from
    the ball (rad)."""
    c, s = math.cos(heading), math.sin(heading)
    rx, ry = pose[0] - ball[0], pose[1] - ball[1]
    along, across = c * rx + s * ry, -s * rx + c * ry
    return along, across, math.atan2(abs(across), max(-along, 1e-6))


def window_point(
    ball: tuple[float, float],
    target: tuple[float, float],
    slack: float,
    toward: float,
    along: tuple[float, float] | None = None,
) -> tuple[float, float]:
    """The point of the window ``target`` +- ``slack`` m that the line from ``ball`` along ``toward`` (rad) meets,
    or the window's end nearest it. ``along``: the window's direction (a unit vector; default: across the ball's
    way to the target)."""
    dx, dy = target[0] - ball[0], target[1] - ball[1]
    dist = math.hypot(dx, dy)
    if slack <= 0.0 or dist < 1e-6:
        return target
    nx, ny = along if along is not None else (-dy / dist, dx / dist)
    c, s = math.cos(toward), math.sin(toward)
    det = c * ny - s * nx  # ball + t (c, s) = target + o (nx, ny), solved by Cramer's rule
    lean = dx * s - dy * c  # + when ``toward`` points left of the target
    if abs(det) <= 1e-9 or (dx * ny - dy * nx) / det <= 0.0:  # along the window, or away from it: the end it leans to
        o = math.copysign(slack, lean * (ny * dx - nx * dy))
    else:
        o = max(-slack, min(slack, lean / det))
    return target[0] + o * nx, target[1] + o * ny


def behind(goal: tuple[float, float, float], back: float) -> tuple[float, float, float]:
    """``goal`` moved ``back`` m against its heading."""
    gx, gy, gyaw = goal
    return gx - back * math.cos(gyaw), gy - back * math.sin(gyaw), gyaw


def line_up_point(pose: tuple[float, float, float], goal: tuple[float, float, float], back: float):
    """Where to line up behind ``goal``: ``back`` m behind it, or level with a robot already behind it
    (a sideways step, not a step back: some walks cannot step backwards)."""
    gx, gy, gyaw = goal
    along = math.cos(gyaw) * (pose[0] - gx) + math.sin(gyaw) * (pose[1] - gy)
    return behind(goal, back if along > -0.05 else min(back, -along))


class GoToTask(Task):
    """Walk to a field pose; done within ``reach`` m and ``reach_yaw`` rad."""

    kind = 'goto'

    def __init__(self, request_id: int, t: float, approach: ApproachSpec, goal: tuple[float, float, float]) -> None:
        super().__init__(request_id, t, approach)
        self.goal = goal
        self.reach, self.reach_yaw = 0.15, 0.2

    def act(self, v: View) -> Action:
        if v.pose is None:
            return self.ball_or_search(View(v.t))  # no pose: wait for one, as for a lost ball
        x, y = to_robot(v.pose, *self.goal[:2])
        yaw = wrap(self.goal[2] - v.pose[2])
        if x > -GOTO_BACK and math.hypot(max(x, 0.0), y) < self.reach and abs(yaw) < self.reach_yaw:
            return self.end('done')
        self.phase = 'approaching'
        near = math.hypot(x, y) < GOTO_NEAR
        wx, wy = detour(v.pose, self.goal[:2], self.avoid)
        if (wx, wy) != self.goal[:2]:
            x, y = to_robot(v.pose, wx, wy)
        return Action(walk_target=(x, y, yaw), turn_round=not near)


class KickTask(Task):
    """Walk to the ball and kick it towards ``target`` with ``spec``."""

    kind = 'kick'

    def __init__(
        self,
        request_id: int,
        t: float,
        approach: ApproachSpec,
        spec: KickSpec,
        name: str,
        target: tuple[float, float],
        slack: float = 0.0,
        distance: float | None = None,
    ) -> None:
        super().__init__(request_id, t, approach)
        self.spec, self.name, self.target, self.slack = spec, name, target, slack
        self.distance = distance  # m the ball should go (None: to the target), for a kick of chosen length
        self.strength: float | None = None  # the chosen length's strength, once kicked
        self.foot: str | None = None
        self._settle_since: float | None = None
        self._still_since: float | None = None  # the walk's stop, for the kick's rest
        self._held: tuple[float, float] | None = None  # the ball when the robot stopped for the kick (a hold)
        self.off_spot = 0  # holds that ended with the robot off the spot (each widens the next one's judgement)
        self.kicked_at: float | None = None
        self._swung = False  # an in-walk kick's step has begun

    def state(self) -> dict:
        out = {**super().state(), 'kick': self.name, 'foot': self.foot, 'off_spot': self.off_spot}
        return out if self.strength is None else {**out, 'strength': round(self.strength, 3)}

    def hold_factor(self) -> float:
        """The tolerance, times this, that a hold is judged by: the kick's ``hold``, widened by the approach's
        ``patience`` for each hold so far that ended off the spot, up to ``patience_max``."""
        grown = self.spec.hold + self.approach.patience * self.off_spot
        return max(self.spec.hold, min(grown, self.approach.patience_max))

    def _hold(self, v: View, ball: tuple[float, float]) -> Action | None:
        """Stopped for a kick: the walk's stop and the ``rest`` after it, with the alignment judged at their end
        (the ball's place in the robot's frame moves by centimetres as the walk eases into the stand; judged all
        the while, the kick went back to walking again and again: 10 s at a kick-off). None when the hold is over
        (a walk that has not stopped in ``settle`` s counts as stopped), and with ``_held`` None when the ball
        moved: it is broken."""
        assert self._held is not None
        if math.dist(ball, self._held) > HOLD_MOVE:
            self._held = None
            return None
        if v.walking and v.t - self._settle_since <= self.approach.settle:
            self._still_since = None
            return Action(stop=True)
        if self._still_since is None:
            self._still_since = v.t
        if v.t - self._still_since < self.spec.rest:
            return Action(stop=True)
        return None

    def _too_fast_to_stop(self, v: View) -> bool:
        """A kick that stops, with the walk still stepping forward faster than the approach's ``stop_speed``: it
        steps on slowly onto the spot first (a T1 stopped from 0.2 m/s went on 8-13 cm past the spot and fell
        forwards as it rose into the stand, 2026-11-29)."""
        return self.spec.stop and v.walking and v.speed > self.approach.stop_speed

    def _kick(self, v: View, foot: str, bx: float, ball: tuple[float, float]) -> Action:
        self._held = None
        self.phase, self.kicked_at = 'kicking', v.t
        if self.spec.walk is not None:
            self._swung = False
            return Action(walk_kick=(foot, bx), velocity=(self.spec.walk.speed, 0.0, 0.0))
        strength = self.spec.strength
        if strength is None:
            return Action(skill=self.spec.skill(foot))
        d = self.distance if self.distance is not None else math.dist(ball, self.target)
        self.strength = strength.for_distance(d)
        if strength.param:
            return Action(skill=self.spec.skill(foot), overrides={strength.param: self.strength})
        return Action(skill=self.spec.skill(foot), strength=(strength.skill(foot), self.strength))

    def _walk_kicking(self, v: View) -> Action:
        """Walk on straight while the walk's kick step comes and swings; done once it has."""
        assert self.spec.walk is not None and self.kicked_at is not None
        self._swung = self._swung or v.walk_kick == 'swinging'
        if v.walk_kick == 'missed':  # the ball came too near before the foot's step: line up again
            self.phase = 'approaching'
            return Action()
        if v.walk_kick:
            return Action(velocity=(self.spec.walk.speed, 0.0, 0.0))
        if self._swung:
            return self.end('done')
        if v.t - self.kicked_at > KICK_STEP_WAIT:
            return self.end('failed', 'the walk took no kick step')
        return Action(velocity=(self.spec.walk.speed, 0.0, 0.0))

    def choose_foot(self, pose: tuple[float, float, float], ball: tuple[float, float], heading: float) -> str:
        """The foot whose kick pose costs least to reach (the current one unless the other saves a margin)."""
        costs = {}
        for foot in ('right', 'left'):
            gx, gy, _ = kick_pose(ball, heading, self.spec.spot(foot), self.spec.angle(foot))
            dx, dy = gx - pose[0], gy - pose[1]
            turn = abs(wrap(math.atan2(dy, dx) - pose[2])) if math.hypot(dx, dy) > 0.3 else 0.0
            costs[foot] = math.hypot(dx, dy) + 0.2 * turn
        best = min(costs, key=costs.__getitem__)
        if self.foot is None or costs[best] < costs[self.foot] - self.approach.foot_margin:
            self.foot = best
        return self.foot

    def aim(self, pose: tuple[float, float, float], ball: tuple[float, float], heading: float, foot: str) -> float:
        """The kick's heading within the target's window (``slack`` m either side of it) nearest to where the
        robot would send the ball now: every degree it need not turn is time (and a slow-turning robot's
        drift) saved."""
        if self.slack <= 0.0:
            return heading
        half = math.atan2(self.slack, max(math.hypot(self.target[0] - ball[0], self.target[1] - ball[1]), 1e-6))
        now = pose[2] + self.spec.angle(foot)
        return heading + max(-half, min(half, wrap(now - heading)))

    def act(self, v: View) -> Action:
        if self.phase == 'kicking':
            if self.spec.walk is not None:
                return self._walk_kicking(v)
            if v.skill == self.spec.skill(self.foot or 'right'):
                return Action()
            return self.end('done')
        ball = self.ball_or_search(v)
        if isinstance(ball, Action):
            return ball
        pose = v.pose
        assert pose is not None
        heading = math.atan2(self.target[1] - ball[1], self.target[0] - ball[0])
        foot = self.choose_foot(pose, ball, heading)
        heading = self.aim(pose, ball, heading, foot)
        face = heading - self.spec.angle(foot)  # the heading that sends the ball at the target
        bx, by = to_robot(pose, *ball)
        sx, sy = self.spec.spot(foot)
        tol = self.spec.tolerance
        # walking onto the spot, stop where the walk will come to rest, not where it is: stopped at the spot, a
        # T1 ended nearer the ball, went round it to come again, and pushed it on each time
        drift = max(0.0, v.speed) * self.approach.stop_drift if v.walking else 0.0

        def aligned(k: float) -> bool:
            return (
                abs(bx - drift - sx) < k * tol.x
                and abs(by - sy) < k * tol.y
                and abs(wrap(face - pose[2])) < k * math.radians(tol.yaw_deg)
            )

        if self._held is not None:
            held = self._hold(v, ball)
            if held is not None:
                return held
            if self._held is not None:  # the hold is over
                if aligned(self.hold_factor()):  # and the robot stands at the spot
                    return self._kick(v, foot, bx, ball)
                self.off_spot += 1
            self._held = None  # the ball moved, or the robot stands off the spot
        elif aligned(1.0) and not self._too_fast_to_stop(v):
            if self.spec.stop and (v.walking or self.spec.rest > 0.0):
                self._held, self._settle_since, self._still_since = ball, v.t, None
                self.phase = 'settling'
                return Action(stop=True)
            return self._kick(v, foot, bx, ball)
        self.phase = 'approaching'
        rel = (pose[0] - ball[0], pose[1] - ball[1])
        _, _, off = on_line(pose, ball, face)  # the robot on the kick's line through the ball
        near = math.hypot(*rel) < self.approach.clear + 0.4
        going_round = self._orbit != 0 and (off > math.radians(40.0) or bx < sx)  # until behind it, at the spot
        if near and (off > math.radians(60.0) or bx < sx - 2.0 * tol.x or going_round):
            # beside or before the ball, or nearer it than the spot: round it facing it, out to the walk's
            # clearance (walking on would push it or leave it behind, and the walk may not step back)
            return Action(velocity=self.orbit(pose, rel, face + math.pi))
        self._orbit = 0
        goal = kick_pose(ball, heading, (sx, sy), self.spec.angle(foot))
        yaw_tol = math.radians(tol.yaw_deg)
        yaw_err = wrap(face - pose[2])
        if math.hypot(bx - sx, by - sy) < FINE and abs(yaw_err) < FINE_YAW:
            # the ball near the spot: the last centimetres and degrees in small steps, never walking round
            x, y = to_robot(pose, goal[0], goal[1])
            top = self.approach.arrive_speed
            return Action(velocity=fine_velocity((x, y, yaw_err), (tol.x, tol.y, yaw_tol), top))
        return Action(walk_target=self.route(pose, ball, line_up_point(pose, goal, self.approach.line_up)))


class DribbleTask(Task):
    """Walk the ball to ``target`` (or anywhere within ``slack`` m either side of it, across the ball's way as
    the task began: the line the robot is nearest to being behind): get behind it on that line, then walk
    through it.

    No stop between the two: once the robot is behind the ball, within a cone round the line from
    the target through the ball, it walks at the ball, steering back onto that line (a path follower
    on the cross-track error) and sidestepping so the ball stays in front of the feet; a ball that
    rolls off the line is followed as long as it stays in a wider cone. Outside it the robot goes
    round the ball to the line (sidestepping when it is already behind the ball, so a walk that
    cannot step back never has to).
    """

    kind = 'dribble'
    ENTER, LEAVE = math.radians(25.0), math.radians(45.0)  # cone half-angles behind the ball

    def __init__(
        self,
        request_id: int,
        t: float,
        approach: ApproachSpec,
        spec: DribbleSpec,
        target: tuple[float, float],
        slack: float = 0.0,
    ) -> None:
        super().__init__(request_id, t, approach)
        self.spec, self.target, self.slack = spec, target, slack
        self.reach = 0.5  # m from the target: done
        self._aim: tuple[float, float] | None = None  # the window point the ball is walked to
        self._along: tuple[float, float] | None = None  # the window's direction, fixed at the start
        self.timeout = 3.0 * approach.timeout  # a dribble across the field takes a while

    def act(self, v: View) -> Action:
        ball = self.ball_or_search(v)
        if isinstance(ball, Action):
            return ball
        pose = v.pose
        assert pose is not None
        # the line to walk the ball along: into the window, on the robot's way through the ball (no going round
        # it to reach the window's centre); kept while the robot walks the ball (near the ball the robot's way
        # swings with every step)
        if self._along is None:  # the window lies across the ball's way to the target as the task began
            dx, dy = self.target[0] - ball[0], self.target[1] - ball[1]
            dist = math.hypot(dx, dy)
            self._along = (-dy / dist, dx / dist) if dist > 1e-6 else (0.0, 1.0)
        if self.phase != 'dribbling' or self._aim is None:
            toward = math.atan2(ball[1] - pose[1], ball[0] - pose[0])
            self._aim = window_point(ball, self.target, self.slack, toward, self._along)
        aim = self._aim
        heading = math.atan2(aim[1] - ball[1], aim[0] - ball[0])
        to_go = math.hypot(aim[0] - ball[0], aim[1] - ball[1])
        if to_go < self.reach:
            return self.end('done')
        c, s = math.cos(heading), math.sin(heading)
        rx, ry = pose[0] - ball[0], pose[1] - ball[1]
        along, across, off = on_line(pose, ball, heading)  # the robot on the line through the ball
        bx, by = to_robot(pose, *ball)
        sx, sy = self.spec.ball
        yaw_err = wrap(heading - pose[2])
        on = self.phase == 'dribbling'
        close = 0.02 < bx < sx + 0.15 and abs(by - sy) < 2.0 * self.spec.lateral  # at the feet: keep going
        behind_ok = along < -0.05 and (off < (self.LEAVE if on else self.ENTER) or (on and close))
        if behind_ok and abs(yaw_err) < (1.0 if on else 0.6):
            self._orbit = 0
            if on or bx < sx + 0.5:  # from afar the same walk at the ball is still the approach
                self.phase = 'dribbling'
            return Action(velocity=self.push(across, by - sy, yaw_err, to_go, bx - sx))
        self.phase = 'approaching'
        near = math.hypot(rx, ry) < self.approach.clear + 0.4
        if near and along < -(sx + 0.05) and off < math.radians(60.0):
            # behind the ball, off its line: sidestep onto it (never back), turning to face the target
            back = max(-along, sx + 0.1)
            x, y = to_robot(pose, ball[0] - back * c, ball[1] - back * s)
            slow = 0.3 if abs(yaw_err) > 0.5 else 1.0
            vx, vy = slow * max(0.0, min(0.2, 1.5 * x)), slow * max(-0.15, min(0.15, 1.5 * y))
            return Action(velocity=(vx, vy, max(-0.8, min(0.8, 1.5 * yaw_err))))
        if near:  # beside or before the ball: round it
            return Action(velocity=self.orbit(pose, (rx, ry), heading + math.pi))
        goal = line_up_point(pose, kick_pose(ball, heading, (sx, sy)), self.approach.line_up)
        return Action(walk_target=self.route(pose, ball, goal))

    def push(self, across: float, side: float, yaw_err: float, to_go: float, ahead: float):
        """Walk through the ball: steer onto the line, keep the ball in front of the feet."""
        # heading onto the line (cross-track error) from afar; at the ball, at the target (the ball goes
        # where the feet walk), the sidestep keeping it in front of them
        steer = wrap(yaw_err - math.atan(2.0 * across) * max(0.0, min(1.0, (ahead - 0.1) / 0.4)))
        speed = min(self.spec.speed, 0.15 + 0.5 * to_go)
        if ahead < self.spec.ahead:  # the ball at the feet: no walking past it while it is off the centre
            speed *= max(0.0, min(1.0, 1.5 - abs(side) / self.spec.lateral))
        speed *= max(0.2, math.cos(steer))
        # sidestep only at the ball, and turn gently at speed: walking fast, sidestepping and turning
        # at once tips the robot over
        vy = max(-0.15, min(0.15, 1.5 * side)) if ahead < self.spec.ahead else 0.0
        turn = 1.0 - 0.5 * min(1.0, speed / max(self.spec.speed, 1e-6))
        return speed, vy, max(-turn, min(turn, 1.5 * steer))
