"""The match analysis on made-up tracks whose answer is known: goals, possession, kicks, falls, speeds, errors."""

from __future__ import annotations

import numpy as np
import pytest

from robocup3d_tools.match_analysis import (
    detect_falls,
    detect_kicks,
    goals_from_games,
    localization_error,
    possession,
    walking_speed,
)

HALF_L, HALF_W, GOAL_HW = 27.5, 18.0, 1.83


def test_goals_come_from_score_changes() -> None:
    games = [(0.0, {'score_left': 0, 'score_right': 0}), (5.0, {'score_left': 0, 'score_right': 0})]
    games += [(10.0, {'score_left': 1, 'score_right': 0}), (12.0, {'score_left': 1, 'score_right': 0})]
    games += [(20.0, {'score_left': 1, 'score_right': 1})]
    goals, t, score = goals_from_games(games)
    assert [(g.t, g.team) for g in goals] == [(10.0, 'left'), (20.0, 'right')]
    assert t.tolist() == [0.0, 10.0, 20.0] and score.tolist() == [[0, 0], [1, 0], [1, 1]]


def test_possession_is_the_side_nearest_the_ball() -> None:
    t = np.linspace(0, 10, 101)
    ball = np.c_[np.linspace(-5, 5, 101), np.zeros(101)]  # rolls from x=-5 to x=5
    players = {
        'A/p1': (t, np.c_[np.full(101, -4.0), np.zeros(101)]),  # left team, at x=-4
        'B/p1': (t, np.c_[np.full(101, 4.0), np.zeros(101)]),  # right team, at x=4
    }
    pos = possession(t, ball, players, {'A/p1': 'left', 'B/p1': 'right'}, reach=2.0)
    assert pos[0] == 'left' and pos[-1] == 'right'
    assert pos[50] == ''  # at x=0 both are 4 m away: nobody
    assert np.all(pos[:30] == 'left') and np.all(pos[71:] == 'right')


def _ball_kicked(at: float, speed: float, heading: tuple[float, float], start=(0.0, 0.0), dt=0.04, length=4.0):
    t = np.arange(0, length, dt)
    xy = np.tile(np.array(start, dtype=float), (len(t), 1))
    after = t >= at
    d = np.array(heading) / np.linalg.norm(heading)
    xy[after] += np.outer(t[after] - at, d * speed)
    return t, np.c_[xy, np.full(len(t), 0.11)]


def test_a_kick_into_the_goal_is_a_scoring_shot() -> None:
    t, ball = _ball_kicked(1.0, 8.0, (1.0, 0.05), start=(20.0, 0.0))
    players = {'A/p9': (t, np.tile([19.7, 0.0], (len(t), 1))), 'B/p1': (t, np.tile([26.0, 5.0], (len(t), 1)))}
    (kick,) = detect_kicks(t, ball, players, {'A/p9': 'left', 'B/p1': 'right'}, HALF_L, HALF_W, GOAL_HW)
    assert kick.t == pytest.approx(1.0, abs=0.05) and kick.kicker == 'A/p9' and kick.team == 'left'
    assert kick.shot and kick.outcome == 'goal' and kick.speed == pytest.approx(8.0, rel=0.05)


def test_a_kick_wide_of_the_goal_is_out_and_no_shot() -> None:
    t, ball = _ball_kicked(1.0, 8.0, (1.0, 0.6), start=(15.0, 0.0))
    players = {'A/p9': (t, np.tile([14.7, 0.0], (len(t), 1)))}
    (kick,) = detect_kicks(t, ball, players, {'A/p9': 'left'}, HALF_L, HALF_W, GOAL_HW)
    assert not kick.shot and kick.outcome == 'out'


def test_a_pass_to_an_opponent() -> None:
    t, ball = _ball_kicked(0.5, 3.0, (1.0, 0.0), length=3.0)
    # an opponent at x=4.5 stops the ball there and kicks it back
    stop = ball[:, 0] >= 4.5
    ball[stop, 0] = 4.5
    i = np.argmax(stop)
    back = np.arange(len(t)) >= i + 5
    ball[back, 0] = 4.5 - 5.0 * (t[back] - t[i + 5])
    players = {'A/p2': (t, np.tile([-0.3, 0.0], (len(t), 1))), 'B/p4': (t, np.tile([4.8, 0.0], (len(t), 1)))}
    kicks = detect_kicks(t, ball, players, {'A/p2': 'left', 'B/p4': 'right'}, HALF_L, HALF_W, GOAL_HW)
    assert [k.kicker for k in kicks] == ['A/p2', 'B/p4']
    assert kicks[0].outcome == 'opponent'


def test_falls_and_get_up_times_from_the_torso_height() -> None:
    t = np.arange(0, 20, 0.04)
    z = np.full(len(t), 0.66)
    z[(t > 5) & (t < 8)] = 0.15  # down at 5 s, up at 8 s
    z[t > 15] = 0.12  # down at 15 s for good
    falls = detect_falls(t, z)
    assert len(falls) == 2
    assert falls[0].t == pytest.approx(5.0, abs=0.05) and falls[0].getup_time == pytest.approx(3.0, abs=0.1)
    assert falls[1].t_up is None and falls[1].getup_time is None


def test_walking_speed_leaves_out_beams() -> None:
    t = np.arange(0, 10, 0.04)
    xy = np.c_[0.5 * t, np.zeros(len(t))]  # 0.5 m/s
    xy[t >= 5] += 20.0  # beamed 20 m at 5 s
    mean, top, dist = walking_speed(t, xy)
    assert mean == pytest.approx(0.5, abs=0.02) and top == pytest.approx(0.5, abs=0.05)
    assert dist == pytest.approx(4.5, abs=0.6)


def test_localization_error_is_the_distance_to_the_truth_at_the_same_time() -> None:
    t = np.arange(0, 5, 0.04)
    truth = np.c_[t, np.zeros(len(t))]
    bt = np.arange(0.02, 5, 0.1)
    belief = np.c_[bt + 0.3, np.full(len(bt), 0.4)]  # 0.3 ahead, 0.4 aside: 0.5 m off
    et, err = localization_error(t, truth, bt, belief)
    assert len(et) > 40 and err == pytest.approx(np.full(len(et), 0.5), abs=1e-6)
