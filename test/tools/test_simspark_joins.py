"""Agents of one host joining a real rcssserver3d at the same instant all get served.

rcssserver3d 0.7.3 stops serving every agent when agents connect within milliseconds of each
other; the bridge's join gate lets them in one at a time. Here four agent loops (the bridge's
server side, without ROS) are released by one barrier against a real server.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
from simspark_support import simspark_server, wait_until

from robocup3d_bridge.agent_loop import AgentLoop
from robocup3d_bridge.join_gate import JoinGate
from robocup3d_bridge.link import ServerLink
from robocup3d_bridge.percept import Percept, Side
from robocup3d_bridge.protocol import make_protocol
from robocup3d_description.robots import robot_spec

pytestmark = [
    pytest.mark.simspark,
    pytest.mark.skipif(shutil.which('rcssserver3d') is None, reason='rcssserver3d (SimSpark) is not on PATH'),
]

AGENTS = 4


class Heard:
    """Server times an agent loop received."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def __call__(self, percept: Percept, text: str) -> None:
        if percept.time is not None:
            self.times.append(percept.time)


def test_agents_joining_at_once_are_all_served(tmp_path: Path) -> None:
    with simspark_server() as server:
        heard = [Heard() for _ in range(AGENTS)]
        loops = [
            AgentLoop(
                make_protocol(robot_spec('simspark', 'nao', unum % 5), 'Joiners', unum),
                ServerLink('127.0.0.1', server.agent_port),
                on_percept=heard[unum - 1],
                join_gate=JoinGate('127.0.0.1', server.agent_port, directory=str(tmp_path)),
            )
            for unum in range(1, AGENTS + 1)
        ]
        stop = threading.Event()
        barrier = threading.Barrier(AGENTS)

        def run(loop: AgentLoop) -> None:
            barrier.wait()
            loop.run(stop)

        threads = [threading.Thread(target=run, args=(loop,), daemon=True) for loop in loops]
        for t in threads:
            t.start()
        try:
            assert wait_until(lambda: all(len(h.times) >= 50 for h in heard), 20.0), [len(h.times) for h in heard]
            time.sleep(2.0)
            counts = [len(h.times) for h in heard]
            time.sleep(2.0)
            # Still served: every agent heard about 2 s of cycles more (50 per second).
            assert all(len(h.times) - c >= 50 for h, c in zip(heard, counts, strict=True)), (
                counts,
                [len(h.times) for h in heard],
            )
            assert all(loop.protocol.side is Side.LEFT for loop in loops)
            assert all(loop.stats.connects == 1 for loop in loops)
            # The monitor's scene lags the joins by a few seconds.
            everyone = set(range(1, AGENTS + 1))
            assert wait_until(lambda: {u for side, u in server.positions() if side == 'Left'} == everyone, 15.0, 1.0)
        finally:
            stop.set()
            for t in threads:
                t.join(5)
