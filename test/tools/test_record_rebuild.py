"""The recorder rebuilds a player's percept topics from its ``raw/percept`` exactly as the player's bridge builds them.

One T1 on a real sync-mode RCSSServerMJ, two recorders at once: the default one (percept topics rebuilt
from ``raw/percept`` in the recorder) and one with ``--no-rebuild`` (subscribed to the player's own
``joint_states``, ``imu``, ``vision/*``, ``ground_truth/pose``: what its bridge published). Every message
of a percept topic that both bags hold for the same cycle decodes to the same fields and values
(the bytes differ only in CDR's alignment padding, which rmw leaves as it finds the memory).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from bag_support import read_bag, start_recording

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
    for package in ('rcsssmj', 'rosbags'):
        if importlib.util.find_spec(package) is None:
            pytest.skip(f'{package} not installed')
    from robocup3d_bridge.percept import Dialect  # noqa: PLC0415 - optional packages, after the skip
    from robocup3d_tools.ros_env import ros_environment  # noqa: PLC0415
    from robocup3d_tools.servers import connect_trainer, free_port, start_mujoco_server, stop_process  # noqa: PLC0415
    from robocup3d_tools.team_config import PlayerConfig, TeamConfig  # noqa: PLC0415
    from robocup3d_tools.team_runner import TeamRunner  # noqa: PLC0415

    run = tmp_path_factory.mktemp('rebuild')
    env = ros_environment()
    aport, mport = free_port(), free_port()
    server = start_mujoco_server(run / 'server', aport, mport, ['--sync', '--no-realtime'], env=env)
    recorders: list[subprocess.Popen] = []
    runner = trainer = None
    try:
        trainer = connect_trainer(mport, Dialect.MUJOCO)
        for name, rebuild in (('rebuilt', True), ('live', False)):
            recorders.append(start_recording(run / name, [TEAM], mport, env, run / f'{name}.log', rebuild=rebuild))
        team = TeamConfig('mujoco', TEAM, '127.0.0.1', aport, (PlayerConfig(1, 'T1'),))
        runner = TeamRunner(team, run, env=env)  # players publish raw/percept (no --no-raw)
        runner.start()
        trainer.wait_for(lambda s: s.team_left == TEAM, 90.0)
        time.sleep(2.0)  # both recorders find the player's topics (they look once a second)
        trainer.poll(0.1)
        trainer.kick_off('Left')
        t0, w0 = trainer.state.server_time, time.monotonic()
        end = w0 + 120.0
        while (trainer.state.server_time - t0 < 6.0 or time.monotonic() - w0 < 6.0) and time.monotonic() < end:
            trainer.poll(0.2)
    finally:
        for recorder in recorders:
            stop_process(recorder, timeout=20.0)
        if runner is not None:
            runner.stop()
        if trainer is not None:
            trainer.close()
        stop_process(server)
    for recorder, name in zip(recorders, ('rebuilt', 'live'), strict=True):
        assert recorder.returncode == 0, (run / f'{name}.log').read_text()
    return run / 'rebuilt', run / 'live', (run / 'rebuilt.log').read_text()


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
