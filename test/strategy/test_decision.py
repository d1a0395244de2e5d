"""The decision layer without ROS: roles, behaviours, and which requests go out."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from robocup3d_motion.kick_config import load_kicks_config
from robocup3d_motion.requests import Dribble, GoTo, Kick, SkillRequest
from robocup3d_strategy.decision import (
    COMMIT,
    FIELDS,
    GUARD_STEP,
    ROLES,
    Decider,
    Mate,
    Situation,
    assign,
    choose_role,
    phase_of,
    set_play_of,
)
from robocup3d_strategy.formation import beam_pose, formation_pose, load_formations
from robocup3d_strategy.on_ball import GOAL_PAST, KickReach
from robocup3d_strategy.roles import load_roles, scram

FIELD = FIELDS['mujoco']
T1_LONG = KickReach('long', 16.4, 1.3, falls=True)  # config/kicks.yaml's T1 kicks
T1_QUICK = KickReach('quick', 0.41, 0.08)


def situation(
    unum: int = 3, pose=(-2.0, 0.0, 0.0), ball=(0.0, 0.0), mates=(), phase='play_on', kicks=(T1_LONG,), opponents=()
):
    return Situation(
        unum,
        phase,
        pose,
        ball,
        home=(-5.0, 2.0, 0.0),
        field=FIELD,
        mates=tuple(mates),
        kicks=kicks,
        opponents=tuple(opponents),
    )


@pytest.mark.parametrize(
    ('mode', 'side', 'phase'),
    [
        ('BeforeKickOff', 'left', 'before'),
        ('PlayOn', 'right', 'play_on'),
        ('KickOff_Left', 'left', 'ours'),
        ('KickOff_Left', 'right', 'theirs'),
        ('corner_kick_right', 'right', 'ours'),
        ('Goal_Right', 'left', 'goal'),
        ('goal_kick_right', 'left', 'theirs'),  # a goal kick is a set play, not a goal
        ('goal_kick_left', 'left', 'ours'),
        ('GameOver', 'left', 'over'),
        (None, None, 'before'),
    ],
)
def test_play_modes_of_both_servers(mode, side, phase) -> None:
    assert phase_of(mode, side) == phase


def test_the_closest_field_player_strikes_and_keeps_the_ball_against_a_near_tie() -> None:
    near = Mate(4, -1.0, 0.0)
    assert choose_role(situation(mates=[near]), was_striker=False) == 'supporter'
    # 2.0 m against 1.7 m: the striker keeps its role inside the margin
    assert choose_role(situation(mates=[Mate(4, -1.7, 0.0)]), was_striker=True) == 'striker'
    assert choose_role(situation(mates=[Mate(4, -1.7, 0.0)]), was_striker=False) == 'supporter'
    # stale or fallen teammates and the goalie do not count
    assert choose_role(situation(mates=[Mate(4, -1.0, 0.0, age=5.0)]), was_striker=False) == 'striker'
    assert choose_role(situation(mates=[Mate(4, -1.0, 0.0, fallen=True)]), was_striker=False) == 'striker'
    assert choose_role(situation(mates=[Mate(1, -0.5, 0.0)]), was_striker=False) == 'striker'
    assert choose_role(situation(unum=1), was_striker=False) == 'goalie'
    assert choose_role(situation(ball=None), was_striker=True) == 'supporter'


def test_the_striker_shoots_in_reach_of_its_kick_and_dribbles_at_the_goal_out_of_it() -> None:
    req = Decider().decide(situation(pose=(12.0, 0.0, 0.0), ball=(14.0, 0.0)), 0.0)
    assert isinstance(req, Kick) and req.target == FIELD.their_goal and req.kick == 'long'
    req = Decider().decide(situation(), 0.0)  # 27.5 m out: the 16 m kick does not reach
    past = (FIELD.their_goal[0] + GOAL_PAST, 0.0)  # behind the goal line: the ball must cross it
    assert isinstance(req, Dribble) and req.target == past
    req = Decider().decide(situation(pose=(12.0, 0.0, 0.0), ball=(14.0, 0.0), kicks=()), 0.0)
    assert isinstance(req, Dribble) and req.target == past


def test_no_direct_shot_from_our_kick_off_and_distance_in_theirs() -> None:
    req = Decider().decide(situation(phase='ours'), 0.0)
    assert isinstance(req, Kick) and abs(req.target[1]) > 3.0  # to the side
    req = Decider().decide(situation(phase='theirs', ball=(1.0, 1.0)), 0.0)
    assert isinstance(req, GoTo)
    # RCSSServerMJ moves any of ours within its centre circle's radius (5.5 m) of the ball to the touchline
    assert math.hypot(req.x - 1.0, req.y - 1.0) == pytest.approx(FIELD.set_play_distance)
    assert FIELD.set_play_distance > 5.5
    assert req.x < 1.0  # on our side of the ball
    mates = [Mate(4, 0.5, 1.0)]  # nearer the ball: this player supports, and keeps away too
    req = Decider().decide(situation(phase='theirs', ball=(1.0, 1.0), pose=(-1.0, 0.0, 0.0), mates=mates), 0.0)
    assert isinstance(req, GoTo) and math.hypot(req.x - 1.0, req.y - 1.0) > 5.5


def test_supporters_keep_clear_of_the_ball_and_the_goalie_guards_the_line() -> None:
    mates = [Mate(4, -4.3, 1.2)]  # closer to the ball: the striker
    req = Decider().decide(situation(pose=(-3.0, 2.0, 0.0), ball=(-4.0, 1.5), mates=mates), 0.0)
    assert isinstance(req, GoTo)
    assert math.hypot(req.x + 4.0, req.y - 1.5) >= 2.0 - 1e-6
    req = Decider().decide(situation(unum=1, pose=(-27.0, 0.0, 0.0), ball=(-5.0, 10.0)), 0.0)
    assert isinstance(req, GoTo) and req.x < -26.0 and abs(req.y) <= FIELD.goal_width / 2.0
    req = Decider().decide(situation(unum=1, pose=(-27.0, 0.0, 0.0), ball=(-25.0, 0.5)), 0.0)
    assert isinstance(req, Kick) and req.target[0] > 0.0  # cleared up the field, the way it stands behind the ball
    assert math.atan2(req.target[1] - 0.5, req.target[0] + 25.0) == pytest.approx(math.radians(15.0), abs=1e-3)


def test_the_set_play_taker_with_the_ball_still_at_its_feet_stands_still() -> None:
    """Its walk-up touched the ball (the server plays on) but the ball is 0.4 m away: walking off, or the rest
    of its kick, would touch it again, a second touch (a free kick to them on RCSSServerMJ)."""
    d = Decider()
    mate = Mate(4, -3.0, 2.0)
    d.decide(situation(phase='ours', pose=(-0.3, 0.0, 0.0), mates=[mate]), 0.0)
    req = d.decide(situation(pose=(-0.3, 0.0, 0.0), ball=(0.1, 0.05), mates=[mate]), 0.4)
    assert d.taker == 3 and req == SkillRequest(name='stand', id=req.id)
    req = d.decide(situation(pose=(-0.3, 0.0, 0.0), ball=(1.5, 0.3), mates=[mate]), 1.4)  # it rolled away
    assert isinstance(req, GoTo) and d.taker == 3


def test_a_nudged_set_play_keeps_its_taker_off_but_one_that_ran_out_does_not() -> None:
    """Play going on before the set play's 15 s are up means the taker touched the ball, however little it
    moved (a walk-up's nudge): the ban holds. After a set play that ran out untouched, it ends after 3 s."""
    mate = Mate(4, -3.0, 2.0)
    nudged = Decider()
    nudged.decide(situation(phase='ours', pose=(-0.5, 0.0, 0.0), mates=[mate]), 0.0)
    nudged.decide(situation(pose=(-0.5, 0.0, 0.0), ball=(0.1, 0.0), mates=[mate]), 11.0)
    nudged.decide(situation(pose=(-0.5, 0.0, 0.0), ball=(0.1, 0.0), mates=[mate]), 15.0)
    assert nudged.taker == 3
    ran_out = Decider()
    ran_out.decide(situation(phase='ours', pose=(-0.5, 0.0, 0.0), mates=[mate]), 0.0)
    ran_out.decide(situation(pose=(-0.5, 0.0, 0.0), ball=(0.0, 0.0), mates=[mate]), 15.0)
    assert ran_out.taker == 3
    ran_out.decide(situation(pose=(-0.5, 0.0, 0.0), ball=(0.0, 0.0), mates=[mate]), 18.5)
    assert ran_out.taker is None


def test_the_set_play_taker_keeps_off_the_ball_until_another_player_touches_it() -> None:
    d = Decider()
    mate = Mate(4, -3.0, 2.0)
    first = d.decide(situation(phase='ours', pose=(-0.3, 0.0, 0.0), mates=[mate]), 0.0)
    assert d.role == 'striker' and isinstance(first, Kick) and abs(first.target[1]) > 3.0  # no direct shot
    # the server plays on: the ball is 1 m away, still nearest to us, but we took the kick
    kicked = situation(pose=(-0.2, 0.0, 0.0), ball=(1.0, 0.3), mates=[mate])
    d.decide(kicked, 0.4)
    assert d.taker == 3 and d.role == 'supporter'
    d.decide(kicked, 5.0)
    assert d.role == 'supporter'
    # the teammate reaches the ball: standing at it is no touch yet
    d.decide(situation(pose=(-0.2, 0.0, 0.0), ball=(1.0, 0.3), mates=[Mate(4, 1.2, 0.3)]), 6.0)
    d.decide(situation(pose=(-0.2, 0.0, 0.0), ball=(1.05, 0.3), mates=[Mate(4, 1.2, 0.3)]), 6.4)
    assert d.taker == 3
    # it plays the ball (seen already 0.7 m off when the ball moved): his touch, and we may play again
    d.decide(situation(pose=(-0.2, 0.0, 0.0), ball=(2.5, 0.3), mates=[Mate(4, 1.8, 0.3)]), 6.8)
    assert d.taker is None
    d.decide(situation(pose=(0.8, 0.3, 0.0), ball=(1.0, 0.3), mates=[Mate(4, 3.0, 3.0)]), 7.0)
    assert d.role == 'striker'
    # a teammate's view is the same: it takes the ball while the taker may not
    other = Decider()
    other.decide(situation(unum=4, phase='ours', pose=(-3.0, 2.0, 0.0), mates=[Mate(3, -0.3, 0.0)]), 0.0)
    other.decide(situation(unum=4, pose=(-3.0, 2.0, 0.0), ball=(1.0, 0.3), mates=[Mate(3, -0.2, 0.0)]), 0.4)
    assert other.taker == 3 and other.role == 'striker'


def test_an_opponent_standing_at_a_nudged_kick_off_ball_does_not_end_the_ban() -> None:
    """Session 34 (rcssserver3d, against UT Austin Villa): our taker nudged the kick-off ball 10 cm; an opponent
    stood 0.2 m from it for a second without touching it; the ban ended, our taker touched the ball again and
    the server gave them a free kick. The ban ends when the ball moves by the opponent's touch."""
    mate = Mate(4, -3.0, 2.0)
    d = Decider()
    d.decide(situation(phase='ours', pose=(-0.25, 0.0, 0.0), mates=[mate]), 0.0)
    d.decide(situation(pose=(-0.25, 0.0, 0.0), ball=(-0.04, 0.09), mates=[mate]), 0.4)
    assert d.taker == 3
    for i in range(10):  # the opponent walks up to the ball and stands there
        opponent = [(0.6 - 0.04 * i, 0.1)]
        d.decide(situation(pose=(-0.25, 0.0, 0.0), ball=(-0.04, 0.09), mates=[mate], opponents=opponent), 4.0 + i * 0.2)
    assert d.taker == 3 and d.role == 'supporter'
    d.decide(situation(pose=(-0.25, 0.0, 0.0), ball=(0.4, -0.3), mates=[mate], opponents=[(0.3, 0.0)]), 6.2)
    assert d.taker is None


def test_the_ban_lasts_until_another_touch_and_binds_only_a_player_who_was_at_the_ball() -> None:
    """Both servers call a second touch by the taker however late it comes (a 3 v 3 match's taker touched
    again 22 s on, after a 20 s ban). A player nowhere near the ball's spot as play went on did not take it:
    a drop ball ended the set play."""
    mate = Mate(4, -8.0, 5.0)  # far off: it takes a while to come
    d = Decider()
    d.decide(situation(phase='ours', pose=(-0.3, 0.0, 0.0), mates=[mate]), 0.0)
    d.decide(situation(pose=(-0.3, 0.0, 0.0), ball=(1.5, 0.3), mates=[mate]), 0.4)
    d.decide(situation(pose=(-0.3, 0.0, 0.0), ball=(1.5, 0.3), mates=[mate]), 30.0)
    assert d.taker == 3 and d.role == 'supporter'  # still no other touch after 30 s
    far = Decider()
    far.decide(situation(phase='ours', pose=(-6.0, 2.0, 0.0), mates=[mate]), 0.0)  # on the ball, 6 m off it
    far.decide(situation(pose=(-6.0, 2.0, 0.0), ball=(0.0, 0.0), mates=[mate]), 0.4)
    assert far.taker is None and far.role == 'striker'


def test_requests_go_out_when_new_or_when_motion_is_done_with_the_last() -> None:
    d = Decider()
    first = d.decide(situation(), 0.0)
    assert first is not None and first.id == 1
    assert d.decide(situation(), 0.2) is None  # the same kick
    assert d.decide(situation(), 0.4, {'id': 1, 'phase': 'kicking'}) is None
    again = d.decide(situation(), 0.6, {'id': 1, 'phase': 'done'})
    assert again is not None and again.id == 2
    assert d.decide(situation(), 0.6 + 2.1) is not None  # refreshed
    moved = d.decide(situation(ball=(3.0, 0.0), pose=(2.0, 0.0, 0.0)), 5.0)
    assert moved is None or isinstance(moved, Dribble)


def test_before_kick_off_the_player_stands_once() -> None:
    d = Decider()
    assert d.decide(situation(), 0.0) is not None
    assert d.decide(situation(phase='before'), 1.0) == SkillRequest(name='stand')
    assert d.decide(situation(phase='before'), 2.0) is None
    assert d.decide(situation(), 3.0) is not None  # play again


# -- role assignment


def _brute(positions: dict, places: list) -> tuple[float, float]:
    players = sorted(positions)
    best = None
    for perm in itertools.permutations(range(len(places)), len(players)):
        d = [math.dist(positions[u], places[j]) for u, j in zip(players, perm, strict=True)]
        key = (round(max(d), 9), sum(x * x for x in d))
        best = key if best is None or key < best else best
    return best


@pytest.mark.parametrize('seed', range(20))
def test_scram_minimises_the_longest_walk_then_the_squares(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 5)
    positions = {u: (rng.uniform(-15, 15), rng.uniform(-10, 10)) for u in rng.sample(range(2, 12), n)}
    places = [(rng.uniform(-15, 15), rng.uniform(-10, 10)) for _ in range(n)]
    got = scram(positions, places)
    assert sorted(got.values()) == list(range(n))
    d = [math.dist(positions[u], places[j]) for u, j in got.items()]
    longest, squares = _brute(positions, places)
    assert max(d) == pytest.approx(longest)
    assert sum(x * x for x in d) == pytest.approx(squares)


def test_every_player_reaches_the_same_assignment_from_the_same_picture() -> None:
    roles = load_roles()['mujoco']
    team = {2: (-18.0, -7.0), 3: (-18.0, 7.0), 4: (-12.0, 0.0), 5: (-7.0, -10.0), 6: (-7.0, 10.0), 7: (-2.0, 0.0)}
    ball = (-4.0, 3.0)
    picks = {}
    for unum, (x, y) in team.items():
        mates = [Mate(u, *p) for u, p in reversed(list(team.items())) if u != unum]  # any order
        s = Situation(unum, 'play_on', (x, y, 0.0), ball, (x, y, 0.0), FIELD, tuple(mates), (T1_LONG,), roles=roles)
        role, on_ball = assign(s, None)
        picks[unum] = (role, on_ball, s.place)
    assert {on_ball for _, on_ball, _ in picks.values()} == {7}  # all agree who is on the ball
    assert [u for u, (role, _, _) in picks.items() if role == 'striker'] == [7]
    places = [place for role, _, place in picks.values() if role == 'supporter']
    assert len(set(places)) == len(places) == 5  # each supporter its own place


def test_in_our_kick_off_a_receiver_waits_at_the_halfway_line_where_the_kick_goes() -> None:
    """The kick-off goes 15-16 m forwards and to the taker's left. The player beamed at the halfway line on that side
    keeps his place (config/roles.yaml ``kickoff``), so that he is the nearest of ours to where it stops; until the
    kick every supporter keeps to our half (RCSSServerMJ moves a player in the other half to the touchline)."""
    roles, forms = load_roles()['mujoco'], load_formations('formations.yaml')
    team = {u: formation_pose(forms, 'mujoco', u) for u in range(2, 8)}
    picks = {}
    for unum, pose in team.items():
        mates = tuple(Mate(u, p[0], p[1]) for u, p in team.items() if u != unum)
        s = Situation(unum, 'ours', pose, (0.0, 0.0), pose, FIELD, mates, (T1_LONG,), roles=roles, set_play='kickoff')
        role, on_ball = assign(s, None)
        choice = ROLES[role].act(s)
        assert choice is not None and isinstance(choice.request, GoTo | Kick)
        picks[unum] = role, on_ball, s.place, choice.request
    assert {on_ball for _, on_ball, _, _ in picks.values()} == {2}  # the taker, at the ball
    assert all(req.x < 0.0 for role, _, _, req in picks.values() if role == 'supporter')
    receiver = next(u for u, (_, _, place, _) in picks.items() if place == pytest.approx((-0.8, 7.0)))
    kick = picks[2][3]
    assert isinstance(kick, Kick) and kick.target[1] > 0.0  # the kick-off goes to his side
    landing = (15.6 * math.cos(math.radians(30.0)), 15.6 * math.sin(math.radians(30.0)))
    assert min(team, key=lambda u: math.dist(team[u][:2], landing) if u != 2 else math.inf) == receiver
    # a free kick of ours at the same spot takes the places of our other set plays, up the field
    mates = tuple(Mate(u, p[0], p[1]) for u, p in team.items() if u != receiver)
    pose = team[receiver]
    s = Situation(receiver, 'ours', pose, (0.0, 0.0), pose, FIELD, mates, (T1_LONG,), roles=roles, set_play='free_kick')
    assert assign(s, None)[0] == 'supporter' and s.place != pytest.approx((-0.8, 7.0))


@pytest.mark.parametrize('phase', ['ours', 'theirs'])
def test_in_a_kick_off_every_supporter_keeps_to_our_half(phase: str) -> None:
    """rcssserver3d's places for our set plays put forwards and wings 2-4 m up the field from the ball; in a kick-off,
    ours or theirs, they wait at the halfway line instead."""
    roles = load_roles()['simspark']
    team = {u: (-5.0 - u, 8.0 - 1.5 * u, 0.0) for u in range(2, 12)}

    def supporters_x(set_play: str) -> list[float]:
        xs = []
        for unum, pose in team.items():
            mates = tuple(Mate(u, p[0], p[1]) for u, p in team.items() if u != unum)
            s = Situation(unum, phase, pose, (0.0, 0.0), pose, FIELDS['simspark'], mates, (), roles=roles)
            s.set_play = set_play
            role, _ = assign(s, None)
            choice = ROLES[role].act(s)
            if role == 'supporter':
                assert choice is not None and isinstance(choice.request, GoTo)
                xs.append(choice.request.x)
        return xs

    assert len(kick_off := supporters_x('kickoff')) == 9 and max(kick_off) <= -0.5
    if phase == 'ours':  # a free kick of ours on the same spot sends some up the field
        assert max(supporters_x('free_kick')) > 0.0


def test_a_fallen_or_stale_teammate_gets_no_place() -> None:
    roles = load_roles()['mujoco']
    mates = (Mate(4, 0.0, 0.0, fallen=True), Mate(5, 1.0, 0.0, age=9.0))
    s = Situation(3, 'play_on', (-10.0, 0.0, 0.0), (0.5, 0.0), (-10.0, 0.0, 0.0), FIELD, mates, (), roles=roles)
    assert assign(s, None)[:2] == ('striker', 3)  # the nearer ones do not count


def test_a_player_that_lost_the_ball_turns_to_find_it() -> None:
    d = Decider()
    req = d.decide(situation(pose=(3.0, 1.0, 0.5), ball=None), 0.0)
    assert isinstance(req, GoTo) and (req.x, req.y) == (3.0, 1.0) and req.theta == pytest.approx(2.0)
    assert d.reason == 'search'
    turned = d.decide(situation(pose=(3.0, 1.0, 2.0), ball=None), 0.2)
    assert isinstance(turned, GoTo) and turned.theta == pytest.approx(math.remainder(3.5, math.tau))
    # it was last believed to the right (south-east of a robot facing north-east): turn right
    s = situation(pose=(3.0, 1.0, 0.5), ball=None)
    s.last_ball = (5.0, -2.0)
    right = Decider().decide(s, 0.0)
    assert isinstance(right, GoTo) and right.theta == pytest.approx(0.5 - 1.5)


def test_the_on_ball_player_that_lost_a_far_ball_walks_to_where_it_was() -> None:
    """A lone striker walking at a ball 15 m away took it for lost every second or two and turned away each time to
    look. The on-ball player walks on to where the ball was; others turn."""
    d = Decider()
    assert isinstance(d.decide(situation(pose=(0.0, 0.0, 0.0), ball=(15.0, 1.0)), 0.0), Kick | Dribble)
    assert d.role == 'striker' and d.on_ball == 3
    s = situation(pose=(0.5, 0.0, 0.0), ball=None)
    s.last_ball = (15.0, 1.0)
    req = d.decide(s, 0.2)
    assert isinstance(req, GoTo) and (req.x, req.y) == (15.0, 1.0) and d.reason == 'search where it was'
    assert req.theta == pytest.approx(math.atan2(1.0, 14.5))
    s = situation(pose=(14.0, 0.5, 0.0), ball=None)  # there, and no ball: turn to find it
    s.last_ball = (15.0, 1.0)
    assert d.decide(s, 0.4) is not None and d.reason == 'search'
    other = Decider()  # never on the ball: a supporter turns where it stands
    s = situation(pose=(0.5, 0.0, 0.0), ball=None)
    s.last_ball = (15.0, 1.0)
    req = other.decide(s, 0.0)
    assert isinstance(req, GoTo) and (req.x, req.y) == (0.5, 0.0) and other.reason == 'search'


def test_every_walking_request_carries_the_other_robots_to_walk_round() -> None:
    mates = [Mate(4, -4.3, 1.2), Mate(5, 3.0, 3.0, age=9.0)]  # 5 is stale
    req = Decider().decide(situation(pose=(-3.0, 2.0, 0.0), ball=(-4.0, 1.5), mates=mates, opponents=[(1.0, 1.0)]), 0.0)
    assert isinstance(req, GoTo) and set(req.avoid) == {(-4.3, 1.2), (1.0, 1.0), (-4.0, 1.5)}  # and the ball
    req = Decider().decide(situation(pose=(-3.0, 2.0, 0.0), ball=(-3.5, 1.5), mates=mates, opponents=[(1.0, 1.0)]), 0.0)
    assert isinstance(req, Dribble | Kick) and set(req.avoid) == {(-4.3, 1.2), (1.0, 1.0)}  # going to the ball


def test_the_goalie_comes_out_for_a_ball_that_will_stop_in_the_box_unless_an_opponent_is_clearly_nearer() -> None:
    keeper = {'unum': 1, 'pose': (-27.0, 0.0, 0.0)}
    rolling = situation(**keeper, ball=(-15.0, 2.0))
    assert isinstance(Decider().decide(rolling, 0.0), GoTo)  # 12 m out: guard the line
    rolling.ball_stop = (-21.0, 1.0)  # but it will stop in the box (9 m deep)
    assert Decider().decide(rolling, 0.0).kind == 'kick'
    pressed = situation(**keeper, ball=(-22.0, 1.0), opponents=[(-21.5, 1.0)])
    assert isinstance(Decider().decide(pressed, 0.0), GoTo)
    # a ball at its feet with an opponent a little nearer: it clears (it stood 0.34 m off and watched one score)
    contested = situation(**keeper, ball=(-26.7, 0.1), opponents=[(-26.5, 0.2)])
    assert Decider().decide(contested, 0.0).kind == 'kick'


def test_field_players_keep_out_of_our_goalie_area() -> None:
    s = situation(pose=(-20.0, 0.0, 0.0), ball=(-25.0, 0.0), mates=[Mate(4, -25.2, 0.3)])
    s.roles = load_roles()['mujoco']  # the first slot, 2 m behind the ball, is in the goalie area
    req = Decider().decide(s, 0.0)
    assert isinstance(req, GoTo) and not FIELD.in_our(FIELD.area, req.x, req.y), req
    assert req.x == pytest.approx(-27.5 + 4.0 + 0.3)


@pytest.mark.parametrize(('side', 'drop_y'), [('left', 3.65), ('right', -3.65)])
def test_at_their_goal_kick_the_striker_waits_behind_the_drop_point(side: str, drop_y: float) -> None:
    """RCSSServerMJ drops a goal kick not taken in 15 s at the corner of the goalie area (the server's +y, so our -y
    when we play from the right): the striker waits 0.8 m behind it, out of their area, facing their goal. Any
    other set play of theirs it waits the set-play distance off."""
    s = situation(phase='theirs', pose=(15.0, 0.0, 0.0), ball=(25.5, 0.0))
    s.set_play, s.side = set_play_of('goal_kick_right' if side == 'left' else 'goal_kick_left'), side
    req = Decider().decide(s, 0.0)
    assert isinstance(req, GoTo), req
    assert math.hypot(req.x - 23.5, req.y - drop_y) == pytest.approx(0.8)
    assert not FIELD.in_our(FIELD.area, -req.x, req.y)  # out of their goalie area
    assert req.x < 23.5 and abs(req.y) > 3.65  # behind the drop point, seen from their goal
    assert abs(math.remainder(req.theta - math.atan2(-req.y, 27.5 - req.x), math.tau)) < 1e-6
    s.set_play = 'free_kick'
    req = Decider().decide(s, 0.0)
    assert math.hypot(req.x - 25.5, req.y) == pytest.approx(FIELD.set_play_distance)


def test_field_players_keep_out_of_their_goalie_area() -> None:
    """A supporter's place beside a ball at their goal line is in front of their goalie area: at their goal kick
    RCSSServerMJ's referee puts a player of ours in there on the touchline (three in one half, session 44)."""
    s = situation(pose=(20.0, 0.0, 0.0), ball=(26.5, 2.0), mates=[Mate(4, 26.2, 2.3)])
    s.roles = load_roles()['mujoco']  # the first slot is 2 m behind and 2 m aside of the ball: in their area
    req = Decider().decide(s, 0.0)
    assert isinstance(req, GoTo) and not FIELD.in_our(FIELD.area, -req.x, req.y), req
    assert req.x == pytest.approx(27.5 - 4.0 - 0.5)


def test_after_our_goal_the_kick_off_taker_is_beamed_out_of_the_centre_circle() -> None:
    """They kick off after our goal: a place inside the circle would be penalised (RCSSServerMJ puts the
    player on the touchline). After their goal, and before the first kick-off, the place is kept."""
    home = (-3.0, 0.0, 0.0)
    x, y, _ = beam_pose(home, 'Goal_Left', 'left', FIELD.set_play_distance)
    assert math.hypot(x, y) == pytest.approx(FIELD.set_play_distance) and x < 0.0
    assert beam_pose(home, 'Goal_Right', 'left', FIELD.set_play_distance) == home  # we kick off
    assert beam_pose(home, 'BeforeKickOff', 'left', FIELD.set_play_distance) == home
    assert beam_pose(home, 'Goal_Right', 'right', FIELD.set_play_distance)[0] == pytest.approx(-FIELD.set_play_distance)
    far = (-12.0, 6.0, 0.0)
    assert beam_pose(far, 'Goal_Left', 'left', FIELD.set_play_distance) == far


def test_the_goalie_keeps_the_set_play_distance_too() -> None:
    """A free kick of theirs 3 m in front of our goal: RCSSServerMJ would put a goalie within 5.5 m of the
    ball on the touchline, leaving the goal empty; it stands on its line, beside the goal, far enough."""
    req = Decider().decide(situation(unum=1, pose=(-27.0, 0.0, 0.0), ball=(-24.5, 0.5), phase='theirs'), 0.0)
    assert isinstance(req, GoTo) and req.x < -26.0
    assert math.hypot(req.x + 24.5, req.y - 0.5) >= FIELD.set_play_distance - 1e-6
    far = Decider().decide(situation(unum=1, pose=(-27.0, 0.0, 0.0), ball=(-10.0, 3.0), phase='theirs'), 0.0)
    assert isinstance(far, GoTo) and abs(far.y) <= FIELD.goal_width / 2.0  # far away: it guards as ever


def test_in_a_shootout_the_kicker_plays_the_ball_the_keeper_guards_and_the_rest_stand() -> None:
    ball = (FIELD.length / 2.0 - 7.32, 0.0)  # the penalty mark in front of their goal
    keeper = (FIELD.length / 2.0 - 0.4, 0.0)
    kick = situation(unum=1, pose=(ball[0] - 1.0, 0.0, 0.0), ball=ball, opponents=[keeper])
    kick.penalty = 'kick'
    d = Decider()
    req = d.decide(kick, 0.0)
    assert isinstance(req, Kick | Dribble) and d.role == 'kicker'  # no goalie's guarding for player 1
    assert req.target[0] >= FIELD.length / 2.0 and abs(req.target[1]) < FIELD.goal_width / 2.0  # into the goal
    keep = situation(
        unum=1, pose=(-FIELD.length / 2.0 + 0.4, 0.0, 0.0), ball=(-ball[0], 0.0), opponents=[(-ball[0] + 1, 0)]
    )
    keep.penalty = 'keep'
    d = Decider()
    req = d.decide(keep, 0.0)
    assert isinstance(req, GoTo) and d.role == 'keeper' and req.x < -FIELD.length / 2.0 + 1.0
    out = situation(unum=3, pose=(0.0, 0.0, 0.0), ball=ball)
    out.penalty = 'out'
    req = Decider().decide(out, 0.0)
    assert isinstance(req, SkillRequest) and req.name == 'stand'
    kick.phase = 'goal'  # the goal's pause: everyone stands
    assert isinstance(Decider().decide(kick, 1.0), SkillRequest)


def test_the_goalie_goes_where_a_rolling_ball_will_cross_its_line() -> None:
    keeper = {'unum': 1, 'pose': (-27.0, 0.0, 0.0)}
    shot = situation(**keeper, ball=(-15.0, 0.0))  # outside the box: the goalie guards its line
    assert abs(Decider().decide(shot, 0.0).y) < 0.1  # a ball straight in front: the centre
    shot.ball_stop = (-30.0, 2.0)  # rolling past the line, to the left post's side
    req = Decider().decide(shot, 0.0)
    assert isinstance(req, GoTo) and req.y == pytest.approx(GUARD_STEP)  # a sidestep at a time towards it
    near = situation(unum=1, pose=(-27.0, 0.8, 0.0), ball=(-15.0, 0.0))
    near.ball_stop = shot.ball_stop
    req = Decider().decide(near, 0.0)
    assert isinstance(req, GoTo) and 1.0 < req.y <= FIELD.goal_width / 2.0
    shot.ball_stop = (-10.0, -3.0)  # rolling away from our goal: no crossing to go to
    assert abs(Decider().decide(shot, 0.0).y) < 0.1


def test_the_goalie_guards_from_its_own_depth_sidestepping_and_facing_the_ball() -> None:
    """A T1 beamed 1.1 m in front of its guard line was sent back to it: its walk cannot step back, so it turned
    round to walk there and back, and turned round and round for 40 s of a match. Within GUARD_DEPTH of the line
    the goalie keeps its depth and moves along the line at most GUARD_STEP at a time, facing the ball."""
    line_x = -FIELD.length / 2.0 + 0.4
    req = Decider().decide(situation(unum=1, pose=(line_x + 1.1, 0.0, 0.0), ball=(0.0, 0.0)), 0.0)
    assert isinstance(req, GoTo) and req.x == pytest.approx(line_x + 1.1) and abs(req.y) < 1e-9
    assert abs(req.theta) < 0.01  # facing the ball
    req = Decider().decide(situation(unum=1, pose=(line_x + 1.1, 0.0, 0.0), ball=(-15.0, 8.0)), 0.0)
    assert req.x == pytest.approx(line_x + 1.1) and req.y == pytest.approx(GUARD_STEP)
    assert req.theta == pytest.approx(math.atan2(8.0 - GUARD_STEP, -15.0 - req.x))
    far = Decider().decide(situation(unum=1, pose=(line_x + 5.0, 0.0, 0.0), ball=(0.0, 0.0)), 0.0)
    assert far.x == pytest.approx(line_x)  # out in front: back to the line


def test_a_shot_keeps_its_target_while_the_lanes_barely_change() -> None:
    """A target that jumps across the goal as a keeper shifts a little makes a new kick task each time (the kicker
    of a penalty never lined up): the most central open point is kept unless another is clearly more open."""
    ball = (FIELD.length / 2.0 - 6.0, 0.0)
    targets = set()
    for keeper_y in (-0.05, 0.0, 0.05):
        s = situation(pose=(ball[0] - 1.0, 0.0, 0.0), ball=ball, opponents=[(FIELD.length / 2.0 - 0.4, keeper_y)])
        req = Decider().decide(s, 0.0)
        assert isinstance(req, Kick), req
        targets.add(req.target)
    assert len(targets) == 1


def test_each_robots_kick_off_taker_stands_at_its_long_kicks_left_foot_spot() -> None:
    """Our kick-off is taken at once with no walk-up: the taker's place puts the ball at its own robot's long-kick
    spot (the K1's nearer the ball than the T1's, and turned as its kick-off needs). The others keep the server's."""
    formations, kicks = load_formations('formations.yaml'), load_kicks_config()
    for robot in ('T1', 'K1'):
        x, y, theta = formation_pose(formations, 'mujoco', 2, robot)
        c, s = math.cos(theta), math.sin(theta)
        ball = (-x * c - y * s, x * s - y * c)  # the ball at the centre spot, in the robot's frame
        assert ball == pytest.approx(kicks[robot].kicks['long'].spot('left'), abs=0.005)
    assert formation_pose(formations, 'mujoco', 3, 'K1') == formation_pose(formations, 'mujoco', 3)


def test_a_kick_under_way_is_kept_while_the_ball_lies_still_though_a_dribble_would_now_be_chosen() -> None:
    """Each new on-ball task starts its approach over: a Nao went dribble, kick, pass, dribble, kick in 12 s and
    never touched the ball (session 39). Kept for COMMIT s; a ball that rolls away, or a finished task, ends it."""
    short = KickReach('pass', 5.0, 0.5)  # upright, too short to advance with: no pass, a dribble
    mate = Mate(4, 4.4, 0.0)
    marked = [(4.4, 1.0)]  # an opponent next to the receiver: he is no longer free
    d = Decider()
    req = d.decide(situation(pose=(-0.5, 0.0, 0.0), mates=[mate], kicks=(short,)), 0.0)
    assert isinstance(req, Kick) and d.reason == 'pass 4'
    under_way = {'id': req.id, 'phase': 'approaching'}
    now_marked = situation(pose=(-0.4, 0.0, 0.0), mates=[mate], kicks=(short,), opponents=marked)
    assert d.decide(now_marked, 0.5, under_way) is None  # kept: nothing new to send
    again = d.decide(now_marked, 1.6, under_way)  # the refresh repeats the kick, not the dribble
    assert isinstance(again, Kick) and again.target == req.target and d.reason == 'pass 4'
    later = d.decide(now_marked, COMMIT + 0.1, {'id': again.id, 'phase': 'approaching'})
    assert isinstance(later, Dribble)  # kept long enough
    d = Decider()
    req = d.decide(situation(pose=(-0.5, 0.0, 0.0), mates=[mate], kicks=(short,)), 0.0)
    rolled = situation(pose=(-0.4, 0.0, 0.0), ball=(0.5, 0.0), mates=[mate], kicks=(short,), opponents=marked)
    assert isinstance(d.decide(rolled, 0.5, {'id': req.id, 'phase': 'approaching'}), Dribble)


def test_a_kick_the_robot_stands_at_the_ball_for_is_kept_past_commit() -> None:
    """A T1 stopped at the ball for an advance whose target then flipped to another free line broke its stop and
    kicked 7 s later (7 v 7, session 42): while motion reports the kick settling or kicking and the ball lies still,
    the kick stays however long it takes; once motion walks again (the stop broke), COMMIT counts as before."""
    short = KickReach('pass', 5.0, 0.5)
    mate = Mate(4, 4.4, 0.0)
    marked = [(4.4, 1.0)]
    d = Decider()
    req = d.decide(situation(pose=(-0.5, 0.0, 0.0), mates=[mate], kicks=(short,)), 0.0)
    assert isinstance(req, Kick) and d.reason == 'pass 4'
    now_marked = situation(pose=(-0.4, 0.0, 0.0), mates=[mate], kicks=(short,), opponents=marked)
    kept = d.decide(now_marked, COMMIT + 2.0, {'id': req.id, 'phase': 'settling'})
    assert isinstance(kept, Kick) and kept.target == req.target and d.reason == 'pass 4'  # the refresh, same kick
    kept = d.decide(now_marked, COMMIT + 3.5, {'id': kept.id, 'phase': 'kicking'})
    assert isinstance(kept, Kick) and kept.target == req.target
    walking = d.decide(now_marked, COMMIT + 5.0, {'id': kept.id, 'phase': 'approaching'})
    assert isinstance(walking, Dribble)
    d = Decider()
    req = d.decide(situation(pose=(-0.5, 0.0, 0.0), mates=[mate], kicks=(short,)), 0.0)
    rolled = situation(pose=(-0.4, 0.0, 0.0), ball=(0.5, 0.0), mates=[mate], kicks=(short,), opponents=marked)
    assert isinstance(d.decide(rolled, COMMIT + 1.0, {'id': req.id, 'phase': 'settling'}), Dribble)


def test_a_rolling_ball_is_played_where_it_will_stop() -> None:
    """After an advance kick the ball rolled 7-8 s and stopped 12-16 m from the nearest teammate, who set out only
    then: the player nearest where it will stop goes on it, and the others take their places about that point."""
    roles = load_roles()['mujoco']
    team = {7: (2.0, -1.0), 3: (12.0, 2.0), 4: (-10.0, 3.0)}  # the kicker, a forward, a defender
    ball, stop = (4.0, -0.8), (18.0, 0.5)

    def pick(unum: int, ball_stop: tuple[float, float] | None) -> tuple[str, int | None, object]:
        x, y = team[unum]
        mates = tuple(Mate(u, *p) for u, p in team.items() if u != unum)
        s = Situation(unum, 'play_on', (x, y, 0.0), ball, (x, y, 0.0), FIELD, mates, (T1_LONG,), roles=roles)
        s.ball_stop = ball_stop
        role, on_ball = assign(s, None)
        return role, on_ball, s.place

    assert {pick(u, None)[1] for u in team} == {7}  # as it lies: the kicker is nearest
    assert {pick(u, stop)[1] for u in team} == {3}  # where it will stop: the forward goes
    assert pick(3, stop)[0] == 'striker'
    place = pick(7, stop)[2]
    assert place is not None and place[0] > 10.0  # the kicker's place follows the ball up the field
    # a ball that will stop within a metre of where it lies is played where it lies (the estimate's jitter)
    assert {pick(u, (ball[0] + 0.8, ball[1]))[1] for u in team} == {7}
