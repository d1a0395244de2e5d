"""The recorder rebuilds a player's percept topics from its ``raw/percept`` exactly as the player's bridge builds them.

One T1 on a real sync-mode RCSSServerMJ, two recorders at once: the default one (percept topics rebuilt
from ``raw/percept`` in the recorder) and one with ``--no-rebuild`` (subscribed to the player's own
``joint_states``, ``imu``, ``vision/*``, ``ground_truth/pose``: what its bridge published). Every message
of a percept topic that both bags hold for the same cycle decodes to the same fields and values
(the bytes differ only in CDR's alignment padding, which rmw leaves as it finds the memory).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import pytest
from bag_support import read_bag, recorded_session

REPO = Path(__file__).resolve().parents[2]
TEAM = f'Reb{os.getpid() % 10000}'
NS = f'/{TEAM}/p1'
OTHER = f'Opp{os.getpid() % 10000}'  # not recorded: a robot for the player to see (its ``players``)


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


def _every_cycle(got: set, cycles: set) -> None:
    """``got`` (a topic's stamps) has every cycle of ``cycles`` and none other: the recorder waits for a player's
    record before it takes any of the topics that come in it (``recorder.BUNDLE_WAIT``), so the bag starts with
    the record's first cycle, whole (subscribed one by one, ``raw/percept`` could match a cycle before ``odom``)."""
    assert got == cycles, (sorted(cycles - got)[:12], sorted(got - cycles)[:12])


@pytest.fixture(scope='module')
def two_bags(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The same 6 s of one T1, recorded by a default recorder and by one with ``--no-rebuild``; a third one,
    ``--no-sink``, takes the player's record over DDS into ``dds`` beside them."""
    run = tmp_path_factory.mktemp('rebuild')
    bags = {'rebuilt': {'rebuild': True}, 'live': {'rebuild': False}, 'dds': {'sink': False}}
    with recorded_session(run, bags, [TEAM]) as session:
        session.add_team(TEAM, clock_player=1)  # players publish raw/percept (no --no-raw); p1 /clock
        session.add_team(OTHER, extra_args=['--no-raw'])
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
    took = 'raw/percept, raw/action, pose, ball, players, odom, motion_request, say, motion_state, joint_gains'
    assert f'{NS}: {took} from record/cycle' in log
    assert f'{NS}: record/cycle through the local sink' in log  # not over DDS
    rebuilt, live = _messages(rebuilt_bag), _messages(live_bag)
    assert f'{NS}/record/cycle' not in rebuilt  # a transport, not a topic of the bag
    cycles = set(rebuilt[f'{NS}/joint_states'])  # rebuilt from raw/percept: one stamp a cycle
    assert len(cycles) > 200  # 7.5 s of server time: 375 cycles
    assert len(rebuilt[f'{NS}/raw/percept'][0, 0]) == len(cycles)
    assert abs(len(rebuilt[f'{NS}/raw/action'][0, 0]) - len(cycles)) <= 2  # a late reply goes in the next record
    odom = rebuilt[f'{NS}/odom']  # the walk's, every cycle (the rerun's input), none twice
    _every_cycle(set(odom), cycles)
    assert all(len(msgs) == 1 for msgs in odom.values())
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


def test_the_beliefs_built_in_the_recorder_decode_to_what_the_world_model_published(
    two_bags: tuple[Path, Path, str],
) -> None:
    """The player puts ``pose``, ``ball`` and ``players`` into its record as numbers
    (:mod:`robocup3d_perception.belief_record`) and the recorder builds the messages: each one in the bag (through
    the local sink, and over DDS) decodes to the values, stamp and frame of the message the world model published
    on the topic for the same cycle (``players``: the same JSON text, by its time), with the opponent among them."""
    rebuilt_bag, live_bag, _ = two_bags
    live = _messages(live_bag)
    published = {json.loads(m['data'])['time']: m['data'] for m in live[f'{NS}/players'][0, 0]}
    for bag in (rebuilt_bag, rebuilt_bag.parent / 'dds'):
        got = _messages(bag)
        for rest in ('pose', 'ball'):
            ours, theirs = got[f'{NS}/{rest}'], live[f'{NS}/{rest}']
            assert all(m['header']['frame_id'] == 'field' for msgs in ours.values() for m in msgs), (bag.name, rest)
            common = set(ours) & set(theirs)  # the live bag's subscription is best effort
            assert len(common) > 20, (bag.name, rest, len(ours), len(common))
            assert all(ours[s] == theirs[s] for s in common), (bag.name, rest)
        texts = [m['data'] for m in got[f'{NS}/players'][0, 0]]
        common = [t for t in texts if json.loads(t)['time'] in published]
        assert len(common) > 10, (bag.name, len(texts), len(common))
        assert all(published[json.loads(t)['time']] == t for t in common), bag.name
        seen = [p for t in common for p in json.loads(t)['players']]
        assert seen, (bag.name, texts[:3])  # the numbers of a tracked robot, not only empty lists


def test_the_record_over_dds_brings_what_the_local_sink_does(two_bags: tuple[Path, Path, str]) -> None:
    """``--no-sink`` (or a recorder the player cannot reach locally) takes the same record over DDS: every cycle's
    ``raw/percept``, ``raw/action`` and ``odom``, the 10 Hz beliefs, strategy's ``motion_request`` and ``say``, and
    motion's latched ``joint_gains`` and ``motion_state``, whichever of the two recorders came first."""
    rebuilt_bag, live_bag, _ = two_bags
    dds_log = (rebuilt_bag.parent / 'dds.log').read_text(errors='replace')
    assert 'through the local sink' not in dds_log
    sink, dds, live = _messages(rebuilt_bag), _messages(rebuilt_bag.parent / 'dds'), _messages(live_bag)
    cycles = set(dds[f'{NS}/joint_states'])
    assert len(cycles) > 200 and len(dds[f'{NS}/raw/percept'][0, 0]) == len(cycles)
    _every_cycle(set(dds[f'{NS}/odom']), cycles)
    assert abs(len(dds[f'{NS}/raw/action'][0, 0]) - len(cycles)) <= 2
    for rest in ('joint_gains', 'motion_state'):  # put into the record once per recorder that came, not once
        assert sink.get(f'{NS}/{rest}') and dds.get(f'{NS}/{rest}'), rest
    common = sorted(set(sink[f'{NS}/pose']) & set(dds[f'{NS}/pose']))
    assert len(common) > 30 and all(sink[f'{NS}/pose'][s] == dds[f'{NS}/pose'][s] for s in common)
    for rest in ('motion_request', 'say'):  # strategy's, in the record; the live bag subscribed to the topic
        texts = {m['data'] for m in live[f'{NS}/{rest}'][0, 0]}
        for bag in (sink, dds):
            got = {m['data'] for m in bag[f'{NS}/{rest}'][0, 0]}
            assert len(got & texts) >= 0.8 * min(len(got), len(texts)) > 0, (rest, len(got), len(texts))


def test_the_clock_written_from_the_raw_percepts_is_the_one_the_player_published(
    two_bags: tuple[Path, Path, str],
) -> None:
    """The default recorder does not subscribe to ``/clock`` (each one sent to it cost the clock player as much as
    the rest of its recording): it writes it from that player's ``raw/percept``, one a cycle, as the player's
    own ``/clock``, which the ``--no-rebuild`` recorder subscribed to, has it."""
    rebuilt_bag, live_bag, log = two_bags
    assert f'record: /clock from {NS}/raw/percept' in log
    ours = [m['clock'] for m in _messages(rebuilt_bag)['/clock'][0, 0]]
    theirs = [m['clock'] for m in _messages(live_bag)['/clock'][0, 0]]
    ours = [c['sec'] * 10**9 + c['nanosec'] for c in ours]
    theirs = [c['sec'] * 10**9 + c['nanosec'] for c in theirs]
    assert ours == sorted(ours) and len(set(ours)) == len(ours) > 200
    span = [t for t in theirs if ours[0] <= t <= ours[-1]]
    assert len(span) > 200 and set(span) == set(ours) & set(span)  # every cycle the player sent is there
