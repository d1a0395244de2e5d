"""Robot kinematic models as data: links, joints, origins, axes, masses.

A ``Body`` is a tree of ``Link``s in URDF convention: each link's frame sits on
the joint that moves it, ``origin``/``rotation`` place that frame in the parent's
frame at zero angle, and the joint turns the link about ``axis`` (link frame).
Frames follow REP-103: x forward, y left, z up; the root link is ``torso`` and
every robot has a fixed ``camera`` link (same axes as the torso at zero pose).

* Nao types 0-4 (rcssserver3d): geometry of ``nao_hetero.rsg``, ``naoneckhead.rsg``,
  ``naoarm.rsg``, ``naoleg.rsg`` and ``naolegtoe.rsg``, written down here; the
  per-type values of the server's ``NaoType`` table come from the seeds (chapter
  4.2, "异构形态的Nao机器人"). The rsg files use x right, y forward, z up; they
  are turned into REP-103 axes here. Link frames sit on the hinge anchors; the
  centre of mass is the centre of each box/sphere/capsule.
* Booster T1 and K1 (RCSSServerMJ): parsed at run time from the ``robot.xml`` the
  installed ``rcsssmj`` package ships (body pos/quat, joint axes, inertials, the
  ``camera`` site).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from robocup3d_description.robots import MUJOCO_ROBOTS, NAO_TYPES, rcsssmj_robot_xml

__all__ = [
    'NAO_GEOMETRY',
    'Body',
    'LegChain',
    'Link',
    'NaoGeometry',
    'body_for',
    'mujoco_body',
    'nao_body',
]

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]
_IDENTITY: Quat = (1.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class Shape:
    """A piece of a link's geometry as the server builds it, in the link frame (m).

    ``kind``: ``box`` (``size`` = x, y, z lengths), ``sphere`` (radius), ``capsule`` (radius, length of
    its cylinder along z) or ``mesh`` (``mesh`` = the file, ``size`` = x, y, z scale).
    """

    kind: str
    size: tuple[float, ...]
    origin: Vec3 = (0.0, 0.0, 0.0)
    rotation: Quat = (1.0, 0.0, 0.0, 0.0)
    mesh: str = ''


@dataclass(frozen=True, slots=True)
class Link:
    """One rigid link and the joint that attaches it to its parent.

    Lengths in m, mass in kg, inertia in kg m^2 about the centre of mass in link axes.
    """

    name: str
    parent: str = ''  # '' for the root (torso)
    joint: str = ''  # canonical joint name ("llj3"); '' for a fixed link
    origin: Vec3 = (0.0, 0.0, 0.0)  # link frame in parent frame at zero angle
    rotation: Quat = _IDENTITY  # (w, x, y, z), link axes in parent axes at zero angle
    axis: Vec3 = (0.0, 0.0, 1.0)  # unit joint axis in link frame; positive angle turns the link about it
    mass: float = 0.0
    com: Vec3 = (0.0, 0.0, 0.0)  # centre of mass in link frame
    inertia: tuple[float, float, float, float, float, float] = (0.0,) * 6  # ixx iyy izz ixy ixz iyz
    shapes: tuple[Shape, ...] = ()  # what it looks like (the server's visual geometry)


@dataclass(frozen=True, slots=True)
class LegChain:
    """The six leg joints from the hip down, and the foot they move.

    Order: three hip joints, knee, ankle pitch, ankle roll (the Nao's hip joints
    are yaw-pitch, roll, pitch; the Booster robots' pitch, roll, yaw).
    """

    side: str  # "l" or "r"
    joints: tuple[str, str, str, str, str, str]
    links: tuple[str, str, str, str, str, str]  # the link each joint moves; links[5] is the foot
    sole: Vec3 = (0.0, 0.0, 0.0)  # centre of the sole in the foot link frame

    @property
    def foot(self) -> str:
        """Name of the foot link (the IK target frame)."""
        return self.links[5]


@dataclass(frozen=True, slots=True)
class Body:
    """A robot's kinematic tree; ``links`` lists parents before children, torso first."""

    name: str  # "nao0".."nao4", "T1", "K1"
    links: tuple[Link, ...]
    legs: tuple[LegChain, LegChain]  # left, right
    camera: str = 'camera'
    shared_hip: bool = False  # the legs' first joints are one motor (Nao: llj1 == rlj1)

    def link(self, name: str) -> Link:
        """The link called ``name``."""
        for link in self.links:
            if link.name == name:
                return link
        raise ValueError(f'{self.name} has no link {name!r}')

    def leg(self, side: str) -> LegChain:
        """The ``'l'`` or ``'r'`` leg."""
        for leg in self.legs:
            if leg.side == side:
                return leg
        raise ValueError(f"leg side must be 'l' or 'r', got {side!r}")

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of all moving joints, in tree order."""
        return tuple(link.joint for link in self.links if link.joint)

    @property
    def mass(self) -> float:
        """Total mass (kg)."""
        return sum(link.mass for link in self.links)


# ---------------------------------------------------------------------------
# Nao (rcssserver3d)


@dataclass(frozen=True, slots=True)
class NaoGeometry:
    """The per-type entries of rcssserver3d's ``NaoType`` table (m).

    Values: seeds/004, chapter 4.2.1-4.2.5 (one list per type). Everything else
    is the same for all types and comes from the rsg files.
    """

    hip1_rel_torso_x: float  # 髋部1相对于躯干的X轴位置 (rsg x: sideways)
    hip1_rel_torso_z: float  # 髋部1相对于躯干的Z轴位置
    thigh_rel_hip2_z: float  # 大腿相对于髋部2的Z轴位置
    ankle_rel_shank_z: float  # 脚踝相对于小腿的Z轴位置
    elbow_rel_upperarm_y: float  # 肘部相对于上臂的Y轴位置 (rsg y: forward)
    toe_length: float = 0.0  # 脚趾的长度; 0: no toe (UseToe false)


NAO_GEOMETRY: dict[int, NaoGeometry] = {
    0: NaoGeometry(0.055, -0.115, -0.04, -0.055, 0.07),
    1: NaoGeometry(0.055, -0.115, -0.05832, -0.07332, 0.10664),  # longer legs and arms
    2: NaoGeometry(0.055, -0.115, -0.04, -0.055, 0.07),  # type 2 differs in ankle speeds only
    3: NaoGeometry(0.072954143, -0.115, -0.067868424, -0.082868424, 0.125736848),  # longer, wider hips
    4: NaoGeometry(0.055, -0.115, -0.04, -0.055, 0.07, 0.035517656),  # toes
}

# rsg constants (same for every type). Masses: kg; sizes: full box lengths, m, rsg axes (x right, y fwd, z up).
_TORSO_MASS, _TORSO_BOX = 1.2171, (0.1, 0.1, 0.18)  # nao_hetero.rsg
_NECK_Z, _NECK_MASS, _NECK_RADIUS, _NECK_LENGTH = 0.09, 0.05, 0.015, 0.08  # naoneckhead.rsg
_HEAD_REL_NECK_Z, _HEAD_MASS, _HEAD_RADIUS, _HJ2_ANCHOR_Z = 0.065, 0.35, 0.065, -0.005
_SHOULDER_REL_TORSO, _SHOULDER_MASS = (0.098, 0.0, 0.075), 0.07  # naoarm.rsg (x times LRFactor)
_UPPERARM_REL_SHOULDER, _UPPERARM_MASS, _UPPERARM_BOX = (0.01, 0.02, 0.0), 0.15, (0.07, 0.08, 0.06)
_ELBOW_REL_UPPERARM_XZ, _ELBOW_MASS = (-0.01, 0.009), 0.035
_LOWERARM_REL_ELBOW_Y, _LOWERARM_MASS, _LOWERARM_BOX = 0.05, 0.2, (0.05, 0.11, 0.05)
_SMALL_SPHERE_RADIUS = 0.01  # shoulder, elbow, hip1, hip2, ankle
_HIP1_REL_TORSO_Y, _HIP1_MASS, _HIP2_MASS = -0.01, 0.09, 0.125  # naoleg.rsg
_THIGH_REL_HIP2_Y, _THIGH_MASS, _THIGH_BOX = 0.01, 0.275, (0.07, 0.07, 0.14)
_SHANK_REL_THIGH, _SHANK_MASS, _SHANK_BOX = (0.005, -0.125), 0.225, (0.08, 0.07, 0.11)  # (y, z)
_LJ4_ANCHOR = (-0.01, 0.045)  # (y, z) in the shank
_ANKLE_REL_SHANK_Y, _ANKLE_MASS = -0.01, 0.125
_FOOT_REL_ANKLE_Z, _FOOT_TOTAL_MASS, _FOOT_X, _FOOT_LENGTH, _FOOT_Z = -0.04, 0.2, 0.08, 0.16, 0.02
_LJ6_ANCHOR = (-0.03, 0.035)  # (y, z) in the foot
_TOE_Z = 0.01  # naolegtoe.rsg: toe box height; toe at foot + (0, foot length / 2, -0.005)


def _rsg(x: float, y: float, z: float) -> Vec3:
    """rsg axes (x right, y forward, z up) -> REP-103 (x forward, y left, z up)."""
    return (y, -x, z)


def _sub(a: Vec3, b: Vec3) -> Vec3:
    """``a - b``, rounded to 1e-12 m so that sums of rsg offsets carry no float noise."""
    return (round(a[0] - b[0], 12) + 0.0, round(a[1] - b[1], 12) + 0.0, round(a[2] - b[2], 12) + 0.0)


@dataclass(frozen=True, slots=True)
class _Solid:
    """A link's inertia about its centre and its shape (centred on it; ``None``: nothing to draw)."""

    inertia: tuple[float, float, float, float, float, float]
    shape: Shape | None


def _box(mass: float, rsg_size: Vec3) -> _Solid:
    lx, ly, lz = (abs(v) for v in _rsg(*rsg_size))
    k = mass / 12.0
    inertia = (k * (ly * ly + lz * lz), k * (lx * lx + lz * lz), k * (lx * lx + ly * ly), 0.0, 0.0, 0.0)
    return _Solid(inertia, Shape('box', (lx, ly, lz)))


def _sphere(mass: float, radius: float) -> _Solid:
    i = 0.4 * mass * radius * radius
    return _Solid((i, i, i, 0.0, 0.0, 0.0), Shape('sphere', (radius,)))


def _capsule(mass: float, radius: float, length: float) -> _Solid:
    """Solid cylinder approximation of a z-axis capsule's inertia (the neck; 50 g, so it hardly matters)."""
    side = mass * (3.0 * radius * radius + length * length) / 12.0
    return _Solid((side, side, 0.5 * mass * radius * radius, 0.0, 0.0, 0.0), Shape('capsule', (radius, length)))


_NOTHING = _Solid((0.0,) * 6, None)


class _NaoBuilder:
    """Collects links from rsg centres and anchors (torso-relative, rsg axes)."""

    def __init__(self) -> None:
        self.links: list[Link] = []
        self.anchor: dict[str, Vec3] = {}  # link name -> its frame origin, torso frame (REP-103)

    def add(
        self,
        name: str,
        parent: str,
        joint: str,
        anchor_rsg: Vec3,
        axis_rsg: Vec3,
        centre_rsg: Vec3,
        mass: float,
        solid: _Solid,
    ) -> None:
        anchor, centre = _rsg(*anchor_rsg), _rsg(*centre_rsg)
        n = math.sqrt(sum(a * a for a in axis_rsg))
        axis = tuple(v + 0.0 for v in _rsg(*(a / n for a in axis_rsg))) if joint else (0.0, 0.0, 1.0)
        self.anchor[name] = anchor
        origin = _sub(anchor, self.anchor[parent]) if parent else anchor
        self.links.append(
            Link(
                name,
                parent,
                joint,
                origin,
                _IDENTITY,
                axis,
                mass,  # type: ignore[arg-type]
                _sub(centre, anchor),
                solid.inertia,
                () if solid.shape is None else (replace(solid.shape, origin=_sub(centre, anchor)),),
            )
        )  # type: ignore[arg-type]


@cache
def nao_body(robot_type: int = 0) -> Body:
    """The Nao of heterogeneous ``robot_type`` (0-4), torso frame at the torso box centre."""
    if robot_type not in NAO_TYPES:
        raise ValueError(f'Nao robot type must be one of {NAO_TYPES}, got {robot_type!r}')
    g = NAO_GEOMETRY[robot_type]
    b = _NaoBuilder()
    zero: Vec3 = (0.0, 0.0, 0.0)
    b.add('torso', '', '', zero, (0, 0, 1), zero, _TORSO_MASS, _box(_TORSO_MASS, _TORSO_BOX))
    neck = (0.0, 0.0, _NECK_Z)
    b.add(
        'neck',
        'torso',
        'hj1',
        neck,
        (0, 0, 1),
        neck,
        _NECK_MASS,
        _capsule(_NECK_MASS, _NECK_RADIUS, _NECK_LENGTH),
    )
    head = (0.0, 0.0, _NECK_Z + _HEAD_REL_NECK_Z)
    b.add(
        'head',
        'neck',
        'hj2',
        (0.0, 0.0, head[2] + _HJ2_ANCHOR_Z),
        (1, 0, 0),
        head,
        _HEAD_MASS,
        _sphere(_HEAD_MASS, _HEAD_RADIUS),
    )
    b.add('camera', 'head', '', head, (0, 0, 1), head, 0.0, _NOTHING)  # RestrictedVisionPerceptor sits in the head
    for lr, s in ((-1.0, 'l'), (1.0, 'r')):  # rsg LRFactor: -1 left, +1 right
        sh = (lr * _SHOULDER_REL_TORSO[0], _SHOULDER_REL_TORSO[1], _SHOULDER_REL_TORSO[2])
        b.add(
            f'{s}shoulder',
            'torso',
            f'{s}aj1',
            sh,
            (1, 0, 0),
            sh,
            _SHOULDER_MASS,
            _sphere(_SHOULDER_MASS, _SMALL_SPHERE_RADIUS),
        )
        ua = (sh[0] + lr * _UPPERARM_REL_SHOULDER[0], sh[1] + _UPPERARM_REL_SHOULDER[1], sh[2])
        b.add(
            f'{s}upperarm',
            f'{s}shoulder',
            f'{s}aj2',
            sh,
            (0, 0, 1),
            ua,
            _UPPERARM_MASS,
            _box(_UPPERARM_MASS, _UPPERARM_BOX),
        )
        el = (ua[0] + lr * _ELBOW_REL_UPPERARM_XZ[0], ua[1] + g.elbow_rel_upperarm_y, ua[2] + _ELBOW_REL_UPPERARM_XZ[1])
        b.add(
            f'{s}elbow',
            f'{s}upperarm',
            f'{s}aj3',
            el,
            (0, 1, 0),
            el,
            _ELBOW_MASS,
            _sphere(_ELBOW_MASS, _SMALL_SPHERE_RADIUS),
        )
        la = (el[0], el[1] + _LOWERARM_REL_ELBOW_Y, el[2])
        b.add(
            f'{s}lowerarm',
            f'{s}elbow',
            f'{s}aj4',
            el,
            (0, 0, 1),
            la,
            _LOWERARM_MASS,
            _box(_LOWERARM_MASS, _LOWERARM_BOX),
        )

        hip = (lr * g.hip1_rel_torso_x, _HIP1_REL_TORSO_Y, g.hip1_rel_torso_z)
        b.add(
            f'{s}hip1',
            'torso',
            f'{s}lj1',
            hip,
            (-1, 0, lr),
            hip,
            _HIP1_MASS,
            _sphere(_HIP1_MASS, _SMALL_SPHERE_RADIUS),
        )
        b.add(
            f'{s}hip2',
            f'{s}hip1',
            f'{s}lj2',
            hip,
            (0, 1, 0),
            hip,
            _HIP2_MASS,
            _sphere(_HIP2_MASS, _SMALL_SPHERE_RADIUS),
        )
        th = (hip[0], hip[1] + _THIGH_REL_HIP2_Y, hip[2] + g.thigh_rel_hip2_z)
        b.add(f'{s}thigh', f'{s}hip2', f'{s}lj3', hip, (1, 0, 0), th, _THIGH_MASS, _box(_THIGH_MASS, _THIGH_BOX))
        sk = (th[0], th[1] + _SHANK_REL_THIGH[0], th[2] + _SHANK_REL_THIGH[1])
        b.add(
            f'{s}shank',
            f'{s}thigh',
            f'{s}lj4',
            (sk[0], sk[1] + _LJ4_ANCHOR[0], sk[2] + _LJ4_ANCHOR[1]),
            (1, 0, 0),
            sk,
            _SHANK_MASS,
            _box(_SHANK_MASS, _SHANK_BOX),
        )
        an = (sk[0], sk[1] + _ANKLE_REL_SHANK_Y, sk[2] + g.ankle_rel_shank_z)
        b.add(
            f'{s}ankle',
            f'{s}shank',
            f'{s}lj5',
            an,
            (1, 0, 0),
            an,
            _ANKLE_MASS,
            _sphere(_ANKLE_MASS, _SMALL_SPHERE_RADIUS),
        )
        if g.toe_length:  # naolegtoe.rsg
            foot_len = _FOOT_LENGTH - g.toe_length
            toe_ratio = g.toe_length / _FOOT_LENGTH * 0.5
            foot_mass = (1.0 - toe_ratio) * _FOOT_TOTAL_MASS
            ft = (an[0], an[1] + foot_len * 0.5 - 0.05, an[2] + _FOOT_REL_ANKLE_Z)
        else:
            foot_len, foot_mass = _FOOT_LENGTH, _FOOT_TOTAL_MASS
            ft = (an[0], an[1] + 0.03, an[2] + _FOOT_REL_ANKLE_Z)
        lj6 = (ft[0], ft[1] + _LJ6_ANCHOR[0], ft[2] + _LJ6_ANCHOR[1])
        b.add(
            f'{s}foot',
            f'{s}ankle',
            f'{s}lj6',
            lj6,
            (0, 1, 0),
            ft,
            foot_mass,
            _box(foot_mass, (_FOOT_X, foot_len, _FOOT_Z)),
        )
        if g.toe_length:
            toe = (ft[0], ft[1] + _FOOT_LENGTH * 0.5, ft[2] - 0.005)
            toe_mass = toe_ratio * _FOOT_TOTAL_MASS
            b.add(
                f'{s}toe',
                f'{s}foot',
                f'{s}lj7',
                (toe[0], toe[1] - 0.5 * g.toe_length, toe[2] - 0.005),
                (1, 0, 0),
                toe,
                toe_mass,
                _box(toe_mass, (_FOOT_X, g.toe_length, _TOE_Z)),
            )
    legs = []
    for s in 'lr':
        foot = next(lk for lk in b.links if lk.name == f'{s}foot')
        sole = (foot.com[0], foot.com[1], foot.com[2] - 0.5 * _FOOT_Z)  # bottom centre of the foot box
        legs.append(
            LegChain(
                s,
                tuple(f'{s}lj{i}' for i in range(1, 7)),  # type: ignore[arg-type]
                (f'{s}hip1', f'{s}hip2', f'{s}thigh', f'{s}shank', f'{s}ankle', f'{s}foot'),
                sole,
            )
        )
    return Body(f'nao{robot_type}', tuple(b.links), (legs[0], legs[1]), shared_hip=True)


# ---------------------------------------------------------------------------
# Booster T1 / K1 (RCSSServerMJ)


def _floats(text: str | None, n: int, default: tuple[float, ...]) -> tuple[float, ...]:
    if text is None:
        return default
    values = tuple(float(v) for v in text.split())
    if len(values) != n:
        raise ValueError(f'expected {n} numbers, got {text!r}')
    return values


def _quat_matrix(q: tuple[float, ...]) -> list[list[float]]:
    w, x, y, z = q
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]


def _mj_inertia(quat: tuple[float, ...], diag: tuple[float, ...]) -> tuple[float, float, float, float, float, float]:
    r = _quat_matrix(quat)
    m = [[sum(r[i][k] * diag[k] * r[j][k] for k in range(3)) for j in range(3)] for i in range(3)]
    return (m[0][0], m[1][1], m[2][2], m[0][1], m[0][2], m[1][2])


def _mesh_files(root: ET.Element, base: Path) -> dict[str, str]:
    """Mesh name -> file path, as MuJoCo resolves them (the compiler's ``meshdir`` under ``base``)."""
    compiler = root.find('compiler')
    meshdir = base / (compiler.get('meshdir', '') if compiler is not None else '')
    return {m.get('name') or Path(m.get('file', '')).stem: str(meshdir / m.get('file', '')) for m in root.iter('mesh')}


def _visuals(elem: ET.Element, meshes: dict[str, str]) -> tuple[Shape, ...]:
    """A body's visual mesh geoms (class ``visual``) as shapes in its frame."""
    out = []
    for geom in elem.findall('geom'):
        mesh = geom.get('mesh')
        if geom.get('class') == 'visual' and mesh in meshes:
            pos = _floats(geom.get('pos'), 3, (0.0, 0.0, 0.0))
            out.append(Shape('mesh', (1.0, 1.0, 1.0), pos, _floats(geom.get('quat'), 4, _IDENTITY), meshes[mesh]))  # type: ignore[arg-type]
    return tuple(out)


def _parse_mjcf_body(name: str, root: ET.Element, base: Path = Path()) -> Body:
    meshes = _mesh_files(root, base)
    canonical = {
        s.get('joint', ''): s.get('name', '')[2:] for s in root.iter('jointpos') if s.get('name', '').startswith('q_')
    }
    world = root.find('worldbody')
    torso = world.find('body') if world is not None else None
    if torso is None or torso.get('name') != 'torso':
        raise ValueError(f'{name}: expected a root body called "torso"')
    links: list[Link] = []
    camera: tuple[str, Vec3] | None = None

    def visit(elem: ET.Element, parent: str) -> None:
        nonlocal camera
        body_name = elem.get('name', '')
        joints = [j for j in elem.findall('joint') if j.get('name')]
        if len(joints) > 1:
            raise ValueError(f'{name}: body {body_name} has {len(joints)} joints; one is supported')
        joint, axis = '', (0.0, 0.0, 1.0)
        if joints:
            j = joints[0]
            if any(abs(v) > 1e-12 for v in _floats(j.get('pos'), 3, (0.0, 0.0, 0.0))):
                raise ValueError(f'{name}: joint {j.get("name")} is not at its body origin')
            joint = canonical.get(j.get('name', ''), j.get('name', ''))
            ax = _floats(j.get('axis'), 3, (0.0, 0.0, 1.0))
            n = math.sqrt(sum(a * a for a in ax))
            axis = (ax[0] / n, ax[1] / n, ax[2] / n)
        if elem.get('euler') or elem.get('axisangle') or elem.get('xyaxes') or elem.get('zaxis'):
            raise ValueError(f'{name}: body {body_name} uses an orientation form other than quat')
        origin = (0.0, 0.0, 0.0) if not parent else _floats(elem.get('pos'), 3, (0.0, 0.0, 0.0))
        rotation = _IDENTITY if not parent else _floats(elem.get('quat'), 4, _IDENTITY)
        inertial = elem.find('inertial')
        mass, com, inertia = 0.0, (0.0, 0.0, 0.0), (0.0,) * 6
        if inertial is not None:
            mass = float(inertial.get('mass', '0'))
            com = _floats(inertial.get('pos'), 3, (0.0, 0.0, 0.0))
            if inertial.get('fullinertia'):
                xx, yy, zz, xy, xz, yz = _floats(inertial.get('fullinertia'), 6, (0.0,) * 6)
                inertia = (xx, yy, zz, xy, xz, yz)
            else:
                inertia = _mj_inertia(
                    _floats(inertial.get('quat'), 4, _IDENTITY),
                    _floats(inertial.get('diaginertia'), 3, (0.0, 0.0, 0.0)),
                )
        shapes = _visuals(elem, meshes)
        links.append(Link(body_name, parent, joint, origin, rotation, axis, mass, com, inertia, shapes))  # type: ignore[arg-type]
        for site in elem.findall('site'):
            if site.get('name') == 'camera':
                camera = (body_name, _floats(site.get('pos'), 3, (0.0, 0.0, 0.0)))  # type: ignore[assignment]
        for child in elem.findall('body'):
            visit(child, body_name)

    visit(torso, '')
    if camera is None:
        raise ValueError(f'{name}: no "camera" site')
    links.append(Link('camera', camera[0], '', camera[1]))
    by_joint = {lk.joint: lk for lk in links if lk.joint}
    legs = []
    for s in 'lr':
        names = tuple(f'{s}lj{i}' for i in range(1, 7))
        missing = [n for n in names if n not in by_joint]
        if missing:
            raise ValueError(f'{name}: leg joints {missing} not found')
        foot = by_joint[names[5]].name
        legs.append(LegChain(s, names, tuple(by_joint[n].name for n in names), _mj_sole(torso, foot)))  # type: ignore[arg-type]
    return Body(name, tuple(links), (legs[0], legs[1]))


def _mj_sole(torso: ET.Element, foot: str) -> Vec3:
    """Bottom centre of the foot's box collision geom (foot frame), or the foot origin."""
    for elem in torso.iter('body'):
        if elem.get('name') != foot:
            continue
        for geom in elem.findall('geom'):
            if geom.get('type') == 'box' and geom.get('class') == 'collision':
                px, py, pz = _floats(geom.get('pos'), 3, (0.0, 0.0, 0.0))
                size = _floats(geom.get('size'), 3, (0.0, 0.0, 0.0))
                return (px, py, pz - size[2])
    return (0.0, 0.0, 0.0)


@cache
def mujoco_body(name: str) -> Body:
    """Booster ``T1`` or ``K1`` from the installed RCSSServerMJ ``robot.xml``."""
    if name not in MUJOCO_ROBOTS:
        raise ValueError(f'RCSSServerMJ robot must be one of {MUJOCO_ROBOTS}, got {name!r}')
    xml = rcsssmj_robot_xml(name)
    return _parse_mjcf_body(name, ET.parse(xml).getroot(), xml.parent)


def body_for(robot: str, robot_type: int = 0) -> Body:
    """Body by robot name: ``'nao'`` (with ``robot_type``), ``'nao0'``..``'nao4'``, ``'T1'`` or ``'K1'``."""
    if robot in MUJOCO_ROBOTS:
        return mujoco_body(robot)
    low = robot.lower()
    if low == 'nao':
        return nao_body(robot_type)
    if low.startswith('nao') and low[3:].isdigit():
        return nao_body(int(low[3:]))
    raise ValueError(f"robot must be 'nao', 'nao0'..'nao4', 'T1' or 'K1', got {robot!r}")
