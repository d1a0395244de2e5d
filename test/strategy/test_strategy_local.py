"""The composed player's strategy hands say texts and motion requests to its own bridge and motion directly."""

from __future__ import annotations

import os
import time

import pytest

rclpy = pytest.importorskip('rclpy')
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robocup3d_strategy.strategy_node import StrategyNode  # noqa: E402


@pytest.fixture
def strategy():
    rclpy.init()
    node = StrategyNode(
        namespace=f'/local{os.getpid()}/p2',
        parameter_overrides=[Parameter('server', value='mujoco'), Parameter('unum', value=2)],
    )
    listener = rclpy.create_node(f'listener{os.getpid()}')
    try:
        yield node, listener
    finally:
        node.destroy_node()
        listener.destroy_node()
        rclpy.shutdown()


def _spin(nodes, until, seconds: float = 3.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not until():
        for n in nodes:
            rclpy.spin_once(n, timeout_sec=0.01)


def test_say_goes_straight_to_the_bridge_and_onto_the_topic_only_for_another_listener(strategy) -> None:
    node, listener = strategy
    said, asked, ours, recorded = [], [], [], []
    node.attach_local(said.append, asked.append)
    topic = f'{node.get_namespace()}/say'
    listener.create_subscription(String, topic, lambda m: ours.append(m.data), 10)  # stands for our own bridge
    _spin([node, listener], lambda: node.pub_say.get_subscription_count() == 1)
    node._send(node.pub_say, node._local_say, 'hello')
    _spin([node, listener], lambda: bool(ours), 0.5)
    assert said == ['hello'] and ours == []  # handed over directly, nothing sent through DDS

    listener.create_subscription(String, topic, lambda m: recorded.append(m.data), 10)  # a recorder joins
    _spin([node, listener], lambda: node.pub_say.get_subscription_count() == 2)
    node._send(node.pub_say, node._local_say, 'again')
    _spin([node, listener], lambda: bool(recorded))
    assert said == ['hello', 'again'] and recorded == ['again'] and asked == []


def test_without_a_local_bridge_say_and_requests_go_through_the_topics(strategy) -> None:
    node, listener = strategy
    got = []
    listener.create_subscription(String, f'{node.get_namespace()}/motion_request', lambda m: got.append(m.data), 10)
    _spin([node, listener], lambda: node.pub_request.get_subscription_count() == 1)
    node._send(node.pub_request, node._local_request, '{"kind": "goto"}')
    _spin([node, listener], lambda: bool(got))
    assert got == ['{"kind": "goto"}']
