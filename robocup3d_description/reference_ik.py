"""The iterative leg IK that ``kinematics`` used before its closed form: the reference in tests and benches.

Kept as it was (numpy FK check per branch, a secant search on the foot's yaw for the Nao's
shared hip yaw-pitch joint, about eleven single-leg solves per Nao ``legs_ik``), so that the
closed-form solver in :mod:`robocup3d_description.kinematics` can be checked against it. The
geometry (``_Leg``) and the closed-form pieces both use come from ``kinematics``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from robocup3d_description.body import Body
from robocup3d_description.kinematics import (
    _FK_TOL,
    _MAX_ITER,
    _Q1_TOL,
    UnreachableError,
    Vec,
    _base_pose,
    _dotf,
    _finish,
    _Leg,
    _leg,
    _lower_leg,
    _three_axis,
    _turn,
    _violation,
    _wrap,
    rotation_matrix,
)

__all__ = ['reference_leg_ik', 'reference_legs_ik']


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


def reference_leg_ik(
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


def reference_legs_ik(
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
        out.update(reference_leg_ik(body, 'l', left, joints, check_limits))
        out.update(reference_leg_ik(body, 'r', right, joints, check_limits))
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
