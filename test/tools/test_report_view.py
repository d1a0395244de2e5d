"""``robocup3d report`` and ``robocup3d view`` on a bag recorded from a real RCSSServerMJ match (conftest)."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import json
import math
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
TEAM = f'Rec{os.getpid() % 10000}'  # the team of the recorded_bag fixture (test/tools/conftest.py)

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec('plotly') is None or importlib.util.find_spec('foxglove') is None,
    reason='plotly / foxglove-sdk not installed: pip install -e .[viz]',
)


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, '-m', 'robocup3d_tools.cli', *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def _figures(page: str) -> dict[str, dict]:
    found = re.findall(r'<script type="application/json" class="figure" id="fig-([a-z]+)">(.*?)</script>', page, re.S)
    return {name: json.loads(text) for name, text in found}


def _values(v: object) -> list[float]:
    """A trace's values: plotly writes numpy arrays as typed arrays (dtype, base64 bdata)."""
    if isinstance(v, dict):
        import numpy as np  # noqa: PLC0415

        return np.frombuffer(base64.b64decode(v['bdata']), dtype=v['dtype']).tolist()
    return list(v)


@pytest.fixture(scope='module')
def report(recorded_bag: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The report of the recorded bag: (html file, stdout)."""
    out = tmp_path_factory.mktemp('report') / 'report.html'
    run = _cli('report', str(recorded_bag), '-o', str(out))
    assert run.returncode == 0, run.stderr
    return out, run.stdout


def test_report_draws_the_trajectories_on_the_field(report: tuple[Path, str]) -> None:
    path, stdout = report
    page = path.read_text(encoding='utf-8')
    assert 'src="http' not in page and 'Plotly.newPlot' in page  # plotly.js inline: opens offline
    figs = _figures(page)
    assert {'score', 'field', 'heatmaps', 'falls', 'speed', 'localization', 'load'} <= set(figs)
    field = figs['field']
    lines = [s for s in field['layout']['shapes'] if s['type'] == 'line']
    half_length = max(abs(s['x0']) for s in lines)
    assert half_length == pytest.approx(27.5)  # RCSSServerMJ's 55 m field (ssim rules)
    player = next(t for t in field['data'] if t.get('meta', {}).get('player') == f'{TEAM}/p1')
    xy = [(x, y) for x, y in zip(_values(player['x']), _values(player['y']), strict=True) if not math.isnan(x)]
    assert len(xy) > 50  # the T1's track from the ground truth, on the field
    assert all(abs(x) <= half_length + 4 and abs(y) <= 18 + 4 for x, y in xy)
    ball = next(t for t in field['data'] if t.get('meta', {}).get('kind') == 'ball')
    assert len(_values(ball['x'])) > 50
    # its pose against the ground truth: an error curve, and a median in the summary
    (loc,) = figs['localization']['data']
    errors = _values(loc['y'])
    assert len(errors) > 50 and 0 <= min(errors)
    assert f'{TEAM}/p1' in stdout and 'score:' in stdout and 'kicks:' in stdout
    assert 'latency' in stdout
    # the player's CPU from the bridge's /diagnostics (process_cpu_s), drawn as a curve
    cpu = [t for t in figs['load']['data'] if t['name'].endswith('CPU')]
    assert cpu and all(0 < v < 300 for v in _values(cpu[0]['y'])), cpu  # % of a core


def test_report_looks_like_a_report_in_chromium(report: tuple[Path, str], tmp_path: Path) -> None:
    """A headless Chromium draws the page: the field (grass green) is on it."""
    found = [shutil.which(b) for b in ('chromium', 'chromium-browser', 'google-chrome')]
    browser = next((b for b in found if b), None)
    if browser is None:
        pytest.skip('no chromium on PATH (apt-get install chromium) for the screenshot')
    image = pytest.importorskip('PIL.Image', reason='Pillow not installed for reading the screenshot')
    shot = tmp_path / 'report.png'
    cmd = [browser, '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', f'--screenshot={shot}']
    cmd += ['--window-size=1300,1400', '--virtual-time-budget=10000', report[0].as_uri()]
    subprocess.run(cmd, check=False, capture_output=True, timeout=120)
    assert shot.is_file(), 'chromium wrote no screenshot'
    colors = dict((c, n) for n, c in image.open(shot).convert('RGB').getcolors(maxcolors=1 << 24))
    grass = colors.get((0x3A, 0x7D, 0x44), 0)  # the field's fill colour
    assert grass > 20_000, grass
    # the T1's track (blue, the first player colour) drawn on the grass: the goalie walked out to the ball
    px = np.asarray(image.open(shot).convert('RGB'), dtype=int)
    ys, xs = np.nonzero((px == (0x3A, 0x7D, 0x44)).all(axis=2))
    field = px[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    r, g, b = field[..., 0], field[..., 1], field[..., 2]
    track = int(((b > r + 60) & (b > g + 20)).sum())  # #1f77b4 and its anti-aliased edge on green
    assert track > 15, track


def _damaged(recorded_bag: Path, tmp_path: Path, damage: str) -> tuple[Path, Path, str]:
    bag = tmp_path / 'bag'
    shutil.copytree(recorded_bag, bag)
    mcap = next(bag.glob('*.mcap'))
    if damage == 'truncate':
        with open(mcap, 'r+b') as f:
            f.truncate(mcap.stat().st_size // 2)
        return bag, mcap, 'truncated'
    if damage == 'corrupt':
        data = mcap.read_bytes()
        header_len = int.from_bytes(data[9:17], 'little')
        chunk = 8 + 9 + header_len  # the first chunk record: its sizes and checksum overwritten
        with open(mcap, 'r+b') as f:
            f.seek(chunk + 9)
            f.write(b'\xff' * 64)
        return bag, mcap, 'corrupted'
    return tmp_path / 'nothing', tmp_path / 'nothing', 'no such file'


@pytest.mark.parametrize('damage', ['truncate', 'corrupt', 'missing'])
def test_a_bad_bag_gets_one_line_and_exit_2(recorded_bag: Path, tmp_path: Path, damage: str) -> None:
    bag, target, problem = _damaged(recorded_bag, tmp_path, damage)
    for cmd in (['report', str(bag), '-o', str(tmp_path / 'r.html')], ['view', '--bag', str(bag), '--port', '0']):
        out = _cli(*cmd)
        assert out.returncode == 2, (cmd, out.stdout, out.stderr)
        assert 'Traceback' not in out.stderr
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and str(target) in lines[0] and problem in lines[0], (cmd, out.stderr)
    assert not (tmp_path / 'r.html').exists()


def _decoder(channel: dict) -> object:
    """The protobuf class of an advertised channel, from the schema it carries (a FileDescriptorSet)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: PLC0415

    fds = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(channel['schema']))
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(channel['schemaName']))


async def _watch(port: int, want: dict, deadline: float) -> tuple[str, dict, dict[str, list]]:
    """Connect as a Foxglove client, subscribe to every channel, collect decoded messages until ``want`` holds."""
    import websockets  # noqa: PLC0415

    uri = f'ws://127.0.0.1:{port}'
    while True:  # the server starts after the bag is checked
        try:
            ws = await websockets.connect(uri, subprotocols=['foxglove.sdk.v1'], max_size=None)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
    channels: dict[int, dict] = {}
    by_sub: dict[int, dict] = {}
    got: dict[str, list] = {}
    asked: dict[int, float] = {}  # subscription id -> when it was (last) asked for
    info = {}
    async with ws:
        while time.monotonic() < deadline and not all(len(got.get(t, [])) >= n for t, n in want.items()):
            for sid, at in list(asked.items()):
                # foxglove-sdk can refuse a subscription that closely follows an advertisement ("unknown
                # channel", logged by the server, nothing sent back): one silent for 3 s is asked again
                if time.monotonic() - at > 3.0 and not got.get(by_sub[sid]['topic']):
                    again = {'id': sid, 'channelId': by_sub[sid]['id']}
                    await ws.send(json.dumps({'op': 'unsubscribe', 'subscriptionIds': [sid]}))
                    await ws.send(json.dumps({'op': 'subscribe', 'subscriptions': [again]}))
                    asked[sid] = time.monotonic()
            try:
                frame = await asyncio.wait_for(ws.recv(), 1.0)
            except TimeoutError:
                continue
            if isinstance(frame, str):
                op = json.loads(frame)
                if op['op'] == 'serverInfo':
                    info = op
                elif op['op'] == 'advertise':
                    subs = []
                    for c in op['channels']:
                        sid = len(by_sub) + 1
                        channels[c['id']] = c
                        by_sub[sid] = {**c, 'decode': _decoder(c) if c['encoding'] == 'protobuf' else json.loads}
                        subs.append({'id': sid, 'channelId': c['id']})
                    await ws.send(json.dumps({'op': 'subscribe', 'subscriptions': subs}))
                    asked.update({s['id']: time.monotonic() for s in subs})
            elif frame[0] == 1:  # messageData: subscription id, log time, payload
                sid, _log_time = struct.unpack_from('<IQ', frame, 1)
                c = by_sub[sid]
                payload = frame[13:]
                msg = c['decode'](payload) if c['encoding'] == 'json' else c['decode'].FromString(payload)
                got.setdefault(c['topic'], []).append(msg)
        # a mesh the robots are drawn with, fetched from the view as Foxglove fetches assets
        urls = [md.url for m in got.get('/robots/links', []) for e in m.entities for md in e.models]
        for request, uri in ((1, urls[0] if urls else ''), (2, 'package://robocup3d/meshes/T1/../../../etc/passwd')):
            if not uri:
                continue
            await ws.send(json.dumps({'op': 'fetchAsset', 'uri': uri, 'requestId': request}))
            while time.monotonic() < deadline:
                try:
                    frame = await asyncio.wait_for(ws.recv(), 1.0)
                except TimeoutError:
                    continue
                if isinstance(frame, bytes) and frame[0] == 4:  # fetchAssetResponse
                    rid, status, n = struct.unpack_from('<IBI', frame, 1)
                    if rid == request:
                        got.setdefault('fetchAsset', []).append((uri, status, frame[10 + n :]))
                        break
    return ws.subprotocol, info, {c['topic']: c for c in channels.values()}, got


RATE = ('--rate', '8')


def test_view_serves_the_bag_to_a_foxglove_client(recorded_bag: Path) -> None:
    pytest.importorskip('websockets')
    pytest.importorskip('google.protobuf')
    from robocup3d_tools.servers import free_port, stop_process  # noqa: PLC0415

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, '-m', 'robocup3d_tools.cli', 'view', '--bag', str(recorded_bag), '--port', str(port), *RATE],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    beliefs = f'/{TEAM}/p1/beliefs'
    want = {'/field': 1, '/truth/scene': 20, '/tf': 20, '/game': 1, beliefs: 5, '/robots/links': 1}
    try:
        subprotocol, info, channels, got = asyncio.run(_watch(port, want, time.monotonic() + 90))
    finally:
        stop_process(proc, timeout=20.0)
        _out, err = proc.communicate()
    assert proc.returncode == 0, err
    assert subprotocol == 'foxglove.sdk.v1' and info['name'] == 'robocup3d' and 'time' in info['capabilities']
    assert channels['/truth/scene']['schemaName'] == 'foxglove.SceneUpdate'
    assert channels['/tf']['schemaName'] == 'foxglove.FrameTransforms'
    for topic, n in want.items():
        assert len(got.get(topic, [])) >= n, (topic, {t: len(m) for t, m in got.items()}, err)
    # the field: its lines and goal posts
    field = got['/field'][0].entities[0]
    assert field.frame_id == 'world' and field.lines and len(field.cylinders) == 4
    # the ground truth: the T1 and the ball
    ids = {e.id for m in got['/truth/scene'] for e in m.entities}
    assert {f'truth/{TEAM}/p1', 'truth/ball'} <= ids
    # TF: the robot's torso in the world, and its links from the joint states
    frames = {(t.parent_frame_id, t.child_frame_id) for m in got['/tf'] for t in m.transforms}
    assert ('world', f'{TEAM}/p1/odom') in frames and (f'{TEAM}/p1/odom', f'{TEAM}/p1/base_link') in frames
    assert any(parent == f'{TEAM}/p1/base_link' for parent, _ in frames)
    # the robot drawn from its model: the T1's meshes, each locked to its link's TF frame
    robot = [e for e in got['/robots/links'][-1].entities if e.frame_locked]
    links = {e.frame_id for e in robot if e.models}
    assert {f'{TEAM}/p1/left_foot_link', f'{TEAM}/p1/right_foot_link', f'{TEAM}/p1/torso'} <= links, links
    assert len(links) >= 15, links
    # the view serves the mesh it names (an STL), and nothing outside its meshes
    (uri, status, data), (_, bad_status, _) = got['fetchAsset']
    assert uri.startswith('package://robocup3d/meshes/T1/') and status == 0
    assert len(data) > 1000 and len(data) == 84 + 50 * int.from_bytes(data[80:84], 'little')  # binary STL
    assert bad_status == 1
    # the player's beliefs: its pose as an arrow
    assert any(e.arrows for m in got[beliefs] for e in m.entities)
    assert got['/game'][-1]['team_left'] == TEAM


@pytest.mark.skipif(shutil.which('rcssserver3d') is None, reason='rcssserver3d (SimSpark) is not on PATH')
def test_view_live_on_rcssserver3d_shows_its_ground_truth(tmp_path: Path) -> None:
    """``view --monitor-port`` on rcssserver3d: its field, and the Nao and the ball from its monitor stream."""
    pytest.importorskip('websockets')
    pytest.importorskip('google.protobuf')
    from simspark_support import simspark_server, wait_until  # noqa: PLC0415

    from robocup3d_tools.servers import free_port, stop_process  # noqa: PLC0415

    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    env.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
    cli = [sys.executable, '-m', 'robocup3d_tools.cli']
    port = free_port()
    with simspark_server() as server:
        team_cmd = [*cli, 'team', '--server', 'simspark', '--players', '1', '--port', str(server.agent_port)]
        team_cmd += ['--team', 'Solo', '--log-dir', str(tmp_path)]
        with open(tmp_path / 'team.log', 'wb') as log:
            team = subprocess.Popen(team_cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        view = subprocess.Popen(
            [*cli, 'view', '--port', str(port), '--monitor-port', str(server.monitor_port), '--server', 'simspark'],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            assert wait_until(lambda: server.poll(0.1) or server.trainer.state.team_left == 'Solo', 90.0)
            want = {'/field': 1, '/truth/scene': 10, '/tf': 5}
            _, _, _, got = asyncio.run(_watch(port, want, time.monotonic() + 60))
        finally:
            stop_process(view, timeout=20.0)
            team.send_signal(signal.SIGINT)
            team.wait(60)
            _out, err = view.communicate()
    assert view.returncode == 0, err
    for topic, n in want.items():
        assert len(got.get(topic, [])) >= n, (topic, {t: len(m) for t, m in got.items()}, err)
    field = got['/field'][0].entities[0]
    assert max(p.x for line in field.lines for p in line.points) == pytest.approx(15.0)  # rcssserver3d's field
    scene = {e.id: e for e in got['/truth/scene'][-1].entities}
    assert {'truth/Solo/p1', 'truth/ball'} <= set(scene), sorted(scene)
    nao = scene['truth/Solo/p1'].cubes[0].pose.position
    assert abs(nao.x) <= 15.5 and abs(nao.y) <= 10.5  # on the field, where the monitor put it
    frames = {(t.parent_frame_id, t.child_frame_id) for m in got['/tf'] for t in m.transforms}
    assert ('world', 'Solo/p1/odom') in frames and ('Solo/p1/odom', 'Solo/p1/base_link') in frames


def test_view_live_shows_what_the_ros_graph_publishes(recorded_bag: Path) -> None:
    """Live: ``robocup3d view`` subscribes with rclpy; ``robocup3d replay`` of the bag stands in for a running match."""
    pytest.importorskip('websockets')
    pytest.importorskip('google.protobuf')
    from robocup3d_tools.servers import free_port, stop_process  # noqa: PLC0415

    port = free_port()
    cli = [sys.executable, '-m', 'robocup3d_tools.cli']
    view = subprocess.Popen(
        [*cli, 'view', '--port', str(port), '--teams', TEAM],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    replay = subprocess.Popen(
        [*cli, 'replay', str(recorded_bag), '--rate', '4', '--wait', '3'],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    beliefs = f'/{TEAM}/p1/beliefs'
    want = {'/field': 1, '/truth/scene': 10, '/game': 1, beliefs: 30}  # the first may come before a pose
    try:
        _, _, _, got = asyncio.run(_watch(port, want, time.monotonic() + 90))
    finally:
        stop_process(replay, timeout=10.0)
        stop_process(view, timeout=20.0)
        _out, err = view.communicate()
    assert view.returncode == 0, err
    for topic, n in want.items():
        assert len(got.get(topic, [])) >= n, (topic, {t: len(m) for t, m in got.items()}, err)
    ids = {e.id for m in got['/truth/scene'] for e in m.entities}
    assert {f'truth/{TEAM}/p1', 'truth/ball'} <= ids
    poses = [e.arrows[0].pose.position for m in got[beliefs] for e in m.entities if e.arrows]
    assert poses and all(abs(p.x) < 31 and abs(p.y) < 22 for p in poses)  # its pose, in the world frame


def test_the_rviz_config_shows_topics_and_frames_a_recording_has(recorded_bag: Path) -> None:
    """config/robocup3d.rviz: fixed frame world, TF, RobotModel, and topics the players and the recorder publish."""
    import yaml  # noqa: PLC0415
    from rosbags.highlevel import AnyReader  # noqa: PLC0415

    config = yaml.safe_load((REPO / 'config/robocup3d.rviz').read_text(encoding='utf-8'))
    manager = config['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == 'world'
    displays = {d['Class'].rsplit('/', 1)[1]: d for d in manager['Displays']}
    assert {'TF', 'RobotModel', 'PointStamped', 'MarkerArray'} <= set(displays)
    topics = [d['Topic']['Value'] for d in manager['Displays'] if 'Topic' in d]
    frames = set()
    with AnyReader([recorded_bag]) as reader:
        recorded = {c.topic for c in reader.connections}
        tf = [c for c in reader.connections if c.topic == '/tf']
        for conn, _, raw in reader.messages(connections=tf):
            frames |= {t.child_frame_id for t in reader.deserialize(raw, conn.msgtype).transforms}
    for topic in topics:  # the config names the players of `robocup3d match`; the fixture's team is another
        assert topic.replace('/Robo3dA/', f'/{TEAM}/') in recorded, (topic, sorted(recorded))
    # the RobotModel's links, with its TF prefix: the URDF's root (torso) and a foot
    prefix = displays['RobotModel']['TF Prefix'].replace('Robo3dA', TEAM)
    assert {f'{prefix}/torso', f'{prefix}/left_foot_link'} <= frames
