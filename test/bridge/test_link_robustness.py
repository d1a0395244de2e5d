"""What one bad server message may do to the link: nothing (issue #24), in the pure core.

Regression tests for the failures the issue lists (a renamed joint, ``(now 1e308)``, a 1 MB
message, one shared log throttle) and Hypothesis properties of the tolerant framing, the
sanitizer and the encoder. The real player process is fuzzed in ``test/tools/test_fuzz_player.py``.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import random
import socket
import threading
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from robocup3d_bridge.agent_loop import AgentLoop
from robocup3d_bridge.framing import DROPPED, TolerantFrameDecoder, frame
from robocup3d_bridge.link import ServerLink
from robocup3d_bridge.perception import PerceptParseError, parse_percept
from robocup3d_bridge.protocol import WIRE_MAX, Action, ActionError, JointCommand, make_protocol
from robocup3d_bridge.sanitize import LIMITS, PerceptSanitizer
from robocup3d_bridge.throttle import ReasonThrottle
from robocup3d_description.robots import robot_spec

CAPTURES = Path(__file__).resolve().parents[2] / '..' / 'shared' / 'captures'
needs_captures = pytest.mark.skipif(not CAPTURES.is_dir(), reason=f'shared captures not found in {CAPTURES}')
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

T1 = robot_spec('mujoco', 'T1')
NAO = robot_spec('simspark', 'nao', 0)


@cache
def lines(name: str) -> tuple[str, ...]:
    return tuple(x for x in (CAPTURES / name).read_text(encoding='ascii').splitlines() if x)


# --- framing: oversize messages and lying prefixes -----------------------------------------------------------------


def test_a_1mb_message_is_dropped_unread_and_the_next_one_arrives() -> None:
    """Issue: a 1 MB message stalled replies for 271 ms. Now it is skipped as it streams in, never buffered."""
    dec = TolerantFrameDecoder(max_size=64 * 1024)
    huge = frame(b'(time (now 1.0))' + b' ' * (1 << 20))
    stream = huge + frame(b'(time (now 1.02))')
    out: list = []
    for i in range(0, len(stream), 65536):
        out += dec.feed(stream[i : i + 65536])
        assert dec.pending <= 64 * 1024 + 4  # never holds the huge message
    assert out == [DROPPED, b'(time (now 1.02))']
    assert dec.dropped == 1


def _lie(payload: bytes, how: int, amount: int) -> bytes:
    size = {0: max(0, len(payload) - 1 - amount % max(1, len(payload) - 1)), 1: len(payload) + 1 + amount % 300}
    huge = (1 << 24) + amount % ((1 << 32) - (1 << 24))  # above the cap, and still a 4-byte prefix
    return (size.get(how, huge)).to_bytes(4, 'big') + payload


@needs_captures
@FUZZ
@given(
    st.integers(0, 10**6),
    st.integers(0, 2),
    st.integers(0, 2**32 - 1),
    st.lists(st.integers(1, 5000), max_size=20),
)
@example(seed=0, how=2, amount=4_278_190_080, cuts=[])  # a lie near 2**32 (the helper overflowed once)
def test_after_a_lying_prefix_the_stream_finds_the_next_frames(seed: int, how: int, amount: int, cuts: list) -> None:
    rng = random.Random(seed)
    pool = lines('rcssservermj/capture_T1.txt') + lines('simspark/type0_single_agent.txt')
    msgs = [x.encode() for x in rng.sample(pool, 6)]
    stream = frame(msgs[0]) + _lie(msgs[1], how, amount) + b''.join(frame(m) for m in msgs[2:])
    dec = TolerantFrameDecoder()
    out: list = []
    bounds = [0, *sorted(c % (len(stream) + 1) for c in cuts), len(stream)]
    for a, b in itertools.pairwise(bounds):
        out += dec.feed(stream[a:b])
    assert out[0] == msgs[0]
    assert out[-3:] == msgs[3:]  # the frame after the lie may be lost with it; none later
    assert dec.pending == 0


@FUZZ
@given(st.lists(st.binary(max_size=3000), max_size=30), st.integers(1, 4096))
def test_tolerant_decoder_never_raises_nor_buffers_past_its_limit(chunks: list[bytes], limit: int) -> None:
    dec = TolerantFrameDecoder(max_size=limit)
    for c in chunks:
        for m in dec.feed(c):
            assert m is DROPPED or len(m) <= limit
        assert dec.pending <= limit + 4 + 3000


def test_link_answers_an_oversize_message_without_reconnecting() -> None:
    """The link returns ``None`` in the message's place; before, it raised LinkDown and reconnected."""
    server = socket.create_server(('127.0.0.1', 0))
    link = ServerLink('127.0.0.1', server.getsockname()[1], max_message=1024)
    link.connect()
    conn, _ = server.accept()
    try:
        conn.sendall(frame(b'(' + b'x' * 5000 + b')') + frame(b'(time (now 1.0))'))
        got: list = []
        while len(got) < 2:
            got += link.receive(2.0)
        assert got == [None, b'(time (now 1.0))'] and link.connected and link.dropped == 1
    finally:
        conn.close()
        link.close()
        server.close()


# --- sanitizing ----------------------------------------------------------------------------------------------------


def test_a_renamed_joint_is_ignored_and_counted_and_keeps_its_last_value() -> None:
    """Issue: ``(n rlX1)`` raised KeyError in conversions.joint_state_msg and ended the link thread."""
    pytest.importorskip('sensor_msgs')
    from robocup3d_bridge import conversions as conv  # noqa: PLC0415 - needs ROS messages

    san = PerceptSanitizer(NAO.joint_names)
    good = ''.join(f'(HJ (n {n}) (ax 10))' for n in NAO.joint_names)
    p1 = parse_percept('(time (now 1.0))' + good)
    assert san.clean(p1) == []
    p2 = parse_percept('(time (now 1.02))' + good.replace('(n rlj1)', '(n rlX1)'))
    found = san.clean(p2)
    assert {f.kind for f in found} == {'unknown_joint', 'missing_joint'}
    assert 'rlX1' not in p2.joint_positions and p2.joint_positions['rlj1'] == pytest.approx(math.radians(10))
    msg = conv.joint_state_msg(p2, conv.stamp_from_seconds(p2.time), NAO.joint_names)
    assert list(msg.name) == list(NAO.joint_names) and len(msg.position) == len(NAO.joint_names)


@pytest.mark.parametrize('now', ['1e308', '-1', 'nan', '1.0', '0.5', '1e6'])
def test_time_never_goes_back_nor_out_of_range(now: str) -> None:
    """Issue: ``(time (now 1e308))`` raised OverflowError in the joint_states publish."""
    san = PerceptSanitizer(NAO.joint_names)
    san.clean(parse_percept('(time (now 1.0))'))
    p = parse_percept(f'(time (now {now}))')
    found = san.clean(p)
    assert p.time == 1.0 and [f.kind for f in found] in (['time'], [])
    assert san.clean(q := parse_percept('(time (now 1.02))')) == [] and q.time == 1.02


def test_a_new_timeline_is_taken_once_it_holds() -> None:
    san = PerceptSanitizer(())
    san.clean(parse_percept('(time (now 500.0))'))
    times = []
    for i in range(8):
        p = parse_percept(f'(time (now {0.02 * (i + 1):.2f}))')
        san.clean(p)
        times.append(p.time)
    assert times[:4] == [500.0] * 4 and times[4:] == pytest.approx([0.1, 0.12, 0.14, 0.16])


@needs_captures
@FUZZ
@given(st.data())
def test_sanitized_percepts_hold_only_values_in_range(data: st.DataObject) -> None:
    """Whatever a mutated real line says, what passes the sanitizer is finite and physical."""
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    line = rng.choice(lines('rcssservermj/capture_T1.txt') + lines('simspark/match_A1_Alpha1_type0.txt'))
    for _ in range(data.draw(st.integers(1, 4))):
        i = rng.randrange(len(line))
        line = line[:i] + rng.choice(['1e308', '-1e308', 'nan', 'inf', '9' * 400, 'X', ')', '(', '']) + line[i + 1 :]
    san = PerceptSanitizer(T1.joint_names)
    try:
        p = parse_percept(line)
    except PerceptParseError:
        return
    san.clean(p)
    lim = LIMITS
    assert p.time is None or 0 <= p.time <= lim.max_time
    assert set(p.joint_positions) <= set(T1.joint_names)
    assert all(abs(v) <= lim.joint_angle for v in p.joint_positions.values())
    assert all(abs(v) <= lim.joint_rate for v in p.joint_velocities.values())
    for vec, bound in ((p.gyro, lim.gyro), (p.accel, lim.accel), (p.torso_position, lim.position)):
        assert vec is None or all(abs(v) <= bound for v in vec)
    if p.vision is not None:
        pols = [*p.vision.landmarks.values(), *([p.vision.ball] if p.vision.ball else [])]
        assert all(0 <= q.distance <= lim.distance and abs(q.azimuth) <= lim.angle for q in pols)


# --- the encoder ---------------------------------------------------------------------------------------------------

any_float = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1e308, -1e308, 1e12, 0.0]))


@FUZZ
@given(st.dictionaries(st.sampled_from(T1.joint_names), st.tuples(*[any_float] * 5), max_size=5))
def test_mujoco_encoder_sends_only_finite_sane_numbers(values: dict) -> None:
    proto = make_protocol(T1, 'A', 1)
    cmd = JointCommand(
        position={n: v[0] for n, v in values.items()},
        velocity={n: v[1] for n, v in values.items()},
        kp={n: abs(v[2]) if v[2] == v[2] else v[2] for n, v in values.items()},
        kd={n: abs(v[3]) if v[3] == v[3] else v[3] for n, v in values.items()},
        effort={n: v[4] for n, v in values.items()},
    )
    try:
        text = proto.encode(Action(joints=cmd)).text
    except ActionError:
        return
    nums = [float(t) for t in text.replace('(', ' ').replace(')', ' ').split() if t[0] in '-0123456789']
    assert all(math.isfinite(v) and abs(v) <= WIRE_MAX for v in nums)


@FUZZ
@given(st.tuples(any_float, any_float, any_float), st.dictionaries(st.sampled_from(NAO.joint_names), any_float))
def test_simspark_encoder_sends_only_finite_sane_numbers(beam: tuple, velocity: dict) -> None:
    proto = make_protocol(NAO, 'A', 1)
    for action in (Action(beam=beam), Action(joints=JointCommand(velocity=velocity))):
        try:
            text = proto.encode(action).text
        except ActionError:
            continue
        nums = [float(t) for t in text.replace('(', ' ').replace(')', ' ').split() if t[0] in '-0123456789']
        assert all(math.isfinite(v) and abs(v) <= WIRE_MAX for v in nums)


# --- logging: one throttle per reason ------------------------------------------------------------------------------


def test_thirty_reasons_within_a_second_are_all_logged() -> None:
    """Issue: of 30 reconnect reasons only 10 were logged, all warnings sharing one 1 s throttle."""
    clock = iter(i * 0.01 for i in range(10**6))
    th = ReasonThrottle(1.0, clock=lambda: next(clock))
    assert all(th.allow(f'reason {i}')[0] for i in range(30))
    assert [th.allow('reason 0')[0] for _ in range(50)] == [False] * 50
    while not (got := th.allow('reason 0'))[0]:
        pass
    assert got[1] >= 50  # the next report says how many were held back


def test_agent_loop_counts_every_error_and_logs_each_reason(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger('test.link')
    loop = AgentLoop(make_protocol(T1, 'A', 1), ServerLink('127.0.0.1', 9), lambda p, t: None, log=log)
    with caplog.at_level(logging.WARNING, logger='test.link'):
        for i in range(30):
            loop.report('link', f'server link down (reason {i})')
        for _ in range(100):
            loop.report('parse', 'malformed server message skipped', 'x', error=True)
    assert loop.stats.errors == {'link': 30, 'parse': 100}
    logged = [r.getMessage() for r in caplog.records]
    assert sum('server link down' in m for m in logged) == 30
    assert sum('malformed' in m for m in logged) == 1


def test_report_is_thread_safe() -> None:
    loop = AgentLoop(make_protocol(T1, 'A', 1), ServerLink('127.0.0.1', 9), lambda p, t: None)
    threads = [threading.Thread(target=lambda: [loop.report('k', 'r') for _ in range(2000)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert loop.stats.errors['k'] == 8000


def _silent_spell_server(modes: list[str], pause: float, stop: threading.Event) -> tuple[socket.socket, list[int]]:
    """A server that sends one message per play mode in ``modes``, then (on its first connection only)
    nothing for ``pause`` s, then messages until ``stop``; it counts the connections it was opened with."""
    server = socket.create_server(('127.0.0.1', 0))
    server.settimeout(0.2)
    connections: list[int] = []

    def serve() -> None:
        t = 0.0
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            connections.append(1)
            conn.settimeout(0.05)
            try:
                for mode in modes:
                    t += 0.02
                    conn.sendall(frame(f'(time (now {t:.2f}))(GS (t 0.0)(pm {mode})(tl A))'.encode()))
                stop.wait(pause if len(connections) == 1 else 0.0)
                while not stop.is_set():
                    t += 0.02
                    conn.sendall(frame(f'(time (now {t:.2f}))(GS (t 0.0)(pm {modes[-1]})(tl A))'.encode()))
                    try:
                        conn.recv(65536)
                    except TimeoutError:
                        pass
            except OSError:
                pass
            finally:
                conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return server, connections


@contextlib.contextmanager
def _loop_served(
    server: socket.socket, stop: threading.Event, cycles: int, silence_timeout: float, join_timeout: float
) -> Iterator[AgentLoop]:
    """A T1's loop on ``server``, run until it has served ``cycles`` cycles (10 s at most); stopped after."""
    link = ServerLink('127.0.0.1', server.getsockname()[1])
    loop = AgentLoop(
        make_protocol(T1, 'A', 1),
        link,
        lambda p, t: None,
        silence_timeout=silence_timeout,
        join_timeout=join_timeout,
        reconnect_delay=0.1,
    )
    runner = threading.Thread(target=loop.run, args=(stop,), daemon=True)
    runner.start()
    try:
        deadline = time.monotonic() + 10.0
        while loop.stats.cycles < cycles and time.monotonic() < deadline:
            time.sleep(0.05)
        yield loop
    finally:
        stop.set()
        runner.join(5.0)
        server.close()


@pytest.mark.parametrize(('modes', 'reconnects'), [(['BeforeKickOff'], 0), (['BeforeKickOff', 'PlayOn'], 1)])
def test_a_server_that_stalls_before_the_kick_off_is_waited_for(modes: list[str], reconnects: int) -> None:
    """RCSSServerMJ stops for seconds while it adds each joining robot. A player that took that for a dead
    server and joined again was added again, stalling everyone once more, and no match started. Before the
    kick-off the loop waits ``join_timeout``; once the game runs, ``silence_timeout`` still holds."""
    stop = threading.Event()
    server, connections = _silent_spell_server(modes, pause=1.2, stop=stop)
    with _loop_served(server, stop, cycles=40, silence_timeout=0.4, join_timeout=3.0) as loop:
        assert loop.stats.cycles >= 40, 'the server was never heard from again'
        assert loop.stats.connects == len(connections) == 1 + reconnects


def _serve_after(conn: socket.socket, stop: threading.Event, silent: bool) -> None:
    """Nothing until the player closes the link (``silent``: a server busy adding robots), else a message a cycle."""
    t = 0.0
    while not stop.is_set():
        if not silent:
            t += 0.02
            conn.sendall(frame(f'(time (now {t:.2f}))(GS (t 0.0)(pm BeforeKickOff)(tl A))'.encode()))
        try:
            if not conn.recv(65536) and silent:
                return  # the player gave up and closed the link
        except TimeoutError:
            pass


def test_a_join_that_lapses_again_and_again_waits_longer_each_time() -> None:
    """14 T1 joining RCSSServerMJ at load 12: the server, adding robots, was silent longer than a join's wait, and
    every player's rejoin made it add the robot again (attempt 7 and on, no match). Each lapse in a row doubles
    the next wait; a server that speaks at last is served."""
    stop = threading.Event()
    server = socket.create_server(('127.0.0.1', 0))
    server.settimeout(0.2)
    opened: list[float] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            opened.append(time.monotonic())
            with conn:
                conn.settimeout(0.05)
                with contextlib.suppress(ConnectionError):  # the player left (it gave up, or the test ended)
                    _serve_after(conn, stop, silent=len(opened) < 3)

    threading.Thread(target=serve, daemon=True).start()
    with _loop_served(server, stop, cycles=20, silence_timeout=0.2, join_timeout=0.5) as loop:
        assert loop.stats.cycles >= 20 and len(opened) == 3
        first, second = opened[1] - opened[0], opened[2] - opened[1]  # 0.5 s + the delay, then 1.0 s + the delay
        assert second > 1.4 * first, (first, second)
