"""The real player process against a fake server that sends mutated real captures (issue #24).

CI: 20,000 messages (10,000 per dialect, about half of them mutated). The player must keep
its link (no reconnection, process alive), answer >= 99.9 % of the cycles whose framing the
server left intact as the server needs (``(syn)`` on rcssserver3d, a command for every joint on
RCSSServerMJ), and send and publish no non-finite value. ``bench/bench_fuzz.py`` runs 10^6.
The watchdog test kills the link thread on purpose and expects the process to end non-zero.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

pytest.importorskip('rclpy')

from robocup3d_bridge.bridge_node import LINK_DIED_EXIT
from robocup3d_tools.fuzz import FakeServer, FuzzFigures, Mutator, TopicWatch, load_lines, start_player
from robocup3d_tools.servers import stop_process

CAPTURES = Path(__file__).resolve().parents[2] / '..' / 'shared' / 'captures'
MESSAGES = 10_000  # per dialect

pytestmark = pytest.mark.skipif(not CAPTURES.is_dir(), reason=f'shared captures not found in {CAPTURES}')


@pytest.mark.parametrize('dialect', ['simspark', 'mujoco'])
def test_mutated_captures_never_take_the_player_offline(dialect: str, tmp_path: Path) -> None:
    server = FakeServer(dialect, load_lines(CAPTURES, dialect), Mutator(random.Random(24), rate=0.5))
    proc = start_player(dialect, server.port, tmp_path / 'player.log', ['--no-raw'])
    watch = TopicWatch('/Fuzz/p1')
    figures = FuzzFigures(dialect)
    try:
        server.run(MESSAGES, figures)
        time.sleep(0.5)
        alive = proc.poll() is None
    finally:
        stop_process(proc, timeout=10.0)
        watch.close()
        server.close()
    log = (tmp_path / 'player.log').read_text(errors='replace')
    print(f'{dialect}: {figures}; published {dict(watch.messages)}')
    assert figures.messages == MESSAGES and sum(figures.mutated.values()) > MESSAGES // 3
    assert set(figures.mutated) == {
        'byte_flip', 'truncate', 'paren', 'non_finite', 'rename_perceptor', 'rename_joint', 'lying_prefix', 'huge',
        'empty', 'time_back',
    }  # fmt: skip
    assert alive, log[-3000:]
    assert figures.link_deaths == 0 and figures.gave_up_at is None, log[-3000:]
    assert figures.answered_ratio >= 0.999, figures
    assert figures.bad_values_sent == 0, figures.examples
    assert sum(watch.messages.values()) > MESSAGES // 10  # the topics were really watched
    assert sum(watch.non_finite.values()) == 0, dict(watch.non_finite)
    assert 'Traceback' not in log, log[log.index('Traceback') :][:3000]


def test_the_process_exits_non_zero_when_its_link_thread_dies(tmp_path: Path) -> None:
    """Issue: the link thread died, the process lived on, and the team runner never restarted it."""
    server = FakeServer('mujoco', load_lines(CAPTURES, 'mujoco'), Mutator(random.Random(1), rate=0.0))
    log = tmp_path / 'player.log'
    proc = start_player('mujoco', server.port, log, ['--ros-args', '-p', 'fail_link_after_cycles:=30'])
    figures = FuzzFigures('mujoco')
    try:
        server.run(200, figures, rejoin_timeout=3.0)
        status = proc.wait(timeout=30)
    finally:
        stop_process(proc)
        server.close()
    text = log.read_text(errors='replace')
    assert figures.gave_up_at is not None and 25 <= figures.gave_up_at <= 40
    assert status == LINK_DIED_EXIT, text[-3000:]
    assert 'server link thread died (InjectedLinkFault' in text
