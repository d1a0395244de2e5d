"""A recorder stopped while it runs behind still writes what had reached it (a real recorder process)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bag_support import read_bag

REPO = Path(__file__).resolve().parents[2]
BURST = 150  # within the recorder's queue depth (200)


def test_a_recorder_stopped_behind_a_burst_writes_every_message_that_reached_it(tmp_path: Path) -> None:
    """The recorder is frozen (SIGSTOP) while a player topic gets a burst, then stopped: the bag has the burst.

    This is a loaded machine's end of a match: the recorder a second behind, the players' last messages
    queued in its subscriptions when SIGINT comes.
    """
    rclpy = pytest.importorskip('rclpy')
    from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: PLC0415 - optional packages, after the skip
    from std_msgs.msg import String  # noqa: PLC0415

    team = f'Stop{os.getpid() % 10000}'
    cmd = [sys.executable, '-m', 'robocup3d_tools.cli', 'record', '--out', str(tmp_path / 'bag'), '--teams', team]
    with open(tmp_path / 'record.log', 'wb') as log:
        rec = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    if not rclpy.ok():
        rclpy.init(args=[])
    node = rclpy.create_node('burst')
    try:
        pub = node.create_publisher(
            String, f'/{team}/p1/say', QoSProfile(depth=BURST, reliability=ReliabilityPolicy.RELIABLE)
        )
        pub.publish(String(data='hello'))  # makes the topic known
        end = time.monotonic() + 30.0
        while pub.get_subscription_count() == 0 and time.monotonic() < end and rec.poll() is None:
            rclpy.spin_once(node, timeout_sec=0.1)
        assert pub.get_subscription_count() == 1, (tmp_path / 'record.log').read_text()
        time.sleep(0.5)  # the first message taken
        os.kill(rec.pid, signal.SIGSTOP)
        for i in range(BURST):
            pub.publish(String(data=f'burst {i}'))
        time.sleep(0.5)  # a reliable writer keeps them until the frozen reader takes them
        os.kill(rec.pid, signal.SIGINT)
        os.kill(rec.pid, signal.SIGCONT)
        rec.wait(30.0)
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.wait()
        node.destroy_node()
    log = (tmp_path / 'record.log').read_text()
    assert rec.returncode == 0, log
    said = [m.data for _, m in read_bag(tmp_path / 'bag').get(f'/{team}/p1/say', [])]
    assert [s for s in said if s.startswith('burst')] == [f'burst {i}' for i in range(BURST)], log
