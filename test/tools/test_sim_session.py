"""SimSession against a monitor stream that lags its server (no server, no ROS)."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from types import SimpleNamespace

import pytest

from robocup3d_bridge.trainer import MonitorState
from robocup3d_tools.sim_session import CYCLE, SimSession


class LaggingStream:
    """An rcssserver3d monitor stream ``lag`` cycles behind its server: the server steps one cycle per
    ``receive`` and the reader gets the oldest message; a full scene asked for is made at the server's now."""

    def __init__(self, lag: int) -> None:
        self.state = MonitorState()
        self.server = 0
        self.queue: deque[bytes] = deque()
        for _ in range(lag):
            self._step()

    def _step(self) -> None:
        self.queue.append(f'((time {self.server * CYCLE:.2f}))(RDS 0 1)()'.encode())
        self.server += 1

    def receive(self, timeout: float) -> list[bytes]:
        self._step()
        return [self.queue.popleft()]

    def request_full_state(self) -> None:
        self.queue.append(f'((time {(self.server - 1) * CYCLE:.2f}))(RSG 0 1)()'.encode())


def _session(lag: int, log_dir: Path) -> tuple[SimSession, LaggingStream]:
    s = SimSession(server='simspark', log_dir=log_dir)
    stream = LaggingStream(lag)
    s.trainer = stream
    s._rclpy = SimpleNamespace(spin_once=lambda node, timeout_sec: None)
    return s, stream


@pytest.mark.parametrize('lag', [1, 40, 200])
def test_catch_up_brings_the_clock_to_the_servers_time_at_the_call(lag: int, tmp_path: Path) -> None:
    s, stream = _session(lag, tmp_path)
    s.wait_cycles(5)
    assert s._game_time is not None and stream.server * CYCLE - s._game_time > (lag - 2) * CYCLE  # it lags
    now = stream.server
    s.catch_up()
    assert s._game_time >= (now - 1) * CYCLE - 1e-9


def test_catch_up_is_a_no_op_on_rcssservermj(tmp_path: Path) -> None:
    SimSession(server='mujoco', log_dir=tmp_path).catch_up()  # no trainer, no stream: returns at once
