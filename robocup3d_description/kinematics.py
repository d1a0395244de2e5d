"""Forward kinematics, centre of mass and analytic leg inverse kinematics (numpy).

Poses are 4x4 homogeneous matrices in the torso frame (REP-103: x forward, y left,
z up) unless said otherwise; joint angles are dicts of canonical names to rad
(missing joints count as 0). Models come from ``robocup3d_description.body``.

Leg IK, for a foot-link pose relative to the torso (plain floats throughout, no small numpy matrices):

* The ankle roll, ankle pitch and knee follow in closed form from where the hip
  point (where the last two hip axes cross) sits in the foot frame, allowing for
  offsets between the ankle axes and sideways offsets in the leg; the three hip
  angles then come from the remaining rotation (a Davenport-angle split with the
  hip's own axes, e.g. the Nao's 45-degree yaw-pitch axis).
* Where the first hip axis misses that point (T1, K1: hip pitch 2-3 cm above hip
  roll) the hip point depends on the first hip angle; a secant search on that one
  angle, started from the last answer, converges in one or two steps (each step
  closed form). That leg is no Pieper arm (no three axes meet), so this one
  search stays; the Nao's hip axes meet and its legs are solved in one pass.
* The Nao's ``llj1``/``rlj1`` are one motor on the real robot: ``legs_ik`` gives
  both legs the mean angle and turns each foot about its own z axis (the sole
  normal) until its leg matches it, in closed form (see ``_solve_with_hip``):
  foot positions and sole normals stay exact.
* The Nao's legs (hip yaw-pitch about a 45-degree axis, the other axes along x
  and -y, no sideways offsets) run that pass written out for their axes
  (``_nao_branch``, constants per body in ``_Leg.nao``): the same arithmetic with
  the zero terms dropped: 2.6-2.8x less CPU a call (docs/benchmarks.md); T1 and K1 keep
  the generic pass, which tests hold the Nao's to as well.
* Every answer is checked by forward kinematics of the chain, the branches tried
  in order until one reaches the pose. ``reference_ik`` keeps the iterative solver
  this replaced; tests hold both to 1e-6 rad.

Unreachable targets raise ``UnreachableError`` (a ``ValueError``) with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import wraps
from itertools import pairwise
from typing import TypeVar

import numpy as np

from robocup3d_description.body import Body
from robocup3d_description.robots import RobotSpec, mujoco_robot, nao

__all__ = [
    'UnreachableError',
    'camera_pose',
    'center_of_mass',
    'foot_pose',
    'forward_kinematics',
    'leg_ik',
    'legs_ik',
    'make_pose',
    'quat_matrix',
    'rotation_matrix',
    'rpy_matrix',
]

_LIMIT_TOL = 1e-9  # rad
_FK_TOL = 1e-7  # m / rad: IK answers are checked against FK to this
_MAX_ITER = 60
_Q1_TOL = 1e-8  # rad: first hip angle fixed point (the hip point, < 0.1 m off its axis, moves < 1e-9 m)
_Q1_LINEAR = 1e-5  # rad: a secant step below this is taken on all the angles (see _solve_branch)


class UnreachableError(ValueError):
    """The leg cannot reach the requested foot pose."""


# ---------------------------------------------------------------------------
# small rotation helpers


def rotation_matrix(axis: np.ndarray | tuple[float, float, float], angle: float) -> np.ndarray:
    """Rotation by ``angle`` (rad) about unit ``axis``."""
    x, y, z = (float(v) for v in axis)
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    return np.array(
        [
            [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
            [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
            [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
        ]
    )


def quat_matrix(q: tuple[float, float, float, float] | np.ndarray) -> np.ndarray:
    """Rotation matrix of a (w, x, y, z) quaternion (normalised here)."""
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """``Rz(yaw) @ Ry(pitch) @ Rx(roll)`` (rad)."""
    return rotation_matrix((0, 0, 1), yaw) @ rotation_matrix((0, 1, 0), pitch) @ rotation_matrix((1, 0, 0), roll)


def make_pose(
    position: tuple[float, float, float] | np.ndarray,
    rotation: np.ndarray | None = None,
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> np.ndarray:
    """4x4 pose from a position (m) and a rotation matrix or roll-pitch-yaw (rad)."""
    t = np.eye(4)
    t[:3, :3] = rotation if rotation is not None else rpy_matrix(*rpy)
    t[:3, 3] = position
    return t


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """3-vector cross product (numpy's ``cross`` costs ~20x more on one pair)."""
    a0, a1, a2 = float(a[0]), float(a[1]), float(a[2])
    b0, b1, b2 = float(b[0]), float(b[1]), float(b[2])
    return np.array((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0))


def _wrap(a: float) -> float:
    return math.atan2(math.sin(a), math.cos(a))


def _clip_unit(x: float) -> float:
    """``min(1.0, max(-1.0, x))``, an ``acos``'s argument (NaN gives -1.0, as there), written out: the two builtins'
    calls cost three times this on the leg solve's path (four solves a cycle for a walking Nao)."""
    x = x if x > -1.0 else -1.0
    return x if x < 1.0 else 1.0


# ---------------------------------------------------------------------------
# forward kinematics

_T = TypeVar('_T')


def _per_body(fn: Callable[..., _T]) -> Callable[..., _T]:
    """Cache ``fn(body, *args)`` by the body object's identity (hashing a ``Body`` costs ~50 us)."""
    store: dict[tuple, tuple[Body, _T]] = {}

    @wraps(fn)
    def cached(body: Body, *args: object) -> _T:
        key = (id(body), *args)
        hit = store.get(key)
        if hit is None or hit[0] is not body:
            hit = store[key] = (body, fn(body, *args))
        return hit[1]

    return cached


@dataclass(frozen=True, slots=True)
class _Tree:
    names: tuple[str, ...]
    index: dict[str, int]
    parent: tuple[int, ...]  # -1 for the root
    joint: tuple[str, ...]
    origin: np.ndarray  # (n, 3)
    rot0: np.ndarray  # (n, 3, 3)
    axis: np.ndarray  # (n, 3)
    mass: np.ndarray  # (n,)
    com: np.ndarray  # (n, 3)


@_per_body
def _tree(body: Body) -> _Tree:
    names = tuple(lk.name for lk in body.links)
    index = {n: i for i, n in enumerate(names)}
    parent = []
    for lk in body.links:
        if lk.parent and lk.parent not in index:
            raise ValueError(f'{body.name}: link {lk.name} has unknown parent {lk.parent!r}')
        if lk.parent and index[lk.parent] >= index[lk.name]:
            raise ValueError(f'{body.name}: link {lk.name} comes before its parent')
        parent.append(index[lk.parent] if lk.parent else -1)
    return _Tree(
        names,
        index,
        tuple(parent),
        tuple(lk.joint for lk in body.links),
        np.array([lk.origin for lk in body.links], dtype=float),
        np.array([quat_matrix(lk.rotation) for lk in body.links]),
        np.array([lk.axis for lk in body.links], dtype=float),
        np.array([lk.mass for lk in body.links], dtype=float),
        np.array([lk.com for lk in body.links], dtype=float),
    )


def _local(tree: _Tree, i: int, joints: Mapping[str, float]) -> np.ndarray:
    t = np.eye(4)
    r = tree.rot0[i]
    if tree.joint[i]:
        r = r @ rotation_matrix(tree.axis[i], float(joints.get(tree.joint[i], 0.0)))
    t[:3, :3] = r
    t[:3, 3] = tree.origin[i]
    return t


def _locals(tree: _Tree, joints: Mapping[str, float]) -> np.ndarray:
    """Every link's :func:`_local` at once (n, 4, 4): :func:`rotation_matrix`'s terms over arrays, one stacked product.

    A fixed link (no joint) gets angle 0, whose rotation is exactly the identity, so its ``rot0`` is kept as it is.
    """
    angles = np.array([float(joints.get(j, 0.0)) if j else 0.0 for j in tree.joint])
    x, y, z = tree.axis[:, 0], tree.axis[:, 1], tree.axis[:, 2]
    c, s = np.cos(angles), np.sin(angles)
    t = 1.0 - c
    r = np.empty((len(angles), 3, 3))
    r[:, 0, 0], r[:, 0, 1], r[:, 0, 2] = t * x * x + c, t * x * y - s * z, t * x * z + s * y
    r[:, 1, 0], r[:, 1, 1], r[:, 1, 2] = t * x * y + s * z, t * y * y + c, t * y * z - s * x
    r[:, 2, 0], r[:, 2, 1], r[:, 2, 2] = t * x * z - s * y, t * y * z + s * x, t * z * z + c
    out = np.zeros((len(angles), 4, 4))
    out[:, :3, :3] = tree.rot0 @ r
    out[:, :3, 3] = tree.origin
    out[:, 3, 3] = 1.0
    return out


def forward_kinematics(body: Body, joints: Mapping[str, float] | None = None) -> dict[str, np.ndarray]:
    """Pose (4x4, torso frame) of every link, including ``camera``, for the given angles (rad)."""
    tree = _tree(body)
    local = _locals(tree, joints or {})
    poses: list[np.ndarray] = []
    for i, p in enumerate(tree.parent):
        poses.append(local[i] if p < 0 else poses[p] @ local[i])
    return dict(zip(tree.names, poses, strict=True))


def _link_pose(body: Body, link: str, joints: Mapping[str, float]) -> np.ndarray:
    tree = _tree(body)
    if link not in tree.index:
        raise ValueError(f'{body.name} has no link {link!r}')
    i, t = tree.index[link], np.eye(4)
    while i >= 0:
        t = _local(tree, i, joints) @ t
        i = tree.parent[i]
    return t


def camera_pose(body: Body, joints: Mapping[str, float] | None = None) -> np.ndarray:
    """Camera pose in the torso frame (x along the line of sight, z up at zero head angles)."""
    return _link_pose(body, body.camera, joints or {})


def foot_pose(body: Body, side: str, joints: Mapping[str, float] | None = None) -> np.ndarray:
    """Pose of the ``'l'``/``'r'`` foot link (the IK target frame) in the torso frame."""
    return _link_pose(body, body.leg(side).foot, joints or {})


def center_of_mass(body: Body, joints: Mapping[str, float] | None = None) -> np.ndarray:
    """Whole-body centre of mass (m, torso frame); ``body.mass`` is the total mass."""
    tree = _tree(body)
    poses = forward_kinematics(body, joints)
    total = np.zeros(3)
    for i, name in enumerate(tree.names):
        t = poses[name]
        total += tree.mass[i] * (t[:3, :3] @ tree.com[i] + t[:3, 3])
    return total / tree.mass.sum()


# ---------------------------------------------------------------------------
# leg inverse kinematics


def _spec(body: Body) -> RobotSpec:
    if body.name.startswith('nao'):
        return nao(int(body.name[3:]))
    return mujoco_robot(body.name)


@dataclass(frozen=True, slots=True)
class _Leg:
    base: str  # link the leg hangs from (torso, or T1's Waist)
    joints: tuple[str, ...]
    o: np.ndarray  # (6, 3) link origins in the parent link frame
    a: np.ndarray  # (6, 3) joint axes
    limits: tuple[tuple[float, float], ...]
    hip_point: np.ndarray  # crossing of hip axes 2 and 3, in link-2 frame
    basis: np.ndarray  # columns: roll axis X, pitch axis P, Z = X x P
    knee_sign: float  # a4 = knee_sign * P
    u: np.ndarray  # shank origin rel. ankle-pitch point (basis coords)
    w: np.ndarray  # hip point rel. knee (basis coords)
    e: np.ndarray  # ankle-roll point rel. ankle-pitch point (basis coords)
    z_sign: float  # side of the ankle the hip is on, along Z
    branches: tuple[tuple[float, float], ...]  # (knee, roll) solution branches, preferred first
    axes: tuple[tuple[float, float, float], ...] = ()  # ``a`` as plain floats (the solver's hot path)
    o_f: tuple[tuple[float, float, float], ...] = ()  # ``o`` as plain floats
    hip_f: tuple[float, float, float] = (0.0, 0.0, 0.0)  # o[1] + hip_point, plain floats
    basis_f: tuple[tuple[float, float, float], ...] = ()  # columns of ``basis``, plain floats
    uwe: tuple[tuple[float, float, float], ...] = ()  # u, w, e as plain floats
    hip_fixed: bool = False  # hip axis 1 passes through the hip point (Nao): the first hip angle does not move it
    hip_matchable: bool = False  # hip pitch, knee, ankle pitch parallel, no side offsets: a shared hip in closed form
    hip_rho: float = 1.0  # |n0 . M n2| the three hip axes can reach (see _three_axis); 1: any rotation
    at_root: bool = False  # the leg hangs from the root link (the torso): targets need no change of frame
    nao: tuple[float, ...] = ()  # the Nao's leg constants for _nao_branch (see _nao_constants); () for other legs


def _line_crossing(p1: np.ndarray, d1: np.ndarray, p2: np.ndarray, d2: np.ndarray) -> tuple[np.ndarray, float]:
    """Midpoint of the closest points of two lines, and their distance."""
    n = np.cross(d1, d2)
    nn = float(n @ n)
    if nn < 1e-18:
        raise ValueError('hip axes are parallel')
    t1 = float(np.cross(p2 - p1, d2) @ n) / nn
    t2 = float(np.cross(p2 - p1, d1) @ n) / nn
    c1, c2 = p1 + t1 * d1, p2 + t2 * d2
    return (c1 + c2) / 2.0, float(np.linalg.norm(c1 - c2))


@_per_body
def _leg(body: Body, side: str) -> _Leg:
    chain = body.leg(side)
    links = [body.link(n) for n in chain.links]
    for lk, j in zip(links, chain.joints, strict=True):
        if lk.joint != j:
            raise ValueError(f'{body.name}: link {lk.name} is moved by {lk.joint!r}, not {j!r}')
        if np.max(np.abs(quat_matrix(lk.rotation) - np.eye(3))) > 1e-9:
            raise ValueError(f'{body.name}: leg link {lk.name} is rotated at zero pose; not supported')
    for prev, lk in pairwise(links):
        if lk.parent != prev.name:
            raise ValueError(f'{body.name}: leg links {prev.name} -> {lk.name} are not a chain')
    o = np.array([lk.origin for lk in links], dtype=float)
    a = np.array([lk.axis for lk in links], dtype=float)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    pitch, roll = a[4], a[5]
    knee_sign = float(a[3] @ pitch)
    if abs(abs(knee_sign) - 1.0) > 1e-9 or abs(float(roll @ pitch)) > 1e-9:
        raise ValueError(f'{body.name}: knee must be parallel to the ankle pitch, ankle roll across it')
    if abs(float(a[0] @ a[1])) > 1e-9 or abs(float(a[1] @ a[2])) > 1e-9:
        raise ValueError(f'{body.name}: hip axes 1-2 and 2-3 must be perpendicular')
    hip_point, miss = _line_crossing(np.zeros(3), a[1], o[2], a[2])
    if miss > 1e-9:
        raise ValueError(f'{body.name}: hip axes 2 and 3 do not cross ({miss:.3g} m apart)')
    basis = np.column_stack([roll, pitch, np.cross(roll, pitch)])
    u = basis.T @ -o[4]
    w = basis.T @ (hip_point - o[2] - o[3])
    e = basis.T @ o[5]
    z_sign = 1.0 if (u[2] + w[2] - e[2]) >= 0.0 else -1.0
    hip1 = o[1] + hip_point
    by_name = _spec(body).by_name
    limits = tuple((by_name[j].lower, by_name[j].upper) for j in chain.joints)
    # Prefer the knee branch that bends from the straight leg towards the middle of the knee's range.
    straight = _wrap(knee_sign * (math.atan2(w[0], w[2]) - math.atan2(u[0], u[2])))
    knee = 1.0 if knee_sign * (0.5 * (limits[3][0] + limits[3][1]) - straight) >= 0.0 else -1.0
    branches = ((knee, 1.0), (-knee, 1.0), (knee, -1.0), (-knee, -1.0))
    return _Leg(
        links[0].parent,
        chain.joints,
        o,
        a,
        limits,
        hip_point,
        basis,
        knee_sign,
        u,
        w,
        e,
        z_sign,
        branches,
        tuple(tuple(float(x) for x in r) for r in a),
        tuple(tuple(float(x) for x in r) for r in o),
        tuple(float(x) for x in hip1),
        tuple(tuple(float(x) for x in basis[:, k]) for k in range(3)),
        tuple(tuple(float(x) for x in vec) for vec in (u, w, e)),
        bool(np.linalg.norm(hip1 - float(hip1 @ a[0]) * a[0]) < 1e-12),
        abs(abs(float(a[2] @ a[3])) - 1.0) < 1e-9 and abs(u[1] + w[1] - e[1]) < 1e-12,
        math.hypot(float(a[0] @ a[2]), float(a[0] @ np.cross(a[1], a[2]))),
        links[0].parent == body.links[0].name,
        _nao_constants(a, o, hip1, u, w, e, limits, knee_sign, z_sign),
    )


_X, _MY = (1.0, 0.0, 0.0), (0.0, -1.0, 0.0)


def _nao_constants(
    a: np.ndarray,
    o: np.ndarray,
    hip1: np.ndarray,
    u: np.ndarray,
    w: np.ndarray,
    e: np.ndarray,
    limits: tuple[tuple[float, float], ...],
    knee_sign: float,
    z_sign: float,
) -> tuple[float, ...]:
    """The constants of :func:`_nao_branch` for a leg with the Nao's axes, else ``()``.

    The Nao's leg: hip yaw-pitch about ``(0, a, b)`` (45 degrees between y and z), hip roll and ankle
    roll about x, hip pitch, knee and ankle pitch about -y, the hip point at the hip yaw-pitch joint
    and no sideways offsets. Everything :func:`_branch_at` would recompute per call from these is
    computed here once, by the same expressions.
    """
    ax = [tuple(float(x) for x in r) for r in a]
    if (
        ax[1] != _X
        or ax[5] != _X
        or ax[2] != _MY
        or ax[3] != _MY
        or ax[4] != _MY
        or ax[0][0] != 0.0
        or any(float(x) != 0.0 for x in hip1)
        or float(u[1] + w[1] - e[1]) != 0.0
    ):
        return ()
    n0 = ax[0]
    ca, cb = _dotf(n0, _MY), _dotf(n0, _crossf(_X, _MY))  # as _three_axis has them for (n0, x, -y)
    lu, lw = math.hypot(u[0], u[2]), math.hypot(w[0], w[2])
    (lo0, hi0), (lo1, hi1), (lo2, hi2) = limits[:3]
    y = float(u[1]) + float(w[1]) - float(e[1])  # 0 (checked above), maybe -0.0: kept as _lower_leg has it
    return tuple(
        float(x)
        for x in (
            n0[1],  # a
            n0[2],  # b
            *o[0],  # the hip point in the torso frame
            u[0],
            u[2],
            e[0],
            e[2],
            y,
            lu,
            lw,
            lu * lu,
            lw * lw,
            2.0 * lu * lw,
            math.atan2(u[0], u[2]),  # bu
            math.atan2(w[0], w[2]),  # bw
            knee_sign,
            z_sign,
            math.hypot(ca, cb),  # rho
            math.atan2(cb, ca),  # phi
            lo0,
            hi0,
            lo1,
            hi1,
            lo2,
            hi2,
        )
    )


def _violation(angle: float, lim: tuple[float, float]) -> float:
    return max(lim[0] - angle, angle - lim[1], 0.0)


def _lower_leg(
    leg: _Leg, hip_in_foot: np.ndarray | tuple[float, float, float], branch: tuple[float, float]
) -> tuple[float, float, float, str]:
    """Knee, ankle pitch and ankle roll angles that put the hip point at ``hip_in_foot``.

    ``branch`` (+1/-1 each) picks one of the two knee solutions and one of the two
    ankle roll solutions (180 degrees apart). Out of reach, the leg is stretched
    (or folded) as far as it goes and the reason is returned too.
    """
    knee_branch, roll_branch = branch
    bx, by, bz = leg.basis_f
    h = (float(hip_in_foot[0]), float(hip_in_foot[1]), float(hip_in_foot[2]))
    v = (_dotf(bx, h), _dotf(by, h), _dotf(bz, h))  # basis.T @ hip_in_foot
    u, w, e = leg.uwe
    why = ''
    y = u[1] + w[1] - e[1]  # sideways offsets do not change with pitch
    r2 = v[1] * v[1] + v[2] * v[2] - y * y
    if r2 < 0.0:
        why, r2 = 'foot too close sideways to the hip for the ankle roll', 0.0
    zp = roll_branch * leg.z_sign * math.sqrt(r2)
    roll = _wrap(math.atan2(zp, y) - math.atan2(v[2], v[1]))
    hx, hz = v[0] + e[0], zp + e[2]  # hip point rel. ankle-pitch point, in the pitch plane
    lu, lw = math.hypot(u[0], u[2]), math.hypot(w[0], w[2])
    k = (hx * hx + hz * hz - lu * lu - lw * lw) / (2.0 * lu * lw)
    if k > 1.0 + 1e-12:
        why = f'foot out of reach ({math.hypot(hx, hz):.4f} m from the ankle to the hip, leg {lu + lw:.4f} m)'
    elif k < -1.0 - 1e-12:
        why = 'foot too close to the hip for the knee'
    bu, bw = math.atan2(u[0], u[2]), math.atan2(w[0], w[2])
    th4 = knee_branch * math.acos(_clip_unit(k)) - bu + bw
    mx, mz = u[0] + lw * math.sin(bw - th4), u[2] + lw * math.cos(bw - th4)
    q5 = _wrap(math.atan2(mx, mz) - math.atan2(hx, hz))
    return _wrap(leg.knee_sign * th4), q5, roll, why


Vec = tuple[float, float, float]


def _dotf(a: Vec, b: Vec) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _crossf(a: Vec, b: Vec) -> Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _turn(v: Vec, axis: Vec, angle: float) -> Vec:
    """``v`` rotated by ``angle`` about unit ``axis`` (Rodrigues; plain floats, no numpy)."""
    c, s = math.cos(angle), math.sin(angle)
    ax, ay, az = axis
    if ax == 0.0 and ay == 0.0:  # about +-z (most leg axes are along a frame axis)
        s *= az
        return (v[0] * c - v[1] * s, v[0] * s + v[1] * c, v[2])
    if ay == 0.0 and az == 0.0:  # +-x
        s *= ax
        return (v[0], v[1] * c - v[2] * s, v[1] * s + v[2] * c)
    if ax == 0.0 and az == 0.0:  # +-y
        s *= ay
        return (v[0] * c + v[2] * s, v[1], -v[0] * s + v[2] * c)
    k = _dotf(axis, v) * (1.0 - c)
    x = _crossf(axis, v)
    return (v[0] * c + x[0] * s + axis[0] * k, v[1] * c + x[1] * s + axis[1] * k, v[2] * c + x[2] * s + axis[2] * k)


def _three_axis(mn1: Vec, mn2: Vec, n: tuple[Vec, Vec, Vec], limits: tuple[tuple[float, float], ...]) -> Vec:
    """Angles with ``R(n0, t0) R(n1, t1) R(n2, t2) == M`` (n0 perp n1, n1 perp n2), within limits if possible.

    ``M`` enters as ``mn1 = M n1`` and ``mn2 = M n2``, which determine the angles.
    """
    n0, n1, n2 = n
    ca, cb, c = _dotf(n0, n2), _dotf(n0, _crossf(n1, n2)), _dotf(n0, mn2)
    rho, phi = math.hypot(ca, cb), math.atan2(cb, ca)
    d = math.acos(_clip_unit(c / rho))
    td = _dotf(mn2, n0)
    tp = (mn2[0] - td * n0[0], mn2[1] - td * n0[1], mn2[2] - td * n0[2])
    best = None
    for t1 in (phi + d, phi - d):
        v = _turn(n2, n1, t1)
        vd = _dotf(v, n0)
        vp = (v[0] - vd * n0[0], v[1] - vd * n0[1], v[2] - vd * n0[2])
        t0 = math.atan2(_dotf(n0, _crossf(vp, tp)), _dotf(vp, tp)) if _dotf(vp, vp) > 1e-24 else 0.0
        w = _turn(_turn(mn1, n0, -t0), n1, -t1)  # (R0 R1)^T M n1
        t2 = math.atan2(_dotf(n2, _crossf(n1, w)), _dotf(n1, w))
        angles = (_wrap(t0), _wrap(t1), _wrap(t2))
        score = (sum(_violation(q, lim) for q, lim in zip(angles, limits, strict=True)), sum(map(abs, angles)))
        if best is None or score < best[0]:
            best = (score, angles)
    assert best is not None
    return best[1]


_YXZ = ((0.0, 1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0))  # hip pitch, roll, yaw axes of T1 and K1


def _three_axis_yxz(mn1: Vec, mn2: Vec, limits: tuple[tuple[float, float], ...]) -> Vec:
    """:func:`_three_axis` for the axes y, x, z (T1, K1): ``Ry(t0) Rx(t1) Rz(t2) == M`` read off ``M``.

    ``M z = (cos t1 sin t0, -sin t1, cos t1 cos t0)`` gives t1 (two ways) and t0; ``Rx(-t1) Ry(-t0) M x =
    (cos t2, sin t2, 0)`` gives t2. The two answers are chosen between as there.
    """
    t1a = math.asin(min(1.0, max(-1.0, -mn2[1])))
    best = None
    for t1 in (t1a, _wrap(math.pi - t1a)):
        c1, s1 = math.cos(t1), math.sin(t1)
        sign = 1.0 if c1 >= 0.0 else -1.0
        t0 = math.atan2(sign * mn2[0], sign * mn2[2]) if abs(c1) > 1e-12 else 0.0
        c0, s0 = math.cos(t0), math.sin(t0)
        y, z = mn1[1], s0 * mn1[0] + c0 * mn1[2]  # Ry(-t0) M x, then Rx(-t1)
        t2 = math.atan2(c1 * y + s1 * z, c0 * mn1[0] - s0 * mn1[2])
        (lo0, hi0), (lo1, hi1), (lo2, hi2) = limits[:3]
        violation = max(lo0 - t0, t0 - hi0, 0.0) + max(lo1 - t1, t1 - hi1, 0.0) + max(lo2 - t2, t2 - hi2, 0.0)
        score = (violation, abs(t0) + abs(t1) + abs(t2))
        if best is None or score < best[0]:
            best = (score, (t0, t1, t2))
    assert best is not None
    return best[1]


# ---------------------------------------------------------------------------
# one leg, on plain floats: a foot pose is ``(position, rows of its rotation)``

Rows = tuple[Vec, Vec, Vec]
# id(leg) -> the last first hip angle and the slope of its fixed-point residual there, to start the next
# solve from (T1, K1: feet move little per cycle, so one secant step from there mostly converges)
_HINTS: dict[int, tuple[float, float]] = {}


def _branch_at(leg: _Leg, pf: Vec, rows: Rows, branch: tuple[float, float], q1: float) -> tuple[tuple[float, ...], str]:
    """The six angles of one branch with the hip point placed by the first hip angle ``q1``."""
    ax, o0 = leg.axes, leg.o_f[0]
    h = _turn(leg.hip_f, ax[0], q1)
    dx, dy, dz = o0[0] + h[0] - pf[0], o0[1] + h[1] - pf[1], o0[2] + h[2] - pf[2]
    r0, r1, r2 = rows
    hip_in_foot = (
        r0[0] * dx + r1[0] * dy + r2[0] * dz,
        r0[1] * dx + r1[1] * dy + r2[1] * dz,
        r0[2] * dx + r1[2] * dy + r2[2] * dz,
    )
    q4, q5, q6, why = _lower_leg(leg, hip_in_foot, branch)
    # M = rf R5^T R4^T R3^T; the hip angles follow from M n1 and M n2
    v1 = _turn(_turn(_turn(ax[1], ax[3], -q4), ax[4], -q5), ax[5], -q6)
    v2 = _turn(_turn(_turn(ax[2], ax[3], -q4), ax[4], -q5), ax[5], -q6)
    mn1 = (_dotf(r0, v1), _dotf(r1, v1), _dotf(r2, v1))
    mn2 = (_dotf(r0, v2), _dotf(r1, v2), _dotf(r2, v2))
    if ax[:3] == _YXZ:
        hip = _three_axis_yxz(mn1, mn2, leg.limits)
    else:
        hip = _three_axis(mn1, mn2, ax[:3], leg.limits[:3])
        if abs(_dotf(ax[0], mn2)) > leg.hip_rho + 1e-12 and not why:  # _three_axis clamped: not this rotation
            why = 'the hip cannot turn the foot that way'
    return (*hip, q4, q5, q6), why


def _nao_branch(leg: _Leg, pf: Vec, rows: Rows, branch: tuple[float, float]) -> tuple[tuple[float, ...], str]:
    """:func:`_branch_at` for the Nao's leg (``leg.nao``, see :func:`_nao_constants`), written out.

    The same arithmetic as the generic pass with the Nao's axes put in: the hip point sits at the hip
    yaw-pitch joint (``_turn`` of a zero vector), the basis is (x, -y, -z), the knee and ankle pitch
    turn about -y and the rolls about x, so each ``_turn`` of an axis-aligned vector keeps one or two
    of its terms; the two answers of the hip's Davenport split are chosen between as in
    :func:`_three_axis`. The same numbers as the generic pass (bit for bit on every pose compared when
    this was written, errors included; tests hold it to 1e-9 rad).
    """
    nao = leg.nao
    a, b, ox, oy, oz, u0, u2, e0, e2, y, lu, lw, lu2, lw2 = nao[:14]
    den, bu, bw, ks, zs, rho, phi, lo0, hi0, lo1, hi1, lo2, hi2 = nao[14:]
    atan2, sin, cos = math.atan2, math.sin, math.cos  # _wrap(x) is atan2(sin(x), cos(x)), written out here
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = rows
    dx, dy, dz = ox - pf[0], oy - pf[1], oz - pf[2]
    h0 = r00 * dx + r10 * dy + r20 * dz  # the hip point in the foot frame
    h1 = r01 * dx + r11 * dy + r21 * dz
    h2 = r02 * dx + r12 * dy + r22 * dz
    # _lower_leg: in the basis (x, -y, -z) the hip point is (h0, -h1, -h2); no sideways offset
    why = ''
    zp = branch[1] * zs * math.sqrt(h1 * h1 + h2 * h2 - y * y)
    q6 = atan2(zp, y) - atan2(-h2, -h1)
    q6 = atan2(sin(q6), cos(q6))
    hx, hz = h0 + e0, zp + e2
    k = (hx * hx + hz * hz - lu2 - lw2) / den
    if k > 1.0 + 1e-12:
        why = f'foot out of reach ({math.hypot(hx, hz):.4f} m from the ankle to the hip, leg {lu + lw:.4f} m)'
    elif k < -1.0 - 1e-12:
        why = 'foot too close to the hip for the knee'
    th4 = branch[0] * math.acos(_clip_unit(k)) - bu + bw
    q5 = atan2(u0 + lw * sin(bw - th4), u2 + lw * cos(bw - th4)) - atan2(hx, hz)
    q5 = atan2(sin(q5), cos(q5))
    q4 = ks * th4
    q4 = atan2(sin(q4), cos(q4))
    # M n1 and M n2, M = rf R6^T R5^T R4^T: n1 = x turned about -y by -q4, -q5 and about x by -q6 is
    # (C, -S s6, -S c6) (C, S the cosine and sine of q4 + q5); n2 = -y turns to (0, -c6, s6)
    c4, s4, c5, s5, c6, s6 = cos(q4), sin(q4), cos(q5), sin(q5), cos(q6), sin(q6)
    cc = c4 * c5 - s4 * s5
    ss = c4 * s5 + s4 * c5
    v1, v2 = -ss * s6, -ss * c6
    m0, m1, m2 = r00 * cc + r01 * v1 + r02 * v2, r10 * cc + r11 * v1 + r12 * v2, r20 * cc + r21 * v1 + r22 * v2
    t0 = -r01 * c6 + r02 * s6  # M n2
    t1 = -r11 * c6 + r12 * s6
    t2 = -r21 * c6 + r22 * s6
    # _three_axis with (n0, n1, n2) = ((0, a, b), x, -y)
    c = a * t1 + b * t2  # n0 . M n2
    d = math.acos(_clip_unit(c / rho))
    tp1, tp2 = t1 - c * a, t2 - c * b  # M n2 off n0 (its x part is t0)
    k1 = a * m1 + b * m2  # n0 . M n1
    x0, x1, x2 = a * m2 - b * m1, b * m0, -a * m0  # n0 x M n1
    best = None
    for y1 in (phi + d, phi - d):
        cy, sy = cos(y1), sin(y1)
        vd = -cy * a + -sy * b  # n2 turned about n1 by y1 is (0, -cy, -sy)
        p1, p2 = -cy - vd * a, -sy - vd * b
        y0 = atan2(a * (p2 * t0) - b * (p1 * t0), p1 * tp1 + p2 * tp2) if p1 * p1 + p2 * p2 > 1e-24 else 0.0
        c0, s0 = cos(y0), -sin(y0)  # M n1 turned about n0 by -y0, then about x by -y1
        kk = k1 * (1.0 - c0)
        w1, w2 = m1 * c0 + x1 * s0 + a * kk, m2 * c0 + x2 * s0 + b * kk
        y2 = atan2(w1 * -sy + w2 * cy, m0 * c0 + x0 * s0)
        y0, y1, y2 = atan2(-s0, c0), atan2(sy, cy), atan2(sin(y2), cos(y2))
        violation = (  # the sum of _violation's
            (lo0 - y0 if y0 < lo0 else y0 - hi0 if y0 > hi0 else 0.0)
            + (lo1 - y1 if y1 < lo1 else y1 - hi1 if y1 > hi1 else 0.0)
            + (lo2 - y2 if y2 < lo2 else y2 - hi2 if y2 > hi2 else 0.0)
        )
        score = (violation, abs(y0) + abs(y1) + abs(y2))
        if best is None or score < best[0]:
            best = (score, (y0, y1, y2, q4, q5, q6))
    if abs(c) > leg.hip_rho + 1e-12 and not why:  # _three_axis clamped: not this rotation
        why = 'the hip cannot turn the foot that way'
    return best[1], why


def _solve_branch(
    leg: _Leg, pf: Vec, rows: Rows, branch: tuple[float, float], hint: tuple[float, float] = (0.0, -1.0)
) -> tuple[tuple[float, ...], str, float, bool]:
    """One branch's angles, why it fails (if so), the slope of the first hip angle's residual, and whether
    the answer is exact by construction: every closed-form step in reach (else ``why`` says which was not)
    and the first hip angle converged."""
    if leg.hip_fixed:  # hip axis 1 passes through the hip point (Nao): closed form in one pass
        q, why = _nao_branch(leg, pf, rows, branch) if leg.nao else _branch_at(leg, pf, rows, branch, 0.0)
        return q, why, -1.0, not why
    # Hip axis 1 misses the hip point (T1, K1: the hip point sits on a circle about the hip pitch
    # axis): solve g(q1) = hip1(q1) - q1 = 0 by secant steps (each closed form), starting from ``hint``
    # (the last answer and the residual's slope there: mostly one step when feet move a little per cycle).
    # Close to the root the last secant step is taken on all six angles at once (linear in q1 there:
    # their error is second order in a step below _Q1_LINEAR), which saves one more closed-form pass.
    x0, slope = hint
    q, why = _branch_at(leg, pf, rows, branch, x0)
    g0 = _wrap(q[0] - x0)
    x1 = x0 - g0 / slope
    converged = abs(g0) < _Q1_TOL
    for _ in range(_MAX_ITER):
        if converged:
            break
        q0, (q, why) = q, _branch_at(leg, pf, rows, branch, x1)
        g1 = _wrap(q[0] - x1)
        if g1 == g0:
            break
        slope = (g1 - g0) / (x1 - x0)
        converged = abs(g1) < _Q1_TOL
        if not converged and abs(g1) < _Q1_LINEAR:
            f = -g1 / slope / (x1 - x0)
            q = tuple(a + _wrap(a - b) * f for a, b in zip(q, q0, strict=True))
            converged = True
        x0, x1, g0 = x1, x1 - g1 / slope, g1
    return q, why, slope, converged and not why


def _chain_error(leg: _Leg, q: tuple[float, ...], pf: Vec, rows: Rows) -> float:
    """How far (m or rad, the larger) the foot of angles ``q`` lands from the pose ``(pf, rows)``."""
    ax, o = leg.axes, leg.o_f
    x, z, p = (1.0, 0.0, 0.0), (0.0, 0.0, 1.0), o[5]
    for k in range(5, -1, -1):
        x, z = _turn(x, ax[k], q[k]), _turn(z, ax[k], q[k])
        if k < 5:
            t = _turn(p, ax[k], q[k])
            p = (o[k][0] + t[0], o[k][1] + t[1], o[k][2] + t[2])
    y = _crossf(z, x)
    r0, r1, r2 = rows
    trace = x[0] * r0[0] + x[1] * r1[0] + x[2] * r2[0]
    trace += y[0] * r0[1] + y[1] * r1[1] + y[2] * r2[1]
    trace += z[0] * r0[2] + z[1] * r1[2] + z[2] * r2[2]
    angle = math.acos(_clip_unit((trace - 1.0) / 2.0))
    return max(math.sqrt((p[0] - pf[0]) ** 2 + (p[1] - pf[1]) ** 2 + (p[2] - pf[2]) ** 2), angle)


def _solve(leg: _Leg, pf: Vec, rows: Rows, within_limits: bool = True) -> tuple[tuple[float, ...], str]:
    """Six leg angles for a foot pose in the leg's base frame, the most plausible branch, and why it fails if so.

    With ``within_limits`` False the first (natural) branch that reaches the pose is taken
    even if it leaves a joint's range (the caller clamps; the walk does this every cycle).
    """
    if leg.nao:  # the usual case first, without the bookkeeping: the first branch, exact and in range
        q, why = _nao_branch(leg, pf, rows, leg.branches[0])
        if not why and math.isfinite(q[0]):
            if not within_limits:
                return q, ''
            for x, (lo, hi) in zip(q, leg.limits):  # noqa: B905 - six each
                if not lo <= x <= hi:
                    break
            else:
                return q, ''
    best = None
    hint = _HINTS.get(id(leg), (0.0, -1.0))
    for branch in leg.branches:  # the usual one (knee bent the way it bends, hip above the ankle) first
        q, why, slope, exact = _solve_branch(leg, pf, rows, branch, hint)
        err = 0.0 if exact and math.isfinite(q[0]) else _chain_error(leg, q, pf, rows)
        violation = sum(_violation(x, lim) for x, lim in zip(q, leg.limits, strict=True)) if within_limits else 0.0
        score = (err > _FK_TOL, violation)
        if best is None or score < best[0]:
            best = (score, q, why if err > _FK_TOL else '', slope)
        if score == (False, 0.0):
            break
    assert best is not None
    if not best[0][0] and math.isfinite(best[1][0]):
        slope = best[3] if math.isfinite(best[3]) and -2.0 < best[3] < -0.5 else -1.0
        _HINTS[id(leg)] = (best[1][0], slope)
    return best[1], best[2] or ('' if not best[0][0] else 'no exact solution (numerically out of reach)')


def _solve_with_hip(leg: _Leg, pf: Vec, rows: Rows, hip: float, within_limits: bool = True) -> tuple[float, ...]:
    """Leg angles with the first hip angle fixed at ``hip``: foot position and sole normal exact, foot yaw free.

    Closed form (legs whose hip pitch, knee and ankle pitch axes are parallel, with no sideways
    offsets: the Nao). With the first hip angle known, the hip point H and the hip roll axis r in
    the base frame are known. The ankle roll puts the pitch axes across the line from the foot
    origin F to H, so they point along X x (H - F), X the foot's roll axis; the pitch axis must
    be across r (what hip roll and pitch can reach from r's side). The foot's turn psi about its
    own z axis moves X only: X(psi) . ((H - F) x r) = 0 is ``A cos psi + B sin psi + C = 0``;
    the root nearer zero is taken (the smaller turn).
    """
    ax, o0 = leg.axes, leg.o_f[0]
    if leg.nao:  # the hip point is the joint's origin; the roll axis x turns about (0, a, b) to (c, b s, -a s)
        a, b = leg.nao[0], leg.nao[1]
        ch, sh = math.cos(hip), math.sin(hip)
        d = (o0[0] - pf[0], o0[1] - pf[1], o0[2] - pf[2])
        n = _crossf(d, (ch, b * sh, -a * sh))
    else:
        h = _turn(leg.hip_f, ax[0], hip)
        d = (o0[0] + h[0] - pf[0], o0[1] + h[1] - pf[1], o0[2] + h[2] - pf[2])
        n = _crossf(d, _turn(ax[1], ax[0], hip))
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = rows
    rx, ry, rz = ax[5]  # ankle roll axis in the foot frame
    c0n = r00 * n[0] + r10 * n[1] + r20 * n[2]  # foot axes (columns) along n
    c1n = r01 * n[0] + r11 * n[1] + r21 * n[2]
    c2n = r02 * n[0] + r12 * n[1] + r22 * n[2]
    a, b, c = rx * c0n + ry * c1n, rx * c1n - ry * c0n, rz * c2n
    rho = math.hypot(a, b)
    if rho < 1e-15:  # the foot's turn does not matter (or cannot help)
        roots = (0.0,)
    else:
        mid, spread = math.atan2(b, a), math.acos(_clip_unit(-c / rho))
        roots = tuple(sorted((_wrap(mid + spread), _wrap(mid - spread)), key=abs))
    why = ''
    for psi in roots:  # the smaller turn first; the other where the hip reaches the pose its other way only
        cp, sp = math.cos(psi), math.sin(psi)
        turned = (
            (r00 * cp + r01 * sp, r01 * cp - r00 * sp, r02),
            (r10 * cp + r11 * sp, r11 * cp - r10 * sp, r12),
            (r20 * cp + r21 * sp, r21 * cp - r20 * sp, r22),
        )  # rows @ Rz(psi)
        q, why = _solve(leg, pf, turned, within_limits)
        if not why and abs(_wrap(q[0] - hip)) <= 1e-9:
            return q
    if why:
        raise UnreachableError(f'turning the foot to match the shared hip angle: {why}')
    raise UnreachableError('shared hip angle cannot be matched by turning the foot')


# ---------------------------------------------------------------------------
# the public solvers


def _base_pose(body: Body, leg: _Leg, joints: Mapping[str, float]) -> np.ndarray:
    return _link_pose(body, leg.base, joints) if leg.base != body.links[0].name else np.eye(4)


@_per_body
def _moving_base(body: Body, base: str) -> tuple[str, ...]:
    """The joints between the root link and ``base`` (T1's waist ``tj1``; none when the leg hangs from the torso)."""
    tree, names = _tree(body), []
    i = tree.index[base]
    while i >= 0:
        if tree.joint[i]:
            names.append(tree.joint[i])
        i = tree.parent[i]
    return tuple(names)


_BASES: dict[tuple, tuple[Body, Rows, Vec]] = {}  # (id(body), base, its joint angles) -> body, inverse pose


def _in_base(body: Body, leg: _Leg, target: np.ndarray | Sequence, joints: Mapping[str, float]) -> tuple[Vec, Rows]:
    """A torso-frame 4x4 target as ``(position, rows)`` in the leg's base frame, in plain floats."""
    t = target.tolist() if isinstance(target, np.ndarray) else target
    t0, t1, t2 = t[0], t[1], t[2]
    pf = (float(t0[3]), float(t1[3]), float(t2[3]))
    rows = (
        (float(t0[0]), float(t0[1]), float(t0[2])),
        (float(t1[0]), float(t1[1]), float(t1[2])),
        (float(t2[0]), float(t2[1]), float(t2[2])),
    )
    if leg.at_root:
        return pf, rows
    moving = _moving_base(body, leg.base)
    key = (id(body), leg.base, tuple(float(joints.get(j, 0.0)) for j in moving))
    hit = _BASES.get(key)
    if hit is None or hit[0] is not body:
        inv = np.linalg.inv(_base_pose(body, leg, joints))
        if len(_BASES) > 1000:
            _BASES.clear()
        hit = _BASES[key] = (body, tuple(tuple(r) for r in inv[:3, :3].tolist()), tuple(inv[:3, 3].tolist()))
    _, (b0, b1, b2), bp = hit
    cols = tuple(zip(*rows, strict=True))
    pf = (_dotf(b0, pf) + bp[0], _dotf(b1, pf) + bp[1], _dotf(b2, pf) + bp[2])
    rows = tuple((_dotf(b, cols[0]), _dotf(b, cols[1]), _dotf(b, cols[2])) for b in (b0, b1, b2))
    return pf, rows


def _finish(leg: _Leg, q: tuple[float, ...], check_limits: bool) -> dict[str, float]:
    if check_limits:
        for name, angle, lim in zip(leg.joints, q, leg.limits, strict=True):
            if _violation(angle, lim) > _LIMIT_TOL:
                raise UnreachableError(
                    f'{name} would be {math.degrees(angle):.2f} deg, outside '
                    f'[{math.degrees(lim[0]):.2f}, {math.degrees(lim[1]):.2f}]'
                )
    return dict(zip(leg.joints, q, strict=True))


def leg_ik(
    body: Body,
    side: str,
    target: np.ndarray | Sequence,
    joints: Mapping[str, float] | None = None,
    check_limits: bool = True,
) -> dict[str, float]:
    """Angles (rad) of one leg's six joints that put its foot link at ``target``.

    Args:
        body: robot model.
        side: ``'l'`` or ``'r'``.
        target: 4x4 foot-link pose in the torso frame (an array or nested sequences of floats).
        joints: other joint angles (only T1's waist ``tj1`` matters); default 0.
        check_limits: raise when an angle is outside the joint's range.

    Returns:
        ``{'llj1': ..., ..., 'llj6': ...}`` (or ``rlj*``).

    Raises:
        UnreachableError: the pose is out of reach or needs angles beyond the limits.
    """
    leg = _leg(body, side)
    pf, rows = _in_base(body, leg, target, joints or {})
    q, why = _solve(leg, pf, rows, check_limits)
    if why:
        raise UnreachableError(f'{side} foot: {why}')
    return _finish(leg, q, check_limits)


def legs_ik(
    body: Body,
    left: np.ndarray | Sequence,
    right: np.ndarray | Sequence,
    joints: Mapping[str, float] | None = None,
    check_limits: bool = True,
) -> dict[str, float]:
    """Both legs' angles for left and right foot-link poses (torso frame; arrays or nested sequences).

    For a robot with a shared hip joint (Nao: ``llj1 == rlj1``) both legs get the
    mean of their separate solutions; each foot is then turned about its own z
    axis just enough to match it (positions and sole normals stay exact).
    """
    joints = joints or {}
    if not body.shared_hip:
        return {**leg_ik(body, 'l', left, joints, check_limits), **leg_ik(body, 'r', right, joints, check_limits)}
    legs = (_leg(body, 'l'), _leg(body, 'r'))
    for leg in legs:
        if not leg.hip_matchable:
            raise ValueError(f'{body.name}: a shared hip needs hip pitch, knee, ankle pitch parallel, no side offsets')
    bases = (_in_base(body, legs[0], left, joints), _in_base(body, legs[1], right, joints))
    free = []
    for side, leg, (pf, rows) in zip('lr', legs, bases, strict=True):
        q, why = _solve(leg, pf, rows, check_limits)
        if why:
            raise UnreachableError(f'{side} foot: {why}')
        free.append(q[0])
    hip = 0.5 * (free[0] + free[1])
    out: dict[str, float] = {}
    for leg, (pf, rows) in zip(legs, bases, strict=True):
        out.update(_finish(leg, _solve_with_hip(leg, pf, rows, hip, check_limits), check_limits))
    return out
