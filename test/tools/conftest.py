"""Fixtures of the tools tests: a bag recorded from a real short RCSSServerMJ match."""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: the recorded team (test_record_replay.TEAM is the same name: same process)
TEAM = f'Rec{os.getpid() % 10000}'


@pytest.fixture(scope='session')
def recorded_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One T1 (team :data:`TEAM`) on a sync-mode RCSSServerMJ, recorded for 6 s of server time after it joined.

    The ball is put in the T1's penalty box at the start, so the goalie walks out to clear it.

    Shared by the record/replay, report and view tests: one short match per test session.
    """
    if importlib.util.find_spec('rcsssmj') is None:
        pytest.skip('rcssservermj not installed: pip install rcsssmj')
    if importlib.util.find_spec('rosbags') is None:
        pytest.skip('rosbags not installed: pip install rosbags')
    from bag_support import start_recording  # noqa: PLC0415

    from robocup3d_bridge.percept import Dialect  # noqa: PLC0415 - optional packages, after the skip
    from robocup3d_tools.ros_env import ros_environment  # noqa: PLC0415 - optional packages, after the skip
    from robocup3d_tools.servers import connect_trainer, free_port, start_mujoco_server, stop_process  # noqa: PLC0415 - optional packages, after the skip
    from robocup3d_tools.team_config import PlayerConfig, TeamConfig  # noqa: PLC0415 - optional packages, after the skip
    from robocup3d_tools.team_runner import TeamRunner  # noqa: PLC0415 - optional packages, after the skip

    run = tmp_path_factory.mktemp('record')
    env = ros_environment()
    aport, mport = free_port(), free_port()
    server = start_mujoco_server(run / 'server', aport, mport, ['--sync', '--no-realtime'], env=env)
    recorder = runner = trainer = None
    try:
        trainer = connect_trainer(mport, Dialect.MUJOCO)
        recorder = start_recording(run / 'bag', [TEAM], mport, env, run / 'recorder.log')
        team = TeamConfig('mujoco', TEAM, '127.0.0.1', aport, (PlayerConfig(1, 'T1'),))
        runner = TeamRunner(team, run, env=env, extra_args=['--no-raw'], clock_player=1)
        runner.start()
        trainer.wait_for(lambda s: s.team_left == TEAM, 90.0)
        time.sleep(2.0)  # the recorder finds the player's topics (it looks once a second)
        trainer.poll(0.1)
        trainer.kick_off('Left')
        trainer.drop_ball()  # play on, the ball in our box: the goalie walks out to clear it (a track to draw)
        trainer.move_ball(-22.0, 3.0, 0.11)
        t0, w0 = trainer.state.server_time, time.monotonic()
        end = w0 + 120.0
        # 6 s of server time, and 6 s of wall time: on an idle machine a sync-mode server runs far ahead of
        # the wall clock, and the recorder finds a topic up to a second after it appears
        while (trainer.state.server_time - t0 < 6.0 or time.monotonic() - w0 < 6.0) and time.monotonic() < end:
            trainer.poll(0.2)
    finally:
        if recorder is not None:
            stop_process(recorder, timeout=20.0)
        if runner is not None:
            runner.stop()
        if trainer is not None:
            trainer.close()
        stop_process(server)
    assert recorder.returncode == 0, (run / 'recorder.log').read_text()
    return run / 'bag'
