"""The URDF a user loads into rviz: every link with mass has something to draw, where the server has it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from robocup3d_description.body import body_for
from robocup3d_description.kinematics import forward_kinematics
from robocup3d_description.urdf import urdf_string

yourdfpy = pytest.importorskip('yourdfpy', reason='the URDF parser (pip install yourdfpy)')

ROBOTS = ['nao0', 'nao1', 'nao2', 'nao3', 'nao4', 'T1', 'K1']


def _load(name: str, tmp_path: Path, meshes: bool, scene: bool = False) -> object:
    if name in ('T1', 'K1'):
        pytest.importorskip('rcsssmj')
    path = tmp_path / f'{name}.urdf'
    path.write_text(urdf_string(body_for(name)), encoding='utf-8')
    return yourdfpy.URDF.load(
        str(path), load_meshes=meshes, build_scene_graph=meshes or scene, build_collision_scene_graph=False
    )


@pytest.mark.parametrize('name', ROBOTS)
def test_every_link_with_mass_has_a_visual(name: str, tmp_path: Path) -> None:
    urdf = _load(name, tmp_path, meshes=False)
    assert urdf.validate(), urdf.errors
    massive = [link for link in urdf.robot.links if link.inertial is not None and link.inertial.mass > 0.0]
    assert len(massive) >= 20
    assert not [link.name for link in massive if not link.visuals]


@pytest.mark.parametrize('name', ['nao0', 'nao4'])
def test_the_nao_is_drawn_and_collides_with_the_servers_shapes(name: str, tmp_path: Path) -> None:
    """rcssserver3d's torso box is 0.1 x 0.1 x 0.18 m; the feet are boxes under the ankles."""
    urdf = _load(name, tmp_path, meshes=False)
    links = {link.name: link for link in urdf.robot.links}
    torso = links['torso']
    assert torso.visuals[0].geometry.box.size == pytest.approx([0.1, 0.1, 0.18])
    assert torso.collisions and torso.collisions[0].geometry.box is not None
    foot = links['lfoot'].visuals[0]
    assert foot.geometry.box is not None and foot.origin[2, 3] < 0.0  # the box hangs below the ankle joint
    assert len(links['neck'].visuals) == 3  # a capsule: a cylinder and two spheres


@pytest.mark.parametrize('name', ['T1', 'K1'])
def test_the_booster_meshes_are_found_and_loaded(name: str, tmp_path: Path) -> None:
    urdf = _load(name, tmp_path, meshes=True)
    meshes = [v.geometry.mesh.filename for link in urdf.robot.links for v in link.visuals if v.geometry.mesh]
    assert meshes and all(Path(f.removeprefix('file://')).is_file() for f in meshes)
    bounds = urdf.scene.bounds  # the loaded meshes of the standing robot at zero angles
    height = float(bounds[1][2] - bounds[0][2])
    assert 0.4 < height < 1.5, height


@pytest.mark.parametrize('name', ['nao0', 'T1'])
def test_the_parsed_tree_places_the_feet_where_our_kinematics_does(name: str, tmp_path: Path) -> None:
    urdf = _load(name, tmp_path, meshes=False, scene=True)
    body = body_for(name)
    joints = {j: 0.3 * math.sin(i) for i, j in enumerate(body.joint_names)}
    urdf.update_cfg({j: joints[j] for j in urdf.actuated_joint_names})
    ours = forward_kinematics(body, joints)
    for leg in body.legs:
        theirs = urdf.get_transform(leg.foot, 'torso')
        assert np.allclose(theirs, ours[leg.foot], atol=1e-6)
