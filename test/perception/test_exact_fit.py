"""Self-localization from RCSSServerMJ's exact landmarks: fits taken directly, particles woken when needed.

Replays our recording of a T1 walking 10 s on RCSSServerMJ (``test/data/t1_walk_forward.txt``),
scored against the server's torso position in the same messages.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from t1_walk import walk_cycles

from robocup3d_description.body import body_for
from robocup3d_perception.field import field_for
from robocup3d_perception.particle_filter import LocatorParameters
from robocup3d_perception.world_model import WorldModel, WorldModelParameters


def _walk(wm: WorldModel, change=None) -> list[float]:
    """Position errors (m) per cycle once localized; ``change(i, inp)`` may alter cycle i's input."""
    errors = []
    for i, p, inp in walk_cycles():
        state = wm.update(change(i, inp) if change else inp)
        if wm.last_landmarks is not None and p.torso_position is not None:
            errors.append(math.hypot(state.pose.x - p.torso_position[0], state.pose.y - p.torso_position[1]))
    return errors


def _model(exact: bool) -> WorldModel:
    return WorldModel(
        body_for('T1'), field_for('mujoco', 'ssim'), use_lines=False, locator=LocatorParameters(exact_fit=exact)
    )


def test_exact_fits_localize_several_times_better_than_the_particles() -> None:
    """The world model of an RCSSServerMJ player takes exact fits (no field lines, so ``exact_fit``): median
    error 2.2 cm on this walk against the particle filter's 17 cm, and the particles rest."""
    wm = WorldModel(body_for('T1'), field_for('mujoco', 'ssim'), use_lines=False)
    assert wm.locator.p.exact_fit
    exact = np.median(_walk(wm))
    particles = np.median(_walk(_model(False)))
    assert exact < 0.05 and exact < 0.5 * particles, (exact, particles)
    assert wm.locator.fits > 100 and wm.locator.resting


def test_a_swaying_walk_still_uses_every_see() -> None:
    """A walking T1 sways: half of this walk's Sees come with the body turning faster than 1 rad/s (a walk at
    0.5 m/s: all of them). Their tilt is fixed from the landmarks, so every one is used; with the rate limit of
    noisy vision the estimate dead-reckons between the calm ones (in a match, 2 m off after a 17 m walk)."""
    sees = sum(1 for _, p, _ in walk_cycles() if p.vision is not None)
    wm = WorldModel(body_for('T1'), field_for('mujoco', 'ssim'), use_lines=False)
    errors = _walk(wm)
    limited = WorldModel(
        body_for('T1'),
        field_for('mujoco', 'ssim'),
        use_lines=False,
        params=WorldModelParameters(max_rate_for_vision=1.0),
    )
    errors_limited = _walk(limited)
    assert wm.locator.fits == sees and limited.locator.fits < 0.6 * sees, (sees, wm.locator.fits, limited.locator.fits)
    p95, p95_limited = np.percentile(errors, 95), np.percentile(errors_limited, 95)
    assert p95 < 0.04 and p95 < 0.5 * p95_limited, (p95, p95_limited)


def test_a_robot_moved_by_the_referee_is_found_at_the_next_fit() -> None:
    """The estimate, sure of a place 3 m off, jumps to the fit at the next See rather than creep towards it."""
    wm = _model(True)
    moved = []

    def kidnap(i: int, inp: object) -> object:
        if i == 250:
            pose, cov, share = wm.locator.estimate()
            wm.locator._estimate = (pose + np.array([3.0, -2.0, 0.0]), cov, share)
            moved.append(wm.locator.kidnaps)
        return inp

    errors = _walk(wm, kidnap)
    assert wm.locator.kidnaps == moved[0] + 1
    assert max(errors[260:]) < 0.15, max(errors[260:])


def test_sees_without_a_fit_wake_the_particles_around_the_estimate() -> None:
    """Sees with one landmark (no fit) in cycles 200-260: the particles take over from the fit's estimate and
    stay near the truth; with two landmarks again, fits are taken again."""
    wm = _model(True)
    woken = []

    def one_landmark(i: int, inp: object) -> object:
        if not 200 <= i < 260 or inp.vision is None or not inp.vision.landmarks:
            return inp
        if i > 210:
            woken.append(not wm.locator.resting)
        first = dict(list(inp.vision.landmarks.items())[:1])
        return dataclasses.replace(inp, vision=dataclasses.replace(inp.vision, landmarks=first))

    errors = _walk(wm, one_landmark)
    assert woken and all(woken)
    assert max(errors[200:260]) < 0.3, max(errors[200:260])
    assert wm.locator.resting and np.median(errors[300:]) < 0.05


def test_the_plain_float_fit_is_the_particle_filters_candidate_and_likelihood() -> None:
    """The exact path's fit and score (plain floats) equal :meth:`SelfLocator.candidates` and
    :meth:`SelfLocator._log_likelihood` (numpy) on every See of the walk."""
    wm = _model(True)
    checked = []

    def compare(i: int, inp: object) -> object:
        level = wm.last_level
        if level is not None and (not checked or checked[-1] is not level):
            checked.append(level)
            fit = wm.locator._exact_fit(level)
            cands = wm.locator.candidates(level)
            if fit is None:
                assert len(cands) != 1 or sum(n in wm.field.landmarks for n in level.landmark_names) < 2
            else:
                ll, count = wm.locator._log_likelihood(cands, level)
                assert np.allclose(fit[0], cands[0], atol=1e-9), (fit[0], cands[0])
                assert abs(fit[1] - ll[0] / count) < 1e-9
        return inp

    _walk(wm, compare)
    assert len(checked) > 100


def test_a_see_with_a_non_finite_landmark_is_not_taken_as_a_fit() -> None:
    """A landmark at NaN in the level frame (nothing upstream should let one through, but the locator must
    not trust it): no fit is taken from that See and the estimate stays finite."""
    wm = _model(True)
    _walk(wm)
    level, fits = wm.last_level, wm.locator.fits
    marks = np.array(level.landmarks, dtype=float)
    marks[0, 0] = float('nan')
    wm.locator.update(dataclasses.replace(level, landmarks=marks), heading_hint=0.0)
    pose, cov, _ = wm.locator.estimate()
    assert wm.locator.fits == fits
    assert np.all(np.isfinite(pose)) and np.all(np.isfinite(cov))
