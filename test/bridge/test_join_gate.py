"""The join gate: one agent of this host at a time between connecting and the server's first message."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from robocup3d_bridge.join_gate import JoinGate


def test_a_second_agent_waits_until_the_first_has_joined(tmp_path: Path) -> None:
    first = JoinGate('127.0.0.1', 3100, directory=str(tmp_path))
    second = JoinGate('127.0.0.1', 3100, timeout=0.3, directory=str(tmp_path))
    assert first.acquire() and first.held
    assert not second.acquire()  # gave up after its timeout: the caller joins anyway, and says so
    assert second.waited >= 0.3 and not second.held
    first.release()
    assert second.acquire() and second.waited < 0.1
    second.release()


def test_gates_of_different_servers_do_not_block_each_other(tmp_path: Path) -> None:
    a = JoinGate('127.0.0.1', 3100, timeout=0.1, directory=str(tmp_path))
    b = JoinGate('127.0.0.1', 3101, timeout=0.1, directory=str(tmp_path))
    assert a.acquire() and b.acquire()
    a.release()
    b.release()


def test_a_waiter_stops_waiting_when_told_to(tmp_path: Path) -> None:
    holder = JoinGate('localhost', 3100, directory=str(tmp_path))
    waiter = JoinGate('localhost', 3100, timeout=30.0, directory=str(tmp_path))
    assert holder.acquire()
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    t0 = time.monotonic()
    assert not waiter.acquire(stop)
    assert time.monotonic() - t0 < 2.0
    holder.release()


def test_the_lock_of_a_killed_holder_is_free(tmp_path: Path) -> None:
    """A player killed while joining does not keep the others out."""
    code = (
        'import sys, time; from robocup3d_bridge.join_gate import JoinGate; '
        f'g = JoinGate("127.0.0.1", 3100, directory={str(tmp_path)!r}); '
        'assert g.acquire(); print("held", flush=True); time.sleep(60)'
    )
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, '-c', code], cwd=root, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == 'held'
        gate = JoinGate('127.0.0.1', 3100, timeout=0.2, directory=str(tmp_path))
        assert not gate.acquire()
        proc.kill()
        proc.wait(5)
        gate.timeout = 2.0
        assert gate.acquire()
        gate.release()
    finally:
        proc.kill()
        proc.wait(5)
