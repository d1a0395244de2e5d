"""What the player on the ball does with it: shoot, pass, clear or dribble (pure Python).

The on-ball player, in the team frame (their goal at +x), weighs, in this order:

1. **clear** when the ball is in our third and an opponent is near it: kick it (any kick, a fall
   too) up the field, or dribble it that way; knowing where the robot stands (``me``), in the direction
   within :data:`CLEAR_CONE` of straight up the field that is nearest the one from the robot to the ball
   (:func:`clear_target`: the least walk round the ball), else forwards and out to the ball's side;
2. **shoot** when a kick reaches past the goal line (its mean distance less one sd) and the lane
   from the ball to a point of the goal mouth is free of robots; the point with the widest lane is
   taken, and the kick may go anywhere about it inside the posts less its direction's spread there.
   Within :data:`DRIBBLE_IN` m of the goal, **dribble in** through a free lane unless a kick the
   robot stays up after reaches (a kick it falls after costs the ball if it fails); further out, a
   kick the robot falls after is fine for a shot;
3. **pass** with a kick the robot stays up after, to a teammate ahead of the ball who is free
   (no opponent within :data:`FREE_RADIUS`), through a free lane, to a point :data:`LEAD` m ahead
   of him, when the kick's distance fits the pass and, unpressed, the pass carries the ball at least
   :data:`ADVANCE_SHARE` of what an advance (4.) would carry it up the field;
4. **advance** when a kick the robot stays up after carries it at least :data:`ADVANCE_MIN` m: kick it
   up the field at their goal's centre, or along a line off it (:data:`ADVANCE_TURNS`, up to 40 degrees)
   where the lane is free, the ball stays in and ends half the kick's distance nearer their goal; a walk
   cannot carry the ball as far in the time (a T1 dribbles at about 0.1 m/s), pressed or not (until
   session 45 an opponent within :data:`PRESSURE` m ruled it out: a T1 whose ball lay by a standing
   opponent dribbled 6 m in 90 s);
5. **dribble** otherwise: at the goal, or, with an opponent in the way, past him on the side with
   more room.

A set play of ours (``set_play``) never shoots: no direct goal from a kick-off or an indirect
free kick; the taker passes, or kicks to the side and ahead, never with a kick of chosen length (a gentle
one may touch the ball twice).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from robocup3d_motion.kick_config import KickSpec
from robocup3d_motion.requests import Dribble, Kick, MotionRequest

__all__ = [
    'Choice',
    'KickReach',
    'choose_on_ball',
    'clear_target',
    'far_kick',
    'kick_reaches',
    'lane_clearance',
    'shot_points',
]

Point = tuple[float, float]

LANE_RADIUS = 0.5  # m: a robot nearer than this to the ball's path blocks it
LANE_TIE = 0.3  # m: a shot's lane must be this much wider than a more central one's to be chosen over it
FREE_RADIUS = 1.5  # m: a receiver with no opponent this near is free
MIN_PASS = 1.5  # m: a shorter pass is no pass
LEAD = 0.6  # m ahead of the receiver (towards their goal) the pass goes
PASS_GAIN = 1.0  # m a pass must carry the ball towards their goal (more than a dribble would)
PRESSURE = 1.2  # m: an opponent this near the ball presses it
CLEAR_ZONE = 1.0 / 3.0  # share of the field length, from our goal line, where we clear
DRIBBLE_LOOK = 2.5  # m ahead an opponent is in the dribble's way
DRIBBLE_SWERVE = math.radians(40.0)  # how far off the line to the goal the dribble goes round him
DRIBBLE_TIE = 0.1  # m: a blocker nearer than this to the dribble's line is on neither side of it
# m the dribble's line passes at least from a blocker (his body and the ball's): one standing at the ball turns it
# wider than DRIBBLE_SWERVE, up to square across the way (their kick-off taker 0.45 m from the ball: a dribble 40
# degrees off pushed the ball into his feet and stuck there for 40 s, 7 v 7, session 48)
DRIBBLE_CLEAR = 0.6
FAR = 3.0  # m a kick must go to clear the ball or take a set play with it
POST_MARGIN = 0.35  # m inside the posts a shot aims at most
PASS_SLACK = 0.5  # m either side of a pass's target it may go (the receiver steps to it)
CLEAR_SLACK = 2.0  # m either side of a clear's or a set play's target
DRIBBLE_IN = 5.0  # m from the goal's centre within which a dribble into the goal beats a kick one falls after
SHOT_OVER = 2.0  # m past the goal line a shot of chosen length is kicked to go (its spread is about 1 m)
GOAL_PAST = 1.0  # m behind the goal line a dribble at the goal aims (the ball must cross the line, not stop on it)
ADVANCE_MIN = 6.0  # m an upright kick must carry the ball to be worth more than a dribble up the field
# share of an advance's gain towards their goal a pass must make instead: a pass keeps the ball, the advance kicks it
# loose; a T1 at x = 9 m passed 2.4 m to a teammate 1 m further up rather than kick it 13 m on (7 v 7, session 40)
ADVANCE_SHARE = 0.5
ADVANCE_TURNS = (0.0, 20.0, -20.0, 40.0, -40.0)  # deg off the line to their goal's centre an advance may go, in order
MAX_FALL_RATE = 0.5  # a kick the robot falls after more often than this is not used for passes
TOUCH_MARGIN = 1.5  # m inside the touchlines the ball of an advance must stop (beyond them it is their throw-in)
# A clear goes within this of straight up the field (rad), in steps of CLEAR_STEP: a target that follows the robot's
# every step round the ball would make a new kick task each time. Against UT Austin Villa (session 39's halves) a
# Nao told to clear to the side took 10-12 s walking round a ball it stood 0.3-0.7 m from, and they scored.
CLEAR_CONE = math.radians(75.0)
CLEAR_STEP = math.radians(15.0)
CLEAR_INSIDE = 0.5  # m inside the touchlines and their goal line a clear's target stays


@dataclass(frozen=True)
class KickReach:
    """One kick as the decisions see it: how far it sends the ball, and whether the robot falls after it.

    A kick of chosen length (``shortest`` set) goes anywhere from ``shortest`` to ``distance`` m (means): the
    request says how far (:meth:`length`)."""

    name: str
    distance: float  # m, mean (a kick of chosen length: its longest)
    sd: float = 0.0
    falls: bool = False
    shortest: float | None = None  # m, mean of its gentlest (None: one length only)
    direction_sd_deg: float = 0.0  # its direction's spread about the aim
    from_stand: bool = True  # the walk stops before it (False: it fires from the walk)

    def mean_for(self, d: float) -> float:
        """m the kick sends the ball, mean, asked for ``d`` m."""
        return self.distance if self.shortest is None else min(max(d, self.shortest), self.distance)

    def length(self, d: float) -> float | None:
        """The request's ``distance`` for a ball wanted ``d`` m away (None: a kick of one length)."""
        return None if self.shortest is None else round(self.mean_for(d), 2)


def kick_reaches(kicks: Mapping[str, KickSpec]) -> tuple[KickReach, ...]:
    """The kicks of ``config/kicks.yaml`` (one robot's) as the decisions see them, from their kick model."""
    out = []
    for name, k in kicks.items():
        s = k.strength
        longest, sd = (s.curve[-1][1], s.curve[-1][2]) if s is not None else (k.distance.mean, k.distance.sd)
        shortest = s.shortest if s is not None else None
        falls = k.fall_rate > MAX_FALL_RATE
        out.append(KickReach(name, longest, sd, falls, shortest, k.direction_sd_deg, k.stop))
    return tuple(out)


@dataclass(frozen=True)
class Choice:
    """A request and why: ``shoot``, ``pass 4``, ``clear``, ``dribble``, ``set play to the side``, or a role's own."""

    request: MotionRequest
    reason: str


def _dist(a: Point, b: Point) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def lane_clearance(a: Point, b: Point, robots: Sequence[Point]) -> float:
    """The least distance of any of ``robots`` from the segment ``a``-``b`` (inf without robots).

    Robots behind ``a`` (the kicker's side) do not count: the ball leaves them behind.
    """
    sx, sy = b[0] - a[0], b[1] - a[1]
    seg2 = sx * sx + sy * sy
    best = math.inf
    for rx, ry in robots:
        ax, ay = rx - a[0], ry - a[1]
        u = (ax * sx + ay * sy) / seg2 if seg2 > 1e-12 else 0.0
        if u <= 0.0:
            continue
        u = min(u, 1.0)
        best = min(best, math.hypot(ax - u * sx, ay - u * sy))
    return best


def shot_points(goal_x: float, goal_width: float, n: int = 5) -> list[Point]:
    """``n`` points across the goal mouth, :data:`POST_MARGIN` inside the posts, centre first."""
    half = max(0.0, goal_width / 2.0 - POST_MARGIN)
    ys = [half * (2.0 * i / (n - 1) - 1.0) for i in range(n)] if n > 1 else [0.0]
    return [(goal_x, y) for y in sorted(ys, key=abs)]


def _reaches(k: KickReach, d: float) -> bool:
    """The kick carries the ball at least ``d`` m (its mean less one sd)."""
    return k.distance - k.sd >= d


def _fits(k: KickReach, d: float) -> bool:
    """The kick's distance suits a pass of ``d`` m (at least :data:`MIN_PASS`): it ends within a third of it."""
    return d >= MIN_PASS and abs(k.mean_for(d) - d) <= d / 3.0


def _shoot(ball: Point, goal: tuple[float, float], kicks: Sequence[KickReach], robots: Sequence[Point]):
    goal_x, width = goal
    best: tuple[float, Point, KickReach] | None = None
    for p in shot_points(goal_x, width):
        usable = [k for k in kicks if _reaches(k, _dist(ball, p) + 0.5)]  # over the line
        if not usable:
            continue
        lane = lane_clearance(ball, p, robots)
        if lane < LANE_RADIUS:
            continue
        # stay up if we can, then the gentlest
        ask = _shot_ask(ball, p)
        kick = min(usable, key=lambda k: (k.falls, k.mean_for(ask)))
        # the most central point unless another's lane is clearly wider: a target that jumps across the goal as
        # a keeper shifts makes a new kick task each time, and the robot never lines up (a penalty's 30 s)
        if best is None or lane > best[0] + LANE_TIE:
            best = (lane, p, kick)
    return best


def _pass(
    ball: Point,
    kicks: Sequence[KickReach],
    mates: Mapping[int, Point],
    opponents: Sequence[Point],
    robots: Sequence[Point],
    min_gain: float,
):
    best: tuple[float, int, Point, KickReach] | None = None
    upright = [k for k in kicks if not k.falls]
    for unum, m in sorted(mates.items()):
        target = (m[0] + LEAD, m[1])
        gain = target[0] - ball[0]
        if gain < min_gain:
            continue
        if opponents and min(_dist(m, o) for o in opponents) < FREE_RADIUS:
            continue
        d = _dist(ball, target)
        fitting = [k for k in upright if _fits(k, d)]
        if not fitting or lane_clearance(ball, target, [r for r in robots if _dist(r, m) > 0.3]) < LANE_RADIUS:
            continue
        kick = min(fitting, key=lambda k: abs(k.mean_for(d) - d))
        if best is None or gain > best[0]:
            best = (gain, unum, target, kick)
    return best


def far_kick(kicks: Sequence[KickReach], from_stand: bool = False) -> KickReach | None:
    """The kick for getting the ball away: one of at least :data:`FAR` m, upright if possible, then (with
    ``from_stand``) one the walk stops for, then the longest."""
    far = [k for k in kicks if k.distance >= FAR]
    return max(far, key=lambda k: (not k.falls, from_stand and k.from_stand, k.distance)) if far else None


def _advance(ball: Point, half: Point, goal_width: float, kicks: Sequence[KickReach], robots: Sequence[Point]):
    """An upright kick of at least :data:`ADVANCE_MIN` m, where to and the slack: the first free line of
    :data:`ADVANCE_TURNS`. A ball that may reach the goal line is aimed inside the posts."""
    upright = [k for k in kicks if not k.falls and k.distance >= ADVANCE_MIN]
    if not upright:
        return None
    kick = max(upright, key=lambda k: k.distance)
    reach = kick.distance + kick.sd
    goal = (half[0], 0.0)
    heading = math.atan2(goal[1] - ball[1], goal[0] - ball[0])
    for turn in ADVANCE_TURNS:
        a = heading + math.radians(turn)
        d = min(reach, _dist(ball, goal)) if turn == 0.0 else reach
        target = (ball[0] + d * math.cos(a), ball[1] + d * math.sin(a))
        if turn != 0.0 and (
            abs(target[1]) > half[1] - TOUCH_MARGIN
            or target[0] > half[0]  # out over a line: their throw-in or goal kick
            or _dist(ball, goal) - _dist(target, goal) < kick.distance / 2.0  # out to a corner, no nearer the goal
        ):
            continue
        if lane_clearance(ball, target, robots) >= LANE_RADIUS:
            slack = _aim_slack(ball, goal, goal_width, kick) if target == goal else CLEAR_SLACK
            return target, kick, slack
    return None


def clear_target(ball: Point, me: Point, half: Point, reach: float) -> Point:
    """Where a clear from ``ball`` by a robot standing at ``me`` goes, ``reach`` m on: up the field within
    :data:`CLEAR_CONE` of straight ahead, in the direction (a multiple of :data:`CLEAR_STEP`) nearest the one from
    the robot to the ball, so that the robot walks round the ball as little as it can; kept
    :data:`CLEAR_INSIDE` inside the field."""
    bearing = math.atan2(ball[1] - me[1], ball[0] - me[0]) if _dist(ball, me) > 1e-6 else 0.0
    a = max(-CLEAR_CONE, min(CLEAR_CONE, round(bearing / CLEAR_STEP) * CLEAR_STEP))
    x, y = ball[0] + reach * math.cos(a), ball[1] + reach * math.sin(a)
    edge_x, edge_y = half[0] - CLEAR_INSIDE, half[1] - CLEAR_INSIDE
    return round(min(edge_x, x), 2), round(max(-edge_y, min(edge_y, y)), 2)


def _dribble_target(ball: Point, goal: Point, opponents: Sequence[Point], half: Point) -> Point:
    """Towards ``goal``; past an opponent in the way on the side with more room."""
    heading = math.atan2(goal[1] - ball[1], goal[0] - ball[0])
    blockers = [
        o
        for o in opponents
        if _dist(o, ball) < DRIBBLE_LOOK
        and abs(math.remainder(math.atan2(o[1] - ball[1], o[0] - ball[0]) - heading, math.tau)) < DRIBBLE_SWERVE
    ]
    if not blockers:
        return goal
    o = min(blockers, key=lambda p: _dist(p, ball))
    side = math.remainder(math.atan2(o[1] - ball[1], o[0] - ball[0]) - heading, math.tau)
    # a blocker right on the line (an opponent standing at the ball): the side by the ball's place, not by his bearing,
    # which a few centimetres of estimate swing from side to side (a T1 whose dribble target flipped so stood 60 s at
    # a kick-off ball their taker stood by, session 45)
    aside = _dist(o, ball) * math.sin(abs(side))
    way = -math.copysign(1.0, side) if aside > DRIBBLE_TIE else (1.0 if ball[1] <= 0 else -1.0)
    # off his bearing by at least the angle that passes him DRIBBLE_CLEAR away, square across at the most
    needed = math.asin(min(1.0, DRIBBLE_CLEAR / max(_dist(o, ball), 1e-6))) + way * side
    turn = way * min(max(DRIBBLE_SWERVE, needed), math.pi / 2.0)
    a = heading + turn
    x, y = ball[0] + 3.0 * math.cos(a), ball[1] + 3.0 * math.sin(a)
    if abs(y) > half[1] - 0.8:  # no room that way: the other side
        a = heading - turn
        x, y = ball[0] + 3.0 * math.cos(a), ball[1] + 3.0 * math.sin(a)
    return max(-half[0] + 0.5, min(half[0] - 0.5, x)), max(-half[1] + 0.8, min(half[1] - 0.8, y))


def choose_on_ball(
    ball: Point,
    half: Point,
    goal_width: float,
    kicks: Sequence[KickReach],
    mates: Mapping[int, Point],
    opponents: Sequence[Point],
    set_play: bool = False,
    kick_off_side: float = 1.0,
    me: Point | None = None,
) -> Choice:
    """The on-ball player's request (see the module doc).

    ``half``: the field's half length and width; ``mates``: the teammates that may receive
    (this player and the goalie left out); ``kick_off_side``: the side (sign of y) a kick-off
    goes to when there is no one to pass to; ``me``: where this player stands (a clear's direction).
    """
    robots = [*mates.values(), *opponents]
    goal = (half[0], 0.0)
    pressed = any(_dist(o, ball) < PRESSURE for o in opponents)
    if set_play:
        # a kick of chosen length only at full length: a gentle one's landing foot can touch the slow ball again, a
        # double touch (a 7 v 7 half's kick-off, 2026-11-29: a free kick to them 1 s after it)
        fixed = [k for k in kicks if k.shortest is None]
        p = _pass(ball, fixed, mates, opponents, robots, min_gain=-2.0)
        if p is not None:
            return _pass_choice(ball, p)
        side = math.copysign(1.0, kick_off_side or 1.0)
        # from the stand where there is one: no hurry, and a Nao's quick kick from the walk-up to the kick-off
        # moved the ball 10 cm and 1 cm in two of three kick-offs v UT Austin Villa (2026-11-29)
        kick = far_kick(kicks, from_stand=True)
        if kick is not None:
            target = (min(half[0] - 2.0, ball[0] + 0.7 * half[0]), side * 0.6 * half[1])
            return Choice(Kick(target=target, kick=kick.name, slack=CLEAR_SLACK), 'set play to the side')
        return Choice(Dribble(target=(ball[0] + 3.0, side * 3.0)), 'set play dribble')
    if ball[0] < -half[0] * (1.0 - 2.0 * CLEAR_ZONE) and pressed:
        side = math.copysign(1.0, ball[1] or 1.0)
        target = (ball[0] + 0.4 * half[0], side * 0.7 * half[1])
        if me is not None:
            target = clear_target(ball, me, half, _dist(ball, target))
        kick = far_kick(kicks)
        if kick is not None:
            return Choice(Kick(target=target, kick=kick.name, slack=CLEAR_SLACK), 'clear')
        return Choice(Dribble(target=target), 'clear')
    shot = _shoot(ball, (half[0], goal_width), kicks, robots)
    if shot is not None and not shot[2].falls:
        return _shot_choice(ball, shot, goal_width)
    if _dist(ball, goal) < DRIBBLE_IN and ball[0] < half[0]:
        lanes = [(lane_clearance(ball, p, robots), p) for p in shot_points(half[0] + GOAL_PAST, goal_width)]
        lane, p = max(lanes, key=lambda lp: lp[0])
        if lane >= LANE_RADIUS:
            return Choice(Dribble(target=p, slack=_mouth_slack(p, goal_width)), 'dribble in')
    if shot is not None:
        return _shot_choice(ball, shot, goal_width)
    ahead = _advance(ball, half, goal_width, kicks, robots)
    min_gain = 0.0 if pressed else PASS_GAIN
    if ahead is not None:  # a pass must carry the ball about as far up the field as the advance would
        min_gain = max(min_gain, ADVANCE_SHARE * (ahead[0][0] - ball[0]))
    p = _pass(ball, kicks, mates, opponents, robots, min_gain=min_gain)
    if p is not None:
        return _pass_choice(ball, p)
    if ahead is not None:
        target, kick, slack = ahead
        return Choice(Kick(target=target, kick=kick.name, slack=slack), 'advance')
    goal_past = (half[0] + GOAL_PAST, 0.0)
    target = _dribble_target(ball, goal_past, opponents, half)
    slack = _mouth_slack(target, goal_width) if target == goal_past else 0.0
    return Choice(Dribble(target=target, slack=slack), 'dribble')


def _mouth_slack(p: Point, goal_width: float) -> float:
    """How far either side of ``p`` (a point of the goal mouth) the ball may go and still go in."""
    return round(max(0.0, goal_width / 2.0 - POST_MARGIN - abs(p[1])), 2)


def _aim_slack(ball: Point, p: Point, goal_width: float, kick: KickReach) -> float:
    """How far either side of ``p`` a kick at the goal may aim: the mouth's slack less the kick's direction spread
    there (one sd), so that the ball goes in even where its aim is at the edge of the window (aimed at the mouth's
    edge, 3 of 8 shots from 4 m went wide, 2026-11-29)."""
    spread = _dist(ball, p) * math.tan(math.radians(kick.direction_sd_deg))
    return round(max(0.0, _mouth_slack(p, goal_width) - spread), 2)


def _shot_ask(ball: Point, p: Point) -> float:
    """m a shot at ``p`` asks a kick of chosen length for: :data:`SHOT_OVER` past the point."""
    return _dist(ball, p) + SHOT_OVER


def _shot_choice(ball: Point, shot: tuple[float, Point, KickReach], goal_width: float) -> Choice:
    _, p, kick = shot
    length = kick.length(_shot_ask(ball, p))
    return Choice(Kick(target=p, kick=kick.name, slack=_aim_slack(ball, p, goal_width, kick), distance=length), 'shoot')


def _pass_choice(ball: Point, p: tuple[float, int, Point, KickReach]) -> Choice:
    _, unum, target, kick = p
    length = kick.length(_dist(ball, target))
    return Choice(Kick(target=target, kick=kick.name, slack=PASS_SLACK, distance=length), f'pass {unum}')
