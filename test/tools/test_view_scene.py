"""What the view draws, from messages: a right-team player's beliefs land in the world frame, turned by pi."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace as NS

import pytest

from robocup3d_tools.view_scene import ViewState


def _stamp(t: float) -> NS:
    return NS(stamp=NS(sec=int(t), nanosec=int((t % 1) * 1e9)), frame_id='field')


def _pose(x: float, y: float, yaw: float) -> NS:
    q = NS(x=0.0, y=0.0, z=math.sin(yaw / 2), w=math.cos(yaw / 2))
    return NS(header=_stamp(1.0), pose=NS(pose=NS(position=NS(x=x, y=y, z=0.0), orientation=q)))


def test_a_right_team_players_beliefs_are_turned_into_the_world_frame() -> None:
    state = ViewState()
    game = {'team': 'B', 'side': 'right', 'play_mode': 'PlayOn', 'score_left': 0, 'score_right': 1}
    assert state.update('/B/p3/game_state', 1, NS(data=json.dumps(game))) == 'game'
    assert state.update('/B/p3/pose', 2, _pose(5.0, 1.0, 0.0)) == 'B/p3'
    ball = NS(header=_stamp(1.0), pose=NS(pose=NS(position=NS(x=2.0, y=-1.0, z=0.11))))
    state.update('/B/p3/ball', 3, ball)
    tracked = {'players': [{'x': 1.0, 'y': 2.0, 'teammate': False, 'unum': 7}]}
    state.update('/B/p3/players', 4, NS(data=json.dumps(tracked)))
    b = state.beliefs['B/p3']
    assert b.pose[:2] == (-5.0, -1.0) and abs(abs(b.pose[2]) - math.pi) < 1e-9  # facing -x: towards the left goal
    assert b.ball == (-2.0, 1.0, 0.11)
    assert b.players == [{'x': -1.0, 'y': -2.0, 'teammate': False, 'unum': 7}]
    assert state.game['score_right'] == 1


def test_ground_truth_and_the_monitors_game_state() -> None:
    state = ViewState()
    state.update('/truth/game', 1, NS(data=json.dumps({'team_left': 'A', 'team_right': 'B', 'play_mode': 'PlayOn'})))
    assert state.sides == {'A': 'left', 'B': 'right'}
    pose = NS(header=_stamp(1.0), pose=NS(position=NS(x=1.0, y=2.0, z=0.6), orientation=NS(x=0, y=0, z=0, w=1)))
    assert state.update('/truth/A/p1/pose', 5, pose) == 'truth'
    assert state.update('/truth/ball', 6, NS(header=_stamp(1.0), point=NS(x=3.0, y=0.0, z=0.11))) == 'truth'
    assert state.robots['A/p1'][0] == (1.0, 2.0, 0.6) and state.ball == (3.0, 0.0, 0.11)
    # a player's own game state does not replace the monitor's
    state.update('/A/p1/game_state', 7, NS(data=json.dumps({'team': 'A', 'side': 'left', 'play_mode': 'x'})))
    assert state.game['play_mode'] == 'PlayOn'


def _decoded(msg: object) -> object:
    """A foxglove message as protobuf, decoded with the schema it carries (as a Foxglove client does)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: PLC0415

    schema = msg.get_schema()
    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(bytes(schema.data)).file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(schema.name)).FromString(bytes(msg.encode()))


def test_the_scenes_hold_the_field_every_robot_and_the_ball() -> None:
    pytest.importorskip('foxglove')
    pytest.importorskip('google.protobuf')
    from robocup3d_perception.field import mujoco_field  # noqa: PLC0415
    from robocup3d_tools.view_scene import belief_scene, field_scene, truth_scene  # noqa: PLC0415

    state = ViewState(sides={'A': 'left', 'B': 'right'})
    state.robots['A/p1'] = ((1.0, 2.0, 0.6), (0.0, 0.0, 0.0, 1.0))
    state.robots['B/p2'] = ((-4.0, 0.5, 0.6), (0.0, 0.0, 1.0, 0.0))
    state.ball = (3.0, 0.0, 0.11)
    scene = _decoded(truth_scene(state, 10**9))
    by_id = {e.id: e for e in scene.entities}
    assert set(by_id) == {'truth/A/p1', 'truth/B/p2', 'truth/ball'}
    assert by_id['truth/ball'].spheres[0].pose.position.x == 3.0
    body = by_id['truth/B/p2'].cubes[0]
    assert (body.pose.position.x, body.pose.position.y) == (-4.0, 0.5) and body.color.r > body.color.b  # red: right
    field = _decoded(field_scene(mujoco_field('ssim'))).entities[0]
    xs = [p.x for line in field.lines for p in line.points]
    assert max(xs) == pytest.approx(27.5) and min(xs) == pytest.approx(-27.5) and len(field.cylinders) == 4
    state.update('/A/p1/pose', 2, _pose(1.2, 2.1, 0.5))
    (belief,) = _decoded(belief_scene(state, 'A/p1', 2)).entities
    assert belief.arrows[0].pose.position.x == pytest.approx(1.2) and not belief.spheres  # no ball believed yet


def test_robots_are_drawn_from_their_models() -> None:
    """A Nao's links as the server's primitives, a T1's as its meshes (served back), an unknown robot as balls."""
    pytest.importorskip('foxglove')
    pytest.importorskip('google.protobuf')
    from robocup3d_description.body import body_for  # noqa: PLC0415
    from robocup3d_tools.view_robots import MeshAssets, RobotModels, robot_scene  # noqa: PLC0415

    nao = [link.name for link in body_for('nao0').links]
    t1 = [link.name for link in body_for('T1').links]
    frames = {f'A/p2/{n}' for n in nao} | {f'B/p1/{n}' for n in t1} | {'C/p9/gripper', 'C/p9/wheel'}
    assets = MeshAssets()
    scene = _decoded(robot_scene(frames, {'A': 'left', 'B': 'right'}, RobotModels(), assets, 5))
    by_player: dict[str, list] = {}
    for e in scene.entities:
        assert e.frame_locked and e.frame_id.startswith(e.id.split('/', 1)[1].rsplit('/', 1)[0])
        by_player.setdefault(e.frame_id.rsplit('/', 1)[0], []).append(e)
    nao_shapes = [(len(e.cubes), len(e.spheres), len(e.cylinders)) for e in by_player['A/p2']]
    assert sum(c for c, _, _ in nao_shapes) >= 10 and sum(y for _, _, y in nao_shapes) >= 1  # boxes, a capsule
    assert all(not e.models for e in by_player['A/p2'])
    assert by_player['A/p2'][0].cubes[0].color.b > 0.9  # the left team's blue
    models = [md for e in by_player['B/p1'] for md in e.models]
    assert len(models) >= 20 and all(md.url.startswith('package://robocup3d/meshes/T1/') for md in models)
    assert assets(models[0].url)[:5] != b'' and assets('package://robocup3d/meshes/T1/secret') is None
    assert {e.frame_id for e in by_player['C/p9']} == {'C/p9/gripper', 'C/p9/wheel'}  # no model: a ball per link
