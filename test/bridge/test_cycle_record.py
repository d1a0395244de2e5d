"""The player's record for a recorder (``record/cycle``): what goes in, in which order, and how it unpacks."""

from __future__ import annotations

import pytest
from geometry_msgs.msg import PoseWithCovarianceStamped
from rclpy.serialization import deserialize_message

from robocup3d_bridge.cycle_record import TEXT, TWIST, CycleRecord, odometry_fields, pack, unpack


def test_a_batch_holds_its_cycles_in_order_each_starting_with_its_percept() -> None:
    rec = CycleRecord(batch_cycles=2, belief_period_cycles=5)
    for cycle in range(2):
        rec.add_twist('odom', 1_000 + cycle, 0.1, 0.0, -0.2)  # motion steps before the bridge publishes
        rec.add_text('raw/action', f'action {cycle}')
        rec.add_text('raw/percept', f'percept {cycle}')
        msg = PoseWithCovarianceStamped()
        msg.pose.pose.position.x = float(cycle)
        rec.add('pose', msg)
        assert rec.end_cycle() is (cycle == 1)  # full after two cycles
    parts = unpack(rec.take())
    assert [topic for topic, _, _ in parts] == ['raw/percept', 'odom', 'raw/action', 'pose'] * 2
    assert parts[4] == ('raw/percept', TEXT, b'percept 1')
    assert parts[1][1] == TWIST and odometry_fields(parts[1][2]) == pytest.approx((1_000, 0.1, 0.0, -0.2))
    pose = deserialize_message(parts[7][2], PoseWithCovarianceStamped)
    assert parts[7][1] == 'geometry_msgs/msg/PoseWithCovarianceStamped' and pose.pose.pose.position.x == 1.0
    assert rec.cycles == 0 and unpack(rec.take()) == []


def test_the_beliefs_go_on_the_same_server_cycles_for_every_player() -> None:
    rec = CycleRecord(belief_period_cycles=5)
    due = [t / 50 for t in range(1000, 1020) if rec.beliefs_due(t / 50)]
    assert due == pytest.approx([20.0, 20.1, 20.2, 20.3])
    assert all(CycleRecord(belief_period_cycles=1).beliefs_due(t / 50) for t in range(10))


def test_a_truncated_record_is_refused() -> None:
    data = pack([('raw/percept', TEXT, b'(time (now 1.0))'), ('odom', TWIST, b'x' * 32)])
    assert unpack(data)[1] == ('odom', TWIST, b'x' * 32)
    with pytest.raises(ValueError, match='truncated'):
        unpack(data[:-1])


def test_what_comes_after_a_cycle_ended_waits_for_the_next_take() -> None:
    """A late reply's ``raw/action`` (the link thread's) added after ``end_cycle`` and before ``take`` goes in the
    next record, after its cycle's ``raw/percept``; entries of our own types pack as they came."""
    rec = CycleRecord(batch_cycles=1)
    rec.add_text('raw/percept', 'percept 0')
    rec.add_bytes('pose', 'robocup3d/pose', b'\x01\x02')
    assert rec.end_cycle()
    rec.add_text('raw/action', 'late')
    assert unpack(rec.take()) == [('raw/percept', TEXT, b'percept 0'), ('pose', 'robocup3d/pose', b'\x01\x02')]
    rec.add_text('raw/percept', 'percept 1')
    assert rec.end_cycle()
    assert [p[2] for p in unpack(rec.take())] == [b'percept 1', b'late']
    rec.add_text('raw/percept', 'percept 2')
    rec.clear()
    assert rec.cycles == 0 and unpack(rec.take()) == []


def test_a_recorder_that_comes_while_another_takes_the_record_counts_as_a_join() -> None:
    """Nodes put their latched entries (``joint_gains``, ``motion_state``) in again on a join, so that the second of
    two recorders has them too; a recorder leaving is no join, one coming back is."""
    record = CycleRecord()
    joins = []
    for takers in (0, 1, 1, 2, 2, 1, 2, 0, 1):
        record.set_takers(takers)
        joins.append((record.active, record.joins))
    assert joins == [
        (False, 0),
        (True, 1),
        (True, 1),
        (True, 2),
        (True, 2),
        (True, 2),
        (True, 3),
        (False, 3),
        (True, 4),
    ]
