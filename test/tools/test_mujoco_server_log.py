"""Nothing non-finite reaches RCSSServerMJ when a player joins: its own log says so (issue #24).

The server used to log "Nan, Inf or huge value in CTRL at ACTUATOR n" once per joining player.
Its cause is MuJoCo's recompile leaving a joining robot's controls uninitialised (an agent that
sends nothing but its init gets it too); ``robocup3d_tools.mujoco_server`` zeroes them.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from robocup3d_tools.mujoco_server import FreshControlsZeroed

WARNING = 'Nan, Inf or huge value in CTRL'


def test_controls_of_actuators_added_by_a_recompile_are_zeroed() -> None:
    mujoco = pytest.importorskip('mujoco')
    spec = mujoco.MjSpec.from_string(
        '<mujoco><worldbody><body><joint name="j0"/><geom size=".1"/></body></worldbody>'
        '<actuator><motor name="a0" joint="j0"/></actuator></mujoco>'
    )
    model = spec.compile()
    data = mujoco.MjData(model)
    data.ctrl[0] = 0.5
    shim = FreshControlsZeroed(mujoco)
    for k in range(1, 4):  # a robot joining: a body, a joint, actuators
        body = spec.worldbody.add_body(name=f'b{k}')
        body.add_joint(name=f'j{k}')
        body.add_geom(size=[0.1, 0, 0])
        for t in range(3):
            spec.add_actuator(name=f'a{k}_{t}', target=f'j{k}', trntype=mujoco.mjtTrn.mjTRN_JOINT)
        shim.expect_recompile(model)
        model, data = spec.recompile(model, data)
        shim.mj_forward(model, data)
        assert list(data.ctrl) == [0.5] + [0.0] * (3 * k)
    assert shim.zeroed == 9


@pytest.mark.server
def test_a_joining_player_leaves_no_ctrl_warning_in_the_server_log(mujoco_server, tmp_path: Path) -> None:
    port, trainer = mujoco_server
    cmd = [sys.executable, '-m', 'robocup3d_tools.player', '--port', str(port), '--team', 'Ctrl', '--unum', '1']
    player = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        trainer.wait_for(lambda s: s.team_left == 'Ctrl', 30)  # raises TimeoutError if it never joins
        time.sleep(3.0)  # cycles after the join
    finally:
        player.terminate()
        player.wait(10)
    server_log = (tmp_path / 'server' / 'server.out').read_text(errors='replace')
    assert 'Player Ctrl #1 joined the game.' in server_log
    assert WARNING not in server_log, server_log
