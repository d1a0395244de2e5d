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


def test_ball_position_from_full_scenes(shared_dir) -> None:
    from robocup3d_bridge.trainer import simspark_ball  # noqa: PLC0415

    lines = (shared_dir / 'captures/simspark/match_monitor_port3200.txt').read_text().splitlines()
    assert simspark_ball(lines[0]) == pytest.approx((0.0, 0.0, 0.0403), abs=0.001)  # on the centre spot
    assert simspark_ball(lines[20]) is None  # an (RDS) diff carries no meshes
    scene = (
        '(RSG 0 1)((nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1))'
        '(nd TRF (SLT 1 0 0 0 0 1 0 0 0 0 1 0 1.5 -0.25 0.042 1)'
        '(nd StaticMesh (setVisible 1) (load models/soccerball.obj) (sSc 0.042 0.042 0.042))))'
    )
    assert simspark_ball(scene) == pytest.approx((1.5, -0.25, 0.042))
