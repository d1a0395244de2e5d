"""The match analysis on made-up tracks whose answer is known: goals, possession, kicks, falls, speeds, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from robocup3d_tools.match_analysis import (
    detect_falls,
    detect_kicks,
    goals_from_games,
    localization_error,
    loose_balls,
    mark_contact,
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


def test_a_goal_carries_the_game_clock_the_summary_prints() -> None:
    """The stream's own time counts the set-up before the kick-off: a 3 v 3 goal at 86.9 s of game time was
    printed as 132.1 s beside the play-mode line's 86.92 s."""
    games = [(40.0, {'score_left': 0, 'score_right': 0, 'game_time': 0.0, 'half': 1})]
    games += [(132.1, {'score_left': 1, 'score_right': 0, 'game_time': 86.92, 'half': 1})]
    goals, _, _ = goals_from_games(games)
    assert [(g.game_time, g.half) for g in goals] == [(86.92, 1)]


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


def test_a_placed_ball_is_no_kick() -> None:
    """A trainer or referee puts the ball 22 m away in one sample: no kick; the kick after it is one."""
    t, ball = _ball_kicked(2.0, 5.0, (1.0, 0.0), start=(-22.0, 3.0))
    ball[t < 1.0, :2] = (0.0, 0.0)  # at the centre until it is placed at (-22, 3) at t = 1 s
    players = {'A/p1': (t, np.tile([-22.3, 3.0], (len(t), 1)))}
    (kick,) = detect_kicks(t, ball, players, {'A/p1': 'left'}, HALF_L, HALF_W, GOAL_HW)
    assert kick.t == pytest.approx(2.0, abs=0.05) and kick.kicker == 'A/p1'


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


def test_a_fall_with_an_opponent_near_as_it_began_is_a_fall_in_contact() -> None:
    """Against UT Austin Villa 13 of our 25 falls in a half came with an opponent within 0.8 m; with the Nao's
    sprint on every long walk 27 of 133: the rest were its own."""
    t = np.arange(0, 20, 0.5)
    me = (t, np.zeros((len(t), 2)))  # standing at the origin
    passing = np.c_[5.0 - 0.5 * t, np.zeros(len(t))]  # walks through us: 0.5 m away at 9 s, 3 m at 16 s
    falls = detect_falls(np.r_[t, 20.0], np.r_[np.where((t > 9.5) & (t < 12) | (t > 16.5), 0.1, 0.6), 0.1])
    assert [round(f.t, 1) for f in falls] == [10.0, 17.0]
    marked = mark_contact(falls, me, [(t, passing)])
    assert [f.contact for f in marked] == [True, False]
    assert [f.t for f in marked] == [f.t for f in falls]
    assert [f.contact for f in mark_contact(falls, me, [])] == [False, False]  # nobody near
    assert mark_contact(falls, (np.zeros(0), np.zeros((0, 2))), [(t, passing)]) == falls  # our place unknown


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


def test_report_of_a_written_bag_finds_the_goal_the_shot_and_possession(tmp_path: Path) -> None:
    """A bag written here (rosbags, the recorder's topics and types): a left player shoots into the right goal."""
    pytest.importorskip('plotly')
    rosbags = pytest.importorskip('rosbags.rosbag2')
    from rosbags.typesys import Stores, get_typestore  # noqa: PLC0415

    from robocup3d_tools.match_analysis import analyze  # noqa: PLC0415
    from robocup3d_tools.match_data import load_match  # noqa: PLC0415
    from robocup3d_tools.report import main as report  # noqa: PLC0415

    store = get_typestore(Stores.ROS2_KILTED)
    T = store.types

    def header(t: float) -> object:
        sec = int(t)
        return T['std_msgs/msg/Header'](
            stamp=T['builtin_interfaces/msg/Time'](sec=sec, nanosec=round((t - sec) * 1e9)), frame_id='world'
        )

    def pose(t: float, x: float, y: float) -> object:
        p = T['geometry_msgs/msg/Pose'](
            position=T['geometry_msgs/msg/Point'](x=x, y=y, z=0.65),
            orientation=T['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0),
        )
        return T['geometry_msgs/msg/PoseStamped'](header=header(t), pose=p)

    t, ball = _ball_kicked(2.0, 8.0, (1.0, 0.0), start=(20.0, 0.0), length=4.0)
    ball[ball[:, 0] > 28.5, 0] = 28.5  # in the net
    bag = tmp_path / 'bag'
    with rosbags.Writer(bag, version=9, storage_plugin=rosbags.StoragePlugin.MCAP) as w:
        c_ball = w.add_connection('/truth/ball', 'geometry_msgs/msg/PointStamped', typestore=store)
        c_a = w.add_connection('/truth/A/p9/pose', 'geometry_msgs/msg/PoseStamped', typestore=store)
        c_b = w.add_connection('/truth/B/p1/pose', 'geometry_msgs/msg/PoseStamped', typestore=store)
        c_game = w.add_connection('/truth/game', 'std_msgs/msg/String', typestore=store)
        for ti, (x, y, z) in zip(t, ball, strict=True):
            ns = round((10 + ti) * 1e9)
            point = T['geometry_msgs/msg/Point'](x=x, y=y, z=z)
            msg = T['geometry_msgs/msg/PointStamped'](header=header(10 + ti), point=point)
            w.write(c_ball, ns, store.serialize_cdr(msg, 'geometry_msgs/msg/PointStamped'))
            for conn, (px, py) in ((c_a, (19.7, 0.0)), (c_b, (26.5, 3.0))):
                w.write(conn, ns, store.serialize_cdr(pose(10 + ti, px, py), 'geometry_msgs/msg/PoseStamped'))
            score = 1 if x >= 28.5 else 0
            game = {'play_mode': 'PlayOn', 'score_left': score, 'score_right': 0, 'team_left': 'A', 'team_right': 'B'}
            msg = T['std_msgs/msg/String'](data=json.dumps(game))
            w.write(c_game, ns, store.serialize_cdr(msg, 'std_msgs/msg/String'))
    a = analyze(load_match(bag))
    assert [(g.team, g.score_left) for g in a.goals] == [('left', 1)]
    (kick,) = a.kicks
    assert kick.kicker == 'A/p9' and kick.shot and kick.outcome == 'goal'
    assert a.possession_share['left'] > 0.5
    assert report([str(bag), '-o', str(tmp_path / 'r.html')]) == 0
    assert 'A/p9' in (tmp_path / 'r.html').read_text(encoding='utf-8')


def _still_then_kicked(kick_at: float, end: float = 20.0) -> tuple[np.ndarray, np.ndarray]:
    """A ball lying at the centre spot until ``kick_at``, then rolling on at 2 m/s."""
    t = np.arange(0.0, end, 0.02)
    x = np.where(t < kick_at, 0.0, 2.0 * (t - kick_at))
    return t, np.stack([x, np.zeros_like(t)], axis=1)


def test_a_ball_at_a_players_feet_counts_as_his_sides_until_it_moves_and_whoever_is_nearest_then_played_it() -> None:
    ball_t, ball_xy = _still_then_kicked(6.0)
    t = np.arange(0.0, 20.0, 0.02)
    ours = (t, np.tile([-0.5, 0.0], (len(t), 1)))  # at the ball all along
    # theirs walks up from 4 m at 0.5 m/s: within 0.3 m of the ball by 7.4 s, after ours moved it at 6 s
    theirs = (t, np.stack([np.maximum(0.3, 4.0 - 0.5 * t), np.zeros_like(t)], axis=1))
    sides = {'A/p1': 'left', 'B/p1': 'right'}
    games = [(0.0, {'play_mode': 'PlayOn'})]
    (b,) = loose_balls(ball_t, ball_xy, {'A/p1': ours, 'B/p1': theirs}, sides, games)
    assert b.side == 'left' and b.first == 'left' and b.waited == pytest.approx(6.0, abs=0.15)
    # ours stands 0.5 m off and does nothing: theirs gets there first (8.0 s) and plays it
    ball_t, ball_xy = _still_then_kicked(9.0)
    (b,) = loose_balls(ball_t, ball_xy, {'A/p1': ours, 'B/p1': theirs}, sides, games)
    assert b.side == 'left' and b.first == 'right'
    # not in play (a set play's ball lies still by rule): none
    assert (
        loose_balls(ball_t, ball_xy, {'A/p1': ours, 'B/p1': theirs}, sides, [(0.0, {'play_mode': 'KickOff_Left'})])
        == []
    )
