"""Forward kinematics, centre of mass and analytic leg inverse kinematics (numpy).

Poses are 4x4 homogeneous matrices in the torso frame (REP-103: x forward, y left,
z up) unless said otherwise; joint angles are dicts of canonical names to rad
(missing joints count as 0). Models come from ``robocup3d_description.body``.

Leg IK, for a foot-link pose relative to the torso:

* The ankle roll, ankle pitch and knee follow in closed form from where the hip
  point (where the last two hip axes cross) sits in the foot frame, allowing for
  offsets between the ankle axes and sideways offsets in the leg; the three hip
  angles then come from the remaining rotation (a Davenport-angle split with the
  hip's own axes, e.g. the Nao's 45-degree yaw-pitch axis).
* Where the first hip axis misses that point (T1, K1: hip pitch 2-3 cm above hip
  roll) the hip point depends on the first hip angle; a fixed-point iteration on
  that one angle converges in a few steps (each step closed form).
* The Nao's ``llj1``/``rlj1`` are one motor on the real robot: ``legs_ik`` gives
  both legs the mean angle and turns each foot about its own z axis (the sole
  normal) until its leg matches it: foot positions and sole normals stay exact.

Unreachable targets raise ``UnreachableError`` (a ``ValueError``) with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
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
_Q1_TOL = 1e-10  # rad: first hip angle fixed point (the hip point moves < 1e-11 m)


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


def forward_kinematics(body: Body, joints: Mapping[str, float] | None = None) -> dict[str, np.ndarray]:
    """Pose (4x4, torso frame) of every link, including ``camera``, for the given angles (rad)."""
    joints = joints or {}
    tree = _tree(body)
    poses: list[np.ndarray] = []
    for i, p in enumerate(tree.parent):
        local = _local(tree, i, joints)
        poses.append(local if p < 0 else poses[p] @ local)
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
        tuple(float(x) for x in o[1] + hip_point),
        tuple(tuple(float(x) for x in basis[:, k]) for k in range(3)),
        tuple(tuple(float(x) for x in vec) for vec in (u, w, e)),
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
    th4 = knee_branch * math.acos(min(1.0, max(-1.0, k))) - bu + bw
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
    d = math.acos(min(1.0, max(-1.0, c / rho)))
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


def _solve_branch(
    leg: _Leg, p: np.ndarray, rf: np.ndarray, branch: tuple[float, float], hint: float = 0.0
) -> tuple[tuple[float, ...], str]:
    ax = leg.axes
    o0, hip1 = leg.o_f[0], leg.hip_f
    pf = (float(p[0]), float(p[1]), float(p[2]))
    rows = rf.tolist()
    cols = tuple(zip(*rows, strict=True))

    def rot(v: Vec) -> Vec:  # rf @ v
        return (_dotf(rows[0], v), _dotf(rows[1], v), _dotf(rows[2], v))

    def step(q1: float) -> tuple[tuple[float, ...], str]:
        h = _turn(hip1, ax[0], q1)
        d = (o0[0] + h[0] - pf[0], o0[1] + h[1] - pf[1], o0[2] + h[2] - pf[2])
        q4, q5, q6, why = _lower_leg(leg, (_dotf(cols[0], d), _dotf(cols[1], d), _dotf(cols[2], d)), branch)
        # M = rf R5^T R4^T R3^T; the hip angles follow from M n1 and M n2
        mn = [rot(_turn(_turn(_turn(n, ax[3], -q4), ax[4], -q5), ax[5], -q6)) for n in (ax[1], ax[2])]
        return (*_three_axis(mn[0], mn[1], ax[:3], leg.limits[:3]), q4, q5, q6), why

    # The hip point depends on the first hip angle only when hip axis 1 misses it (T1, K1):
    # solve g(q1) = hip1(q1) - q1 = 0 by secant steps, starting with one fixed-point step
    # from ``hint`` (the last answer: one or two steps when feet move a little per cycle).
    x0 = hint
    q, why = step(x0)
    g0 = _wrap(q[0] - x0)
    x1 = x0 + g0
    for _ in range(_MAX_ITER):
        if abs(g0) < _Q1_TOL:
            break
        q, why = step(x1)
        g1 = _wrap(q[0] - x1)
        if abs(g1) < _Q1_TOL or g1 == g0:
            break
        x0, x1, g0 = x1, x1 - g1 * (x1 - x0) / (g1 - g0), g1
    return q, why


_HINTS: dict[int, float] = {}  # id(leg) -> last first hip angle, to start the next solve from


def _solve(leg: _Leg, target: np.ndarray, within_limits: bool = True) -> tuple[tuple[float, ...], str]:
    """Six leg angles for a foot pose in the leg's base frame, the most plausible branch, and why it fails if so.

    With ``within_limits`` False the first (natural) branch that reaches the pose is taken
    even if it leaves a joint's range (the caller clamps; the walk does this every cycle).
    """
    p, rf = target[:3, 3], target[:3, :3]
    best = None
    hint = _HINTS.get(id(leg), 0.0)
    for branch in leg.branches:  # the usual one (knee bent the way it bends, hip above the ankle) first
        q, why = _solve_branch(leg, p, rf, branch, hint)
        err = _pose_error(_chain(leg, q), target)
        violation = sum(_violation(x, lim) for x, lim in zip(q, leg.limits, strict=True)) if within_limits else 0.0
        score = (err > _FK_TOL, violation)
        if best is None or score < best[0]:
            best = (score, q, why if err > _FK_TOL else '')
        if score == (False, 0.0):
            break
    assert best is not None
    if not best[0][0] and math.isfinite(best[1][0]):
        _HINTS[id(leg)] = best[1][0]
    return best[1], best[2] or ('' if not best[0][0] else 'no exact solution (numerically out of reach)')


def _chain(leg: _Leg, q: tuple[float, ...]) -> np.ndarray:
    t = np.eye(4)
    for k in range(6):
        step = np.eye(4)
        step[:3, :3] = rotation_matrix(leg.a[k], q[k])
        step[:3, 3] = leg.o[k]
        t = t @ step
    return t


def _pose_error(a: np.ndarray, b: np.ndarray) -> float:
    rot = a[:3, :3].T @ b[:3, :3]
    angle = math.acos(min(1.0, max(-1.0, (float(np.trace(rot)) - 1.0) / 2.0)))
    return max(float(np.linalg.norm(a[:3, 3] - b[:3, 3])), angle)


def _base_pose(body: Body, leg: _Leg, joints: Mapping[str, float]) -> np.ndarray:
    return _link_pose(body, leg.base, joints) if leg.base != body.links[0].name else np.eye(4)


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
    body: Body, side: str, target: np.ndarray, joints: Mapping[str, float] | None = None, check_limits: bool = True
) -> dict[str, float]:
    """Angles (rad) of one leg's six joints that put its foot link at ``target``.

    Args:
        body: robot model.
        side: ``'l'`` or ``'r'``.
        target: 4x4 foot-link pose in the torso frame.
        joints: other joint angles (only T1's waist ``tj1`` matters); default 0.
        check_limits: raise when an angle is outside the joint's range.

    Returns:
        ``{'llj1': ..., ..., 'llj6': ...}`` (or ``rlj*``).

    Raises:
        UnreachableError: the pose is out of reach or needs angles beyond the limits.
    """
    leg = _leg(body, side)
    base = np.linalg.inv(_base_pose(body, leg, joints or {})) @ np.asarray(target, dtype=float)
    q, why = _solve(leg, base, check_limits)
    if why:
        raise UnreachableError(f'{side} foot: {why}')
    return _finish(leg, q, check_limits)


def _solve_with_hip(leg: _Leg, base: np.ndarray, hip: float, within_limits: bool = True) -> tuple[float, ...]:
    """Leg angles with the first hip angle fixed: foot position and sole tilt exact, foot yaw free."""

    def first(psi: float) -> tuple[float, tuple[float, ...]]:
        t = base.copy()
        t[:3, :3] = base[:3, :3] @ rotation_matrix((0.0, 0.0, 1.0), psi)  # about the foot's own z (sole normal)
        q, why = _solve(leg, t, within_limits)
        if why:
            raise UnreachableError(f'turning the foot to match the shared hip angle: {why}')
        return _wrap(q[0] - hip), q

    x0, (f0, q) = 0.0, first(0.0)
    x1 = 0.01
    f1, q = first(x1)
    for _ in range(_MAX_ITER):
        if abs(f1) < 1e-12:
            break
        if f1 == f0:
            raise UnreachableError('shared hip angle cannot be matched by turning the foot')
        x0, x1, f0 = x1, x1 - f1 * (x1 - x0) / (f1 - f0), f1
        f1, q = first(x1)
    if abs(f1) > 1e-9:
        raise UnreachableError('shared hip angle cannot be matched by turning the foot')
    return q


def legs_ik(
    body: Body,
    left: np.ndarray,
    right: np.ndarray,
    joints: Mapping[str, float] | None = None,
    check_limits: bool = True,
) -> dict[str, float]:
    """Both legs' angles for left and right foot-link poses (torso frame).

    For a robot with a shared hip joint (Nao: ``llj1 == rlj1``) both legs get the
    mean of their separate solutions; each foot is then turned about its own z
    axis just enough to match it (positions and sole normals stay exact).
    """
    joints = joints or {}
    out: dict[str, float] = {}
    if not body.shared_hip:
        out.update(leg_ik(body, 'l', left, joints, check_limits))
        out.update(leg_ik(body, 'r', right, joints, check_limits))
        return out
    legs = {s: _leg(body, s) for s in 'lr'}
    bases = {
        s: np.linalg.inv(_base_pose(body, legs[s], joints)) @ np.asarray(t, dtype=float)
        for s, t in (('l', left), ('r', right))
    }
    free = {}
    for s in 'lr':
        free[s], why = _solve(legs[s], bases[s], check_limits)
        if why:
            raise UnreachableError(f'{s} foot: {why}')
    hip = 0.5 * (free['l'][0] + free['r'][0])
    for s in 'lr':
        out.update(_finish(legs[s], _solve_with_hip(legs[s], bases[s], hip, check_limits), check_limits))
    return out
