"""Recording and replay against a real RCSSServerMJ (sync mode): the bag, its ground truth and TF, replay, bad bags."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from bag_support import matrix_of, read_bag

from robocup3d_bridge.trainer import MUJOCO_PLAY_MODES
from robocup3d_tools.monitor_truth import SceneTracker, matrix_quaternion

REPO = Path(__file__).resolve().parents[2]
TEAM = f'Rec{os.getpid() % 10000}'  # the team of the recorded_bag fixture (test/tools/conftest.py)


def test_scene_tracker_on_the_captured_monitor_stream(shared_dir: Path) -> None:
    """The T1's torso pose comes out of the full scene and follows the diffs."""
    tracker = SceneTracker()
    lines = (shared_dir / 'captures/rcssservermj/monitor_rsmp.txt').read_text().splitlines()
    assert tracker.update(lines[0])
    truth = tracker.truth()
    assert truth.time == pytest.approx(36.76)
    assert truth.ball == pytest.approx((0.0, 0.0, 0.1097))
    m = truth.robots[('Probe', 1)]
    assert m[:3, 3] == pytest.approx((-2.8884, 0.0, 0.6641), abs=1e-4)
    assert np.allclose(m[:3, :3] @ m[:3, :3].T, np.eye(3), atol=1e-3)
    for line in lines[1:]:
        assert tracker.update(line)
    truth = tracker.truth()
    assert truth.ball == pytest.approx((1.0, 2.0, 0.1094))
    assert truth.robots[('Probe', 1)][:3, 3] == pytest.approx((-1.0, 2.854, 0.13), abs=1e-3)
    assert tracker.update('((RSMP 1 0)((gt 1 0)50)((sg 1 0)diff(nd)))') is False  # does not fit: dropped
    assert tracker.truth().robots == {}


def test_matrix_quaternion_round_trip() -> None:
    from robocup3d_description.kinematics import quat_matrix  # noqa: PLC0415 - optional packages, after the skip

    for q in [(1, 0, 0, 0), (0.5, 0.5, -0.5, 0.5), (0.0, 1.0, 0.0, 0.0), (0.9, 0.1, -0.3, 0.2)]:
        q = np.array(q, dtype=float) / np.linalg.norm(q)
        x, y, z, w = matrix_quaternion(quat_matrix(tuple(q)))
        assert np.allclose(np.array([w, x, y, z]) * np.sign(w * q[0] + x * q[1] + y * q[2] + z * q[3]), q, atol=1e-9)


def _matrix(tr: object) -> np.ndarray:
    """The 4x4 of a geometry_msgs/Transform."""
    return matrix_of(tr.translation, tr.rotation)


def test_bag_decodes_with_truth_and_tf(recorded_bag: Path) -> None:
    msgs = read_bag(recorded_bag)  # every message decodes
    ns = f'/{TEAM}/p1'
    for topic in (
        '/clock',
        f'{ns}/joint_states',
        f'{ns}/imu',
        f'{ns}/game_state',
        '/truth/ball',
        f'/truth/{TEAM}/p1/pose',
        '/truth/game',
        '/tf',
        '/tf_static',
    ):
        assert msgs.get(topic), f'{topic} missing from the bag: {sorted(msgs)}'
    stamps = [t for t, _ in msgs['/clock']]
    assert stamps == sorted(stamps)
    assert (stamps[-1] - stamps[0]) / 1e9 > 5.0  # the 6 s of play
    # ground truth and TF agree: world -> odom -> base_link (REP-105) gives every truth pose at its stamp
    player = f'{TEAM}/p1'
    chain: dict[tuple[str, str], dict[tuple[int, int], np.ndarray]] = {}
    links = set()
    for _, m in msgs['/tf']:
        for tr in m.transforms:
            key = (tr.header.stamp.sec, tr.header.stamp.nanosec)
            chain.setdefault((tr.header.frame_id, tr.child_frame_id), {})[key] = _matrix(tr.transform)
            if tr.header.frame_id == f'{player}/base_link':
                links.add(tr.child_frame_id.rsplit('/', 1)[1])
    assert {'left_foot_link', 'right_foot_link', 'camera', 'H2'} <= links
    world_odom = chain[('world', f'{player}/odom')]
    odom_base = chain[(f'{player}/odom', f'{player}/base_link')]
    truth = msgs[f'/truth/{TEAM}/p1/pose']
    for _, pose in truth:
        key = (pose.header.stamp.sec, pose.header.stamp.nanosec)
        m = world_odom[key] @ odom_base[key]
        p, q = pose.pose.position, pose.pose.orientation
        assert tuple(m[:3, 3]) == pytest.approx((p.x, p.y, p.z), abs=1e-6)
        assert m[:3, :3] == pytest.approx(matrix_of(p, q)[:3, :3], abs=1e-6)
        assert world_odom[key][2, 3] == pytest.approx(0.0, abs=1e-6)  # world -> odom stays on the ground
        assert world_odom[key][2, 2] == pytest.approx(1.0, abs=1e-6)
    # and both agree with what the server told the player (its torso_pos perceptor) within one step: the
    # monitor sends every 2nd step, and which steps the player's times fall on depends on when it joined
    own = {
        m.header.stamp.sec * 10**9 + m.header.stamp.nanosec: m.pose.position for _, m in msgs[f'{ns}/ground_truth/pose']
    }
    own_t = np.array(sorted(own))
    errors = []
    for _, pose in truth:
        t = pose.header.stamp.sec * 10**9 + pose.header.stamp.nanosec
        near = own_t[np.argmin(np.abs(own_t - t))]
        if abs(near - t) <= 20_000_000:
            p, mine = pose.pose.position, own[int(near)]
            errors.append(np.hypot(p.x - mine.x, p.y - mine.y))
    assert len(errors) > 20
    assert np.median(errors) < 0.01 and np.mean(np.array(errors) < 0.05) > 0.95, sorted(errors)[-5:]
    # the game state: teams and play mode, and /tf_static gives the team's field frame
    game = json.loads(msgs['/truth/game'][-1][1].data)
    assert game['team_left'] == TEAM and game['play_mode'] in MUJOCO_PLAY_MODES, game
    statics = [tr.child_frame_id for _, m in msgs['/tf_static'] for tr in m.transforms]
    assert f'{TEAM}/field' in statics


def test_a_players_messages_lie_in_the_bag_at_their_own_time(recorded_bag: Path) -> None:
    """A loaded recorder takes the players' messages late (1.5 s after the monitor's truth of the same moment in
    a sync-mode 3 v 3); written when taken, they lay that far from the truth, and replay played them that late.
    Each lies at its header's stamp; one without a header (``motion_state``) at a stamp of its player's."""

    def stamp(m: object) -> int:
        return m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec

    msgs = read_bag(recorded_bag)
    player = f'/{TEAM}/p1/'
    stamps: set[int] = set()
    for topic, items in msgs.items():
        if topic.startswith(player) and items and hasattr(items[0][1], 'header'):
            assert all(t == stamp(m) for t, m in items if stamp(m) > 0), topic
            stamps |= {stamp(m) for _, m in items}
    # after the start, when one topic's first message may come before another's (a header stamped 0, as the first
    # joint_gains' before the motion node has a time, is no start)
    first = min(s for s in stamps if s > 0) + 1_000_000_000
    states = [t for t, _ in msgs[f'{player}motion_state'] if t > first]
    assert states and all(t in stamps for t in states)
    truth = msgs[f'/truth/{TEAM}/p1/pose']
    assert truth and all(t == stamp(m) for t, m in truth)  # the truth too: a cycle's messages lie beside its truth


def test_bag_info_lists_the_topics(recorded_bag: Path) -> None:
    out = subprocess.run(
        [sys.executable, '-m', 'robocup3d_tools.cli', 'bag-info', str(recorded_bag)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    assert '/truth/ball' in out.stdout and 'tf2_msgs/msg/TFMessage' in out.stdout and 'duration:' in out.stdout


def test_replay_publishes_clock_and_topics_at_their_times(recorded_bag: Path) -> None:
    import rclpy  # noqa: PLC0415 - optional packages, after the skip
    from rosgraph_msgs.msg import Clock  # noqa: PLC0415 - optional packages, after the skip
    from sensor_msgs.msg import JointState  # noqa: PLC0415 - optional packages, after the skip

    recorded = {
        (m.header.stamp.sec, m.header.stamp.nanosec): t for t, m in read_bag(recorded_bag)[f'/{TEAM}/p1/joint_states']
    }
    if not rclpy.ok():
        rclpy.init(args=[])
    node = rclpy.create_node('replay_observer')
    clocks: list[int] = []
    seen: list[tuple[int, int]] = []  # (bag time of the message, /clock when it arrived)

    def on_js(m: JointState) -> None:
        key = (m.header.stamp.sec, m.header.stamp.nanosec)
        if key in recorded and clocks:
            seen.append((recorded[key], clocks[-1]))

    node.create_subscription(Clock, '/clock', lambda m: clocks.append(m.clock.sec * 10**9 + m.clock.nanosec), 1000)
    node.create_subscription(JointState, f'/{TEAM}/p1/joint_states', on_js, 1000)
    proc = subprocess.Popen(
        [sys.executable, '-m', 'robocup3d_tools.cli', 'replay', str(recorded_bag), '--rate', '2', '--wait', '2'],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        end = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
        for _ in range(20):
            rclpy.spin_once(node, timeout_sec=0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
        _out, err = proc.communicate()
        node.destroy_node()
    assert proc.returncode == 0, err
    assert 'tf2_msgs' in err or importlib.util.find_spec('tf2_msgs') is not None  # skipped with a warning
    assert len(clocks) > 100
    assert clocks == sorted(clocks) and clocks[-1] - clocks[0] > 5e9  # /clock rises, never back
    assert len(seen) > 0.8 * len(recorded)
    # each message came when /clock had reached its recorded time (and not long after)
    lags = [(clock - t) / 1e9 for t, clock in seen]
    assert min(lags) >= -0.021 and np.median(lags) < 0.1, (min(lags), np.median(lags))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, '-m', 'robocup3d_tools.cli', *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )


@pytest.mark.parametrize('damage', ['truncate', 'corrupt', 'missing'])
def test_a_bad_bag_gets_one_clear_error(recorded_bag: Path, tmp_path: Path, damage: str) -> None:
    bag = tmp_path / 'bag'
    shutil.copytree(recorded_bag, bag)
    mcap = next(bag.glob('*.mcap'))
    if damage == 'truncate':
        with open(mcap, 'r+b') as f:
            f.truncate(mcap.stat().st_size // 2)
        target, problem = mcap, 'truncated'
    elif damage == 'corrupt':
        data = mcap.read_bytes()
        header_len = int.from_bytes(data[9:17], 'little')  # magic (8), then the header record: opcode, length
        chunk = 8 + 9 + header_len  # the first chunk record
        assert data[chunk] == 0x06
        with open(mcap, 'r+b') as f:
            f.seek(chunk + 9)  # its times, sizes and checksum
            f.write(b'\xff' * 64)
        target, problem = mcap, 'corrupted'
    else:
        target, problem = tmp_path / 'nothing', 'no such file'
        bag = target
    for cmd in ('bag-info', 'replay'):
        out = _cli(cmd, str(bag), '--wait', '0') if cmd == 'replay' else _cli(cmd, str(bag))
        assert out.returncode == 1, (cmd, out.stdout, out.stderr)
        assert 'Traceback' not in out.stderr
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and str(target) in lines[0] and problem in lines[0], (cmd, out.stderr)


def test_team_record_writes_a_bag_with_the_team_and_its_truth(tmp_path: Path) -> None:
    """``robocup3d team --record DIR`` starts the recorder next to the players and closes the bag on SIGINT."""
    if importlib.util.find_spec('rcsssmj') is None:
        pytest.skip('rcssservermj not installed: pip install rcsssmj')
    from robocup3d_bridge.percept import Dialect  # noqa: PLC0415 - optional packages, after the skip
    from robocup3d_tools.ros_env import ros_environment  # noqa: PLC0415 - optional packages, after the skip
    from robocup3d_tools.servers import (  # noqa: PLC0415 - optional packages, after the skip
        connect_trainer,
        free_port,
        start_mujoco_server,
        stop_process,
    )

    env = ros_environment()
    aport, mport = free_port(), free_port()
    server = start_mujoco_server(tmp_path / 'server', aport, mport, ['--sync', '--no-realtime'], env=env)
    team = trainer = None
    name = f'{TEAM}T'
    try:
        trainer = connect_trainer(mport, Dialect.MUJOCO)
        cmd = [sys.executable, '-m', 'robocup3d_tools.cli', 'team', '--port', str(aport), '--players', '1']
        cmd += ['--team', name, '--log-dir', str(tmp_path), '--record', str(tmp_path / 'bag')]
        cmd += ['--monitor-port', str(mport)]
        with open(tmp_path / 'team.log', 'ab') as out:
            team = subprocess.Popen(
                cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        trainer.wait_for(lambda s: s.team_left == name, 90.0)
        t0, w0 = trainer.state.server_time, time.monotonic()
        end = w0 + 120.0
        # 5 s of server time, and 4 s of wall time for the recorder to find the topics (it looks once a
        # second): an idle machine runs a sync-mode server through 5 s in about one
        while (trainer.state.server_time - t0 < 5.0 or time.monotonic() - w0 < 4.0) and time.monotonic() < end:
            trainer.poll(0.2)
    finally:
        if team is not None:
            stop_process(team, timeout=40.0)
        if trainer is not None:
            trainer.close()
        stop_process(server)
    assert team.returncode == 0, (tmp_path / 'team.log').read_text()
    msgs = read_bag(tmp_path / 'bag')
    for topic in (f'/{name}/p1/joint_states', f'/truth/{name}/p1/pose', '/truth/ball', '/tf'):
        assert msgs.get(topic), f'{topic} missing: {sorted(msgs)}'


def test_the_bag_decodes_with_the_mcap_reference_reader(recorded_bag: Path) -> None:
    """Another reader (the ``mcap`` library Foxglove publishes) decodes every message from the schemas in the file."""
    if importlib.util.find_spec('mcap_ros2') is None:
        pytest.skip('mcap-ros2-support not installed')
    from mcap.reader import make_reader  # noqa: PLC0415 - optional packages, after the skip
    from mcap_ros2.decoder import DecoderFactory  # noqa: PLC0415 - optional packages, after the skip

    (mcap,) = recorded_bag.glob('*.mcap')
    with open(mcap, 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        assert reader.get_header().profile == 'ros2'
        topics = {channel.topic for _, channel, _, _ in reader.iter_decoded_messages()}
    assert {'/tf', '/tf_static', '/truth/ball', '/clock', f'/{TEAM}/p1/joint_states'} <= topics


def test_live_tf_without_tf2_msgs_says_where_tf_goes() -> None:
    """On the pip install (no tf2_msgs wheel) ``robocup3d tf`` stops at once with one line, not a traceback."""
    if importlib.util.find_spec('tf2_msgs') is not None:
        pytest.skip('tf2_msgs is installed (a ROS 2 install): robocup3d tf publishes there')
    out = _cli('tf', '--teams', TEAM, '--monitor-port', '9')
    assert out.returncode == 2 and 'Traceback' not in out.stderr, out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert 'tf2_msgs' in line and 'bags' in line and 'view' in line, line


def test_the_bag_decodes_with_foxglove_and_lichtblicks_libraries(recorded_bag: Path, tmp_path: Path) -> None:
    """The TypeScript readers Foxglove and Lichtblick open bags with decode every message (Node.js, npm)."""
    node, npm = shutil.which('node'), shutil.which('npm')
    if node is None or npm is None:
        pytest.skip('Node.js and npm are needed for the Foxglove libraries (apt-get install nodejs npm)')
    reader = REPO / 'test/tools/foxglove_reader'
    work = tmp_path / 'reader'
    work.mkdir()
    for name in ('package.json', 'read_bag.mjs'):
        shutil.copy(reader / name, work / name)
    install = subprocess.run(
        [npm, 'install', '--no-audit', '--no-fund', '--loglevel=error'],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if install.returncode != 0:
        pytest.skip(f'npm could not install @mcap/core and @foxglove/rosmsg*: {install.stderr.strip()[-300:]}')
    (mcap,) = recorded_bag.glob('*.mcap')
    cmd = [node, 'read_bag.mjs', str(mcap)]
    out = subprocess.run(cmd, check=False, cwd=work, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got['profile'] == 'ros2'
    want = {topic: len(msgs) for topic, msgs in read_bag(recorded_bag).items()}
    assert got['counts'] == want  # every message of every topic, as rosbags reads them
    frames = {tuple(pair.split(' ')) for pair in got['frames']}
    player = f'{TEAM}/p1'
    assert {('world', f'{player}/odom'), (f'{player}/odom', f'{player}/base_link')} <= frames
    assert (f'{player}/base_link', f'{player}/left_foot_link') in frames
    assert got['truthFrames'] == ['world']
