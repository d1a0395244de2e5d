"""What each player does: a role per player, each role a small behaviour (pure Python).

Inputs are a :class:`Situation`: the world model's pose, ball, teammates and opponents (team
frame, our goal at -x), the game state and what motion reports. The output is a motion task
(:mod:`robocup3d_motion.requests`) or ``None`` (carry on). Roles, as UT Austin Villa's base
team and FC Portugal's assign them:

* player 1 is the **goalie**: on the goal line between the ball and the goal centre; it comes out
  to clear a ball that is, or will stop (the world model's ``ball/stop``), in our penalty box;
* the **striker** (on the ball) is the field player nearest the ball, or nearest where a rolling ball will stop
  (:func:`play_point`; :func:`robocup3d_strategy.roles.on_ball_player`; teammates' positions older than
  :data:`MATE_AGE` or fallen do not count): it shoots, passes, clears or dribbles
  (:mod:`robocup3d_strategy.on_ball`), takes our set plays without a direct shot, and keeps
  the field's ``set_play_distance`` from the ball in the opponents' set plays (so does everyone);
* the others take the role places of ``config/roles.yaml`` (supporter, defenders, wings,
  forwards, relative to that point, per phase) as SCRAM assigns them (:func:`robocup3d_strategy.roles.scram`),
  kept clear of the ball and out of our goalie's area (the rules limit the players in it);
  without a roles file, their formation place moved with the ball.

**Walking round robots.** Every task carries where the other robots are (``avoid``), and a
walk to a place (not to the ball) the ball too: motion walks round them
(:func:`robocup3d_motion.ball_skills.detour`). A set play's taker that walks away after its
touch does not run into the ball again.

**Penalties.** In a shoot-out (``Situation.penalty``, from the ``/penalty`` topic that ``robocup3d
penalties`` publishes) the kicker plays the ball as the striker does in play on, with no one to pass
to (a shot, or a dribble into the goal), and the keeper guards the goal as the goalie does; every
other player stands still. The goalie, in a match too, moves to where a rolling ball's path crosses
its line (the world model's ``ball/stop``), not only to where the ball is.

**No double touch.** The player who took our set play may not touch the ball again until
another player has, however long that takes (both servers give the opponents a free kick for
it): every player keeps it off the ball (:class:`Decider`) until the ball moved by :data:`MOVED`
while another robot was within :data:`TOUCH` of it (or had been in the last :data:`NEAR_MEMORY` s),
or for :data:`RETOUCH_BAN` s at most (against a touch the world model missed). A robot standing at
the ball is no touch: an opponent at a kick-off ball that our taker had only nudged stood 0.2 m from
it for a second, the ban ended, our taker touched it again, and rcssserver3d gave them a free kick
(session 34). A player that was not near the ball's spot when play went on did not take it
(a trainer's or the referee's drop ball ends a set play too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from robocup3d_motion.requests import MAX_AVOID, Dribble, GoTo, Kick, MotionRequest, SkillRequest
from robocup3d_strategy.on_ball import CLEAR_SLACK, Choice, KickReach, choose_on_ball, clear_target, far_kick
from robocup3d_strategy.roles import ServerRoles, on_ball_player, scram, slot_places

__all__ = [
    'Decider',
    'Field',
    'Goalie',
    'Mate',
    'Situation',
    'Striker',
    'Supporter',
    'choose_role',
    'goal_kick_drop',
    'phase_of',
    'set_play_of',
]

MATE_AGE = 1.5  # s: an older teammate position does not count
STRIKER_MARGIN = 0.5  # m another player must be closer by to take the ball over
SUPPORT_SHIFT = (0.5, 0.3)  # how far the supporters' places follow the ball (x, y)
SUPPORT_CLEAR = 2.0  # m a supporter keeps from the ball
# m our side of the halfway line every supporter keeps in a kick-off, ours or theirs: RCSSServerMJ moves a player in the
# other half (but our taker, in the centre circle) to the touchline until the ball is played (soccer_referee.py)
KICKOFF_OWN_HALF = 0.5
DROP_WAIT = 0.8  # m behind the drop point of their goal kick (away from their goal) the striker waits
REFRESH = 1.0  # s: the same request is sent again after this long (with where the other robots are now)
# s an on-ball kick or dribble under way is kept while the ball lies still, though another would now be chosen: each
# new one starts its approach over (a Nao 0.7 m from the ball went dribble, kick, pass, dribble, kick in 12 s against
# UT Austin Villa, session 39, and never touched it)
COMMIT = 4.0
COMMIT_BALL = 0.3  # m the ball may move and the kick or dribble under way is still kept
# motion's phases of a kick in which the robot stands at the ball for it: the kick is kept past COMMIT while the ball
# lies still. Another request then throws the stop and the rest away (3-4 s); in a 7 v 7 half (session 42) an advance
# whose target flipped between two free lines after COMMIT broke a T1's stop at the ball and kicked 7 s later
HELD = frozenset({'settling', 'kicking'})
SEARCH_TURN = 1.5  # rad ahead of its heading a player looking for the ball turns to
SEEK_NEAR = 2.0  # m: the on-ball player that lost a ball further than this walks to where it was, nearer it turns
TOUCH = 0.35  # m: a robot this near the ball may have touched it
MOVED = 0.2  # m the ball moves while another robot is near it: that robot touched it
NEAR_MEMORY = 1.0  # s another robot counts as near the ball after it was last seen within TOUCH of it
RETOUCH_BAN = 60.0  # s at most a set play's taker is kept off the ball (20 s was too short: a foul in a 3 v 3)
TAKER_NEAR = 1.0  # m: the on-ball player further than this from the set play's spot as play went on did not take it
TAKER_CLEAR = 1.0  # m: nearer the ball than this, the set play's taker stands still rather than walk off
ROLLING = 0.3  # m: a ball that will stop this much nearer our goal line rolls towards it
# m: a ball that will stop further than this from where it is rolls there, and the player nearest that point goes on
# the ball while the others take their places about it: after an advance kick the ball rolled 7-8 s and stopped 12-16 m
# from the nearest teammate, who set out only then (7 v 7 against the formation team, session 41)
ROLL_AHEAD = 1.0
SET_PLAY_TIME = 14.5  # s: a set play that lasted this long may have ended untouched (RCSSServerMJ gives 15 s)
# The goalie guards standing anywhere this deep in front of its line (m), keeping its depth: a walk that cannot step
# back turns round to walk to a place behind it (a T1 sent 1.1 m back to its line turned round and round for 40 s;
# with 1.5 m, beamed 1.1 m out, it crept past the band's edge and turned round there: a 3 v 3, 2026-11-28)
GUARD_DEPTH = 3.0
# m an opponent may be nearer the ball in our box than the goalie and it still comes out: at one nearer by 0.02 m it
# stood 0.34 m from a ball on its goal line and watched UT Austin Villa's striker score (session 39)
GOALIE_MARGIN = 0.5
GUARD_STEP = 0.5  # m: within that depth, a guard place further along the line is walked to this much at a time,
# sidestepping and facing the ball (a place further than the walk's near range is turned to and walked to)


@dataclass(frozen=True)
class Field:
    """Field size (m) and the two areas in front of each goal that rules concern.

    ``box``: the area (depth, width) in which our goalie comes out to clear the ball;
    ``area``: the area in which at most ``area_max`` of a team's players may stand (goalie
    included), so the field players keep out of ours; ``set_play_distance``: how far every
    player keeps from the ball in the opponents' set plays (a little more than the rules ask).
    """

    length: float = 30.0
    width: float = 20.0
    goal_width: float = 2.1
    box: tuple[float, float] = (1.8, 6.0)
    area: tuple[float, float] = (1.8, 6.0)
    area_max: int = 3
    set_play_distance: float = 2.5
    # RCSSServerMJ: a goal kick not taken within its time is dropped at the corner of the kicking team's goalie area
    # on the server's +y side (soccer_referee._check_timeouts), and play goes on
    goal_kick_drop: bool = False

    @property
    def their_goal(self) -> tuple[float, float]:
        return (self.length / 2.0, 0.0)

    def clamp(self, x: float, y: float, margin: float = 0.5) -> tuple[float, float]:
        hx, hy = self.length / 2.0 - margin, self.width / 2.0 - margin
        return max(-hx, min(hx, x)), max(-hy, min(hy, y))

    def in_our(self, which: tuple[float, float], x: float, y: float, margin: float = 0.0) -> bool:
        """Whether (x, y) is inside our ``box`` or ``area`` (given as ``which``), grown by ``margin``."""
        depth, width = which
        return x < -self.length / 2.0 + depth + margin and abs(y) < width / 2.0 + margin

    def out_of_our_area(self, x: float, y: float, margin: float = 0.3) -> tuple[float, float]:
        """(x, y), or in front of our ``area`` (by ``margin``) if it is inside it."""
        if self.in_our(self.area, x, y, margin):
            x = -self.length / 2.0 + self.area[0] + margin
        return x, y

    def out_of_their_area(self, x: float, y: float, margin: float = 0.5) -> tuple[float, float]:
        """(x, y), or in front of their ``area`` (by ``margin``) if it is inside it: at their goal kick
        RCSSServerMJ's referee puts any player of ours in there beyond the touchline at once."""
        if self.in_our(self.area, -x, y, margin):
            x = self.length / 2.0 - self.area[0] - margin
        return x, y


# rcssserver3d 0.7.3: penalty area 1.8 x 6.0 m (its monitor's game info says PenaltyWidth 3.9, but the rules'
# box, soccerruleaspect.cpp, and the drawn lines add GoalWidth 2.1), at most 3 defenders in it, FreeKickDistance
# 2 m. RCSSServerMJ's fifa7vs7 field: penalty area 9 x 16.5 m, goalie area 4 x 7.3 m with at most 2 players of a
# team in it; in the opponents' kick-off, throw-in, corner and free kicks its referee moves every player of ours
# within the centre circle's radius (5.5 m) of the ball to the touchline, at once and every cycle (rcsssmj 0.2.1,
# soccer_referee._penalize_misplaced_players). We keep 7.5 m: with 6.0 a T1 sent there during their kick-off stood
# 5.53 m from the ball 3 s later (stepping in place it creeps forwards; its pose is a few cm off) and was put beyond
# the touchline, where it fell (a 7 v 7 half, session 42); with 6.5, 7 of ours were put there in their kick-offs
# in session 44's three halves: walking along the circle to its place one turned in towards the ball as it set off
# and crept 1 m in, another fell 1 m in.
FIELDS = {
    'simspark': Field(30.0, 20.0, 2.1, box=(1.8, 6.0), area=(1.8, 6.0), area_max=3, set_play_distance=2.5),
    'mujoco': Field(
        55.0, 36.0, 3.66, box=(9.0, 16.5), area=(4.0, 7.3), area_max=2, set_play_distance=7.5, goal_kick_drop=True
    ),
}


@dataclass(frozen=True)
class Mate:
    """A teammate as the world model tracks it (team frame)."""

    unum: int
    x: float
    y: float
    age: float = 0.0
    fallen: bool = False


@dataclass
class Situation:
    """What a player knows when it decides."""

    unum: int
    phase: str  # see phase_of
    pose: tuple[float, float, float] | None
    ball: tuple[float, float] | None
    home: tuple[float, float, float]
    field: Field = field(default_factory=Field)
    mates: tuple[Mate, ...] = ()
    kicks: tuple[KickReach, ...] = ()  # the kicks this robot has (config/kicks.yaml)
    opponents: tuple[tuple[float, float], ...] = ()  # opponents seen or heard lately
    fallen: bool = False
    roles: ServerRoles | None = None  # role places (config/roles.yaml) for this server
    place: tuple[float, float] | None = None  # the role place assigned to this player (set by assign)
    banned: int | None = None  # the set play's taker, kept off the ball (no double touch)
    ball_stop: tuple[float, float] | None = None  # where the ball will stop (world model), if it rolls
    last_ball: tuple[float, float] | None = None  # where the ball was last believed to be, however vaguely
    penalty: str = ''  # in a penalty shoot-out: 'kick' (this player takes it), 'keep' (keeps goal), 'out'
    set_play: str = ''  # in phase ours or theirs: which (set_play_of: 'goal_kick', 'kickoff', 'free_kick', ...)
    side: str = ''  # 'left' or 'right': the side the server gave us (its frame's +y is ours mirrored when right)


def phase_of(play_mode: str | None, side: str | None) -> str:
    """A play mode (either server's name) as one of: before, play_on, ours, theirs, goal, over."""
    mode = (play_mode or '').lower()
    if mode in ('', 'beforekickoff', 'before_kick_off'):
        return 'before'
    if mode in ('playon', 'play_on'):
        return 'play_on'
    if mode in ('goal_left', 'goal_right'):  # a goal; not goal_kick_left/right, which are set plays
        return 'goal'
    if 'gameover' in mode or 'game_over' in mode:
        return 'over'
    team = mode.rsplit('_', 1)[-1]
    if team in ('left', 'right') and side in ('left', 'right'):
        return 'ours' if team == side else 'theirs'
    return 'play_on'


def set_play_of(play_mode: str | None) -> str:
    """The set play a play mode names, without its team: ``goal_kick_right`` and ``goal_kick_left`` are
    ``goal_kick``, ``KickOff_Left`` is ``kickoff`` ('' for a mode of no team)."""
    mode = (play_mode or '').lower()
    head, _, team = mode.rpartition('_')
    return head if team in ('left', 'right') and head not in ('goal', '') else ''


def goal_kick_drop(s: Situation) -> tuple[float, float] | None:
    """Where the ball of their goal kick will be dropped if they do not take it in time (team frame), on a server
    that drops it (:attr:`Field.goal_kick_drop`); None elsewhere or when our side is not known."""
    if not s.field.goal_kick_drop or s.side not in ('left', 'right'):
        return None
    y = s.field.area[1] / 2.0 if s.side == 'left' else -s.field.area[1] / 2.0
    return s.field.length / 2.0 - s.field.area[0], y


def _dist(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _where(s: Situation, unum: int | None) -> tuple[float, float] | None:
    """Where player ``unum`` of ours is: this player's pose, or a teammate's lately seen or heard position."""
    if unum is None:
        return None
    if unum == s.unum:
        return s.pose[:2] if s.pose is not None else None
    return next(((m.x, m.y) for m in s.mates if m.unum == unum and m.age <= MATE_AGE), None)


def field_players(s: Situation) -> dict[int, tuple[float, float]]:
    """The field players available for roles: this one and the teammates seen or heard lately, not fallen."""
    out = {m.unum: (m.x, m.y) for m in s.mates if m.unum not in (1, s.unum) and m.age <= MATE_AGE and not m.fallen}
    if s.pose is not None and not s.fallen and s.unum != 1:
        out[s.unum] = (s.pose[0], s.pose[1])
    return out


def others(s: Situation) -> tuple[tuple[float, float], ...]:
    """Where the other robots are (teammates seen or heard lately, opponents), to walk round."""
    mates = [(m.x, m.y) for m in s.mates if m.unum != s.unum and m.age <= MATE_AGE]
    return tuple((round(x, 2), round(y, 2)) for x, y in [*mates, *s.opponents][:MAX_AVOID])


def play_point(s: Situation) -> tuple[float, float]:
    """Where the play is: the ball, or where it will stop when that is more than :data:`ROLL_AHEAD` m on (FC Portugal's
    active player chases the point where the ball will have slowed down)."""
    assert s.ball is not None
    stop = s.ball_stop
    if stop is not None and math.hypot(stop[0] - s.ball[0], stop[1] - s.ball[1]) > ROLL_AHEAD:
        return stop
    return s.ball


def assign(s: Situation, on_ball: int | None) -> tuple[str, int | None]:
    """This player's role (``goalie``, ``striker``, ``supporter``) and who is on the ball.

    A supporter's place goes into ``s.place`` (SCRAM over ``s.roles``' slots for the phase).
    """
    if s.unum == 1:
        return 'goalie', on_ball
    if s.ball is None or s.pose is None or s.fallen:
        return 'supporter', on_ball
    players = field_players(s)
    candidates = {u: p for u, p in players.items() if u != s.banned} or players
    ball = play_point(s)
    on_ball = on_ball_player(candidates, ball, on_ball)
    if on_ball == s.unum:
        return 'striker', on_ball
    if s.roles is not None:
        slots = s.roles.slots(s.phase, s.set_play)
        places = slot_places(slots, ball, (s.field.length / 2.0, s.field.width / 2.0))
        rest = {u: p for u, p in players.items() if u != on_ball}
        mine = scram(rest, [p for _, p in places]).get(s.unum)
        s.place = places[mine][1] if mine is not None else None
    return 'supporter', on_ball


def choose_role(s: Situation, was_striker: bool) -> str:
    """This player's role alone (with ``was_striker``: it held the ball so far)."""
    return assign(s, s.unum if was_striker else None)[0]


def seek_lost_ball(s: Situation) -> Choice | None:
    """The on-ball player's search for a ball it lost: a walk to where it was last believed to be, when that is
    further than :data:`SEEK_NEAR`; None nearer (the supporters' turn on the spot then). A lone striker walking at a
    ball 15 m away took it for lost every second or two (its estimate's spread past the limit); it turned away
    to search each time and walked there in fits."""
    if s.pose is None or s.last_ball is None:
        return None
    x, y, _ = s.pose
    bx, by = s.last_ball
    if math.hypot(bx - x, by - y) <= SEEK_NEAR:
        return None
    return Choice(GoTo(x=bx, y=by, theta=math.atan2(by - y, bx - x)), 'search where it was')


class Striker:
    """Plays the ball: shoots, passes, clears or dribbles (:func:`choose_on_ball`)."""

    def act(self, s: Situation) -> Choice | None:
        if s.ball is None:
            return None
        if s.phase == 'theirs' and s.set_play == 'goal_kick' and (drop := goal_kick_drop(s)) is not None:
            # the rules ask only that we keep out of their goalie area: wait behind where the ball will be dropped,
            # facing their goal (against a team that does not take it, 15 s and a 10 s walk saved each time)
            gx, gy = s.field.their_goal
            d = _dist(drop, (gx, gy)) or 1.0
            x, y = drop[0] + DROP_WAIT * (drop[0] - gx) / d, drop[1] + DROP_WAIT * (drop[1] - gy) / d
            return Choice(GoTo(x=x, y=y, theta=math.atan2(gy - y, gx - x)), 'wait for the drop')
        if s.phase == 'theirs':  # keep away, between the ball and our goal
            bx, by = s.ball
            d = math.hypot(bx + s.field.length / 2.0, by) or 1.0
            keep = s.field.set_play_distance
            x, y = bx - keep * (bx + s.field.length / 2.0) / d, by - keep * by / d
            x, y = s.field.out_of_our_area(x, y)
            return Choice(GoTo(x=x, y=y, theta=math.atan2(by - y, bx - x)), 'keep the distance')
        mates = {u: p for u, p in field_players(s).items() if u != s.unum}
        return choose_on_ball(
            s.ball,
            (s.field.length / 2.0, s.field.width / 2.0),
            s.field.goal_width,
            s.kicks,
            mates,
            s.opponents,
            set_play=s.phase == 'ours',
            # across from the side the taker's place is on: a kick that goes off at an angle to the side is taken
            # from beside the ball on the other side (the T1's long kick, config/formations.yaml)
            kick_off_side=-s.home[1] or 1.0,
            me=None if s.pose is None else (s.pose[0], s.pose[1]),
        )


class Goalie:
    """Guards the goal; comes out to clear a ball that is, or will stop, in our box, unless an opponent is clearly
    (:data:`GOALIE_MARGIN`) nearer it."""

    def act(self, s: Situation) -> Choice | None:
        line_x = -s.field.length / 2.0 + 0.4
        if s.ball is None:
            return Choice(GoTo(x=line_x, y=0.0, theta=0.0), 'guard')
        bx, by = s.ball
        stop = s.ball_stop or s.ball
        ours = s.phase in ('play_on', 'ours')
        near = _dist(s.pose[:2], s.ball) - GOALIE_MARGIN if s.pose is not None else 0.0
        mine = s.pose is None or all(_dist(o, s.ball) > near for o in s.opponents)
        # a ball that will stop past our goal line is a shot on goal: block its path (below), not clear it
        stops_in = s.field.in_our(s.field.box, *stop) and stop[0] > -s.field.length / 2.0
        if ours and mine and (s.field.in_our(s.field.box, bx, by) or stops_in):
            away = (0.0, math.copysign(s.field.width / 3.0, by or 1.0))
            if s.pose is not None:  # the way round the ball is shortest
                away = clear_target(s.ball, (s.pose[0], s.pose[1]), (s.field.length / 2.0, s.field.width / 2.0),
                                    _dist(s.ball, away))  # fmt: skip
            kick = far_kick(s.kicks)
            if kick is None:
                return Choice(Dribble(target=away), 'clear')
            return Choice(Kick(target=away, kick=kick.name, slack=CLEAR_SLACK), 'clear')
        half = s.field.goal_width / 2.0
        y = max(-half, min(half, by * 0.3))
        crossing = _crossing(s.ball, s.ball_stop, line_x)
        if crossing is not None:  # a ball rolling towards our goal: to where its path crosses the line
            y = max(-half, min(half, crossing))
        keep = s.field.set_play_distance
        if s.phase == 'theirs' and math.hypot(bx - line_x, by - y) < keep:
            # their set play near our goal: the rules keep the goalie away too; along the line, the near side
            side = math.copysign(1.0, y - by or by or 1.0)
            y = by + side * math.sqrt(max(keep * keep - (bx - line_x) ** 2, 0.0))
            return Choice(GoTo(x=line_x, y=y, theta=math.atan2(by - y, bx - line_x)), 'keep the distance')
        x, y = _guard_place(s.pose, line_x, y)
        return Choice(GoTo(x=x, y=y, theta=math.atan2(by - y, bx - x)), 'guard')


def _guard_place(pose: tuple[float, float, float] | None, line_x: float, y: float) -> tuple[float, float]:
    """Where the goalie guards from, to cover ``y`` on its line: standing within :data:`GUARD_DEPTH` in front of
    the line, at its own depth and at most :data:`GUARD_STEP` along it from where it stands; else on the line."""
    if pose is None or not line_x - 0.2 <= pose[0] <= line_x + GUARD_DEPTH:
        return line_x, y
    px, py = pose[0], pose[1]
    return px, py + max(-GUARD_STEP, min(GUARD_STEP, y - py))


def _crossing(ball: tuple[float, float], stop: tuple[float, float] | None, line_x: float) -> float | None:
    """Where the path of a ball rolling from ``ball`` to ``stop`` towards our goal crosses x = ``line_x`` (its y),
    or None when it does not roll towards the goal (:data:`ROLLING` m at least)."""
    if stop is None or ball[0] - stop[0] < ROLLING or ball[0] <= line_x:
        return None
    t = (line_x - ball[0]) / (stop[0] - ball[0])
    return ball[1] + t * (stop[1] - ball[1])


class PenaltyKicker:
    """Takes a penalty: plays the ball as the striker does in play on, with no one to pass to."""

    def act(self, s: Situation) -> Choice | None:
        return ROLES['striker'].act(replace(s, phase='play_on', mates=()))


class PenaltyKeeper:
    """Keeps goal in a penalty: the goalie in play on."""

    def act(self, s: Situation) -> Choice | None:
        return ROLES['goalie'].act(replace(s, phase='play_on'))


class Supporter:
    """Holds its formation place, moved with the ball and kept clear of it; looks for a lost ball."""

    def act(self, s: Situation) -> Choice | None:
        hx, hy, _ = s.home
        if s.ball is None:
            if s.pose is not None:  # turn on the spot until the ball is seen again, towards where it was
                x, y, yaw = s.pose
                turn = SEARCH_TURN
                if s.last_ball is not None:
                    bearing = math.remainder(math.atan2(s.last_ball[1] - y, s.last_ball[0] - x) - yaw, math.tau)
                    turn = math.copysign(SEARCH_TURN, bearing)
                return Choice(GoTo(x=x, y=y, theta=math.remainder(yaw + turn, math.tau)), 'search')
            return Choice(GoTo(x=hx, y=hy, theta=0.0), 'home')
        bx, by = s.ball
        if s.place is not None:
            x, y = s.place
        else:
            x, y = s.field.clamp(hx + SUPPORT_SHIFT[0] * bx, hy + SUPPORT_SHIFT[1] * by)
        clear = s.field.set_play_distance if s.phase == 'theirs' else SUPPORT_CLEAR
        d = math.hypot(x - bx, y - by)
        if d < clear:  # out of the striker's way
            k = clear / max(d, 1e-3)
            x, y = s.field.clamp(bx + (x - bx) * k, by + (y - by) * k)
        x, y = s.field.out_of_our_area(x, y)  # the goalie's (the rules limit the players in it)
        x, y = s.field.out_of_their_area(x, y)
        if s.set_play == 'kickoff' and s.phase in ('ours', 'theirs'):
            x = min(x, -KICKOFF_OWN_HALF)
        return Choice(GoTo(x=x, y=y, theta=math.atan2(by - y, bx - x)), 'support')


ROLES = {'goalie': Goalie(), 'striker': Striker(), 'supporter': Supporter()}
PENALTY_ROLES = {'kick': ('kicker', PenaltyKicker()), 'keep': ('keeper', PenaltyKeeper())}


def same_request(a: MotionRequest | None, b: MotionRequest | None, tolerance: float = 0.5) -> bool:
    """Whether ``b`` asks for what ``a`` already asks (targets within ``tolerance`` m): no need to send it."""
    if a is None or b is None or a.kind != b.kind:
        return a is b
    if isinstance(a, GoTo) and isinstance(b, GoTo):
        return math.hypot(a.x - b.x, a.y - b.y) < tolerance and abs(a.theta - b.theta) < 0.3
    ta, tb = getattr(a, 'target', None), getattr(b, 'target', None)
    if ta is None or tb is None:
        return a == b
    return _dist(ta, tb) < tolerance and getattr(a, 'kick', '') == getattr(b, 'kick', '')


class Decider:
    """One player's decisions over time: its role, and which requests are worth sending.

    A request goes out when it differs from the last one, when motion has finished (or dropped)
    the last one's task, or every :data:`REFRESH` s; an on-ball kick or dribble under way is kept for
    :data:`COMMIT` s while the ball lies still, whatever else would be chosen meanwhile, and for as long as
    motion stands at the ball for the kick (:data:`HELD`). Each carries a
    new ``id`` so that ``motion_state`` tells its outcome apart from an older request's.
    """

    def __init__(self) -> None:
        self.role = 'supporter'
        self.reason = ''  # why the last request: shoot, pass 4, dribble, support, ...
        self.on_ball: int | None = None  # who holds the ball, as this player sees it
        self.last: MotionRequest | None = None
        self.sent_at = -math.inf
        # when the last on-ball kick or dribble was chosen, and where the ball lay then (COMMIT)
        self._committed: tuple[float, tuple[float, float]] | None = None
        self.next_id = 1
        self._idle = False
        self._phase = 'before'
        self._spot: tuple[float, float] | None = None  # the ball in our set play
        self.taker: int | None = None  # our set play's taker, kept off the ball (no double touch)
        self._taken_at = -math.inf
        self._ours_since = -math.inf  # when our set play began
        self._timed_out = False  # our last set play ended by its time running out (nobody touched the ball)
        self._near_at = -math.inf  # when another robot was last within TOUCH of the ball (the taker banned)
        self._ball_when_near: tuple[float, float] | None = None  # the ball as another robot came near it

    def decide(self, s: Situation, now: float, task: dict | None = None) -> MotionRequest | None:
        """The request to send now, or None; ``task``: ``motion_state``'s task."""
        if s.penalty and s.phase == 'play_on':
            self._idle = False
            self.role, behaviour = PENALTY_ROLES.get(s.penalty, ('out', None))
            choice = behaviour.act(s) if behaviour is not None else Choice(SkillRequest(name='stand'), 'out')
            return self._send(choice, s, now, task)
        if s.phase in ('before', 'goal', 'over') or s.penalty:
            if self._idle:
                return None
            self._idle, self.last = True, None
            return SkillRequest(name='stand')
        self._idle = False
        self._watch_set_play(s, now)
        s.banned = self.taker
        self.role, self.on_ball = assign(s, self.on_ball)
        at_feet = s.ball is not None and s.pose is not None and _dist(s.pose[:2], s.ball) < TAKER_CLEAR
        if self.taker == s.unum and at_feet:
            # we took the set play and the ball is still at our feet: any step (or the rest of a kick) may touch
            # it again, a foul (RCSSServerMJ gives a free kick for a second touch after 1 s): stand still
            choice: Choice | None = Choice(SkillRequest(name='stand'), 'took the set play: keep off the ball')
        elif s.ball is None and self.on_ball == s.unum and (seek := seek_lost_ball(s)) is not None:
            choice = seek
        else:
            choice = ROLES[self.role].act(s)
        return self._send(choice, s, now, task)

    def _send(self, choice: Choice | None, s: Situation, now: float, task: dict | None) -> MotionRequest | None:
        """The choice's request, if it is worth sending now (see the class doc)."""
        if choice is None:
            return None
        req = choice.request
        ours = task is not None and self.last is not None and task.get('id') == self.last.id
        finished = ours and task.get('phase') in ('done', 'failed', 'cancelled')
        held = ours and task.get('phase') in HELD
        if not finished and self._keeps_on_ball(req, s, now, ours, held):
            req = self.last.model_copy(update={'avoid': ()})  # refreshed below as due
        else:
            self.reason = choice.reason
        if same_request(self.last, req) and not finished and now - self.sent_at < REFRESH:
            return None
        if isinstance(req, Kick | Dribble) and not same_request(self.last, req):
            self._committed = (now, s.ball) if s.ball is not None else None
        update: dict = {'id': self.next_id}
        if isinstance(req, GoTo | Kick | Dribble):  # walk round the other robots, and round the ball unless going to it
            ball = (s.ball,) if isinstance(req, GoTo) and s.ball is not None else ()
            update['avoid'] = others(s) + tuple((round(x, 2), round(y, 2)) for x, y in ball)
        req = req.model_copy(update=update)
        self.next_id += 1
        self.last, self.sent_at = req, now
        return req

    def _keeps_on_ball(self, req: MotionRequest, s: Situation, now: float, ours: bool, held: bool = False) -> bool:
        """Whether the on-ball kick or dribble under way stays, rather than ``req`` (see :data:`COMMIT`; ``held``:
        motion stands at the ball for the kick, :data:`HELD`)."""
        last, c = self.last, self._committed
        if not (ours and isinstance(last, Kick | Dribble) and isinstance(req, Kick | Dribble)) or c is None:
            return False
        if same_request(last, req) or s.ball is None or (now - c[0] > COMMIT and not held):
            return False
        return _dist(s.ball, c[1]) < COMMIT_BALL

    def _watch_set_play(self, s: Situation, now: float) -> None:
        """Who took our set play, kept off the ball until someone else has touched it (see the module doc)."""
        if s.phase == 'ours' and s.ball is not None:
            self._spot = s.ball
        if s.phase == 'ours' and self._phase != 'ours':
            self._ours_since = now
        if self._phase == 'ours' and s.phase == 'play_on':
            self.taker, self._taken_at = self.on_ball, now
            where = _where(s, self.taker)
            if where is not None and self._spot is not None and _dist(where, self._spot) > TAKER_NEAR:
                self.taker = None  # nowhere near the ball's spot: play went on without its touch (a drop ball)
            # play went on before the set play's time ran out: someone touched the ball, if only a nudge
            self._timed_out = now - self._ours_since >= SET_PLAY_TIME
        self._phase = s.phase
        if self.taker is None:
            return
        others = [(m.x, m.y) for m in s.mates if m.unum != self.taker and m.age <= MATE_AGE]
        if s.pose is not None and s.unum != self.taker:
            others.append((s.pose[0], s.pose[1]))
        others.extend(s.opponents)
        untouched = s.ball is not None and self._spot is not None and _dist(s.ball, self._spot) < 0.25
        if (
            s.phase != 'play_on'
            or now - self._taken_at > RETOUCH_BAN
            or self._touched_by_another(s, others, now)
            or (untouched and self._timed_out and now - self._taken_at > 3.0)
        ):
            self.taker = None
            self._ball_when_near = None

    def _touched_by_another(self, s: Situation, others: list[tuple[float, float]], now: float) -> bool:
        """The ball moved by :data:`MOVED` while another robot was near it (see the module doc)."""
        if s.ball is None:
            return False
        if any(_dist(p, s.ball) < TOUCH for p in others):
            if self._ball_when_near is None or now - self._near_at > NEAR_MEMORY:
                self._ball_when_near = s.ball
            self._near_at = now
        elif now - self._near_at > NEAR_MEMORY:
            self._ball_when_near = None
        return self._ball_when_near is not None and _dist(s.ball, self._ball_when_near) >= MOVED
