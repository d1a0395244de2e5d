"""The parser and the protocol layer against real server traffic (``../shared/captures``).

Expected values were read off the raw capture lines (quoted in the comments) and the
captures' READMEs, not copied from the parser's output.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from functools import cache
from pathlib import Path

import pytest

from robocup3d_bridge.percept import Percept, Polar, Side
from robocup3d_bridge.perception import parse_percept
from robocup3d_bridge.protocol import (
    Action,
    ActionError,
    JointCommand,
    MujocoProtocol,
    SimSparkProtocol,
    check_say_mujoco,
    check_say_simspark,
)
from robocup3d_description.robots import RobotSpec, mujoco_robot, nao
from robocup3d_tools.inspect_capture import main as inspect_main

CAPTURES = Path(__file__).resolve().parents[2] / '..' / 'shared' / 'captures'
SIMSPARK = CAPTURES / 'simspark'
MUJOCO = CAPTURES / 'rcssservermj'

pytestmark = pytest.mark.skipif(
    not SIMSPARK.is_dir() or not MUJOCO.is_dir(), reason=f'shared server captures not found in {CAPTURES.resolve()}'
)

D2R = math.pi / 180.0

# Robot of every agent capture (READMEs' tables); monitor streams are not agent messages.
ROBOT_OF: dict[str, str] = {
    'simspark/type0_single_agent.txt': 'nao0',
    'simspark/type1_single_agent.txt': 'nao1',
    'simspark/type2_single_agent.txt': 'nao2',
    'simspark/type3_single_agent.txt': 'nao3',
    'simspark/type4_single_agent.txt': 'nao4',
    'simspark/groundtruth_type0_single_agent.txt': 'nao0',
    'simspark/match_A1_Alpha1_type0.txt': 'nao0',
    'simspark/match_A2_Alpha2_type4.txt': 'nao4',
    'simspark/say_edgecases_A1_Alpha1_speaker.txt': 'nao0',
    'simspark/say_edgecases_A2_Alpha2_listener.txt': 'nao0',
    'simspark/say_edgecases_B1_Beta1_listener.txt': 'nao0',
    'rcssservermj/capture_T1.txt': 'T1',
    'rcssservermj/capture_T1_pd.txt': 'T1',
    'rcssservermj/capture_K1.txt': 'K1',
    'rcssservermj/cap_A1.txt': 'K1',
    'rcssservermj/cap_A2.txt': 'K1',
}
# The only malformed perceptor in all captures: match_A1 line 1300 has `(L (pol 1.14 ...) (pol nan nan nan))`.
KNOWN_ERROR_LINES = {'simspark/match_A1_Alpha1_type0.txt': [1300]}


def robot(name: str) -> RobotSpec:
    return nao(int(name[3])) if name.startswith('nao') else mujoco_robot(name)


@cache
def lines(rel: str) -> tuple[str, ...]:
    """The messages of a capture, one per line (the trailing newline is not a message)."""
    text = (CAPTURES / rel).read_text(encoding='ascii')
    assert text.endswith('\n')
    return tuple(text[:-1].split('\n'))


@cache
def percepts(rel: str) -> tuple[Percept, ...]:
    return tuple(parse_percept(m) for m in lines(rel))


def msg(rel: str, line: int) -> Percept:
    """The parsed message at 1-based ``line`` of a capture."""
    return percepts(rel)[line - 1]


def rad(*deg: float) -> tuple[float, ...] | float:
    return tuple(d * D2R for d in deg) if len(deg) > 1 else deg[0] * D2R


def assert_polar(p: Polar | None, d: float, az_deg: float, el_deg: float) -> None:
    assert p is not None
    assert (p.distance, p.azimuth, p.elevation) == pytest.approx((d, az_deg * D2R, el_deg * D2R))


# --- every line of every capture -------------------------------------------------------------------------------


def test_every_agent_capture_is_listed() -> None:
    """A new capture file must be added to ROBOT_OF, so that the tests below cover it."""
    found = {f'{p.parent.name}/{p.name}' for p in CAPTURES.glob('*/*.txt') if 'monitor' not in p.name}
    assert found == set(ROBOT_OF)


@pytest.mark.parametrize('rel', sorted(ROBOT_OF))
def test_every_line_parses_with_no_unknown_perceptor(rel: str) -> None:
    errors = {}
    for n, p in enumerate(percepts(rel), 1):
        assert p.unknown == [], f'{rel}:{n}'
        if p.errors:
            errors[n] = p.errors
    assert sorted(errors) == KNOWN_ERROR_LINES.get(rel, [])
    for errs in errors.values():  # the nan line: only that one line segment is lost
        assert len(errs) == 1 and errs[0].startswith('See/L') and 'nan' in errs[0]


@pytest.mark.parametrize('rel', sorted(ROBOT_OF))
def test_every_message_has_the_robots_joints_and_the_basic_perceptors(rel: str) -> None:
    joints = set(robot(ROBOT_OF[rel]).joint_names)
    mujoco = rel.startswith('rcssservermj')
    for n, p in enumerate(percepts(rel), 1):
        assert set(p.joint_positions) == joints, f'{rel}:{n}'
        assert set(p.joint_velocities) == (joints if mujoco else set()), f'{rel}:{n}'
        assert p.time is not None and p.game is not None and p.game.play_mode, f'{rel}:{n}'
        assert p.gyro is not None and p.accel is not None, f'{rel}:{n}'
        assert (p.torso_position is not None and p.torso_orientation is not None) == mujoco, f'{rel}:{n}'
        assert set(p.forces) <= set(robot(ROBOT_OF[rel]).feet), f'{rel}:{n}'


@pytest.mark.parametrize('rel', sorted(ROBOT_OF))
def test_see_arrives_every_third_cycle_on_simspark_and_every_second_on_mujoco(rel: str) -> None:
    see_lines = [n for n, p in enumerate(percepts(rel), 1) if p.vision is not None]
    period = 2 if rel.startswith('rcssservermj') else 3
    assert see_lines and {b - a for a, b in itertools.pairwise(see_lines)} == {period}


@pytest.mark.parametrize('rel', sorted(r for r in ROBOT_OF if r.startswith('simspark')))
def test_simspark_time_advances_by_exactly_one_cycle(rel: str) -> None:
    times = [p.time for p in percepts(rel)]
    assert all(b - a == pytest.approx(0.02) for a, b in itertools.pairwise(times))


@pytest.mark.parametrize('rel', sorted(r for r in ROBOT_OF if r.startswith('simspark')))
def test_simspark_unum_and_side_come_once_in_line_3(rel: str) -> None:
    with_unum = [n for n, p in enumerate(percepts(rel), 1) if p.game.unum is not None or p.game.side is not None]
    assert with_unum == [3]
    agent = re.search(r'_([AB])(\d)_', rel)  # A = Alpha (left), B = Beta (right); single agents are Alpha 1
    unum, side = (int(agent[2]), Side.LEFT if agent[1] == 'A' else Side.RIGHT) if agent else (1, Side.LEFT)
    assert (msg(rel, 3).game.unum, msg(rel, 3).game.side) == (unum, side)


# --- SimSpark: hand-checked lines ----------------------------------------------------------------------------------


def test_simspark_first_message_time_gs_flags_ball_lines() -> None:
    p = msg('simspark/type0_single_agent.txt', 1)
    # (time (now 0.64))(GS (sl 0) (sr 0) (t 0.00) (pm BeforeKickOff))
    assert p.time == pytest.approx(0.64)
    g = p.game
    assert (g.play_mode, g.game_time, g.score_left, g.score_right) == ('BeforeKickOff', 0.0, 0, 0)
    assert (g.unum, g.side, g.team_left, g.team_right) == (None, None, None, None)
    v = p.vision
    # (F1L (pol 18.71 53.65 -4.93)) (F1R (pol 18.69 -53.89 -4.80)) (B (pol 1.89 -0.05 -58.08))
    assert set(v.landmarks) == {'F1L', 'F1R'}
    assert_polar(v.landmarks['F1L'], 18.71, 53.65, -4.93)
    assert_polar(v.ball, 1.89, -0.05, -58.08)
    # 9 x (L ...); the first is (L (pol 1.90 -0.08 -59.99) (pol 11.12 0.13 -8.47))
    assert len(v.lines) == 9
    assert_polar(v.lines[0][0], 1.90, -0.08, -59.99)
    assert_polar(v.lines[0][1], 11.12, 0.13, -8.47)
    assert v.players == [] and v.my_position is None


def test_simspark_one_off_unum_and_team_left() -> None:
    p = msg('simspark/type0_single_agent.txt', 3)
    # (GS (unum 1) (team left) (sl 0) (sr 0) (t 0.00) (pm BeforeKickOff)) ... (ACC (n torso) (a -0.00 -0.00 29.42))
    assert (p.game.unum, p.game.side, p.game.play_mode) == (1, Side.LEFT, 'BeforeKickOff')
    assert p.accel == pytest.approx((0.0, 0.0, 29.42))


def test_simspark_type4_gyro_acc_joints_and_toe_forces() -> None:
    p = msg('simspark/type4_single_agent.txt', 6)
    # (GYR (n torso) (rt -3.29 0.03 -0.09))(ACC (n torso) (a -0.02 0.02 0.67))
    assert p.gyro == pytest.approx(rad(-3.29, 0.03, -0.09))
    assert p.accel == pytest.approx((-0.02, 0.02, 0.67))
    # (HJ (n hj1) (ax 2.29))(HJ (n hj2) (ax -1.15)) ... (HJ (n rlj7) (ax 1.15)) ... (HJ (n llj3) (ax -1.15))
    j = p.joint_positions
    assert (j['hj1'], j['hj2'], j['rlj7'], j['llj3']) == pytest.approx(rad(2.29, -1.15, 1.15, -1.15))
    assert len(j) == 24
    # (FRP (n rf) (c -0.00 -0.03 -0.01) (f 0.06 3.58 88.43)) (FRP (n rf1) (c 0.00 -0.01 -0.01) (f -0.05 3.77 16.18))
    # (FRP (n lf) ... (f 0.06 3.44 88.49)) (FRP (n lf1) ... (f -0.05 3.64 16.21))
    f = p.forces
    assert set(f) == {'lf', 'rf', 'lf1', 'rf1'}
    assert f['rf'].c == pytest.approx((0.0, -0.03, -0.01))
    assert f['rf'].f == pytest.approx((0.06, 3.58, 88.43))
    assert f['rf1'].c == pytest.approx((0.0, -0.01, -0.01))
    assert f['rf1'].f == pytest.approx((-0.05, 3.77, 16.18))
    assert f['lf'].f == pytest.approx((0.06, 3.44, 88.49))
    assert f['lf1'].f == pytest.approx((-0.05, 3.64, 16.21))
    assert p.kinds.count('HJ') == 24 and p.kinds.count('FRP') == 4


def test_simspark_match_line_with_hear_players_own_arms_and_a_nan() -> None:
    p = msg('simspark/match_A1_Alpha1_type0.txt', 1300)
    # (time (now 26.94))(GS (sl 1) (sr 0) (t 23.98) (pm pass_right))
    assert p.time == pytest.approx(26.94)
    assert (p.game.score_left, p.game.score_right, p.game.game_time, p.game.play_mode) == (1, 0, 23.98, 'pass_right')
    # (hear Alpha 23.98 152.76 mark#9)(hear Beta 23.98 9.48 B1/1291)
    h1, h2 = p.hear
    assert (h1.team, h1.time, h1.text, h1.is_self) == ('Alpha', 23.98, 'mark#9', False)
    assert h1.direction == pytest.approx(rad(152.76))
    assert (h2.team, h2.text, h2.data) == ('Beta', 'B1/1291', b'B1/1291')
    assert h2.direction == pytest.approx(rad(9.48))
    v = p.vision
    # (G2R (pol 18.03 -23.11 1.03)) (G1R ...) (F1R ...) (F2R ...) (B (pol 17.01 -19.74 -1.55))
    assert set(v.landmarks) == {'G1R', 'G2R', 'F1R', 'F2R'}
    assert_polar(v.landmarks['G2R'], 18.03, -23.11, 1.03)
    assert_polar(v.ball, 17.01, -19.74, -1.55)
    # (P (team Alpha) (id 1) (rlowerarm (pol 0.17 -45.47 -16.61)) (llowerarm (pol 0.20 25.20 -30.71))): our own arms
    own, beta = v.players
    assert (own.team, own.unum, set(own.parts)) == ('Alpha', 1, {'rlowerarm', 'llowerarm'})
    assert_polar(own.parts['rlowerarm'], 0.17, -45.47, -16.61)
    assert_polar(own.parts['llowerarm'], 0.20, 25.20, -30.71)
    # (P (team Beta) (id 1) (head (pol 6.07 -10.17 0.30)) (rlowerarm ...) (llowerarm ...) (rfoot ...) (lfoot ...))
    assert (beta.team, beta.unum) == ('Beta', 1)
    assert set(beta.parts) == {'head', 'rlowerarm', 'llowerarm', 'rfoot', 'lfoot'}
    assert_polar(beta.parts['head'], 6.07, -10.17, 0.30)
    # 17 (L ...) of which one is (L (pol 1.14 -19.54 -28.67) (pol nan nan nan)): dropped, reported, rest kept
    assert len(v.lines) == 16
    assert len(p.errors) == 1 and 'nan' in p.errors[0]
    # (FRP (n rf) (c 0.00 -0.01 -0.01) (f -0.00 0.02 22.60)) and the joints after See are still read
    assert p.forces['rf'].f == pytest.approx((0.0, 0.02, 22.60))
    assert p.joint_positions['laj1'] == pytest.approx(rad(-11.0))


def test_simspark_hear_self() -> None:
    # (hear Alpha 0.00 self hello_from_A1)
    (h,) = msg('simspark/match_A1_Alpha1_type0.txt', 12).hear
    assert (h.team, h.time, h.is_self, h.direction, h.text) == ('Alpha', 0.0, True, None, 'hello_from_A1')


def test_simspark_match_sees_every_play_mode_and_the_final_score() -> None:
    modes = {p.game.play_mode for p in percepts('simspark/match_A1_Alpha1_type0.txt')}
    readme = """BeforeKickOff KickOff_Left KickOff_Right PlayOn KickIn_Left KickIn_Right corner_kick_left
        corner_kick_right goal_kick_left goal_kick_right offside_left offside_right GameOver Goal_Left Goal_Right
        free_kick_left free_kick_right direct_free_kick_left direct_free_kick_right pass_left pass_right"""
    assert modes == set(readme.split())
    last = msg('simspark/match_A1_Alpha1_type0.txt', 1500).game  # (GS (sl 2) (sr 1) (t 27.52) (pm GameOver))
    assert (last.score_left, last.score_right, last.game_time, last.play_mode) == (2, 1, 27.52, 'GameOver')


def test_simspark_hear_counts_match_the_readme() -> None:
    files = ('match_A1_Alpha1_type0', 'match_A2_Alpha2_type4')
    assert [sum(len(p.hear) for p in percepts(f'simspark/{f}.txt')) for f in files] == [492, 494]


def test_simspark_ground_truth() -> None:
    rel = 'simspark/groundtruth_type0_single_agent.txt'
    # before init: (mypos -0.00 -1.00 1.64) (myorien 90.00) (ballpos 0.00 0.00 0.04)
    v = msg(rel, 1).vision
    assert v.my_position == pytest.approx((0.0, -1.0, 1.64))
    assert v.my_orientation == pytest.approx(math.pi / 2)
    assert v.ball_position == pytest.approx((0.0, 0.0, 0.04))
    # after (beam -5 0 0): (mypos -5.03 0.03 0.55) (myorien 7.87)
    v = msg(rel, 7).vision
    assert v.my_position == pytest.approx((-5.03, 0.03, 0.55))
    assert v.my_orientation == pytest.approx(rad(7.87))
    # after (beam -4 2 90): (mypos -3.98 2.02 0.55) (myorien 99.37) (ballpos 2.42 1.21 0.04)
    v = msg(rel, 178).vision
    assert v.my_orientation == pytest.approx(rad(99.37))
    assert v.ball_position == pytest.approx((2.42, 1.21, 0.04))


SAY_HEARD = [
    'nobeta_yet_1', 'nobeta_yet_2', 'plain', '12345678901234567890', 'back\\slash', 'semi;colon',
    '!#$%&*+,-./:;<=>?@[]', 'apos', 'with', 'a', 'tab', 'after_tests', 'a', 'last_one',
]  # fmt: skip


def test_say_edge_cases_heard_by_speaker_teammate_and_opponent() -> None:
    def heard(name: str) -> list[tuple[str, str, bool]]:
        return [(h.team, h.text, h.is_self) for p in percepts(f'simspark/say_edgecases_{name}.txt') for h in p.hear]

    assert heard('A1_Alpha1_speaker') == [('Alpha', t, True) for t in SAY_HEARD]
    assert heard('A2_Alpha2_listener') == [('Alpha', t, False) for t in SAY_HEARD]
    # Beta joined after the two `nobeta_yet` messages; an opponent hears Alpha's says too
    assert heard('B1_Beta1_listener') == [('Alpha', t, False) for t in SAY_HEARD[2:]]
    # (hear Alpha 0.00 -13.11 plain) at line 24
    (h,) = msg('simspark/say_edgecases_B1_Beta1_listener.txt', 24).hear
    assert h.direction == pytest.approx(rad(-13.11))


def test_right_team_agent_sees_absolute_flag_names() -> None:
    rel = 'simspark/say_edgecases_B1_Beta1_listener.txt'
    # line 3: (GS (unum 1) (team right) ...)
    assert (msg(rel, 3).game.unum, msg(rel, 3).game.side) == (1, Side.RIGHT)
    # Beamed to world (2,-1) facing -x: it sees our own goal's posts G1L/G2L, never G1R/G2R.
    # line 58: (See (G1L (pol 17.15 -1.72 1.09)) (G2L (pol 17.03 5.45 0.79)) (F1L ...) (F2L ...) (B ...)
    v = msg(rel, 58).vision
    assert {'G1L', 'G2L', 'F1L', 'F2L'} <= set(v.landmarks)
    assert_polar(v.landmarks['G1L'], 17.15, -1.72, 1.09)
    seen = {name for p in percepts(rel) if p.vision for name in p.vision.landmarks}
    assert not seen & {'G1R', 'G2R'}
    # ... (P (team Beta) (id 1) (rlowerarm (pol 0.18 -35.72 -22.56)) (llowerarm ...)): its own arms
    assert (v.players[0].team, v.players[0].unum) == ('Beta', 1)
    assert_polar(v.players[0].parts['rlowerarm'], 0.18, -35.72, -22.56)


def test_simspark_observe_learns_the_side_from_line_3() -> None:
    for rel, side in (('say_edgecases_B1_Beta1_listener', Side.RIGHT), ('type0_single_agent', Side.LEFT)):
        proto = SimSparkProtocol(nao(0), 'Beta', 1)
        for p in percepts(f'simspark/{rel}.txt')[:5]:
            proto.observe(p)
        assert proto.side is side


# --- RCSSServerMJ: hand-checked lines ------------------------------------------------------------------------------


def test_mujoco_first_message_gs_ground_truth_and_point_landmarks() -> None:
    p = msg('rcssservermj/capture_T1.txt', 1)
    # (time (now 4.59))(GS (t 0.0)(pm BeforeKickOff)(tl Probe)(sl 0)(sr 0))
    assert p.time == pytest.approx(4.59)
    g = p.game
    assert (g.game_time, g.play_mode, g.team_left, g.team_right, g.score_left, g.score_right) == (
        0.0, 'BeforeKickOff', 'Probe', None, 0, 0,
    )  # fmt: skip
    assert (g.unum, g.side) == (None, None)
    # (quat (n torso_quat) (q 0.707 0.0 0.0 -0.707))(pos (n torso_pos) (p -3.0 21.0 0.673))
    assert p.torso_orientation == pytest.approx((0.707, 0.0, 0.0, -0.707))
    assert p.torso_position == pytest.approx((-3.0, 21.0, 0.673))
    v = p.vision
    # 21 point landmarks: (l_llf (pol 45.97 -32.21 -1.36)) ... (g_lup (pol 31.04 -52.12 1.35)) ...
    assert len(v.landmarks) == 21
    assert_polar(v.landmarks['l_llf'], 45.97, -32.21, -1.36)
    assert_polar(v.landmarks['g_lup'], 31.04, -52.12, 1.35)
    assert_polar(v.ball, 21.12, 8.17, -2.68)  # (B (pol 21.12 8.17 -2.68))
    assert v.lines == [] and v.players == []


def test_mujoco_gyro_acc_and_joints_with_velocity() -> None:
    p = msg('rcssservermj/capture_T1.txt', 100)
    # (GYR (n torso_gyro) (rt -0.02 -1.17 0.0))(ACC (n torso_acc) (a 9.2 0.0 -3.38))
    assert p.gyro == pytest.approx(rad(-0.02, -1.17, 0.0))
    assert p.accel == pytest.approx((9.2, 0.0, -3.38))
    # (HJ (n q_hj2)(ax -17.66)(vx 6.0)) (HJ (n q_laj1)(ax 67.43)(vx -1.71)) (HJ (n q_tj1)(ax 0.03)(vx 0.01))
    j, dj = p.joint_positions, p.joint_velocities
    assert (j['hj2'], j['laj1'], j['tj1']) == pytest.approx(rad(-17.66, 67.43, 0.03))
    assert (dj['hj2'], dj['laj1'], dj['tj1']) == pytest.approx(rad(6.0, -1.71, 0.01))
    assert not any(name.startswith('q_') for name in j)


def test_mujoco_player_sightings_and_both_team_names() -> None:
    p = msg('rcssservermj/cap_A1.txt', 4)
    # (GS (t 0.0)(pm BeforeKickOff)(tl TeamA)(tr TeamB)(sl 0)(sr 0)) ... (MIC hear ) ...
    assert (p.game.team_left, p.game.team_right) == ('TeamA', 'TeamB')
    assert p.hear == [] and p.errors == []
    v = p.vision
    # (P (team TeamB)(id 1)(head (pol 4.05 14.28 0.07))(lfoot (pol 4.12 12.93 -11.69))(rfoot (pol 4.17 15.56 -11.56)))
    (s,) = v.players
    assert (s.team, s.unum, set(s.parts)) == ('TeamB', 1, {'head', 'lfoot', 'rfoot'})
    assert_polar(s.parts['head'], 4.05, 14.28, 0.07)
    assert_polar(s.parts['rfoot'], 4.17, 15.56, -11.56)
    assert_polar(v.landmarks['p_rpm'], 22.15, 0.0, -3.41)  # (p_rpm (pol 22.15 0.0 -3.41))
    assert_polar(v.ball, 2.28, 0.0, -32.05)  # (B (pol 2.28 0.0 -32.05))


def test_mujoco_mic_hear_decodes_base64() -> None:
    # (GS (t 0.0)...) ... (MIC hear (8 aGVsbG8=))
    (h,) = msg('rcssservermj/cap_A2.txt', 2).hear
    assert (h.data, h.text, h.is_self, h.team, h.time) == (b'hello', 'hello', False, None, 0.0)
    assert h.direction == pytest.approx(rad(8.0))


def test_mujoco_observe_derives_the_side_from_team_names() -> None:
    p = msg('rcssservermj/cap_A1.txt', 4)  # (tl TeamA)(tr TeamB)
    for team, side in (('TeamA', Side.LEFT), ('TeamB', Side.RIGHT)):
        proto = MujocoProtocol(mujoco_robot('K1'), team, 1)
        proto.observe(p)
        assert proto.side is side


# --- protocol layer against the captures' facts --------------------------------------------------------------------

SAY_ARRIVED_UNCHANGED = ['plain', '12345678901234567890', 'back\\slash', 'semi;colon', '!#$%&*+,-./:;<=>?@[]']
SAY_DROPPED_OR_TRUNCATED = [
    'abcdefghijklmnopqrstu',  # 21 characters: dropped
    'q"uote',  # dropped
    'trailing\\',  # dropped
    "apos'trophe",  # -> apos
    'with space',  # -> with
    'a(b)',  # -> a
    'tab\there',  # -> tab
    '',  # (say) produces nothing
]


@pytest.mark.parametrize('text', SAY_ARRIVED_UNCHANGED)
def test_simspark_say_accepts_what_arrived_unchanged(text: str) -> None:
    assert check_say_simspark(text) == text
    enc = SimSparkProtocol(nao(0), 'Alpha', 1).encode(Action(say=text))
    assert enc.text == f'(syn)(say {text})'


@pytest.mark.parametrize('text', SAY_DROPPED_OR_TRUNCATED)
def test_simspark_say_rejects_what_was_dropped_or_truncated(text: str) -> None:
    with pytest.raises(ActionError):
        check_say_simspark(text)
    with pytest.raises(ActionError):
        SimSparkProtocol(nao(0), 'Alpha', 1).encode(Action(say=text))


def test_mujoco_say_is_base64_and_at_most_10_bytes() -> None:
    proto = MujocoProtocol(mujoco_robot('K1'), 'TeamA', 1)
    # what cap_A2 heard as (MIC hear (8 aGVsbG8=))
    assert proto.encode(Action(say='hello')).text == '(SPK say 100 aGVsbG8=)(syn)'
    assert check_say_mujoco(b'0123456789') == b'0123456789'
    for bad in ('01234567890', b'\x00' * 11, ''):
        with pytest.raises(ActionError):
            check_say_mujoco(bad)
        with pytest.raises(ActionError):
            proto.encode(Action(say=bad))


def protocols() -> list[SimSparkProtocol | MujocoProtocol]:
    return [SimSparkProtocol(nao(0), 'Alpha', 1), MujocoProtocol(mujoco_robot('T1'), 'TeamA', 1)]


@pytest.mark.parametrize('proto', protocols(), ids=['simspark', 'mujoco'])
def test_unknown_joint_raises(proto: SimSparkProtocol | MujocoProtocol) -> None:
    # type 0 has no toes, nor has T1; 'he1' is an effector name, not a joint name
    for name in ('llj7', 'he1', 'q_hj1'):
        with pytest.raises(ActionError, match='does not exist'):
            proto.encode(Action(joints=JointCommand(velocity={name: 1.0})))


@pytest.mark.parametrize('proto', protocols(), ids=['simspark', 'mujoco'])
def test_nan_velocity_raises(proto: SimSparkProtocol | MujocoProtocol) -> None:
    with pytest.raises(ActionError, match='not finite'):
        proto.encode(Action(joints=JointCommand(velocity={'hj1': math.nan})))


def test_simspark_velocity_is_clamped_with_a_warning() -> None:
    proto = SimSparkProtocol(nao(0), 'Alpha', 1)
    max_speed = nao(0).by_name['hj1'].max_speed
    enc = proto.encode(Action(joints=JointCommand(velocity={'hj1': 100.0, 'laj1': -1.0})))
    he1, lae1 = enc.text.removeprefix('(syn)').strip('()').split(')(')
    assert he1.split()[0] == 'he1' and float(he1.split()[1]) == pytest.approx(max_speed, abs=1e-4)
    assert lae1 == 'lae1 -1'
    assert len(enc.warnings) == 1 and 'hj1' in enc.warnings[0]


def test_mujoco_joint_command_is_degrees_with_five_numbers_and_position_clamped() -> None:
    t1 = mujoco_robot('T1')
    proto = MujocoProtocol(t1, 'TeamA', 1)
    upper = t1.by_name['hj2'].upper
    cmd = JointCommand(position={'hj1': math.radians(30), 'hj2': 5.0}, velocity={'hj1': math.radians(90)},
                       kp={'hj1': 20.0}, kd={'hj1': 0.5}, effort={'hj2': 0.25})  # fmt: skip
    enc = proto.encode(Action(joints=cmd))
    body = enc.text.removesuffix('(syn)')
    he1, he2 = (part.split() for part in body.strip('()').split(')('))
    assert he1[0] == t1.by_name['hj1'].effector and [float(v) for v in he1[1:]] == [30.0, 90.0, 20.0, 0.5, 0.0]
    assert he2[0] == t1.by_name['hj2'].effector and len(he2) == 6
    assert float(he2[1]) == pytest.approx(math.degrees(upper), abs=1e-4)  # clamped to the joint's range
    assert float(he2[5]) == 0.25
    assert len(enc.warnings) == 1 and 'hj2 position' in enc.warnings[0]


def test_simspark_beam_is_sent_in_the_team_frame_for_both_sides() -> None:
    proto = SimSparkProtocol(nao(1), 'Beta', 1)
    for side in (Side.LEFT, Side.RIGHT):  # the server mirrors a right-team beam itself
        proto.side = side
        assert proto.encode(Action(beam=(-2.0, 1.0, 0.0))).text == '(syn)(beam -2 1 0)'
    assert proto.encode(Action(beam=(-4.0, 1.0, math.radians(30)))).text == '(syn)(beam -4 1 30)'


def test_mujoco_beam_refuses_the_opponent_half_and_negates_y_on_the_right() -> None:
    proto = MujocoProtocol(mujoco_robot('K1'), 'TeamB', 1)
    with pytest.raises(ActionError):
        proto.encode(Action(beam=(1.0, 0.0, 0.0)))
    assert proto.encode(Action(beam=(-3.0, 1.0, math.pi / 2))).text == '(beam -3 1 90)(syn)'
    proto.side = Side.RIGHT
    assert proto.encode(Action(beam=(-3.0, 1.0, math.pi / 2))).text == '(beam -3 -1 90)(syn)'


def test_hello_and_init_messages() -> None:
    ss = SimSparkProtocol(nao(4), 'Alpha', 2)
    assert ss.hello() == ['(scene rsg/agent/nao/nao_hetero.rsg 4)']  # no init here: the server ignores it
    assert ss.after_first_message() == ['(init (unum 2)(teamname Alpha))']
    mj = MujocoProtocol(mujoco_robot('T1'), 'TeamA', 2)
    assert mj.hello() == ['(init T1 TeamA 2)']
    assert mj.after_first_message() == []


@pytest.mark.parametrize('proto', protocols(), ids=['simspark', 'mujoco'])
def test_every_encoded_action_carries_one_syn(proto: SimSparkProtocol | MujocoProtocol) -> None:
    """First on rcssserver3d (it stalled in sync mode with it last), last on RCSSServerMJ."""
    actions = [
        Action(),
        Action(joints=JointCommand(velocity={'hj1': 0.5})),
        Action(beam=(-1.0, 0.0, 0.0)),
        Action(say='ok'),
        Action(joints=JointCommand(velocity={'hj2': -0.5}), beam=(-1.0, 2.0, 0.5), say='all'),
    ]
    for a in actions:
        text = proto.encode(a).text
        where = text.startswith if isinstance(proto, SimSparkProtocol) else text.endswith
        assert where('(syn)') and text.count('(syn)') == 1


# --- robocup3d inspect on the real captures ------------------------------------------------------------------------


def inspect(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = inspect_main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_inspect_writes_one_readable_record_per_message(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = inspect(capsys, str(SIMSPARK / 'match_A1_Alpha1_type0.txt'))
    assert status == 0  # the nan in line 1300 is a per-perceptor error: reported, not fatal
    records = [json.loads(line) for line in out.splitlines()]
    assert [r['line'] for r in records] == list(range(1, 1501))
    r = records[1299]
    # (HJ (n hj1) (ax 11.00)) (HJ (n laj1) (ax -11.00)) (GYR (n torso) (rt 0.00 -0.00 -0.04))
    assert (r['joints_deg']['hj1'], r['joints_deg']['laj1'], r['gyro_deg_s']) == (11.0, -11.0, [0.0, 0.0, -0.04])
    assert r['game'] == {'play_mode': 'pass_right', 'game_time_s': 23.98, 'score_left': 1, 'score_right': 0}
    assert r['foot_forces']['rf']['f_n'] == [0.0, 0.02, 22.6]
    assert [(h['team'], h['text'], h['direction_deg']) for h in r['hear']] == [
        ('Alpha', 'mark#9', 152.76), ('Beta', 'B1/1291', 9.48),
    ]  # fmt: skip
    v = r['vision']
    assert (v['landmarks'], v['players'], v['lines']) == (4, 2, 16)
    assert v['ball'] == {'distance_m': 17.01, 'azimuth_deg': -19.74, 'elevation_deg': -1.55}
    assert len(r['errors']) == 1 and 'nan' in r['errors'][0]
    # the summary on stderr: counts per perceptor kind and the error with its line number
    assert '1500 messages' in err and 'hear 492' in err and 'See 500' in err and 'FRP 2984' in err
    assert re.search(r'1x See/L: .*nan.*\(line 1300\)', err)


def test_inspect_strict_fails_on_per_perceptor_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert inspect(capsys, str(SIMSPARK / 'match_A1_Alpha1_type0.txt'), '--strict', '--summary-only')[0] == 2
    assert inspect(capsys, str(SIMSPARK / 'type0_single_agent.txt'), '--strict', '--summary-only')[0] == 0


def test_inspect_summary_only_goes_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = inspect(capsys, str(SIMSPARK / 'type4_single_agent.txt'), '--summary-only')
    assert status == 0 and err == ''
    assert not out.startswith('{') and '300 messages' in out and 'HJ 7200' in out and 'errors: 0' in out


def test_inspect_mujoco_record_in_radians_to_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / 'out.jsonl'
    status, out, _ = inspect(capsys, str(MUJOCO / 'cap_A2.txt'), '--jsonl', str(out_file), '--radians')
    assert status == 0 and out == ''
    r = json.loads(out_file.read_text().splitlines()[1])
    # line 2: (quat (n torso_quat) (q 0.707 0.0 0.0 -0.707))(pos (n torso_pos) (p -4.999 20.999 0.998))
    #         ... (MIC hear (8 aGVsbG8=))
    assert r['torso_quat_wxyz'] == [0.707, 0.0, 0.0, -0.707]
    assert r['torso_position_m'] == [-4.999, 20.999, 0.998]
    assert r['game']['team_left'] == 'TeamA' and r['game']['team_right'] == 'TeamB'
    assert 'joints_rad' in r and 'joint_velocities_rad_s' in r and 'joints_deg' not in r
    assert r['hear'] == [{'text': 'hello', 'self': False, 'time_s': 0.0, 'direction_rad': round(8 * D2R, 4)}]


def test_inspect_unknown_perceptor_and_malformed_lines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cap = tmp_path / 'cap.txt'
    cap.write_text('(time (now 1.0))(XYZ 1 2)\n(time (now 1.0)(GS (t 0\n(time (now 1.02))\n\n')
    status, out, err = inspect(capsys, str(cap), '--strict')
    assert status == 1  # malformed beats --strict
    assert f'{cap}:2: ' in err and f'{cap}:3: ' not in err and f'{cap}:4: ' not in err  # trailing empty line is fine
    assert re.search(r'1x XYZ \(line 1\)', err)
    assert json.loads(out.splitlines()[1])['line'] == 2
    cap.write_text('(time (now 1.0))(XYZ 1 2)\n')
    assert inspect(capsys, str(cap), '--strict')[0] == 2
    assert inspect(capsys, str(cap))[0] == 0


def test_inspect_missing_file_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = inspect(capsys, str(tmp_path / 'nope.txt'))
    assert status == 1 and 'nope.txt' in err
