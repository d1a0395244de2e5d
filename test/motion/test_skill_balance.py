"""A keyframe skill's own IMU feedback (``balance:`` in its YAML file; getup.SkillBalance)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from robocup3d_bridge.config_files import ConfigError, load_config
from robocup3d_description.robots import robot_spec
from robocup3d_motion.core import MotionCore
from robocup3d_motion.getup import SkillBalance, load_keyframe_skills

D = math.radians


def _write(tmp_path: Path, balance: str) -> Path:
    path = tmp_path / 'kick.yaml'
    path.write_text(
        'name: K_RIGHT\nmirror: K_LEFT\n'
        f'{balance}\n'
        'frames:\n  - {t: 0.2, q: {rlj1: -20, llj2: -5}}\n  - {t: 0.2, q: {rlj1: -12, llj2: 0}}\n'
    )
    return path


def test_offsets_sum_the_gains_and_clamp() -> None:
    b = SkillBalance(
        pitch={'llj1': 0.5, 'llj5': 1.0},
        pitch_rate={'llj1': 0.1},
        roll={'llj2': -0.5},
        roll_rate={'llj6': 0.2},
        ref_pitch=D(2.0),
        max_offset=D(5.0),
    )
    out = b.offsets(0.1, D(4.0), D(-2.0), D(10.0), D(5.0))
    assert out['llj1'] == pytest.approx(D(0.5 * 2.0 + 0.1 * 10.0))
    assert out['llj5'] == pytest.approx(D(2.0))
    assert out['llj2'] == pytest.approx(D(1.0))
    assert out['llj6'] == pytest.approx(D(1.0))
    assert b.offsets(0.1, D(40.0), 0.0, 0.0, 0.0)['llj5'] == pytest.approx(D(5.0))  # clamped


def test_offsets_only_within_the_window_and_for_finite_readings() -> None:
    b = SkillBalance(pitch={'llj1': 1.0}, start=0.2, end=0.5)
    assert b.offsets(0.1, 0.1, 0.0, 0.0, 0.0) == {}
    assert b.offsets(0.6, 0.1, 0.0, 0.0, 0.0) == {}
    assert b.offsets(0.3, 0.1, 0.0, 0.0, 0.0) == {'llj1': pytest.approx(0.1)}
    assert b.offsets(0.3, math.nan, 0.0, 0.0, 0.0) == {}


def test_the_mirror_answers_the_mirrored_lean_with_the_mirrored_joints() -> None:
    """The left kick's feedback to a mirrored lean is the right kick's mirrored (mirror_joint's signs)."""
    b = SkillBalance(pitch={'llj1': 0.5, 'llj2': 0.3}, roll={'llj2': -0.5, 'llj5': 0.4}, roll_rate={'llj6': 0.2})
    m = b.mirrored()
    pitch, roll, rate = D(3.0), D(2.0), D(7.0)
    right = b.offsets(0.0, pitch, roll, 0.0, rate)
    left = m.offsets(0.0, pitch, -roll, 0.0, -rate)  # the mirror image leans the other way
    assert left['rlj1'] == pytest.approx(right['llj1'])  # pitch joints keep their sign
    assert left['rlj5'] == pytest.approx(right['llj5'])
    assert left['rlj2'] == pytest.approx(-right['llj2'])  # roll joints flip
    assert left['rlj6'] == pytest.approx(-right['llj6'])


def test_yaml_balance_loads_for_the_skill_and_its_mirror(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'balance: {pitch: {llj1: 0.5}, roll: {llj2: -0.4}, roll_rate: {llj6: 0.1}, max_offset_deg: 12, '
        'from: 0.1, until: 0.3}',
    )
    right, left = load_keyframe_skills(path, robot_spec('mujoco', 'T1'))
    assert right.balance is not None and left.balance is not None
    assert right.balance.pitch == {'llj1': 0.5}
    assert right.balance.max_offset == pytest.approx(D(12.0))
    assert (right.balance.start, right.balance.end) == (0.1, 0.3)
    assert left.balance.pitch == {'rlj1': 0.5}
    assert left.balance.roll == {'rlj2': -0.4}
    assert left.balance.roll_rate == {'rlj6': 0.1}
    assert load_keyframe_skills(_write(tmp_path, ''), robot_spec('mujoco', 'T1'))[0].balance is None


@pytest.mark.parametrize(
    ('balance', 'words'),
    [
        ('balance: {pitch: {xlj1: 0.5}}', 'does not have'),
        ('balance: {pitch: {llj1: .nan}}', 'finite'),
        ('balance: {gain: 1}', 'unknown keys'),
        ('balance: {from: 1.0, until: 0.5}', 'from <= until'),
        ('balance: [1, 2]', 'mapping'),
    ],
)
def test_bad_balance_sections_are_refused(tmp_path: Path, balance: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        load_keyframe_skills(_write(tmp_path, balance), robot_spec('mujoco', 'T1'))


def test_the_core_adds_the_feedback_while_the_skill_plays(tmp_path: Path) -> None:
    robot = robot_spec('mujoco', 'T1')
    path = _write(tmp_path, 'balance: {pitch: {llj5: 1.0}, max_offset_deg: 10}')
    core = MotionCore(robot, load_config('robots.yaml'), skill_params=(str(path),))
    measured = dict.fromkeys(robot.joint_names, 0.0)
    lean = D(5.0)  # torso pitched forwards: gravity along -z of a frame turned about y
    accel = (-9.81 * math.sin(lean), 0.0, 9.81 * math.cos(lean))
    for i in range(60):  # let the fall detector settle on the lean
        core.on_imu(i * 0.02, (0.0, 0.0, 0.0), accel, float(i))
        core.step(i * 0.02, measured, float(i))
    assert core.state.pitch == pytest.approx(lean, abs=D(0.5))
    assert core.request('K_RIGHT') == ''
    t = 60 * 0.02
    core.on_imu(t, (0.0, 0.0, 0.0), accel, 60.0)
    cmd = core.step(t, measured, 60.0)
    core_plain = MotionCore(robot, load_config('robots.yaml'), skill_params=(str(_write(tmp_path, '')),))
    for i in range(61):
        core_plain.on_imu(i * 0.02, (0.0, 0.0, 0.0), accel, float(i))
        if i == 60:
            assert core_plain.request('K_RIGHT') == ''
        plain = core_plain.step(i * 0.02, measured, float(i))
    assert cmd['llj5'] - plain['llj5'] == pytest.approx(core.state.pitch, abs=1e-6)
    assert cmd['rlj5'] == pytest.approx(plain['rlj5'])
