"""Fuzzing of the byte/text layers: framing, S-expressions, percepts and ``robocup3d inspect``.

The contract under test: whatever arrives, only the layer's own error type escapes
(``FramingError``, ``SExpParseError``, ``PerceptParseError``), and nothing hangs.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import re
import socket
import tempfile
import threading
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robocup3d_bridge.framing import FrameDecoder, FramingError, frame, recv_frame
from robocup3d_bridge.perception import PerceptParseError, parse_percept
from robocup3d_bridge.sexp import SExpParseError, parse_sexp, to_sexp
from robocup3d_tools.inspect_capture import main as inspect_main

CAPTURES = Path(__file__).resolve().parents[2] / '..' / 'shared' / 'captures'

FUZZ = settings(max_examples=150, deadline=500, suppress_health_check=[HealthCheck.too_slow])
FUZZ_FEW = settings(max_examples=40, deadline=2000, suppress_health_check=[HealthCheck.too_slow])


def _raises(text: str) -> type[BaseException] | None:
    try:
        parse_percept(text)
    except PerceptParseError:
        return None
    except BaseException as exc:  # noqa: BLE001 - we want to know what escaped
        return type(exc)
    return None


# --- framing ---------------------------------------------------------------------------------------------------------

payloads = st.lists(st.binary(max_size=300), max_size=20)


def _decode_in_chunks(stream: bytes, cuts: list[int]) -> tuple[list[bytes], FrameDecoder]:
    dec = FrameDecoder()
    out: list[bytes] = []
    bounds = [0, *sorted(c % (len(stream) + 1) for c in cuts), len(stream)]
    for a, b in itertools.pairwise(bounds):
        out += dec.feed(stream[a:b])
    return out, dec


@FUZZ
@given(payloads, st.lists(st.integers(min_value=0, max_value=10**6), max_size=30))
def test_framing_any_split_gives_back_exactly_the_messages(messages: list[bytes], cuts: list[int]) -> None:
    stream = b''.join(frame(m) for m in messages)
    out, dec = _decode_in_chunks(stream, cuts)
    assert out == messages
    assert dec.pending == 0


@FUZZ
@given(payloads)
def test_framing_byte_by_byte_and_coalesced(messages: list[bytes]) -> None:
    stream = b''.join(frame(m) for m in messages)
    dec = FrameDecoder()
    assert [m for i in range(len(stream)) for m in dec.feed(stream[i : i + 1])] == messages
    assert FrameDecoder().feed(stream) == messages


@FUZZ
@given(payloads, st.binary(min_size=1, max_size=300), st.integers(min_value=0, max_value=10**6))
def test_framing_incomplete_tail_stays_pending(messages: list[bytes], last: bytes, cut: int) -> None:
    tail = frame(last)
    part = tail[: cut % len(tail)]  # strictly shorter than the whole frame
    dec = FrameDecoder()
    assert dec.feed(b''.join(frame(m) for m in messages) + part) == messages
    assert dec.pending == len(part)
    assert dec.feed(tail[len(part) :]) == [last]


@FUZZ
@given(
    payloads,
    st.integers(min_value=101, max_value=2**32 - 1),
    st.binary(max_size=50),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=10),
)
def test_framing_oversized_length_raises_framing_error_only(
    messages: list[bytes], size: int, junk: bytes, cuts: list[int]
) -> None:
    good = [m[:100] for m in messages]
    stream = b''.join(frame(m) for m in good) + size.to_bytes(4, 'big') + junk
    bounds = [0, *sorted(c % (len(stream) + 1) for c in cuts), len(stream)]
    dec = FrameDecoder(max_size=100)
    out: list[bytes] = []
    with pytest.raises(FramingError):
        for a, b in itertools.pairwise(bounds):
            out += dec.feed(stream[a:b])
    assert out == good[: len(out)]  # messages of the chunk that held the bad prefix may be lost
    assert dec.pending == 0  # the stream cannot be resynchronised: the buffer is dropped


# --- S-expressions -----------------------------------------------------------------------------------------------

atoms = st.text(st.characters(blacklist_characters='()', blacklist_categories=('Cs',)), min_size=1, max_size=8).filter(
    lambda s: not any(c.isspace() for c in s)
)
trees = st.recursive(atoms, lambda inner: st.lists(inner, max_size=5), max_leaves=40)


@FUZZ
@given(st.text(max_size=300))
def test_parse_sexp_arbitrary_text_raises_only_sexp_errors(text: str) -> None:
    with contextlib.suppress(SExpParseError):
        parse_sexp(text)


@FUZZ
@given(st.text(alphabet='() ab\t\n', max_size=200))
def test_parse_sexp_balanced_iff_no_error(text: str) -> None:
    depth, balanced = 0, True
    for ch in text:
        depth += {'(': 1, ')': -1}.get(ch, 0)
        balanced &= depth >= 0
    try:
        parse_sexp(text)
    except SExpParseError:
        assert not (balanced and depth == 0)
    else:
        assert balanced and depth == 0


@FUZZ
@given(st.lists(trees, max_size=5))
def test_to_sexp_parse_sexp_round_trip(exprs: list) -> None:
    text = ' '.join(to_sexp(e) for e in exprs)
    assert parse_sexp(text) == exprs


# --- percepts ------------------------------------------------------------------------------------------------------


@cache
def sample_lines() -> tuple[str, ...]:
    """A few real messages of every agent capture (first, one-off GS, a See line, the nan line, the last)."""
    out = []
    for path in sorted(CAPTURES.glob('*/*.txt')):
        if 'monitor' in path.name:
            continue
        lines = path.read_text(encoding='ascii').splitlines()
        out += [lines[i] for i in (0, 2, 3, 5, 100, len(lines) - 1)]
        out += [line for line in lines if 'nan' in line or '(MIC hear (' in line][:1]
    return tuple(out)


needs_captures = pytest.mark.skipif(not CAPTURES.is_dir(), reason=f'shared captures not found in {CAPTURES.resolve()}')


@st.composite
def mutated_lines(draw: st.DrawFn) -> str:
    """A real line with a few edits: truncation, deleted or duplicated characters, bad numbers, dropped parens."""
    text = draw(st.sampled_from(sample_lines()))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(['truncate', 'delete', 'duplicate', 'number', 'paren']))
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        if op == 'truncate':
            text = text[:i]
        elif op == 'delete':
            text = text[:i] + text[i + draw(st.integers(1, 20)) :]
        elif op == 'duplicate':
            text = text[:i] + text[i : i + draw(st.integers(1, 20))] * 2 + text[i + 20 :]
        elif op == 'number':
            token = draw(st.sampled_from(['nan', 'inf', '-inf', '1e999', 'NaN', '', 'x', '1.2.3', '()']))
            j = text.find(' ', i)
            k = min((p for p in (text.find(' ', j + 1), text.find(')', j + 1)) if p > j), default=len(text))
            text = text[: j + 1] + token + text[k:] if j >= 0 else text
        else:
            idx = [p for p, c in enumerate(text) if c in '()']
            if idx:
                p = idx[draw(st.integers(0, len(idx) - 1))]
                text = text[:p] + text[p + 1 :]
    return text


def _check_percept(text: str) -> None:
    try:
        p = parse_percept(text)
    except PerceptParseError:
        return
    for v in (p.time, *(p.gyro or ()), *(p.accel or ()), *p.joint_positions.values()):
        assert v is None or math.isfinite(v)  # non-finite numbers never get through


@needs_captures
@FUZZ
@given(mutated_lines())
def test_parse_percept_mutated_real_lines_raise_only_parse_errors(text: str) -> None:
    _check_percept(text)


@FUZZ
@given(st.sampled_from(['nan', 'inf', '-inf', '1e999', 'NaN', '-1e400']))
def test_parse_percept_non_finite_numbers_become_errors(token: str) -> None:
    text = '(time (now 1.0))(GYR (n torso) (rt {0} 0 0))(HJ (n hj1) (ax {0}))(See (B (pol {0} 1 2)))'
    p = parse_percept(text.format(token))
    assert p.time == 1.0
    assert p.gyro is None and 'hj1' not in p.joint_positions and p.vision.ball is None
    assert len(p.errors) == 3


@FUZZ
@given(st.text(max_size=300))
def test_parse_percept_arbitrary_text_raises_only_parse_errors(text: str) -> None:
    _check_percept(text)


HEADS = ['time', 'now', 'GS', 'team', 'unum', 'pm', 't', 'sl', 'tl', 'GYR', 'rt', 'ACC', 'a', 'HJ', 'n', 'ax', 'vx',
         'FRP', 'c', 'f', 'See', 'B', 'P', 'id', 'head', 'pol', 'L', 'mypos', 'myorien', 'hear', 'self', 'MIC',
         'quat', 'q', 'pos', 'p', 'TCH', 'val', 'UJ', 'ax1', 'AgentState', 'temp']  # fmt: skip
ATOMS = st.one_of(
    st.sampled_from(HEADS),
    st.sampled_from(['0', '1.5', '-3', 'nan', 'inf', '1e999', 'aGVsbG8=', '=', 'left', 'right', '']),
).filter(bool)
perceptor_trees = st.recursive(
    ATOMS, lambda inner: st.lists(inner, min_size=1, max_size=5).map(list), max_leaves=30
).filter(lambda t: isinstance(t, list))


@FUZZ
@given(st.lists(perceptor_trees, max_size=6))
def test_parse_percept_perceptor_shaped_garbage_raises_nothing(exprs: list) -> None:
    parse_percept(''.join(to_sexp(e) for e in exprs))  # well-formed S-expressions: never an exception


# Regression tests for parser bugs found by fuzzing.


@pytest.mark.parametrize('gs', ['(team (left))', '(pm (PlayOn))', '(tl (TeamA))', '(tr ())'])
def test_gs_value_that_is_a_list_is_an_error_not_a_crash(gs: str) -> None:
    p = parse_percept(f'(time (now 1.0))(GS (t 2.5) {gs})')
    assert p.time == 1.0 and p.errors
    g = p.game
    assert g is None or all(v is None or isinstance(v, str) for v in (g.play_mode, g.team_left, g.team_right))


def test_see_player_with_a_list_id_loses_only_that_field() -> None:
    p = parse_percept('(See (P (team A) (id (2)) (head (pol 1 2 3))) (B (pol 4 5 6)))')
    assert p.vision is not None and p.vision.ball is not None and p.errors
    assert p.vision.players[0].team == 'A' and 'head' in p.vision.players[0].parts


def test_see_player_team_is_an_atom() -> None:
    p = parse_percept('(See (P (team (A)) (id 2)))')
    assert p.vision.players[0].team is None and p.errors


@pytest.mark.parametrize('text', ['(' * 5000 + ')' * 5000, '(X ' + '(' * 5000 + ')' * 5001])
def test_deeply_nested_message_is_an_error_not_a_crash(text: str) -> None:
    with contextlib.suppress(PerceptParseError):
        p = parse_percept(text)
        assert p.errors or p.unknown


# --- robocup3d inspect -------------------------------------------------------------------------------------------


def _run_inspect(lines: list[str], *args: str) -> tuple[int, str, list[str]]:
    """Run ``inspect`` on a temporary capture; return exit status, file name and stderr lines."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / 'capture.txt'
        path.write_text(''.join(line + '\n' for line in lines), encoding='ascii')
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = inspect_main([str(path), '--jsonl', str(Path(tmp) / 'out.jsonl'), *args])
        return status, str(path), err.getvalue().splitlines()


@st.composite
def broken_captures(draw: st.DrawFn) -> tuple[list[str], list[int]]:
    """Real lines, some replaced by malformed ones; returns the lines and the 1-based bad line numbers."""
    lines = list(draw(st.lists(st.sampled_from(sample_lines()), min_size=1, max_size=12)))
    bad = sorted(draw(st.sets(st.integers(0, len(lines) - 1), min_size=1, max_size=len(lines))))
    for i in bad:
        kind = draw(st.sampled_from(['truncated', 'extra_close', 'empty']))
        cut = draw(st.integers(0, len(lines[i])))
        # a prefix of a real message is never over-closed, so a '(' after it always stays unclosed
        lines[i] = {'truncated': lines[i][:cut] + '(', 'extra_close': lines[i] + ')', 'empty': ''}[kind]
    lines.append(draw(st.sampled_from(sample_lines())))  # a good last line: trailing empty lines are allowed
    return lines, [i + 1 for i in bad]


@needs_captures
@FUZZ_FEW
@given(broken_captures())
def test_inspect_reports_every_malformed_line_and_exits_1(capture: tuple[list[str], list[int]]) -> None:
    lines, bad = capture
    status, path, err = _run_inspect(lines)
    assert status == 1
    reported = [int(m[1]) for e in err if (m := re.match(rf'{re.escape(path)}:(\d+): ', e))]
    assert reported == bad


@settings(max_examples=30, deadline=None)
@given(st.lists(st.binary(min_size=0, max_size=3000), min_size=1, max_size=5), st.integers(1, 700))
def test_recv_frame_reads_whole_messages_from_a_socket_written_in_pieces(messages: list[bytes], piece: int) -> None:
    a, b = socket.socketpair()
    data = b''.join(frame(m) for m in messages)

    def write() -> None:
        for i in range(0, len(data), piece):
            a.sendall(data[i : i + piece])
        a.shutdown(socket.SHUT_WR)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        got = [recv_frame(b) for _ in messages]
        assert got == messages
        assert recv_frame(b) is None  # the peer closed: end of stream, no exception
    finally:
        writer.join()
        a.close()
        b.close()


def test_recv_frame_refuses_an_impossible_length_and_keeps_the_prefix_on_request() -> None:
    a, b = socket.socketpair()
    try:
        a.sendall(frame(b'(time (now 1.0))') + b'\xff\xff\xff\xff')
        assert recv_frame(b, with_prefix=True) == frame(b'(time (now 1.0))')
        with pytest.raises(FramingError):
            recv_frame(b)
    finally:
        a.close()
        b.close()
