"""Field models, polar -> point geometry and the orientation filter (hand-computable checks)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from robocup3d_bridge.perception import parse_percept
from robocup3d_description.body import body_for
from robocup3d_description.kinematics import camera_pose, quat_matrix
from robocup3d_perception.field import field_for, mujoco_field, simspark_field
from robocup3d_perception.orientation import OrientationFilter, tilt_matrix
from robocup3d_perception.vision_geometry import (
    CameraModel,
    observations_from_vision,
    polar_to_camera,
    polars_to_camera,
)


@pytest.mark.parametrize(
    ('fld', 'name', 'xyz'),
    [
        (simspark_field(), 'F1L', (-15, 10, 0)),
        (simspark_field(), 'F2R', (15, -10, 0)),
        (simspark_field(), 'G1R', (15, 1.05, 0.8)),
        (simspark_field(), 'G2L', (-15, -1.05, 0.8)),
        (mujoco_field('ssim'), 'l_llf', (-27.5, -18, 0)),
        (mujoco_field('ssim'), 't_cuf', (0, 18, 0)),
        (mujoco_field('ssim'), 'x_cuc', (0, 5.5, 0)),
        (mujoco_field('ssim'), 'p_lpm', (-27.5 + 7.32, 0, 0)),
        (mujoco_field('ssim'), 'g_lup', (-27.5, 1.83, 1.83)),
        (mujoco_field('ssim'), 'l_ruga', (23.5, 7.3, 0)),  # the server uses the full area width as y
        (mujoco_field('ssim'), 't_rlpa', (27.5, -16.5, 0)),
        (mujoco_field('fifa'), 'l_luf', (-52.5, 34, 0)),
        (mujoco_field('fifa'), 'p_rpm', (41.5, 0, 0)),
        (mujoco_field('fifa'), 'g_rlp', (52.5, -3.66, 2.44)),
    ],
)
def test_landmark_positions(fld, name, xyz) -> None:
    assert np.allclose(fld.landmarks[name], xyz)


def test_field_for_rejects_unknown() -> None:
    assert field_for('mujoco', 'ssim26') is mujoco_field('ssim26')
    with pytest.raises(ValueError, match='rules'):
        field_for('mujoco', 'nope')
    with pytest.raises(ValueError, match='server'):
        field_for('nope')


@pytest.mark.parametrize(
    ('polar', 'xyz'),
    [
        ((2.0, 0.0, 0.0), (2.0, 0.0, 0.0)),
        ((2.0, math.pi / 2, 0.0), (0.0, 2.0, 0.0)),  # azimuth positive to the left
        ((2.0, 0.0, math.pi / 6), (math.sqrt(3), 0.0, 1.0)),  # elevation positive upwards
        ((1.0, -math.pi / 4, -math.pi / 4), (0.5, -0.5, -math.sqrt(0.5))),
    ],
)
def test_polar_to_camera(polar, xyz) -> None:
    assert np.allclose(polar_to_camera(*polar), xyz)
    assert np.allclose(polars_to_camera(np.array([polar]))[0], xyz)


def test_tilt_matrix_levels_a_pitched_torso() -> None:
    # Torso pitched forward by 30 deg: a point straight ahead along torso x lies 30 deg below level.
    t = tilt_matrix(0.0, math.radians(30))
    p = t @ np.array([1.0, 0, 0])
    assert np.allclose(p, (math.cos(math.radians(30)), 0, -math.sin(math.radians(30))))


def test_orientation_filter_tilt_from_gravity_and_yaw_from_gyro() -> None:
    f = OrientationFilter()
    pitch = math.radians(20)
    g_torso = tilt_matrix(0.0, pitch).T @ np.array([0, 0, 9.81])  # what the accelerometer reads
    w_torso = tilt_matrix(0.0, pitch).T @ np.array([0, 0, 0.5])  # turning about the vertical at 0.5 rad/s
    total = 0.0
    for _ in range(100):
        total += f.update(tuple(w_torso), tuple(g_torso), 0.02)
    assert f.pitch == pytest.approx(pitch, abs=0.02)
    assert f.roll == pytest.approx(0.0, abs=0.02)
    assert total == pytest.approx(1.0, abs=0.02)


def test_mujoco_landmarks_project_onto_the_capture(shared_dir) -> None:
    """The MJ capture's first See, from the ground-truth pose: field model + camera FK agree to 2 cm."""
    lines = (shared_dir / 'captures/rcssservermj/capture_T1.txt').read_text().splitlines()
    p = next(parse_percept(ln) for ln in lines if '(See' in ln)
    body, fld = body_for('T1'), mujoco_field('ssim')
    world_torso = np.eye(4)
    world_torso[:3, :3] = quat_matrix(p.torso_orientation)
    world_torso[:3, 3] = p.torso_position
    cam = world_torso @ camera_pose(body, p.joint_positions)
    obs = observations_from_vision(p.vision)
    assert len(obs.landmarks) >= 8
    for name, xyz in obs.landmarks.items():
        predicted = cam[:3, :3] @ np.asarray(xyz) + cam[:3, 3]
        assert np.allclose(predicted, fld.landmarks[name], atol=0.03), name


def test_level_frame_places_simspark_landmarks(shared_dir) -> None:
    """Ground-truth run, after the first beam: landmarks (13-22 m away) land within 15 cm (0.4 deg at 22 m)."""
    lines = (shared_dir / 'captures/simspark/groundtruth_type0_single_agent.txt').read_text().splitlines()
    p = parse_percept(lines[27])  # cycle 28: standing still at (-5.03, 0.03), heading 7.87 deg
    v = p.vision
    level = CameraModel(body_for('nao0')).to_level(observations_from_vision(v), p.joint_positions, np.eye(3))
    yaw = v.my_orientation
    c, s = math.cos(yaw), math.sin(yaw)
    fld = simspark_field()
    for name, pt in zip(level.landmark_names, level.landmarks, strict=True):
        world = np.array(v.my_position[:2]) + np.array([c * pt[0] - s * pt[1], s * pt[0] + c * pt[1]])
        assert np.allclose(world, fld.landmarks[name][:2], atol=0.15), name


def test_simspark_lines_lie_on_field_lines(shared_dir) -> None:
    """Seen lines placed with the ground truth fall on the modelled field lines (the line geometry)."""
    from robocup3d_perception.particle_filter import line_distance_map  # noqa: PLC0415

    lines = (shared_dir / 'captures/simspark/groundtruth_type0_single_agent.txt').read_text().splitlines()
    fld = simspark_field()
    grid, x0, y0 = line_distance_map(fld)
    cam = CameraModel(body_for('nao0'))
    dists = []
    for i in range(30, 180):
        p = parse_percept(lines[i])
        v = p.vision
        if v is None or not v.lines or v.my_position is None:
            continue
        level = cam.to_level(observations_from_vision(v), p.joint_positions, np.eye(3))
        yaw = v.my_orientation - level.camera_yaw
        c, s = math.cos(yaw), math.sin(yaw)
        for a, b in level.lines[:, :, :2]:
            for t in (0.0, 0.5, 1.0):
                q = a + t * (b - a)
                if np.hypot(*q) > 10:
                    continue
                w = np.array(v.my_position[:2]) + np.array([c * q[0] - s * q[1], s * q[0] + c * q[1]])
                dists.append(grid[int((w[0] - x0) * 20), int((w[1] - y0) * 20)])
    assert len(dists) > 50
    assert np.median(dists) < 0.1
    assert np.percentile(dists, 90) < 0.3


def _box_distances(grid: tuple) -> list[float]:
    """Seen line points near our goal in our goalie's percepts (a half against UT Austin Villa, 2 s, standing in
    goal), placed with its world model's fitted pose, and their distance to the nearest line of ``grid``."""
    from robocup3d_perception import world_model  # noqa: PLC0415
    from robocup3d_tools.localize import run_capture  # noqa: PLC0415

    lines = (Path(__file__).parents[1] / 'data' / 'simspark_goalie_box.txt').read_text().splitlines()
    table, x0, y0 = grid
    out: list[float] = []
    update = world_model.WorldModel.update

    def placing(self, inp):
        state = update(self, inp)
        level = self.last_level
        if inp.vision is None or level is None or not self.locator.resting:
            return state
        c, s = math.cos(state.pose.yaw), math.sin(state.pose.yaw)
        for a, b in level.lines[:, :, :2]:
            for t in (0.0, 0.25, 0.5, 0.75, 1.0):
                q = a + t * (b - a)
                w = (state.pose.x + c * q[0] - s * q[1], state.pose.y + s * q[0] + c * q[1])
                if math.hypot(*q) < 6.0 and w[0] < -12.5:
                    out.append(float(table[int((w[0] - x0) * 20), int((w[1] - y0) * 20)]))
        return state

    world_model.WorldModel.update = placing
    try:
        list(run_capture(lines))
    finally:
        world_model.WorldModel.update = update
    return out


def test_simspark_penalty_areas_are_six_metres_wide() -> None:
    """rcssserver3d's penalty area is 1.8 x 6.0 m (its ``PenaltyWidth`` 3.9 plus ``GoalWidth`` 2.1), not the
    3.9 its game info names: the lines our goalie sees around it lie on the 6 m model's lines, and a quarter or
    more of them far (> 0.5 m) from a 3.9 m model's."""
    from robocup3d_perception.field import _make, _rect_lines  # noqa: PLC0415
    from robocup3d_perception.particle_filter import line_distance_map  # noqa: PLC0415

    fld = simspark_field()
    narrow_lines = _rect_lines(15.0, 10.0, 1.8, 1.95)
    narrow = _make('simspark', 30.0, 20.0, 2.1, 0.8, dict(fld.landmarks), narrow_lines, [(0.0, 0.0, 2.0)])
    dists = _box_distances(line_distance_map(fld))
    assert len(dists) > 200
    assert np.median(dists) < 0.1 and np.percentile(dists, 90) < 0.3
    assert np.percentile(_box_distances(line_distance_map(narrow)), 75) > 0.5


def test_orientation_filter_ignores_a_landing_impact_at_the_start() -> None:
    """A beam lands the robot with a jolt: that first reading (far from 1 g) must not set the tilt."""
    f = OrientationFilter()
    f.update((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.02)  # in the air
    f.update((0.0, 2.1, 0.0), (7.44, 0.02, 1.43), 0.02)  # the landing (RCSSServerMJ, seen live)
    for _ in range(5):
        f.update((0.0, 0.0, 0.0), (0.0, 0.0, 9.81), 0.02)
    assert abs(f.pitch) < math.radians(3) and abs(f.roll) < math.radians(1)


def test_orientation_filter_recovers_from_a_wrong_tilt_while_swaying() -> None:
    """Started 40 degrees off, a robot swaying at 1.5 Hz (+-3 m/s^2 forward) settles within 2 s.

    Its sway accelerations must not pull the tilt about (no rotation: the gyro reads 0).
    """
    f = OrientationFilter()
    f.update(None, (0.0, 0.0, 9.81), 0.02)
    f.rotation = tilt_matrix(0.0, math.radians(-40))
    errs = []
    for i in range(150):
        sway = 3.0 * math.sin(2 * math.pi * 1.5 * i * 0.02)
        f.update((0.0, 0.0, 0.0), (sway, 0.0, 9.81), 0.02)
        errs.append(abs(math.degrees(f.pitch)))
    assert max(errs[100:]) < 3.0
