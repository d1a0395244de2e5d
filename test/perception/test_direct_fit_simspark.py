"""Self-localization on rcssserver3d: direct fits of the noisy landmarks, checked against the seen lines.

Real captures of rcssserver3d 0.7.3 (``../shared/captures/simspark``): a match's type 0 player, and a
single agent whose messages carry the server's ground truth (``mypos``), used only for scoring.
"""

from __future__ import annotations

import numpy as np
import pytest

from robocup3d_bridge.perception import parse_percept
from robocup3d_description.body import body_for
from robocup3d_perception import world_model
from robocup3d_perception.field import field_for
from robocup3d_perception.inputs import cycle_input
from robocup3d_perception.particle_filter import LocatorParameters, SelfLocator
from robocup3d_perception.world_model import WorldModel
from robocup3d_tools.localize import run_capture, summarize


def _lines(shared_dir, name: str) -> list[str]:
    return (shared_dir / 'captures' / 'simspark' / name).read_text().splitlines()


def test_a_match_player_takes_most_sees_as_direct_fits(shared_dir) -> None:
    """In a real match the head's sweep shows two landmarks or more in most Sees, and their fit agrees with
    the lines: the particles rest through most of it (the cheaper path), and wake for the rest."""
    wm = WorldModel(body_for('nao0'), field_for('simspark'), use_lines=True)
    assert wm.locator.p.exact_fit and wm.locator.p.exact_sigma_xy > 0.02  # weighted as noisy
    sees = 0
    for line in _lines(shared_dir, 'match_A1_Alpha1_type0.txt'):
        p = parse_percept(line)
        if p.time is None:
            continue
        inp = cycle_input(p)
        sees += inp.vision is not None
        wm.update(inp)
    assert sees > 400
    assert wm.locator.fits > 0.8 * sees, (wm.locator.fits, sees)


def test_direct_fits_localize_as_well_as_the_particles(shared_dir, monkeypatch) -> None:
    """Against the server's ground truth (a standing robot, 52 scored Sees), the fits' median position error,
    averaged over four seeds, is at most a quarter above the particles' alone and below 6 cm. (A half of a
    match, replayed, is where the fits were found twice as accurate: docs/benchmarks.md, Perception.)"""
    lines = _lines(shared_dir, 'groundtruth_type0_single_agent.txt')

    def error() -> float:
        runs = [summarize(list(run_capture(lines, seed=seed))) for seed in range(4)]
        assert all(r.scored > 50 for r in runs)
        return float(np.mean([r.pos_median for r in runs]))

    fits = error()
    monkeypatch.setattr(world_model, 'locator_parameters', lambda noisy_vision: LocatorParameters())
    particles = error()
    assert fits < 0.06 and fits <= 1.25 * particles, (fits, particles)


@pytest.mark.parametrize('offset', [(0.3, 0.0), (0.0, -0.3)])
def test_a_fit_the_lines_disagree_with_is_left_to_the_particles(shared_dir, offset) -> None:
    """Landmarks shifted alike (as a camera pose off by a degree or two shifts them) fit one another but not
    the lines: such a fit is not taken."""
    wm = WorldModel(body_for('nao0'), field_for('simspark'), use_lines=True)
    loc: SelfLocator = wm.locator
    taken = refused = 0
    for line in _lines(shared_dir, 'match_A1_Alpha1_type0.txt')[:600]:
        p = parse_percept(line)
        if p.time is None:
            continue
        inp = cycle_input(p)
        wm.update(inp)
        level = wm.last_level
        if inp.vision is None or level is None or not len(level.lines) or len(level.landmark_names) < 2:
            continue
        fit = loc._exact_fit(level)
        if fit is None or fit[1] < loc.p.exact_fit_score:
            continue
        taken += loc._lines_agree(level, fit[0])
        shifted = fit[0] + np.array([*offset, 0.0])
        refused += not loc._lines_agree(level, shifted)
    assert taken > 50
    assert refused > 0.8 * taken, (refused, taken)
