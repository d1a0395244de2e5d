"""Team talk: encode/decode round trips, both servers' say rules, real hear lines."""

from __future__ import annotations

import base64
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from robocup3d_bridge.perception import parse_percept
from robocup3d_bridge.protocol import check_say_mujoco, check_say_simspark
from robocup3d_bridge.team_talk import (
    ALPHABET,
    INTENTS,
    MESSAGE_LENGTH,
    TeamMessage,
    decode,
    encode,
    heard_at,
    is_my_slot,
    server_cycle,
)

coord = st.floats(-31.9, 31.9)


@given(
    unum=st.integers(1, 15),
    cycle=st.integers(0, 10**6),
    x=coord,
    y=coord,
    heading=st.floats(-math.pi, math.pi),
    ball=st.none() | st.tuples(coord, coord),
    age=st.floats(0.0, 1.4),
    fallen=st.booleans(),
    intent=st.sampled_from(INTENTS),
)
def test_round_trip_within_quantisation(unum, cycle, x, y, heading, ball, age, fallen, intent) -> None:
    msg = TeamMessage(unum, cycle % 16, x, y, heading, ball, age, fallen, intent)
    text = encode(msg, 'TeamA')
    # Legal on both servers as it is.
    assert len(text) == MESSAGE_LENGTH
    assert check_say_simspark(text) == text
    assert check_say_mujoco(text) == text.encode('ascii')
    got = decode(text, 'TeamA')
    assert got is not None
    assert got.unum == unum and got.stamp == cycle % 16
    assert got.fallen == fallen and got.intent == intent
    assert abs(got.x - x) <= 0.0625 + 1e-9 and abs(got.y - y) <= 0.0625 + 1e-9
    assert abs((got.heading - heading + math.pi) % (2 * math.pi) - math.pi) <= math.pi / 32 + 1e-9
    if ball is None:
        assert got.ball is None
    else:
        assert got.ball is not None
        assert abs(got.ball[0] - ball[0]) <= 0.0625 + 1e-9 and abs(got.ball[1] - ball[1]) <= 0.0625 + 1e-9
        assert abs(got.ball_age - age) <= 0.05 + 1e-9


def test_alphabet_is_safe_for_rcssserver3d() -> None:
    # Seen on the wire (shared/captures/simspark/README.md): these characters truncate or drop a say.
    assert len(ALPHABET) == 89 and not set(ALPHABET) & set(' ()"\'\\')
    assert 89**MESSAGE_LENGTH >= 2**64


def test_other_teams_and_garbage_are_turned_away() -> None:
    msgs = [TeamMessage(u, u, -u, u / 2, 0.1 * u, (u, -u), 0.3) for u in range(1, 12)]
    texts = [encode(m, 'TeamA') for m in msgs]
    assert all(decode(t, 'TeamA') is not None for t in texts)
    # The check is 8 bits: another team's name turns away all but about 1 in 256.
    accepted = sum(decode(encode(m, f'Opp{i}'), 'TeamA') is not None for i in range(40) for m in msgs)
    assert accepted < 20
    assert decode(texts[0][:-1], 'TeamA') is None
    assert decode(texts[0][:-1] + ' ', 'TeamA') is None
    flipped = texts[0][:4] + ALPHABET[(ALPHABET.index(texts[0][4]) + 1) % 89] + texts[0][5:]
    assert decode(flipped, 'TeamA') is None
    with pytest.raises(ValueError):
        encode(TeamMessage(0, 0, 0.0, 0.0, 0.0), 'TeamA')
    with pytest.raises(ValueError):
        encode(TeamMessage(1, 0, 0.0, 0.0, 0.0, intent='shoot'), 'TeamA')


def test_positions_beyond_the_covered_range_are_clamped_to_its_edge() -> None:
    got = decode(encode(TeamMessage(3, 0, 40.0, -40.0, 0.0, (33.0, 0.0)), 'TeamA'), 'TeamA')
    assert got is not None and got.x == pytest.approx(31.875) and got.y == pytest.approx(-32.0)
    assert got.ball is not None and got.ball[0] == pytest.approx(31.875)


def test_slots_give_one_speaker_per_cycle() -> None:
    for period in (7, 11):
        for cycle in range(100):
            speakers = [u for u in range(1, period + 1) if is_my_slot(u, cycle, period)]
            assert len(speakers) == 1
    assert [c for c in range(30) if is_my_slot(3, c, 11)] == [2, 13, 24]


def test_stamp_dates_the_message() -> None:
    said = 123.46
    msg = TeamMessage(2, server_cycle(said) % 16, 0.0, 0.0, 0.0)
    assert heard_at(msg.stamp, said + 0.04) == pytest.approx(said)
    assert heard_at(msg.stamp, said) == pytest.approx(said)


def test_real_hear_lines_are_not_ours(shared_dir) -> None:
    """Every hear line in the captures (other formats, both teams) decodes to nothing."""
    caps = shared_dir / 'captures'
    heard = []
    for name in (
        'simspark/say_edgecases_A2_Alpha2_listener.txt',
        'simspark/say_edgecases_B1_Beta1_listener.txt',
        'simspark/match_A1_Alpha1_type0.txt',
        'rcssservermj/cap_A2.txt',
    ):
        for line in (caps / name).read_text().splitlines():
            if 'hear' in line:
                heard += [h.text for h in parse_percept(line).hear]
    assert len(heard) > 400
    assert not [t for t in heard if decode(t, 'Alpha') or decode(t, 'Beta')]


def test_our_message_through_both_servers_hear_parsers(shared_dir) -> None:
    """Our text spliced into real messages as each server delivers it decodes again."""
    msg = TeamMessage(4, 9, -3.25, 7.5, 1.0, (0.5, -2.0), 0.2)
    text = encode(msg, 'Alpha')
    caps = shared_dir / 'captures'
    simspark = next(
        ln for ln in (caps / 'simspark/say_edgecases_A2_Alpha2_listener.txt').read_text().splitlines() if '(hear' in ln
    )
    start = simspark.index('(hear')
    simspark = simspark[:start] + f'(hear Alpha 12.34 -27.17 {text})' + simspark[simspark.index(')', start) + 1 :]
    mujoco = next(ln for ln in (caps / 'rcssservermj/cap_A2.txt').read_text().splitlines() if '(MIC hear (' in ln)
    start = mujoco.index('(MIC hear (')
    b64 = base64.b64encode(text.encode('ascii')).decode('ascii')
    mujoco = mujoco[:start] + f'(MIC hear (8 {b64}))' + mujoco[mujoco.index('))', start) + 2 :]
    for line in (simspark, mujoco):
        hears = parse_percept(line).hear
        assert len(hears) == 1
        got = decode(hears[0].text, 'Alpha')
        assert got is not None and got.unum == 4 and got.ball == (0.5, -2.0)
