"""The RCSSServerMJ our tools start survives a K1 touching the ball (0.2.1 stops its simulation otherwise)."""

from __future__ import annotations

import pytest

from robocup3d_tools.mujoco_server import geom_owner_name

pytestmark = pytest.mark.server


def test_every_k1_geom_has_an_owner_name_with_the_agent_prefix() -> None:
    """The K1's collision geoms have no names; their bodies carry the prefix the contact filter reads."""
    mujoco = pytest.importorskip('mujoco')
    from robocup3d_description.robots import rcsssmj_robot_xml  # noqa: PLC0415

    spec = mujoco.MjSpec.from_file(str(rcsssmj_robot_xml('K1')))
    world = mujoco.MjSpec()
    frame = world.worldbody.add_frame()
    frame.attach_body(spec.body('torso'), 'r-1-3-')  # as RCSSServerMJ attaches an agent
    model = world.compile()
    unnamed = [g for g in range(model.ngeom) if mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) is None]
    assert unnamed, 'the K1 model names its geoms now: the mend may no longer be needed'
    assert all(geom_owner_name(model, g).startswith('r-1-3-') for g in unnamed)


def test_a_ball_dropped_on_a_k1_leaves_the_server_running() -> None:
    pytest.importorskip('rcsssmj')
    from robocup3d_tools.sim_session import SimSession  # noqa: PLC0415

    with SimSession('K1') as session:
        session.place(-6.0, 0.0, 0.0)
        pose = session.pose
        for _ in range(3):  # straight onto its head from 0.5 m above (the stock 0.2.1 stops at the first)
            session.trainer.move_ball(pose.x, pose.y, pose.z + 0.5)
            session.wait_cycles(50)  # raises TimeoutError when the server stops sending
        session.wait_cycles(100)
        assert session.server.poll() is None, f'RCSSServerMJ stopped; see {session.log_dir}'
