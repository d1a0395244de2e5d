"""A Nao skill's own P gain (``$<skill>_kp`` in its parameter files), in force only while it plays."""

from __future__ import annotations

from pathlib import Path

from robocup3d_bridge.config_files import load_config
from robocup3d_description.robots import robot_spec
from robocup3d_motion.core import MotionCore


def _core(tmp_path: Path, params: str) -> MotionCore:
    path = tmp_path / 'params.txt'
    path.write_text(params + 'getup_back_fast\t0\n')  # type 0 plays GETUP_BACK itself, not its fast variant
    return MotionCore(robot_spec('simspark', 'nao', 0), load_config('robots.yaml'), skill_params=(str(path),))


def _play(core: MotionCore, skill: str, cycles: int) -> list[dict[str, float]]:
    """Request ``skill`` and step ``cycles`` cycles upright; the gains in force at each."""
    measured = dict.fromkeys(core.robot.joint_names, 0.0)
    gains = []
    for i in range(cycles):
        t = i * 0.02
        core.on_imu(t, (0.0, 0.0, 0.0), (0.0, 0.0, 9.81), float(i))
        if i == 25:
            assert core.request(skill) == ''
        core.step(t, measured, float(i))
        gains.append(core.gains()[0])
    return gains


def test_a_skill_with_its_own_gain_drives_every_joint_with_it_and_only_while_it_plays(tmp_path: Path) -> None:
    core = _core(tmp_path, 'getup_back_kp\t40\n')
    robot_kp = dict(core.settings.kp)
    assert set(robot_kp.values()) != {40.0}
    gains = _play(core, 'GETUP_BACK', 25 + 400)
    assert gains[24] == robot_kp  # standing: the robot's own
    assert gains[26] == dict.fromkeys(robot_kp, 40.0)
    assert core.skill != 'GETUP_BACK'  # it ended within 8 s ...
    assert gains[-1] == robot_kp  # ... and the robot's gains are back


def test_skills_without_the_parameter_keep_the_robot_gains(tmp_path: Path) -> None:
    core = _core(tmp_path, 'getup_back_kp\t40\n')
    gains = _play(core, 'GETUP_FRONT', 30)
    assert gains[26] == dict(core.settings.kp)
