"""A full team of 7 T1 on a real RCSSServerMJ, observed through ROS from this process."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time

import pytest
from geometry_msgs.msg import PoseStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from robocup3d_bridge.config_files import load_config
from robocup3d_bridge.node_main import LATCHED
from robocup3d_strategy.formation import formation_pose
from robocup3d_tools.servers import stop_process

pytestmark = pytest.mark.server

TEAM = 'E2ETeam'
PLAYERS = range(1, 8)


def _ns(unum: int) -> str:
    return f'/{TEAM}/p{unum}'


@pytest.fixture(params=['process per player', 'three processes'])
def team(request, mujoco_server, tmp_path):
    """The team runner with its players, one process each or dealt into three (``--processes``)."""
    aport, trainer = mujoco_server
    cmd = [
        sys.executable,
        '-m',
        'robocup3d_tools.cli',
        'team',
        '--server',
        'mujoco',
        '--port',
        str(aport),
        '--team',
        TEAM,
        '--log-dir',
        str(tmp_path / 'logs'),
        *(['--processes', '3'] if request.param == 'three processes' else []),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    yield trainer, proc, tmp_path / 'logs'
    stop_process(proc, timeout=15)


def test_full_team_beams_into_formation_and_follows_commands(team, observer) -> None:
    trainer, runner, logs = team
    for u in PLAYERS:
        observer.watch(String, f'{_ns(u)}/game_state', LATCHED)
        observer.watch(JointState, f'{_ns(u)}/joint_states', 1)
        observer.watch(PoseStamped, f'{_ns(u)}/ground_truth/pose', 1)

    def all_seen() -> bool:
        return all(observer.last(f'{_ns(u)}/{t}') for u in PLAYERS for t in ('game_state', 'ground_truth/pose'))

    assert observer.spin_until(all_seen, 90), f'not every player published; see {logs}'

    # Every player knows its side and number.
    for u in PLAYERS:
        state = json.loads(observer.last(f'{_ns(u)}/game_state').data)
        assert (state['side'], state['unum'], state['team']) == ('left', u, TEAM)

    # Beamed into formation: the server's ground truth puts each robot at its kick-off place.
    formations = load_config('formations.yaml')

    def in_formation(u: int) -> bool:
        msg = observer.last(f'{_ns(u)}/ground_truth/pose')
        x, y, _ = formation_pose(formations, 'mujoco', u)
        return msg is not None and math.hypot(msg.pose.position.x - x, msg.pose.position.y - y) < 0.5

    assert observer.spin_until(lambda: all(in_formation(u) for u in PLAYERS), 20), {
        u: (round(m.pose.position.x, 2), round(m.pose.position.y, 2))
        for u in PLAYERS
        if (m := observer.last(f'{_ns(u)}/ground_truth/pose'))
    }

    # The commanded hold pose reaches the robots: the shoulders go to +-75 deg (config/robots.yaml).
    target = math.radians(75.0)

    def arms_follow(u: int) -> bool:
        js = observer.last(f'{_ns(u)}/joint_states')
        if js is None:
            return False
        q = dict(zip(js.name, js.position, strict=True))
        return abs(q['laj2'] + target) < 0.2 and abs(q['raj2'] - target) < 0.2

    assert observer.spin_until(lambda: all(arms_follow(u) for u in PLAYERS), 20)

    # The server is still running and stepping (no invalid effector killed it).
    t0 = trainer.state.game_time, trainer.state.messages
    trainer.kick_off('Left')
    deadline = time.monotonic() + 10
    while trainer.state.play_mode != 'KickOff_Left' and time.monotonic() < deadline:
        trainer.poll(0.1)
    assert trainer.state.play_mode == 'KickOff_Left'
    assert trainer.state.messages > t0[1]
    assert trainer.server_process.poll() is None
    assert runner.poll() is None
