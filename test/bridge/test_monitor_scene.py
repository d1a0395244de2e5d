"""Agent torso poses from rcssserver3d's monitor scene graph (the trainer's ground truth)."""

from __future__ import annotations

import pytest

from robocup3d_bridge.trainer import simspark_torsos


def test_torsos_follow_the_beams_of_the_captured_match(shared_dir) -> None:
    lines = (shared_dir / 'captures/simspark/match_monitor_port3200.txt').read_text().splitlines()
    # Full scenes are resent when an agent joins (captures README): message 13 is the third join.
    torsos = simspark_torsos(lines[12])
    assert set(torsos) == {('Left', 1), ('Left', 2), ('Right', 1)}
    # A1 beamed to (-2, 0), A2 to (-5, 1) (beam noise up to 0.05 m); B1 not beamed yet.
    assert torsos[('Left', 1)][0][:2] == pytest.approx((-2.0, 0.0), abs=0.06)
    assert torsos[('Left', 2)][0][:2] == pytest.approx((-5.0, 1.0), abs=0.06)
    assert torsos[('Right', 1)][0][:2] == pytest.approx((14.2, 9.2), abs=0.01)
    assert all(up[2] > 0.99 for _, up in torsos.values())  # all standing


def test_no_agents_and_diffs_give_nothing(shared_dir) -> None:
    lines = (shared_dir / 'captures/simspark/match_monitor_port3200.txt').read_text().splitlines()
    assert simspark_torsos(lines[0]) == {}  # the scene before any agent joined
    assert simspark_torsos(lines[20]) == {}  # an (RDS) diff carries no meshes
