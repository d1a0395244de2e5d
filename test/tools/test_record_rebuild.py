"""The recorder rebuilds a player's percept topics from its ``raw/percept`` exactly as the player's bridge builds them.

One T1 on a real sync-mode RCSSServerMJ, two recorders at once: the default one (percept topics rebuilt
from ``raw/percept`` in the recorder) and one with ``--no-rebuild`` (subscribed to the player's own
``joint_states``, ``imu``, ``vision/*``, ``ground_truth/pose``: what its bridge published). Every message
of a percept topic that both bags hold for the same cycle decodes to the same fields and values
(the bytes differ only in CDR's alignment padding, which rmw leaves as it finds the memory).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import pytest
from bag_support import read_bag, recorded_session

REPO = Path(__file__).resolve().parents[2]
TEAM = f'Reb{os.getpid() % 10000}'
NS = f'/{TEAM}/p1'


def _fields(msg: object) -> object:
    """A decoded message as plain data (dicts, lists, floats), to compare two by value."""
    if dataclasses.is_dataclass(msg):
        return {f.name: _fields(getattr(msg, f.name)) for f in dataclasses.fields(msg)}
    if isinstance(msg, (list, tuple, np.ndarray)):
        return [_fields(v) for v in msg]
    return msg.item() if isinstance(msg, np.generic) else msg


def _messages(bag: Path) -> dict[str, dict[tuple[int, int], list[object]]]:
    """Every message of ``bag`` as plain data, by topic and header stamp (sec, nanosec; none: (0, 0))."""
    out: dict[str, dict[tuple[int, int], list[object]]] = {}
    for topic, messages in read_bag(bag).items():
        for _, msg in messages:
            markers = getattr(msg, 'markers', None)  # a MarkerArray: its markers' stamp
            header = markers[0].header if markers else getattr(msg, 'header', None)
            stamp = (header.stamp.sec, header.stamp.nanosec) if header is not None else (0, 0)
            out.setdefault(topic, {}).setdefault(stamp, []).append(_fields(msg))
    return out


@pytest.fixture(scope='module')
def two_bags(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The same 6 s of one T1, recorded by a default recorder and by one with ``--no-rebuild``."""
    run = tmp_path_factory.mktemp('rebuild')
    with recorded_session(run, {'rebuilt': {'rebuild': True}, 'live': {'rebuild': False}}, [TEAM]) as session:
        session.add_team(TEAM)  # players publish raw/percept (no --no-raw)
        session.let_recorders_subscribe()  # both recorders find the player's topics
        # a beam goes out once a second before the kick-off: let one come after both recorders subscribed
        # (the kick-off at once left a bag without beam when its recorder matched the publisher a little later)
        session.play(1.5, wall_seconds=1.5)
        session.trainer.kick_off('Left')
        session.play(6.0, wall_seconds=6.0)
    return run / 'rebuilt', run / 'live', session.log('rebuilt')


def test_the_rebuilt_percept_topics_equal_what_the_bridge_published(two_bags: tuple[Path, Path, str]) -> None:
    rebuilt_bag, live_bag, log = two_bags
    assert f'{NS}: percept topics rebuilt from raw/percept' in log
    rebuilt, live = _messages(rebuilt_bag), _messages(live_bag)
    assert rebuilt.get(f'{NS}/raw/percept'), sorted(rebuilt)
    for rest in ('joint_states', 'imu', 'vision/objects', 'vision/ball', 'ground_truth/pose'):
        topic = f'{NS}/{rest}'
        assert rebuilt.get(topic) and live.get(topic), (topic, sorted(rebuilt), sorted(live))
        ours, theirs = rebuilt[topic], live[topic]
        common = sorted(set(ours) & set(theirs))
        assert len(common) > 50, (topic, len(ours), len(theirs))  # 6 s of play: 300 cycles
        for stamp in common:
            assert ours[stamp] == theirs[stamp], (topic, stamp)


def test_the_rebuilt_bag_has_the_topics_of_a_subscribed_one(two_bags: tuple[Path, Path, str]) -> None:
    """Same topics, same types: the bag's users (report, view, rerun, TF) see no difference."""
    from rosbags.highlevel import AnyReader  # noqa: PLC0415 - an optional package, after the fixture's skip

    types = []
    for bag in two_bags[:2]:
        with AnyReader([bag]) as reader:
            types.append({c.topic: c.msgtype for c in reader.connections if c.topic.startswith(NS)})
    rebuilt, live = types
    assert rebuilt.get(f'{NS}/joint_states') == 'sensor_msgs/msg/JointState'
    for topic, msgtype in live.items():  # hear: only what the player heard while the recorder listened
        assert rebuilt.get(topic) == msgtype or topic.endswith('/hear'), (topic, sorted(rebuilt))


def test_the_cycle_record_brings_the_documented_rates_as_the_topics_have_them(
    two_bags: tuple[Path, Path, str],
) -> None:
    """The default recorder takes ``pose``, ``ball``, ``odom``, ... from the player's ``record/cycle``
    (``config/recording.yaml``): ``raw/percept`` and ``odom`` of every cycle it recorded, ``pose`` of the cycles
    whose server time is a multiple of 0.1 s (10 Hz), each equal to what the player published on its topic."""
    rebuilt_bag, live_bag, log = two_bags
    assert f'{NS}: raw/percept, raw/action, pose, ball, players, odom from record/cycle' in log
    rebuilt, live = _messages(rebuilt_bag), _messages(live_bag)
    assert f'{NS}/record/cycle' not in rebuilt  # a transport, not a topic of the bag
    cycles = set(rebuilt[f'{NS}/joint_states'])  # rebuilt from raw/percept: one stamp a cycle
    assert len(cycles) > 200  # 7.5 s of server time: 375 cycles
    assert len(rebuilt[f'{NS}/raw/percept'][0, 0]) == len(cycles)
    assert abs(len(rebuilt[f'{NS}/raw/action'][0, 0]) - len(cycles)) <= 2  # a late reply goes in the next record
    odom = rebuilt[f'{NS}/odom']  # the walk's, every cycle (the rerun's input), none twice
    assert set(odom) == cycles and all(len(msgs) == 1 for msgs in odom.values())
    tenths = {(s, ns) for s, ns in cycles if round((s + ns * 1e-9) * 50) % 5 == 0}
    assert len(tenths) > 40
    pose = rebuilt[f'{NS}/pose']
    assert set(pose) == tenths and all(len(msgs) == 1 for msgs in pose.values())
    assert set(rebuilt[f'{NS}/ball']) <= tenths and rebuilt.get(f'{NS}/players')
    assert len(live[f'{NS}/pose']) > 2 * len(pose)  # the topic itself: every cycle, for a live subscriber
    for rest in ('pose', 'ball', 'odom'):
        ours, theirs = rebuilt[f'{NS}/{rest}'], live[f'{NS}/{rest}']
        common = sorted(set(ours) & set(theirs))
        assert len(common) > 30, (rest, len(ours), len(theirs))
        for stamp in common:
            assert ours[stamp] == theirs[stamp], (rest, stamp)
