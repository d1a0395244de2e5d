"""The composed player's strategy hands say texts and motion requests to its own bridge and motion directly."""

from __future__ import annotations

import os
import time

import pytest

rclpy = pytest.importorskip('rclpy')
from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robocup3d_strategy.strategy_node import StrategyNode  # noqa: E402


@pytest.fixture
def strategy():
    ctx = Context()  # a context of its own: other tests of this process may hold the default one
    rclpy.init(context=ctx)
    node = StrategyNode(
        namespace=f'/local{os.getpid()}/p2',
        parameter_overrides=[Parameter('server', value='mujoco'), Parameter('unum', value=2)],
        context=ctx,
    )
    listener = rclpy.create_node(f'listener{os.getpid()}', context=ctx)
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(node)
    executor.add_node(listener)
    try:
        yield node, listener, executor
    finally:
        executor.shutdown()
        node.destroy_node()
        listener.destroy_node()
        rclpy.shutdown(context=ctx)


def _spin(executor, until, seconds: float = 3.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not until():
        executor.spin_once(timeout_sec=0.01)


def test_say_goes_straight_to_the_bridge_and_onto_the_topic_only_for_another_listener(strategy) -> None:
    node, listener, executor = strategy
    said, asked, ours, recorded = [], [], [], []
    node.attach_local(said.append, asked.append)
    topic = f'{node.get_namespace()}/say'
    listener.create_subscription(String, topic, lambda m: ours.append(m.data), 10)  # stands for our own bridge
    _spin(executor, lambda: node.pub_say.get_subscription_count() == 1)
    node._send(node.pub_say, node._local_say, 'hello', 'say')
    _spin(executor, lambda: bool(ours), 0.5)
    assert said == ['hello'] and ours == []  # handed over directly, nothing sent through DDS

    listener.create_subscription(String, topic, lambda m: recorded.append(m.data), 10)  # a recorder joins
    _spin(executor, lambda: node.audience.listened(node.pub_say, beyond=1))  # its matched event has come
    node._send(node.pub_say, node._local_say, 'again', 'say')
    _spin(executor, lambda: bool(recorded))
    assert said == ['hello', 'again'] and recorded == ['again'] and asked == []


def test_a_recording_player_puts_say_and_requests_in_its_cycle_record_not_on_the_topics(strategy) -> None:
    """While the bridge's record is active (a recorder takes it), what strategy hands over goes in it too."""
    from robocup3d_bridge import cycle_record  # noqa: PLC0415

    node, _, _ = strategy
    said, asked = [], []
    node.attach_local(said.append, asked.append)
    record = cycle_record.CycleRecord()
    node.attach_record(record)
    node._send(node.pub_say, node._local_say, 'before', 'say')  # nobody records yet
    record.active = True
    node._send(node.pub_say, node._local_say, 'hi', 'say')
    node._send(node.pub_request, node._local_request, '{"kind": "goto"}', 'motion_request')
    record.end_cycle()
    parts = cycle_record.unpack(record.take())
    assert parts == [
        ('say', cycle_record.TEXT, b'hi'),
        ('motion_request', cycle_record.TEXT, b'{"kind": "goto"}'),
    ]
    assert said == ['before', 'hi'] and asked == ['{"kind": "goto"}']
    assert {'say', 'motion_request'} <= set(cycle_record.BUNDLED)  # so the recorder does not subscribe to them


def test_without_a_local_bridge_say_and_requests_go_through_the_topics(strategy) -> None:
    node, listener, executor = strategy
    got = []
    listener.create_subscription(String, f'{node.get_namespace()}/motion_request', lambda m: got.append(m.data), 10)
    _spin(executor, lambda: node.pub_request.get_subscription_count() == 1)
    node._send(node.pub_request, node._local_request, '{"kind": "goto"}', 'motion_request')
    _spin(executor, lambda: bool(got))
    assert got == ['{"kind": "goto"}']


def test_motion_state_goes_straight_to_the_strategy_and_onto_the_topic_only_for_a_listener(strategy) -> None:
    """The composed player: motion's state reaches strategy as a dict; a latecomer on the latched topic gets it."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: PLC0415

    from robocup3d_motion.motion_node import MotionNode  # noqa: PLC0415

    node, listener, executor = strategy
    motion = MotionNode(
        namespace=node.get_namespace(),
        parameter_overrides=[Parameter('server', value='mujoco'), Parameter('robot', value='T1')],
        context=node.context,
    )
    executor.add_node(motion)
    try:
        node.attach_motion(motion.attach_state_listener)
        sent = []
        publish = motion.pub_state.publish
        motion.pub_state.publish = lambda m: (sent.append(m.data), publish(m))
        motion.request('{"kind": "goto", "x": 1.0, "y": 0.5, "id": 7}')
        assert node._task is not None and node._task.get('kind') == 'goto'  # taken at once, no spin
        assert sent == []  # nobody outside the process listens: nothing built or sent

        got = []
        latched = QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
        )
        listener.create_subscription(
            String, f'{node.get_namespace()}/motion_state', lambda m: got.append(m.data), latched
        )
        _spin(executor, lambda: motion.audience.listened(motion.pub_state))
        motion._publish_state()  # the next cycle: the newcomer gets the state although it did not change
        _spin(executor, lambda: bool(got))
        assert len(sent) == 1 and '"goto"' in got[-1]
    finally:
        executor.remove_node(motion)
        motion.destroy_node()
