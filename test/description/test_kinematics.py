"""Body models, forward/inverse kinematics, centre of mass and URDF output.

T1/K1 are checked against MuJoCo's own kinematics of the installed robot.xml; the
Nao against the server's rsg files and the seeds' NaoType numbers (read from
../shared only here, never by the product).
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from robocup3d_description import kinematics as kin
from robocup3d_description.body import NAO_GEOMETRY, body_for, mujoco_body, nao_body
from robocup3d_description.robots import mujoco_robot, nao
from robocup3d_description.urdf import main as urdf_main
from robocup3d_description.urdf import urdf_string

ROBOTS = ('nao0', 'nao1', 'nao2', 'nao3', 'nao4', 'T1', 'K1')
SHARED = Path(__file__).resolve().parents[3] / 'shared'
RSG = SHARED / 'reference' / 'simspark' / 'nao'


def _spec(name: str):
    return nao(int(name[3:])) if name.startswith('nao') else mujoco_robot(name)


def _random_joints(name: str, rng: np.random.Generator) -> dict[str, float]:
    spec = _spec(name)
    return {j.name: float(rng.uniform(j.lower, j.upper)) for j in spec.joints}


def _reachable_leg(name: str, side: str, rng: np.random.Generator) -> dict[str, float]:
    """A leg pose away from the limits, with the knee bent past straight, hips within +-69 deg."""
    spec, leg = _spec(name), kin._leg(body_for(name), side)
    straight = kin._wrap(leg.knee_sign * (math.atan2(leg.w[0], leg.w[2]) - math.atan2(leg.u[0], leg.u[2])))
    bend = leg.branches[0][0] * leg.knee_sign  # the way the knee bends from straight
    q = {}
    for i, joint in enumerate(leg.joints):
        lo, hi = spec.by_name[joint].lower, spec.by_name[joint].upper
        if i == 3:
            lo, hi = (max(lo, straight + 0.15), hi) if bend > 0 else (lo, min(hi, straight - 0.15))
        margin = 0.1 * (hi - lo)
        lo, hi = lo + margin, hi - margin
        if i < 3:
            lo, hi = max(lo, -1.2), min(hi, 1.2)
        q[joint] = float(rng.uniform(lo, hi))
    return q


# --- inverse kinematics -----------------------------------------------------


@pytest.mark.parametrize('name', ROBOTS)
@pytest.mark.parametrize('side', ['l', 'r'])
def test_leg_ik_inverts_fk(name: str, side: str) -> None:
    body = body_for(name)
    rng = np.random.default_rng(sum(map(ord, name + side)))
    for _ in range(150):
        q = _reachable_leg(name, side, rng)
        target = kin.foot_pose(body, side, q)
        sol = kin.leg_ik(body, side, target)
        assert sol.keys() == q.keys()
        for joint, angle in q.items():
            assert sol[joint] == pytest.approx(angle, abs=1e-7), (joint, q)


@pytest.mark.parametrize('name', ['T1'])
def test_leg_ik_follows_the_waist(name: str) -> None:
    body = body_for(name)
    rng = np.random.default_rng(3)
    q = _reachable_leg(name, 'l', rng)
    other = {'tj1': 0.4}
    sol = kin.leg_ik(body, 'l', kin.foot_pose(body, 'l', {**q, **other}), other)
    assert [sol[j] for j in q] == pytest.approx(list(q.values()), abs=1e-7)


@pytest.mark.parametrize('name', ROBOTS)
def test_unreachable_targets_raise(name: str) -> None:
    body = body_for(name)
    far = kin.make_pose((0.0, 0.1, -2.0))
    with pytest.raises(kin.UnreachableError, match='out of reach'):
        kin.leg_ik(body, 'l', far)
    # Reachable in space but beyond the joint limits: foot turned 100 deg.
    bent = kin.foot_pose(body, 'l', {body.leg('l').joints[3]: 1.0 * (1 if name in ('T1', 'K1') else -1)})
    turned = bent.copy()
    turned[:3, :3] = kin.rotation_matrix((0, 0, 1), math.radians(100)) @ bent[:3, :3]
    with pytest.raises(kin.UnreachableError):
        kin.leg_ik(body, 'l', turned)
    assert kin.leg_ik(body, 'l', turned, check_limits=False)  # exact, just out of range


@pytest.mark.parametrize('robot_type', [0, 1, 2, 3, 4])
def test_nao_legs_share_the_hip_yaw_pitch(robot_type: int) -> None:
    body = nao_body(robot_type)
    rng = np.random.default_rng(robot_type)
    for _ in range(40):
        q = {**_reachable_leg(body.name, 'l', rng), **_reachable_leg(body.name, 'r', rng)}
        q['llj1'] = float(rng.uniform(-0.5, 0.0))
        q['rlj1'] = q['llj1'] + float(rng.uniform(-0.15, 0.15))
        left, right = kin.foot_pose(body, 'l', q), kin.foot_pose(body, 'r', q)
        try:
            sol = kin.legs_ik(body, left, right)
        except kin.UnreachableError:
            continue  # the yaw that matches the mean angle may push another joint past its limit
        assert sol['llj1'] == pytest.approx(sol['rlj1'], abs=1e-9)
        assert sol['llj1'] == pytest.approx(0.5 * (q['llj1'] + q['rlj1']), abs=1e-9)
        for side, target in (('l', left), ('r', right)):
            got = kin.foot_pose(body, side, sol)
            assert got[:3, 3] == pytest.approx(target[:3, 3], abs=1e-7)  # position exact
            assert got[:3, 2] == pytest.approx(target[:3, 2], abs=1e-7)  # sole normal exact (only yaw gives)


def test_nao_equal_hips_are_kept() -> None:
    body = nao_body(0)
    q = {'llj1': -0.3, 'rlj1': -0.3, 'llj3': 0.5, 'rlj3': 0.4, 'llj4': -0.9, 'rlj4': -0.7, 'llj5': 0.4, 'rlj5': 0.3}
    sol = kin.legs_ik(body, kin.foot_pose(body, 'l', q), kin.foot_pose(body, 'r', q))
    for j in sol:
        assert sol[j] == pytest.approx(q.get(j, 0.0), abs=1e-8)


def test_non_nao_legs_are_independent() -> None:
    body = mujoco_body('T1')
    rng = np.random.default_rng(7)
    q = {**_reachable_leg('T1', 'l', rng), **_reachable_leg('T1', 'r', rng)}
    sol = kin.legs_ik(body, kin.foot_pose(body, 'l', q), kin.foot_pose(body, 'r', q))
    assert [sol[j] for j in q] == pytest.approx(list(q.values()), abs=1e-7)


# --- forward kinematics against MuJoCo -------------------------------------


@pytest.mark.parametrize('name', ['T1', 'K1'])
def test_fk_matches_mujoco(name: str) -> None:
    mujoco = pytest.importorskip('mujoco')
    from robocup3d_description.robots import rcsssmj_robot_xml  # noqa: PLC0415 - test-only helper

    model = mujoco.MjModel.from_xml_path(str(rcsssmj_robot_xml(name)))
    data = mujoco.MjData(model)
    body = mujoco_body(name)
    spec = mujoco_robot(name)
    rng = np.random.default_rng(11)
    for trial in range(20):
        q = _random_joints(name, rng) if trial else dict.fromkeys(spec.joint_names, 0.0)
        data.qpos[:] = model.qpos0
        data.qpos[3:7] = [math.cos(0.3), 0.0, math.sin(0.3), 0.0]  # tilt the free body: compare torso-relative
        for js in spec.joints:
            data.qpos[model.joint(js.description).qposadr[0]] = q[js.name]
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        torso = model.body('torso').id
        r0, p0 = data.xmat[torso].reshape(3, 3), data.xpos[torso]
        ours = kin.forward_kinematics(body, q)
        for link in body.links:
            if link.name == 'camera':
                site = model.site('camera').id
                want_p, want_r = data.site_xpos[site], data.site_xmat[site].reshape(3, 3)
            else:
                bid = model.body(link.name).id
                want_p, want_r = data.xpos[bid], data.xmat[bid].reshape(3, 3)
            got = ours[link.name]
            assert got[:3, 3] == pytest.approx(r0.T @ (want_p - p0), abs=1e-6), link.name  # well within 1 mm
            assert got[:3, :3] == pytest.approx(r0.T @ want_r, abs=1e-9), link.name
        assert body.mass == pytest.approx(float(model.body_subtreemass[torso]), rel=1e-9)
        com = kin.center_of_mass(body, q)
        assert com == pytest.approx(r0.T @ (data.subtree_com[torso] - p0), abs=1e-9)


# --- Nao against the rsg files and the seeds -------------------------------


def _v(*xs: float) -> np.ndarray:
    return np.array(xs, dtype=float)


def _rsg_defs(name: str) -> dict[str, float]:
    path = RSG / name
    if not path.is_file():
        pytest.skip(f'{path} not available')
    defs = {}
    for m in re.finditer(r'^\s*\(def \$(\w+)\s+(-?[0-9.]+)\)', path.read_text(), re.M):
        defs[m.group(1)] = float(m.group(2))
    return defs


def _seed_types() -> list[dict[str, float]]:
    seeds = sorted((SHARED / 'seeds').glob('*.txt')) if (SHARED / 'seeds').is_dir() else []
    for path in seeds:
        text = path.read_text(encoding='utf-8')
        if '大腿相对于髋部2的Z轴位置' not in text:
            continue
        types = []
        for section in re.split(r'### 4\.2\.\d 类型', text)[1:6]:

            def num(label: str, section: str = section) -> float:
                m = re.search(label + r'：\s*(-?[0-9.]+)', section)
                return float(m.group(1)) if m else 0.0

            types.append(
                {
                    'hip1_rel_torso_x': num('髋部1相对于躯干的X轴位置'),
                    'hip1_rel_torso_z': num('髋部1相对于躯干的Z轴位置'),
                    'thigh_rel_hip2_z': num('大腿相对于髋部2的Z轴位置'),
                    'ankle_rel_shank_z': num('脚踝相对于小腿的Z轴位置'),
                    'elbow_rel_upperarm_y': num('肘部相对于上臂的Y轴位置'),
                    'toe_length': num('脚趾的长度'),
                }
            )
        return types
    pytest.skip('seeds with the NaoType table not available')
    return []


def test_nao_type_table_matches_the_seeds() -> None:
    types = _seed_types()
    assert len(types) == 5
    for robot_type, want in enumerate(types):
        got = NAO_GEOMETRY[robot_type]
        for field, value in want.items():
            assert getattr(got, field) == pytest.approx(value, abs=1e-12), (robot_type, field)


@pytest.mark.parametrize('robot_type', [0, 1, 2, 3, 4])
def test_nao_zero_pose_matches_rsg(robot_type: int) -> None:
    leg = _rsg_defs('naolegtoe.rsg' if robot_type == 4 else 'naoleg.rsg')
    arm, head = _rsg_defs('naoarm.rsg'), _rsg_defs('naoneckhead.rsg')
    g = NAO_GEOMETRY[robot_type]
    body = nao_body(robot_type)
    fk = kin.forward_kinematics(body)

    def centre(link: str) -> np.ndarray:
        return fk[link][:3, :3] @ np.array(body.link(link).com) + fk[link][:3, 3]

    # rsg axes -> ours: (x right, y forward, z up) -> (x forward, y left, z up); left leg: LRFactor -1.
    hip = np.array([leg['Hip1RelTorso_Y'], g.hip1_rel_torso_x, g.hip1_rel_torso_z])
    assert centre('lhip1') == pytest.approx(hip, abs=1e-12)
    thigh = hip + _v(leg['ThighRelHip2_Y'], 0, g.thigh_rel_hip2_z)
    shank = thigh + _v(leg['ShankRelThigh_Y'], 0, leg['ShankRelThigh_Z'])
    ankle = shank + _v(leg['AnkleRelShank_Y'], 0, g.ankle_rel_shank_z)
    assert centre('lthigh') == pytest.approx(thigh, abs=1e-12)
    assert centre('lshank') == pytest.approx(shank, abs=1e-12)
    assert centre('lankle') == pytest.approx(ankle, abs=1e-12)
    # The foot sits this far below the hip at zero pose.
    foot_y = 0.03 if robot_type != 4 else (leg['TotalFootLength'] - g.toe_length) * 0.5 - 0.05
    foot = ankle + _v(foot_y, 0, leg['FootRelAnkle_Z'])
    assert centre('lfoot') == pytest.approx(foot, abs=1e-12)
    drop = -(g.thigh_rel_hip2_z + leg['ShankRelThigh_Z'] + g.ankle_rel_shank_z + leg['FootRelAnkle_Z'])
    assert hip[2] - centre('lfoot')[2] == pytest.approx(drop, abs=1e-12)
    assert centre('rhip1') == pytest.approx(hip * _v(1, -1, 1), abs=1e-12)
    # Knee and ankle-roll hinges where the rsg anchors put them (relative to shank / foot centres).
    assert fk['lshank'][:3, 3] == pytest.approx(shank + _v(-0.01, 0, 0.045), abs=1e-12)
    assert fk['lfoot'][:3, 3] == pytest.approx(foot + _v(-0.03, 0, 0.035), abs=1e-12)
    # Arms and head.
    shoulder = np.array([arm['ShoulderRelTorso_Y'], 0.098, arm['ShoulderRelTorso_Z']])
    assert centre('lshoulder') == pytest.approx(shoulder, abs=1e-12)
    elbow = shoulder + _v(arm['UpperarmRelShoulderY'] + g.elbow_rel_upperarm_y, 0, arm['ElbowRelUpperArm_Z'])
    assert centre('lelbow') == pytest.approx(elbow, abs=1e-12)
    assert centre('head') == pytest.approx([0, 0, 0.09 + 0.065], abs=1e-12)
    assert fk['camera'][:3, 3] == pytest.approx([0, 0, 0.155], abs=1e-12)
    assert head['Head_Mass'] == body.link('head').mass


def test_nao_mass_matches_rsg_and_seeds() -> None:
    masses = {}
    for f in ('naoleg.rsg', 'naoarm.rsg', 'naoneckhead.rsg', 'nao_hetero.rsg'):
        masses.update({k: v for k, v in _rsg_defs(f).items() if k.endswith('Mass')})
    limbs = (
        'Hip1Mass',
        'Hip2Mass',
        'ThighMass',
        'ShankMass',
        'AnkleMass',
        'FootMass',
        'ShoulderMass',
        'UpperArmMass',
        'ElbowMass',
        'LowerArmMass',
    )
    total = masses['TorsoMass'] + masses['Neck_Mass'] + masses['Head_Mass'] + 2 * sum(masses[k] for k in limbs)
    assert total == pytest.approx(4.6071)  # the seeds' 23 parts add up to 4.6071 kg
    for robot_type in range(5):
        assert nao_body(robot_type).mass == pytest.approx(total, abs=1e-12)


@pytest.mark.parametrize('name', ROBOTS)
def test_center_of_mass_is_plausible(name: str) -> None:
    body = body_for(name)
    com = kin.center_of_mass(body)
    hip = kin.forward_kinematics(body)[body.leg('l').links[0]][:3, 3]
    foot = kin.foot_pose(body, 'l')[:3, 3]
    assert abs(com[1]) < 0.01  # left/right symmetric
    assert abs(com[0]) < 0.08
    assert foot[2] < hip[2] < com[2] + 0.1  # above the hips, roughly (torso carries most mass)
    if name.startswith('nao'):
        assert 4.4 < body.mass < 4.8
        # Bending the knees lifts the legs towards the torso.
        bent = {'llj3': 0.6, 'rlj3': 0.6, 'llj4': -1.2, 'rlj4': -1.2, 'llj5': 0.6, 'rlj5': 0.6}
        assert kin.center_of_mass(body, bent)[2] > com[2]  # torso frame: the feet come up


def test_nao_camera_follows_the_head() -> None:
    body = nao_body(0)
    cam = kin.camera_pose(body, {'hj1': math.pi / 2})
    assert cam[:3, 0] == pytest.approx([0, 1, 0], abs=1e-12)  # looking left
    cam = kin.camera_pose(body, {'hj2': 0.3})
    assert np.linalg.norm(cam[:3, 3] - [0, 0, 0.15]) == pytest.approx(0.005)  # 5 mm above the hj2 anchor
    assert cam[2, 0] == pytest.approx(math.sin(0.3))  # hj2 > 0 looks up (rsg axis +x = our -y)


def test_nao_hip_yaw_pitch_axis_is_tilted_45_degrees() -> None:
    body = nao_body(0)
    s = math.sqrt(0.5)
    assert body.link('lhip1').axis == pytest.approx((0, s, -s))  # rsg (-0.7071, 0, -0.7071) for the left leg
    assert body.link('rhip1').axis == pytest.approx((0, s, s))  # rsg (-0.7071, 0, +0.7071) for the right leg


# --- URDF ---------------------------------------------------------------------


def _rpy(r: float, p: float, y: float) -> np.ndarray:
    return kin.rpy_matrix(r, p, y)


def _urdf_fk(text: str, q: dict[str, float]) -> dict[str, np.ndarray]:
    root = ET.fromstring(text)
    joints = {j.find('child').get('link'): j for j in root.iter('joint')}
    poses: dict[str, np.ndarray] = {}

    def pose(link: str) -> np.ndarray:
        if link in poses:
            return poses[link]
        j = joints.get(link)
        if j is None:
            poses[link] = np.eye(4)
            return poses[link]
        origin = j.find('origin')
        t = np.eye(4)
        t[:3, :3] = _rpy(*map(float, origin.get('rpy').split()))
        t[:3, 3] = [float(v) for v in origin.get('xyz').split()]
        if j.get('type') == 'revolute':
            turn = np.eye(4)
            turn[:3, :3] = kin.rotation_matrix(
                [float(v) for v in j.find('axis').get('xyz').split()], q.get(j.get('name'), 0.0)
            )
            t = t @ turn
        poses[link] = pose(j.find('parent').get('link')) @ t
        return poses[link]

    for link in root.iter('link'):
        pose(link.get('name'))
    return poses


@pytest.mark.parametrize('name', ROBOTS)
def test_urdf_fk_matches_ours(name: str) -> None:
    body = body_for(name)
    text = urdf_string(body)
    root = ET.fromstring(text)
    assert root.tag == 'robot'
    names = [lk.get('name') for lk in root.iter('link')]
    assert names[0] == 'torso' and 'camera' in names
    spec = _spec(name).by_name
    for j in root.iter('joint'):
        if j.get('type') == 'revolute':
            lim = j.find('limit')
            assert float(lim.get('lower')) == pytest.approx(spec[j.get('name')].lower, abs=1e-8)
            assert float(lim.get('upper')) == pytest.approx(spec[j.get('name')].upper, abs=1e-8)
            assert float(lim.get('velocity')) > 0 and float(lim.get('effort')) > 0
    assert {j.get('name') for j in root.iter('joint') if j.get('type') == 'revolute'} == set(spec)
    rng = np.random.default_rng(5)
    for _ in range(5):
        q = _random_joints(name, rng)
        ours, theirs = kin.forward_kinematics(body, q), _urdf_fk(text, q)
        for link, t in ours.items():
            assert theirs[link] == pytest.approx(t, abs=1e-8), link
    mass = sum(float(m.get('value')) for m in root.iter('mass'))
    assert mass == pytest.approx(body.mass, rel=1e-8)


def test_urdf_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert urdf_main(['nao', '--type', '4']) == 0
    out = capsys.readouterr().out
    assert '<robot name="nao4">' in out and 'name="llj7"' in out
    with pytest.raises(SystemExit):
        urdf_main(['R2D2'])


@pytest.mark.parametrize('name', ['T1', 'K1', 'nao0', 'nao4'])
def test_fk_of_all_links_at_once_equals_the_chain_of_link_transforms(name: str) -> None:
    """``forward_kinematics`` builds every link's transform in one stacked computation (the recorder's link TF runs
    it for every player at 10 Hz): the same poses, to the last bit, as chaining :func:`_local` link by link."""
    body = nao_body(int(name[3:])) if name.startswith('nao') else mujoco_body(name)
    tree = kin._tree(body)
    rng = np.random.default_rng(5)
    for _ in range(50):
        q = {j: float(rng.uniform(-2.0, 2.0)) for j in tree.joint if j}
        chained: list[np.ndarray] = []
        for i, p in enumerate(tree.parent):
            local = kin._local(tree, i, q)
            chained.append(local if p < 0 else chained[p] @ local)
        ours = kin.forward_kinematics(body, q)
        assert list(ours) == list(tree.names)
        for link, want in zip(tree.names, chained, strict=True):
            assert np.array_equal(ours[link], want), link
