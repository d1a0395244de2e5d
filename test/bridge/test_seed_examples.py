"""The perceptor examples of the seed documents (chapter 2.4) that no capture contains."""

from __future__ import annotations

import math

import pytest

from robocup3d_bridge.perception import KNOWN_PERCEPTORS, parse_percept

D2R = math.pi / 180


def test_universal_joint_in_degrees_to_radians() -> None:
    p = parse_percept('(UJ (n laj1 2) (ax1 -1.32) (ax2 2.00))')
    assert p.universal_joints['laj1 2'] == pytest.approx((-1.32 * D2R, 2.0 * D2R))
    assert not p.errors


@pytest.mark.parametrize('text', ['(TCH n bumper val 1)', '(TCH (n bumper) (val 1))'])
def test_touch_perceptor_both_spellings(text: str) -> None:
    assert parse_percept(text).touch == {'bumper': True}
    assert parse_percept(text.replace('1)', '0)')).touch == {'bumper': False}


def test_agent_state() -> None:
    assert parse_percept('(AgentState (temp 48) (battery 75))').agent_state == {'temp': 48.0, 'battery': 75.0}


def test_seed_full_message_with_team_less_hear() -> None:
    # The seeds' complete example: old-style GS without scores and a hear without team name.
    text = (
        '(time (now 93.60))(GS (t 0.00) (pm BeforeKickOff))(hear 0.00 self 1000-501)'
        '(GYR (n torso) (rt -0.35 -0.36 -0.01))(ACC (n torso) (a 0.20 -0.20 9.79))'
        '(HJ (n hj1) (ax 0.33))(HJ (n hj2) (ax -3.31))'
        '(See (G2R (pol 17.55 -3.33 4.31)) (B (pol 8.51 -0.21 -0.17))'
        ' (P (team teamRed) (id 1) (head (pol 16.98 -0.21 3.19)) (rfoot (pol 17.00 0.29 1.68))))'
        '(FRP (n rf) (c 0.01 -0.01 -0.02) (f -0.21 0.21 19.77))(HJ (n rlj6) (ax 0.21))'
    )
    p = parse_percept(text)
    assert not p.errors and not p.unknown
    assert p.time == 93.6 and p.game.play_mode == 'BeforeKickOff' and p.game.score_left is None
    (h,) = p.hear
    assert (h.team, h.time, h.is_self, h.direction, h.text) == (None, 0.0, True, None, '1000-501')
    assert p.joint_positions['hj2'] == pytest.approx(-3.31 * D2R)
    assert p.vision.landmarks['G2R'].distance == 17.55
    assert p.vision.players[0].parts['rfoot'].azimuth == pytest.approx(0.29 * D2R)
    assert p.forces['rf'].f == (-0.21, 0.21, 19.77)


def test_unknown_perceptor_is_kept_and_the_rest_still_parsed() -> None:
    p = parse_percept('(time (now 1.5))(BAT (level 3))(GYR (n torso) (rt 0 0 90))')
    assert p.unknown == ['(BAT (level 3))']
    assert p.gyro == pytest.approx((0, 0, math.pi / 2))
    assert 'BAT' not in KNOWN_PERCEPTORS


def test_simspark_imu_is_turned_into_rep103() -> None:
    # rcssserver3d's torso frame is x right, y forward: a Nao lying on its face reads
    # ACC ~ (0, -8, -5.5) (measured); in REP-103 (x forward) that is -8 along x.
    text = '(GYR (n torso) (rt 10 20 30))(ACC (n torso) (a 0.5 -8 -5.5))'
    wire = parse_percept(text)
    rep = parse_percept(text, 'simspark')
    assert wire.accel == (0.5, -8.0, -5.5)
    assert rep.accel == (-8.0, -0.5, -5.5)
    assert rep.gyro == pytest.approx((20 * D2R, -10 * D2R, 30 * D2R))
    assert parse_percept(text, 'mujoco').accel == wire.accel
