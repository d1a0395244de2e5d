"""The torso tilt checked against the landmarks' heights (robocup3d_perception.tilt_fix), on real RCSSServerMJ
traffic and on a made-up See."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robocup3d_bridge.perception import parse_percept
from robocup3d_description.body import body_for
from robocup3d_description.kinematics import quat_matrix
from robocup3d_perception.field import field_for
from robocup3d_perception.inputs import cycle_input
from robocup3d_perception.orientation import tilt_matrix
from robocup3d_perception.representations import LevelObservations
from robocup3d_perception.tilt_fix import _rotation, correct_tilt, tilt_error
from robocup3d_perception.vision_geometry import CameraModel

FIELD = field_for('mujoco', 'ssim')


def _see(names: list[str], pose=(-0.41, -0.1), height: float = 0.65) -> np.ndarray:
    """The named landmarks as a level frame at ``pose`` (facing +x), ``height`` m above the ground, sees them."""
    return np.array([FIELD.landmarks[n] - np.array([pose[0], pose[1], height]) for n in names])


def _level(names: list[str], points: np.ndarray) -> LevelObservations:
    return LevelObservations(tuple(names), points, None, (), np.zeros((0, 2, 3)), 0.0, 0.4, np.eye(3), np.zeros(3))


def _ground(level: LevelObservations) -> np.ndarray:
    """Each landmark's distance along the ground and height (level frame): what a turn about the vertical keeps."""
    pts = level.landmarks
    return np.column_stack([np.hypot(pts[:, 0], pts[:, 1]), pts[:, 2]])


def test_a_see_turned_by_a_tilt_error_is_turned_back_from_its_landmarks_heights() -> None:
    """A T1 at its kick-off place sees the far goal's 13 landmarks; its filter's pitch 9 degrees off put every
    one 0.2-0.3 m nearer along the ground (session 43). From the heights the error is found and undone."""
    names = [n for n, p in FIELD.landmarks.items() if p[0] > 15.0]
    true = _see(names)
    seen = true @ _rotation(0.01, -0.15).T
    assert np.abs(np.hypot(seen[:, 0], seen[:, 1]) - np.hypot(true[:, 0], true[:, 1])).max() > 0.2
    assert tilt_error(_level(names, seen), FIELD.landmarks) == pytest.approx((0.01, -0.15), abs=1e-4)
    fixed = correct_tilt(_level(names, seen), FIELD.landmarks)
    assert np.abs(fixed.landmarks - true).max() < 1e-3


def test_too_few_strung_along_a_line_misnamed_or_garbled_landmarks_leave_the_see_as_it_is() -> None:
    far = [n for n, p in FIELD.landmarks.items() if p[0] > 15.0]
    seen = _see(far) @ _rotation(0.0, -0.1).T
    three = _level(far[:3], seen[:3])  # three fit any tilt exactly: nothing to check it by
    assert correct_tilt(three, FIELD.landmarks) is three
    # a goal line's points seen end on, from its extension beyond the touchline: they tell the tilt along it only
    line = [n for n in far if abs(FIELD.landmarks[n][0] - 27.5) < 1e-6 and FIELD.landmarks[n][2] == 0.0]
    assert len(line) >= 4
    strung = _level(line, _see(line, pose=(27.5, 25.0)) @ _rotation(0.05, -0.1).T)
    assert correct_tilt(strung, FIELD.landmarks) is strung
    wrong = seen.copy()
    wrong[0, 2] += 1.5  # one seen 1.5 m higher than its name says: no tilt explains it
    misnamed = _level(far, wrong)
    assert correct_tilt(misnamed, FIELD.landmarks) is misnamed
    for bad in (math.nan, math.inf):
        broken = seen.copy()
        broken[1, 0] = bad
        garbled = _level(far, broken)
        assert correct_tilt(garbled, FIELD.landmarks) is garbled


def test_on_real_traffic_a_wrong_tilt_gives_the_same_see_as_the_right_one(shared_dir) -> None:
    """RCSSServerMJ's own messages (a T1, its torso's true orientation in the capture): each See placed with the
    true tilt, and with a tilt 9 degrees off in pitch and 3 in roll, comes out the same once checked: each
    landmark's distance along the ground to 2 cm (its height to 10 cm); the true tilt needs (almost) no turn.
    (Heights show no turn about the vertical: the two tilts' few tenths of a degree of it are the locator's to find.)"""
    camera = CameraModel(body_for('T1'))
    lines = (shared_dir / 'captures' / 'rcssservermj' / 'capture_T1.txt').read_text().splitlines()
    compared = 0
    for ln in lines:
        p = parse_percept(ln)
        inp = cycle_input(p)
        if inp.vision is None or p.torso_orientation is None:
            continue
        up = quat_matrix(p.torso_orientation)
        roll, pitch = math.atan2(up[2, 1], up[2, 2]), math.asin(max(-1.0, min(1.0, -up[2, 0])))
        right = camera.to_level(inp.vision, inp.joints, tilt_matrix(roll, pitch))
        if tilt_error(right, FIELD.landmarks) is None:
            continue
        off = camera.to_level(inp.vision, inp.joints, tilt_matrix(roll + math.radians(3.0), pitch + math.radians(9.0)))
        fixed, checked = correct_tilt(off, FIELD.landmarks), correct_tilt(right, FIELD.landmarks)
        along, height = np.abs(_ground(fixed) - _ground(checked)).max(axis=0)
        assert along < 0.02 and height < 0.1
        assert np.abs(_ground(off) - _ground(right))[:, 0].max() > 0.2
        assert np.abs(_ground(checked) - _ground(right))[:, 0].max() < 0.02
        compared += 1
    assert compared >= 10
