"""Live on RCSSServerMJ: two teammates (player processes with ``--world-model``) talk.

Player 1 stands 4 m behind the ball on the centre spot; player 2 stands with its back
to the ball and player 1. Through ``say``/``hear`` (strategy node -> bridge -> server
-> bridge -> world model node) player 2 must know where the ball is, and player 1
where player 2 is, although neither sees what it learns.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped
from nav_msgs.msg import Odometry
from std_msgs.msg import String

from robocup3d_tools.servers import stop_process

pytestmark = pytest.mark.server

TEAM = 'TalkTeam'


def _start(aport: int, unum: int, log: Path) -> subprocess.Popen:
    cmd = [sys.executable, '-m', 'robocup3d_tools.player', '--server', 'mujoco', '--port', str(aport)]
    cmd += ['--team', TEAM, '--unum', str(unum), '--world-model', '--no-raw', '--no-play']  # they stand where put
    env = {**os.environ, 'ROBOCUP3D_TEAM_SECRET': 'talk team secret'}  # as the team runner gives it
    with log.open('w') as out:
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=out, env=env)


@pytest.fixture
def two_players(mujoco_server, tmp_path: Path):
    aport, trainer = mujoco_server
    logs = [tmp_path / f'p{u}.log' for u in (1, 2)]
    procs = [_start(aport, 1, logs[0])]
    time.sleep(1.0)  # one agent at a time: the server adds them in order
    procs.append(_start(aport, 2, logs[1]))
    trainer.logs = logs
    yield trainer
    for p in procs:
        stop_process(p, timeout=10)


def _tails(logs: list[Path]) -> str:
    return '\n'.join(f'{p.name}: ' + ' | '.join(p.read_text().splitlines()[-5:]) for p in logs if p.exists())


def test_teammates_share_ball_and_position(two_players, observer) -> None:
    trainer = two_players
    for unum in (1, 2):
        observer.watch(Odometry, f'/{TEAM}/p{unum}/ball')
        observer.watch(String, f'/{TEAM}/p{unum}/players')
        observer.watch(String, f'/{TEAM}/p{unum}/say')
    wm2: list[object] = []
    observer.node.create_subscription(
        DiagnosticArray,
        '/diagnostics',
        lambda m: wm2.append(m) if m.status and m.status[0].name == f'/{TEAM}/p2/world_model' else None,
        10,
    )
    observer.messages['/diagnostics_world_model_2'] = wm2
    seen_by_2: list[object] = []
    observer.node.create_subscription(PointStamped, f'/{TEAM}/p2/vision/ball', seen_by_2.append, 10)
    assert observer.spin_until(lambda: all(observer.last(f'/{TEAM}/p{u}/players') is not None for u in (1, 2)), 60), (
        f'no world model output from both players; {_tails(trainer.logs)}'
    )
    trainer.kick_off('Left')
    trainer.wait_for(lambda s: s.play_mode == 'KickOff_Left', 10.0)
    trainer.move_agent(1, TEAM, -4.0, 0.0, 0.7, 0.0)  # the ball on the centre spot 4 m ahead
    trainer.move_agent(2, TEAM, -10.0, 5.0, 0.7, 180.0)  # back to the ball and to player 1
    observer.spin_until(lambda: False, 2.0)
    seen_by_2.clear()
    observer.messages[f'/{TEAM}/p2/ball'].clear()

    def ball_error_2() -> float:
        b = observer.last(f'/{TEAM}/p2/ball')
        return math.inf if b is None else math.hypot(b.pose.pose.position.x, b.pose.pose.position.y)

    def teammate_2_error() -> float:
        msg = observer.last(f'/{TEAM}/p1/players')
        rows = json.loads(msg.data)['players'] if msg is not None else []
        mate = [r for r in rows if r['team'] == TEAM and r['unum'] == 2]
        return math.hypot(mate[0]['x'] + 10.0, mate[0]['y'] - 5.0) if mate else math.inf

    observer.spin_until(lambda: ball_error_2() < 0.3 and teammate_2_error() < 0.3, 6.0)
    said = {u: len(observer.messages.get(f'/{TEAM}/p{u}/say', [])) for u in (1, 2)}
    report = {'ball_error_2': ball_error_2(), 'teammate_2_error': teammate_2_error(), 'said': said}
    print(report)
    assert not seen_by_2, 'player 2 saw the ball itself: the test proves nothing'
    assert said[1] > 0 and said[2] > 0, report
    assert ball_error_2() < 0.3, report
    assert teammate_2_error() < 0.3, report
    # what player 2's world model heard is on /diagnostics: its teammate's messages taken in
    heard = observer.last('/diagnostics_world_model_2')
    assert heard is not None, 'no world model diagnostics from player 2'
    values = {v.key: v.value for v in heard.status[0].values}
    assert int(values['hear/taken']) > 0 and int(values['hear/other_team']) == 0, values
