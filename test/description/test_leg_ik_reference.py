"""The closed-form leg IK against the iterative solver it replaced (``reference_ik``), to 1e-6 rad.

Random reachable foot poses of every robot (FK of random angles inside the joint ranges,
hips within +-69 deg, the knee bent), both with and without limit checks, one leg at a
time and both legs together (the Nao's shared hip yaw-pitch joint included), plus T1's
waist turned. Where the reference finds no answer the closed form may still find one: it
must then reach the foot positions and sole normals exactly with one hip angle.
"""

from __future__ import annotations

import numpy as np
import pytest

from robocup3d_description import kinematics as kin
from robocup3d_description.body import body_for
from robocup3d_description.reference_ik import reference_leg_ik, reference_legs_ik
from robocup3d_description.robots import mujoco_robot, nao

ROBOTS = ('nao0', 'nao1', 'nao2', 'nao3', 'nao4', 'T1', 'K1')
TOL = 1e-6  # rad


def _limits(name: str, joint: str) -> tuple[float, float]:
    j = (nao(int(name[3:])) if name.startswith('nao') else mujoco_robot(name)).by_name[joint]
    return j.lower, j.upper


def _random_leg(name: str, side: str, rng: np.random.Generator) -> dict[str, float]:
    """Angles 10 % inside each range, hips within +-1.2 rad, the knee at least 0.15 rad past straight."""
    leg = kin._leg(body_for(name), side)
    straight = kin._wrap(leg.knee_sign * (np.arctan2(leg.w[0], leg.w[2]) - np.arctan2(leg.u[0], leg.u[2])))
    bend = leg.branches[0][0] * leg.knee_sign
    q = {}
    for i, joint in enumerate(leg.joints):
        lo, hi = _limits(name, joint)
        if i == 3:
            lo, hi = (max(lo, straight + 0.15), hi) if bend > 0 else (lo, min(hi, straight - 0.15))
        lo, hi = lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo)
        if i < 3:
            lo, hi = max(lo, -1.2), min(hi, 1.2)
        q[joint] = float(rng.uniform(lo, hi))
    return q


def _solve(fn: object, *args: object, **kw: object) -> dict[str, float] | None:
    try:
        return fn(*args, **kw)
    except kin.UnreachableError:
        return None


def _assert_close(got: dict[str, float], want: dict[str, float]) -> None:
    assert got.keys() == want.keys()
    worst = max(abs(kin._wrap(got[j] - want[j])) for j in got)
    assert worst < TOL, {j: got[j] - want[j] for j in got}


@pytest.mark.parametrize('name', ROBOTS)
@pytest.mark.parametrize('check_limits', [True, False])
def test_one_leg_matches_the_iterative_solver(name: str, check_limits: bool) -> None:
    body = body_for(name)
    rng = np.random.default_rng(sum(map(ord, name)) + check_limits)
    solved = 0
    for _ in range(100):
        for side in 'lr':
            target = kin.foot_pose(body, side, _random_leg(name, side, rng))
            want = _solve(reference_leg_ik, body, side, target, check_limits=check_limits)
            got = _solve(kin.leg_ik, body, side, target, check_limits=check_limits)
            assert (got is None) == (want is None)
            if want is not None:
                _assert_close(got, want)
                solved += 1
    assert solved >= 190


@pytest.mark.parametrize('name', ROBOTS)
@pytest.mark.parametrize('check_limits', [True, False])
def test_both_legs_match_the_iterative_solver(name: str, check_limits: bool) -> None:
    body = body_for(name)
    rng = np.random.default_rng(7 * sum(map(ord, name)) + check_limits)
    solved = better = 0
    for k in range(120):
        q = {**_random_leg(name, 'l', rng), **_random_leg(name, 'r', rng)}
        if body.shared_hip and k % 2:  # legs close to one hip angle, as a walk asks for
            q['rlj1'] = q['llj1'] + float(rng.uniform(-0.15, 0.15))
        left, right = kin.foot_pose(body, 'l', q), kin.foot_pose(body, 'r', q)
        want = _solve(reference_legs_ik, body, left, right, check_limits=check_limits)
        got = _solve(kin.legs_ik, body, left, right, check_limits=check_limits)
        if want is not None:
            assert got is not None
            _assert_close(got, want)
            solved += 1
        elif got is not None:  # the reference's search on the foot's yaw gave up; this answer must be exact
            assert body.shared_hip and got['llj1'] == pytest.approx(got['rlj1'], abs=1e-12)
            for side, target in (('l', left), ('r', right)):
                pose = kin.foot_pose(body, side, got)
                assert pose[:3, 3] == pytest.approx(target[:3, 3], abs=1e-7)
                assert pose[:3, 2] == pytest.approx(target[:3, 2], abs=1e-7)
            better += 1
    assert solved >= 60 and solved >= 4 * better


def test_t1_with_its_waist_turned_matches_the_iterative_solver() -> None:
    body = body_for('T1')
    rng = np.random.default_rng(5)
    for _ in range(50):
        waist = {'tj1': float(rng.uniform(-0.8, 0.8))}
        q = {**_random_leg('T1', 'l', rng), **_random_leg('T1', 'r', rng), **waist}
        left, right = kin.foot_pose(body, 'l', q), kin.foot_pose(body, 'r', q)
        want = reference_legs_ik(body, left, right, waist)
        _assert_close(kin.legs_ik(body, left, right, waist), want)
        # nested lists of floats are targets too (the walk passes those)
        _assert_close(kin.legs_ik(body, left.tolist(), right.tolist(), waist), want)
