"""The Nao's written-out leg IK (``_nao_branch``) against the generic closed form it stands in for, to 1e-9 rad.

The generic pass (``_branch_at``, ``_three_axis``) stays in the module for T1 and K1; a Nao leg with its
``nao`` constants taken away runs it, so ``legs_ik`` and ``leg_ik`` can be held to it on the same poses:
random foot pose pairs of every Nao type from angles inside the joint ranges, some of them at or just
past a limit, with and without limit checks, and poses out of reach. Where one raises, the other must
raise the same ``UnreachableError``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from robocup3d_description import kinematics as kin
from robocup3d_description.body import body_for

NAOS = ('nao0', 'nao1', 'nao2', 'nao3', 'nao4')
TOL = 1e-9  # rad


@pytest.fixture
def generic(monkeypatch: pytest.MonkeyPatch):
    """Call ``fn(*args)`` with the Nao legs on the generic closed form (their ``nao`` constants removed)."""
    real, legs = kin._leg, {}

    def leg(body: object, side: str) -> kin._Leg:
        key = (id(body), side)
        if key not in legs:
            legs[key] = (body, dataclasses.replace(real(body, side), nao=()))
        return legs[key][1]

    def call(fn: object, *args: object, **kw: object) -> dict[str, float] | str:
        with monkeypatch.context() as m:
            m.setattr(kin, '_leg', leg)
            return _answer(fn, *args, **kw)

    return call


def _answer(fn: object, *args: object, **kw: object) -> dict[str, float] | str:
    """The angles, or the ``UnreachableError``'s message."""
    try:
        return fn(*args, **kw)
    except kin.UnreachableError as exc:
        return f'UnreachableError: {exc}'


def _angles(body: object, side: str, rng: np.random.Generator, spread: float) -> dict[str, float]:
    """Random angles of one leg: inside the ranges (hips within +-1.2 rad), a fifth of them within 1e-3 rad of a
    limit, and ``spread`` rad past the ranges at most (then the ones at a limit are on either side of it)."""
    leg = kin._leg(body, side)
    q = {}
    for joint, (lo, hi) in zip(leg.joints, leg.limits, strict=True):
        if rng.random() < 0.2:
            inward = rng.uniform(-1e-3 if spread else 0.0, 1e-3)
            q[joint] = float(lo + inward if rng.integers(2) else hi - inward)
        else:
            q[joint] = float(rng.uniform(max(lo, -1.2) - spread, min(hi, 1.2) + spread))
    return q


def _same(got: dict[str, float] | str, want: dict[str, float] | str) -> bool:
    """Both the same error, or angles within :data:`TOL`; returns whether they are angles."""
    if isinstance(got, str) or isinstance(want, str):
        assert got == want
        return False
    assert got.keys() == want.keys()
    worst = max(abs(got[j] - want[j]) for j in got)
    assert worst < TOL, {j: got[j] - want[j] for j in got}
    return True


def test_only_the_nao_legs_are_written_out() -> None:
    for name in (*NAOS, 'T1', 'K1'):
        body = body_for(name)
        for side in 'lr':
            assert bool(kin._leg(body, side).nao) == name.startswith('nao')


def _tally(generic, fn: object, cases: object, check_limits: bool) -> tuple[int, int]:
    """(solved, raised) over ``cases`` (argument tuples of ``fn``), each answer held to the generic pass's."""
    solved = raised = 0
    for args in cases:
        want = generic(fn, *args, check_limits=check_limits)
        if _same(_answer(fn, *args, check_limits=check_limits), want):
            solved += 1
        else:
            raised += 1
    return solved, raised


@pytest.mark.parametrize('name', NAOS)
@pytest.mark.parametrize('check_limits', [True, False])
def test_both_legs_match_the_generic_closed_form(name: str, check_limits: bool, generic) -> None:
    body = body_for(name)
    rng = np.random.default_rng(11 * sum(map(ord, name)) + check_limits)

    def cases():
        for k in range(300):
            q = {**_angles(body, 'l', rng, 0.0), **_angles(body, 'r', rng, 0.0)}
            q['rlj1'] = q['llj1'] + (float(rng.uniform(-0.15, 0.15)) if k % 3 else 0.0)  # as a walk asks for
            yield body, kin.foot_pose(body, 'l', q), kin.foot_pose(body, 'r', q)

    solved, raised = _tally(generic, kin.legs_ik, cases(), check_limits)
    assert solved >= 100
    assert raised >= 10 or not check_limits


@pytest.mark.parametrize('name', NAOS)
@pytest.mark.parametrize('check_limits', [True, False])
def test_one_leg_matches_the_generic_closed_form(name: str, check_limits: bool, generic) -> None:
    body = body_for(name)
    rng = np.random.default_rng(13 * sum(map(ord, name)) + check_limits)

    def cases():
        for _ in range(300):
            side = 'lr'[rng.integers(2)]
            yield body, side, kin.foot_pose(body, side, _angles(body, side, rng, 0.05))

    solved, raised = _tally(generic, kin.leg_ik, cases(), check_limits)
    assert solved >= 100
    assert raised >= 10 or not check_limits


@pytest.mark.parametrize('name', NAOS)
def test_unreachable_poses_raise_alike(name: str, generic) -> None:
    """Feet moved off their reachable poses (most out of reach), angles well past the limits, a foot far away."""
    body = body_for(name)
    rng = np.random.default_rng(17 * sum(map(ord, name)))
    raised = 0
    for k in range(200):
        q = {**_angles(body, 'l', rng, 0.4), **_angles(body, 'r', rng, 0.4)}
        left, right = kin.foot_pose(body, 'l', q), kin.foot_pose(body, 'r', q)
        (left if k % 2 else right)[:3, 3] += rng.normal(0.0, 0.08, 3)
        if k % 10 == 0:
            left[:3, 3] = (0.0, 0.1, -2.0)
        for check_limits in (True, False):
            want = generic(kin.legs_ik, body, left, right, check_limits=check_limits)
            raised += not _same(_answer(kin.legs_ik, body, left, right, check_limits=check_limits), want)
            want = generic(kin.leg_ik, body, 'l', left, check_limits=check_limits)
            raised += not _same(_answer(kin.leg_ik, body, 'l', left, check_limits=check_limits), want)
    assert raised >= 200
