"""A kick of chosen length: a keyframe kick blended from its gentle version (getup.blend_skills), as kicks.yaml sets."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from robocup3d_bridge.config_files import ConfigError
from robocup3d_description.robots import robot_spec
from robocup3d_motion.core import MotionCore
from robocup3d_motion.getup import DATA_DIR, Keyframe, KeyframeSkill, blend_skills, check_blend, load_keyframe_skills
from robocup3d_motion.kick_config import ball_skills_for, load_kicks_config
from robocup3d_motion.motion_config import load_robots_config, load_walk_config
from robocup3d_motion.requests import Kick

T1 = robot_spec('mujoco', 'T1', 0)


def _skill(name: str, scale: float, frames: int = 2) -> KeyframeSkill:
    return KeyframeSkill(name, tuple(Keyframe(0.1 * scale * (i + 1), {'rlj1': -0.5 * scale}) for i in range(frames)))


def test_a_blend_runs_from_the_soft_skill_to_the_hard_one() -> None:
    soft, hard = _skill('SOFT', 1.0), _skill('HARD', 2.0)
    assert blend_skills(soft, hard, 0.0).frames == soft.frames
    assert blend_skills(soft, hard, 1.0).frames == hard.frames
    half = blend_skills(soft, hard, 0.5, 'HARD')
    assert half.name == 'HARD'
    assert half.frames[1].duration == pytest.approx(0.3) and half.frames[0].targets['rlj1'] == pytest.approx(-0.75)
    assert blend_skills(soft, hard, 7.0).frames == hard.frames  # clamped to 0-1


def test_skills_of_other_frames_or_joints_do_not_blend() -> None:
    with pytest.raises(ValueError, match='frames'):
        check_blend(_skill('SOFT', 1.0, frames=3), _skill('HARD', 2.0))
    other = KeyframeSkill('HARD', (Keyframe(0.1, {'rlj4': 1.0}), Keyframe(0.2, {'rlj1': 0.0})))
    with pytest.raises(ValueError, match='other joints'):
        check_blend(_skill('SOFT', 1.0), other)


def test_the_t1_soft_and_long_kicks_blend_with_their_feedback_and_both_feet() -> None:
    soft = {s.name: s for s in load_keyframe_skills(DATA_DIR / 'T1' / 'kick_soft.yaml', T1)}
    hard = {s.name: s for s in load_keyframe_skills(DATA_DIR / 'T1' / 'kick_long.yaml', T1)}
    for foot in ('RIGHT', 'LEFT'):
        mid = blend_skills(soft[f'KICK_SOFT_{foot}'], hard[f'KICK_LONG_{foot}'], 0.5)
        assert mid.balance is not None
        swing = [f.targets['rlj1' if foot == 'RIGHT' else 'llj1'] for f in mid.frames[2:4]]
        soft_swing = [f.targets['rlj1' if foot == 'RIGHT' else 'llj1'] for f in soft[f'KICK_SOFT_{foot}'].frames[2:4]]
        hard_swing = [f.targets['rlj1' if foot == 'RIGHT' else 'llj1'] for f in hard[f'KICK_LONG_{foot}'].frames[2:4]]
        for m, s, h in zip(swing, soft_swing, hard_swing, strict=True):
            assert min(s, h) - 1e-9 <= m <= max(s, h) + 1e-9


def _core(kicks: dict) -> MotionCore:
    skills = ball_skills_for(kicks, 'T1')
    return MotionCore(T1, load_robots_config('robots.yaml'), walk_cfg=load_walk_config('walk.yaml'), ball_skills=skills)


def _kick_at_the_spot(core: MotionCore, ball: tuple[float, float], skill: str) -> None:
    """Cycle the core, the robot at the origin facing +x and the ball at ``ball``, until ``skill`` starts."""
    for i in range(200):  # a kick's rest, then the kick
        t = 0.02 * i
        core.on_pose(t, 0.0, 0.0, 0.0)
        core.on_ball(t, *ball, 0.01)
        core.on_imu(t, (0.0, 0.0, 0.0), (0.0, 0.0, 9.81), wall=t)
        core.step(t, {}, wall=t)
        if core.skill == skill:
            return
    raise AssertionError(f'{skill} did not start: {core.state_dict().get("task")}')


def test_the_shipped_pass_kick_plays_the_long_kick_blended_to_the_strength_its_task_chose() -> None:
    core = _core(load_kicks_config())
    spec = core.ball_skills.kicks['pass']
    x, y = spec.ball  # the ball at the right foot's spot, the robot facing the way that sends it at the target
    a = spec.angle('right')
    target = (x + 0.5 * math.cos(a), y + 0.5 * math.sin(a))  # 0.5 m beyond it: nearer than the gentlest kick goes
    assert core.request(Kick(target=target, kick='pass', id=3).to_text()) == ''
    _kick_at_the_spot(core, (x, y), 'KICK_LONG_RIGHT')
    gentlest = spec.strength.curve[0][0]
    played = core.player.skill
    soft, hard = core.skills['KICK_SOFT_RIGHT'], core.skills['KICK_LONG_RIGHT']
    assert played.frames == blend_skills(soft, hard, gentlest).frames
    assert played.frames != core.skills['KICK_LONG_RIGHT'].frames
    assert core.task.state()['strength'] == gentlest


def test_a_pass_kick_whose_skills_do_not_blend_is_a_config_error(tmp_path: Path) -> None:
    kicks = load_kicks_config()
    bad = kicks['T1'].kicks['pass'].strength.model_copy(update={'right': 'GETUP_BACK', 'left': 'GETUP_BACK'})
    t1 = kicks['T1'].model_copy(
        update={'kicks': {'pass': kicks['T1'].kicks['pass'].model_copy(update={'strength': bad})}}
    )
    with pytest.raises(ConfigError, match='no blend'):
        _core({**kicks, 'T1': t1})


def test_the_nao_pass_kick_plays_kick_var_with_the_strength_for_the_distance() -> None:
    nao = robot_spec('simspark', 'nao', 0)
    skills = ball_skills_for(load_kicks_config(), 'nao', 0, 'simspark')
    walk = load_walk_config('walk.yaml')
    core = MotionCore(nao, load_robots_config('robots.yaml'), walk_cfg=walk, ball_skills=skills)
    spec = skills.kicks['pass']
    x, y = spec.ball
    assert core.request(Kick(target=(x + 2.5, y), kick='pass', id=3).to_text()) == ''  # 2.5 m: between 1.9 and 2.95
    _kick_at_the_spot(core, (x, y), 'KICK_VAR_RIGHT')
    strength = core.task.state()['strength']
    assert 0.5 < strength < 0.75 and spec.strength.at(strength)[0] == pytest.approx(2.5, abs=0.01)
    played = core._skl.with_overrides('KICK_VAR_RIGHT', {'kick_strength': core.task.strength})
    assert core.player.skill is played and played is not core._skl['KICK_VAR_RIGHT']  # with its own kick_strength


@pytest.mark.parametrize('robot_type', [1, 3])
def test_nao_types_that_fall_after_a_soft_kick_var_have_no_pass_kick(robot_type: int) -> None:
    assert 'pass' not in ball_skills_for(load_kicks_config(), 'nao', robot_type, 'simspark').kicks
