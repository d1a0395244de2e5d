"""The local sink between a player and a recorder: records arrive whole and in order, a stalled or vanished
recorder never blocks the player, and the sink takes only what it was offered."""

from __future__ import annotations

import socket
import struct
import time

import pytest

from robocup3d_bridge.record_sink import (
    HELLO,
    SinkClient,
    SinkError,
    SinkServer,
    address_text,
    socket_address,
)


def _poll_until(server: SinkServer, n: int, seconds: float = 2.0) -> list[tuple[str, bytes]]:
    got: list[tuple[str, bytes]] = []
    end = time.monotonic() + seconds
    while len(got) < n and time.monotonic() < end:
        got += server.poll()
    return got


@pytest.fixture
def server():
    s = SinkServer(allowed={'/A/p1', '/A/p2'})
    yield s
    s.close()


def test_records_from_several_players_arrive_whole_and_in_order(server: SinkServer) -> None:
    one, two = SinkClient(server.text, '/A/p1'), SinkClient(server.text, '/A/p2')
    for i in range(20):
        one.send(b'p1 %d ' % i + b'x' * 5000)
        two.send(b'p2 %d' % i)
    got = _poll_until(server, 40)
    assert [r for ns, r in got if ns == '/A/p1'] == [b'p1 %d ' % i + b'x' * 5000 for i in range(20)]
    assert [r for ns, r in got if ns == '/A/p2'] == [b'p2 %d' % i for i in range(20)]
    assert server.namespaces() == {'/A/p1', '/A/p2'} and server.errors == []


def test_a_recorder_that_does_not_read_never_blocks_the_player_and_gets_everything_later(server: SinkServer) -> None:
    client = SinkClient(server.text, '/A/p1', limit=64 << 20)
    record = bytes(range(256)) * 400  # 100 kB: the socket's buffer fills after a few
    start = time.monotonic()
    for _ in range(60):  # 6 MB, never read meanwhile
        client.send(record)
    assert time.monotonic() - start < 2.0  # no send waited for the reader
    got: list[tuple[str, bytes]] = []
    end = time.monotonic() + 10.0
    while len(got) < 60 and time.monotonic() < end:
        got += server.poll()
        client.send(b'tick')  # what waited goes out with the next record
    assert [r for _, r in got[:60]] == [record] * 60


def test_a_stalled_recorder_is_given_up_past_the_limit_with_a_clear_error(server: SinkServer) -> None:
    client = SinkClient(server.text, '/A/p1', limit=1 << 20)
    with pytest.raises(SinkError, match='stopped reading'):
        for _ in range(1000):
            client.send(b'y' * 100_000)
    assert not client.open


def test_a_recorder_that_left_is_reported_as_gone(server: SinkServer) -> None:
    client = SinkClient(server.text, '/A/p1')
    client.send(b'first')
    assert _poll_until(server, 1) == [('/A/p1', b'first')]
    server.close()
    with pytest.raises(SinkError, match='recorder left'):
        for _ in range(100):
            client.send(b'more')
            time.sleep(0.01)


def test_an_unreachable_sink_is_refused_at_connect() -> None:
    with pytest.raises(SinkError, match='cannot connect'):
        SinkClient('@robocup3d-record-nobody-listens', '/A/p1')


def test_the_sink_takes_only_the_players_it_was_offered_to_and_only_records(server: SinkServer) -> None:
    SinkClient(server.text, '/B/p9').send(b'forged')  # a namespace no sink was offered to
    raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # something that is not a player
    raw.connect(socket_address(server.text))
    raw.sendall(struct.pack('<I', 5) + b'hello')
    huge = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    huge.connect(socket_address(server.text))
    hello = HELLO + b'/A/p2'
    huge.sendall(struct.pack('<I', len(hello)) + hello + struct.pack('<I', 1 << 30))
    end = time.monotonic() + 2.0
    got: list = []
    while len(server.errors) < 3 and time.monotonic() < end:
        got += server.poll()
    assert got == []
    text = ' / '.join(server.errors)
    assert '/B/p9: no sink was offered to it' in text and 'no hello' in text and 'not a record' in text
    raw.close()
    huge.close()


def test_addresses_travel_as_text() -> None:
    assert address_text('\0robocup3d-record-1') == '@robocup3d-record-1'
    assert socket_address('@robocup3d-record-1') == '\0robocup3d-record-1'
    assert socket_address(address_text('/tmp/x.sock')) == '/tmp/x.sock'
