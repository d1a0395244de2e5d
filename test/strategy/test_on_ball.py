"""The on-ball player's choice, without ROS: shoot, pass, clear or dribble (robocup3d_strategy.on_ball)."""

from __future__ import annotations

import math

import pytest

from robocup3d_motion.kick_config import ball_skills_for, load_kicks_config
from robocup3d_motion.requests import Dribble, Kick
from robocup3d_strategy.on_ball import (
    CLEAR_CONE,
    DRIBBLE_CLEAR,
    DRIBBLE_SWERVE,
    GOAL_PAST,
    KickReach,
    choose_on_ball,
    clear_target,
    far_kick,
    kick_reaches,
    lane_clearance,
    shot_points,
)

HALF = (27.5, 18.0)  # RCSSServerMJ's field
GOAL_WIDTH = 3.66
LONG = KickReach('long', 16.4, 1.3, falls=True)  # the T1's: far, and it falls after it
NAO_KICK = KickReach('quick', 4.5, 0.2)  # a Nao's: 4.5 m, upright


def choose(ball, kicks=(LONG,), mates=None, opponents=(), **kw):
    return choose_on_ball(ball, HALF, GOAL_WIDTH, kicks, mates or {}, list(opponents), **kw)


def test_a_lane_is_blocked_only_by_robots_ahead_of_the_ball() -> None:
    assert lane_clearance((0.0, 0.0), (10.0, 0.0), [(5.0, 0.3), (-1.0, 0.0)]) == pytest.approx(0.3)
    assert lane_clearance((0.0, 0.0), (10.0, 0.0), [(-0.5, 0.0)]) == math.inf
    assert lane_clearance((0.0, 0.0), (10.0, 0.0), [(12.0, 0.0)]) == pytest.approx(2.0)  # past the end
    points = shot_points(27.5, GOAL_WIDTH)
    assert points[0] == (27.5, 0.0) and all(abs(y) < GOAL_WIDTH / 2 for _, y in points)


def test_it_shoots_past_the_goalkeeper_on_the_open_side() -> None:
    c = choose((20.0, 0.0), opponents=[(27.0, 0.0)])  # their keeper on the line, in the middle
    assert c.reason == 'shoot' and isinstance(c.request, Kick)
    assert abs(c.request.target[1]) > 1.0 and c.request.target[0] == HALF[0]
    c = choose((20.0, 0.0), opponents=[(22.0, 0.0), (22.0, 1.0), (22.0, -1.0)])  # a wall: no lane
    assert c.reason != 'shoot'


def test_a_shot_may_go_anywhere_inside_the_posts_and_no_further() -> None:
    """The shot's slack lets motion aim at any line into the goal mouth it is nearest to facing; the
    window (target +- slack) stays inside the posts, whichever point across the goal was chosen."""
    for keeper in ((27.0, 0.0), (27.0, 1.2), (27.0, -1.2), (40.0, 0.0)):
        c = choose((20.0, 0.3), opponents=[keeper])
        assert c.reason == 'shoot'
        y, slack = c.request.target[1], c.request.slack
        assert abs(y) + slack <= GOAL_WIDTH / 2.0 - 0.3
    assert choose((20.0, 0.0)).request.slack > 1.0  # an open goal: most of its width


def test_a_shot_leaves_room_in_the_goal_mouth_for_the_kicks_direction_spread() -> None:
    """The window the shot may aim in is the mouth less one sd of the kick's direction at that distance: narrower
    for a vaguer kick and from further out, so that a ball aimed at the window's edge still goes in."""

    def slack(ball: tuple[float, float], sd_deg: float) -> float:
        c = choose(ball, kicks=(KickReach('long', 16.4, 1.3, direction_sd_deg=sd_deg),))
        assert c.reason == 'shoot'
        return c.request.slack

    mouth = slack((20.0, 0.0), 0.0)
    assert slack((20.0, 0.0), 5.0) == pytest.approx(mouth - 7.5 * math.tan(math.radians(5.0)), abs=0.01)
    assert slack((14.0, 0.0), 5.0) < slack((20.0, 0.0), 5.0) < mouth
    assert slack((14.0, 0.0), 20.0) == 0.0  # never less than aiming at the point itself


def test_no_shot_out_of_reach_or_from_a_set_play() -> None:
    assert choose((5.0, 0.0)).reason == 'dribble'  # 22.5 m: the kick stops short
    c = choose((0.0, 0.0), set_play=True, kick_off_side=-1.0)
    assert c.reason == 'set play to the side' and c.request.target[1] < -3.0
    c = choose((20.0, 0.0), set_play=True)  # in reach, but no direct goal from a set play
    assert c.reason != 'shoot'


def test_it_passes_to_a_free_teammate_ahead_with_a_kick_it_stays_up_after() -> None:
    mates = {4: (4.0, 2.0), 5: (-3.0, 0.0)}  # one ahead, one behind
    c = choose((0.0, 0.0), kicks=(NAO_KICK,), mates=mates)
    assert c.reason == 'pass 4' and isinstance(c.request, Kick) and c.request.kick == 'quick'
    assert c.request.target[0] > 4.0  # ahead of him
    # marked, or the lane blocked: no pass
    assert choose((0.0, 0.0), kicks=(NAO_KICK,), mates=mates, opponents=[(4.5, 2.5)]).reason == 'dribble'
    assert choose((0.0, 0.0), kicks=(NAO_KICK,), mates=mates, opponents=[(2.0, 1.0)]).reason == 'dribble'
    # a kick the robot falls after is not for passes; one far too long neither
    assert choose((0.0, 0.0), kicks=(LONG,), mates=mates).reason == 'dribble'


def test_under_pressure_in_our_third_it_clears_to_the_side() -> None:
    c = choose((-20.0, -2.0), kicks=(NAO_KICK,), opponents=[(-19.3, -2.0)])
    assert c.reason == 'clear' and isinstance(c.request, Kick)
    assert c.request.target[0] > -20.0 and c.request.target[1] < -5.0
    c = choose((-20.0, -2.0), kicks=(), opponents=[(-19.3, -2.0)])
    assert c.reason == 'clear' and isinstance(c.request, Dribble)
    assert choose((-20.0, -2.0), kicks=(NAO_KICK,)).reason == 'dribble'  # no pressure: play on


def _heading(ball, target) -> float:
    return math.degrees(math.atan2(target[1] - ball[1], target[0] - ball[0]))


def test_a_clear_goes_up_the_field_the_way_the_robot_need_not_walk_round_the_ball() -> None:
    """A Nao 0.6 m beside the ball, told to clear it to the far side, walked round it for 10-12 s while UT Austin
    Villa's striker came and scored (session 39): the clear goes where the robot already stands behind it."""
    ball, pressing = (-20.0, -2.0), [(-19.3, -2.6)]
    c = choose(ball, kicks=(NAO_KICK,), opponents=pressing, me=(-20.3, -2.52))  # behind it, 60 deg to the left
    assert c.reason == 'clear' and isinstance(c.request, Kick)
    assert _heading(ball, c.request.target) == pytest.approx(60.0, abs=0.1)
    assert c.request.target[0] > ball[0]
    # standing in front of the ball (between it and their goal): the cone's edge on its side, never back at our goal
    c = choose(ball, kicks=(NAO_KICK,), opponents=pressing, me=(-19.5, -1.9))
    assert _heading(ball, c.request.target) == pytest.approx(-math.degrees(CLEAR_CONE), abs=0.1)
    # without knowing where it stands: forwards and out to the ball's side, as before
    assert choose(ball, kicks=(NAO_KICK,), opponents=pressing).request.target[1] < -5.0


def test_a_clear_target_stays_inside_the_field_and_holds_still_while_the_robot_steps_round() -> None:
    ball = (-20.0, -16.0)  # near a touchline: straight at it would put the ball out
    t = clear_target(ball, (-20.0, -16.6), HALF, 10.0)  # the robot right behind it, facing the line
    assert -HALF[1] < t[1] and t[0] <= HALF[0]
    targets = {clear_target((-20.0, 0.0), (-20.6, 0.02 * k), HALF, 10.0) for k in range(-3, 4)}
    assert len(targets) == 1  # a few centimetres aside: the same request, not a new kick task each step


def test_the_dribble_goes_round_an_opponent_in_its_way() -> None:
    c = choose((0.0, 0.0), kicks=(), opponents=[(1.5, 0.2)])
    assert isinstance(c.request, Dribble)
    x, y = c.request.target
    assert y < -1.0 and x > 0.0  # past him on his open side
    assert lane_clearance((0.0, 0.0), (x, y), [(1.5, 0.2)]) > 0.5
    # one standing right at the ball on the line: the same side whichever way a few centimetres move him
    sides = {choose((0.0, 0.1), kicks=(), opponents=[(0.3, 0.1 + dy)]).request.target[1] > 0 for dy in (-0.03, 0.03)}
    assert len(sides) == 1
    c = choose((0.0, 0.0), kicks=(), opponents=[(-1.0, 0.0), (3.0, 8.0)])  # none in the way
    assert c.request.target == (HALF[0] + GOAL_PAST, 0.0)  # behind the goal line: the ball must cross it


def test_the_dribble_goes_wide_enough_round_an_opponent_at_the_ball() -> None:
    """Their kick-off taker stands 0.45 m from the ball: a dribble 40 degrees off his line pushed the ball into his
    feet, where it stuck for 40-100 s (7 v 7, session 48). Near him the dribble's line passes him by DRIBBLE_CLEAR, up
    to square across; further off the swerve is as before."""
    for taker in ((0.45, 0.0), (0.3, 0.05), (0.8, -0.1)):
        c = choose((0.0, 0.0), kicks=(), opponents=[taker])
        assert isinstance(c.request, Dribble)
        x, y = c.request.target
        assert x >= -0.01  # never back towards our goal
        # clear of him by DRIBBLE_CLEAR, or as far as a line square across passes one nearer than that
        assert lane_clearance((0.0, 0.0), (x, y), [taker]) >= 0.95 * min(DRIBBLE_CLEAR, math.dist((0.0, 0.0), taker))
    far = choose((0.0, 0.0), kicks=(), opponents=[(2.0, 0.0)]).request.target
    assert abs(_heading((0.0, 0.0), far)) == pytest.approx(math.degrees(DRIBBLE_SWERVE), abs=0.5)


def test_near_the_goal_it_dribbles_in_rather_than_kick_and_fall() -> None:
    c = choose((24.0, 0.5))  # 3.5 m out: the only kick that reaches falls
    assert c.reason == 'dribble in' and isinstance(c.request, Dribble)
    x, y = c.request.target
    assert x > HALF[0] and abs(y) < GOAL_WIDTH / 2.0  # into the goal, between the posts
    c = choose((24.0, 0.0), opponents=[(26.0, 0.0)])  # their keeper in the middle: round him
    assert c.reason == 'dribble in' and abs(c.request.target[1]) > 1.0
    assert choose((24.0, 0.0), kicks=(NAO_KICK,)).reason == 'shoot'  # a kick it stays up after: shoot
    assert choose((20.0, 0.0)).reason == 'shoot'  # 7.5 m out: too far to dribble in, so the long kick
    wall = [(25.0, y) for y in (-1.2, -0.4, 0.4, 1.2)]
    assert choose((24.0, 0.0), opponents=wall).reason != 'dribble in'  # no lane


T1_LONG = KickReach('long', 13.6, 2.0)  # a 14 m kick, upright (the T1 long kick's model until session 43)


def test_far_from_their_goal_it_kicks_the_ball_up_the_field_rather_than_dribble_it() -> None:
    c = choose((0.0, 0.0), kicks=(T1_LONG,))
    assert c.reason == 'advance' and isinstance(c.request, Kick) and c.request.kick == 'long'
    assert c.request.target == pytest.approx((15.6, 0.0))  # at their goal's centre, as far as it may go
    # an opponent in that lane: a line off it that is free, still up the field
    c = choose((0.0, 0.0), kicks=(T1_LONG,), opponents=[(6.0, 0.0)])
    assert c.reason == 'advance' and c.request.target[0] > 10.0
    assert lane_clearance((0.0, 0.0), c.request.target, [(6.0, 0.0)]) >= 0.5
    # pressed, by an opponent off its lanes: it still kicks (a T1 dribbles at 0.1 m/s)
    assert choose((0.0, 0.0), kicks=(T1_LONG,), opponents=[(-0.5, 1.0)]).reason == 'advance'
    # pressed from in front (every line blocked), a kick the robot falls after, or a short kick: it dribbles
    assert choose((0.0, 0.0), kicks=(T1_LONG,), opponents=[(0.6, 0.0)]).reason == 'dribble'
    assert choose((0.0, 0.0), kicks=(LONG,)).reason == 'dribble'
    assert choose((0.0, 0.0), kicks=(NAO_KICK,)).reason == 'dribble'
    wall = [(3.0, y) for y in (-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0)]
    assert choose((0.0, 0.0), kicks=(T1_LONG,), opponents=wall).reason == 'dribble'


def test_an_advance_never_sends_the_ball_over_a_touchline_or_wide_past_the_goal() -> None:
    for ball in ((0.0, 16.0), (5.0, -16.5), (12.0, 10.0), (14.0, 0.0)):
        for blocker in ((), ((ball[0] + 4.0, ball[1] * 0.8),)):
            c = choose(ball, kicks=(T1_LONG,), opponents=blocker)
            if c.reason != 'advance':
                continue
            (x, y), slack = c.request.target, c.request.slack
            assert abs(y) <= HALF[1] - 1.5 and x <= HALF[0]
            if x == HALF[0]:  # it may reach the goal line: inside the posts
                assert abs(y) + slack < GOAL_WIDTH / 2.0
    c = choose((14.0, 0.0), kicks=(T1_LONG,))  # 13.5 m out: no shot (11.6 m sure), but aimed at the goal
    assert c.reason == 'advance' and c.request.target == (HALF[0], 0.0)
    # that line blocked: not out towards a corner, where the ball ends little nearer the goal
    assert choose((14.0, 0.0), kicks=(T1_LONG,), opponents=[(18.0, 0.0)]).reason == 'dribble'


PASS = KickReach('pass', 11.7, 1.3, shortest=5.3)  # a kick of chosen length: 5.3-11.7 m, upright
T1_PASS = KickReach('pass', 9.9, 0.7, shortest=2.4)  # config/kicks.yaml's T1 pass curve: 2.4-9.9 m


def test_a_kick_of_chosen_length_passes_as_far_as_the_receiver_and_shoots_past_the_goal_line() -> None:
    mates = {4: (7.0, 2.0)}
    c = choose((0.0, 0.0), kicks=(PASS, LONG), mates=mates)
    assert c.reason == 'pass 4' and c.request.kick == 'pass'
    assert c.request.distance == pytest.approx(math.dist((0.0, 0.0), c.request.target), abs=0.01)
    c = choose((0.0, 0.0), kicks=(PASS,), mates={4: (2.5, 0.0)})  # 3.1 m: shorter than it goes, by too much
    assert c.reason != 'pass 4'
    c = choose((23.5, 0.0), kicks=(PASS, LONG))  # 4 m out: it stays up after it, so it shoots, not dribbles in
    assert c.reason == 'shoot' and c.request.kick == 'pass'
    assert c.request.distance == pytest.approx(6.0)  # 4 m to the line and 2 over it
    c = choose((19.0, 2.0), kicks=(PASS, LONG))
    assert c.reason == 'shoot' and c.request.kick == 'pass'
    assert c.request.distance == pytest.approx(math.dist((19.0, 2.0), c.request.target) + 2.0, abs=0.01)
    c = choose((17.0, 2.0), kicks=(PASS, LONG))  # beyond what it surely reaches: the long kick, of one length
    assert c.reason == 'shoot' and c.request.kick == 'long' and c.request.distance is None


def test_a_short_pass_loses_to_an_advance_that_carries_the_ball_much_further_up() -> None:
    """A T1 at x = 9 m passed 2.4 m to a teammate 1 m further up the field instead of kicking 13 m on, and the
    pass's target walked with its receiver (7 v 7 against the formation team, session 40)."""
    kicks = (T1_PASS, T1_LONG)
    near = {4: (10.0, 0.5)}  # 1.6 m further up with the lead
    c = choose((9.0, -0.8), kicks=kicks, mates=near)
    assert c.reason == 'advance' and c.request.kick == 'long' and c.request.target[0] > 20.0
    far = {4: (17.5, 3.0)}  # 9.1 m further up with the lead: more than half of the advance's 15.6
    assert choose((9.0, -0.8), kicks=kicks, mates=far).reason == 'pass 4'
    # the advance's lanes blocked: the short pass again
    wall = [(12.0, y) for y in (-5.0, -4.0, -3.0, -2.0, -1.0, 0.0)]
    assert choose((9.0, -0.8), kicks=kicks, mates=near, opponents=wall).reason == 'pass 4'


def test_a_set_play_never_passes_with_a_kick_of_chosen_length() -> None:
    mates = {4: (5.0, 2.0)}
    assert choose((0.0, 0.0), kicks=(PASS,), mates={4: (7.0, 2.0)}).reason == 'pass 4'  # in play it would
    c = choose((0.0, 0.0), kicks=(PASS, NAO_KICK), mates=mates, set_play=True)
    assert c.request.kick != 'pass'


def test_a_set_play_kicks_from_the_stand_where_the_robot_has_such_a_kick() -> None:
    """No hurry at a set play: a Nao takes its long kick from the stand, though its quick kick from the walk goes a
    little further; in play the clear takes the longer one."""
    quick = KickReach('quick', 4.70, 0.3, from_stand=False)  # a Nao type 4's (config/kicks.yaml)
    long = KickReach('long', 4.58, 0.13)
    assert choose((0.0, 0.0), kicks=(quick, long), set_play=True).request.kick == 'long'
    assert choose((-24.0, 0.0), kicks=(quick, long), opponents=[(-23.0, 0.5)]).request.kick == 'quick'  # a clear
    assert choose((0.0, 0.0), kicks=(quick,), set_play=True).request.kick == 'quick'  # the only one


@pytest.mark.parametrize('robot_type', [0, 2, 4])
def test_a_nao_clears_with_a_kick_it_stays_up_after_not_its_quick_kick_from_the_walk(robot_type: int) -> None:
    """The shipped kick model (config/kicks.yaml): from a walk-up the quick kick goes 1-2.6 m and the robot falls
    after about half of them (session 31), so a clear takes the long kick, which stood every walk-up."""
    kicks = kick_reaches(ball_skills_for(load_kicks_config(), 'nao', robot_type, 'simspark').kicks)
    quick = next(k for k in kicks if k.name == 'quick')
    assert quick.falls and quick.distance < 3.0
    clear = far_kick(kicks)
    assert clear is not None and not clear.falls and clear.distance >= 4.0
    c = choose((-20.0, -2.0), kicks=kicks, opponents=[(-19.3, -2.0)])
    assert c.reason == 'clear' and c.request.kick == clear.name
