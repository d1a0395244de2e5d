"""``bench/getup_offline.py``: the shipped T1 get-ups in the direct-MuJoCo model, and its search's output."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from offline_support import bench_script

from robocup3d_motion.getup import DATA_DIR, load_keyframe_skill


@pytest.fixture(scope='module')
def offline():
    return bench_script('getup_offline')


@pytest.fixture(scope='module')
def sim(offline):
    return offline.Sim('T1')


@pytest.mark.parametrize(('direction', 'lo', 'hi'), [('front', 3.0, 4.5), ('back', 2.5, 3.2)])
def test_the_shipped_t1_getups_get_up_at_the_first_attempt_without_noise(sim, direction, lo, hi) -> None:
    """The model's clean times are near the server's (front 3.28 s to standing since session 42, back 2.82 s from the
    fall report): a second attempt would take 6 s or more."""
    took = sim.trial({}, direction, seed=0, noise=0.0)
    assert took is not None and lo <= took <= hi, took


def test_bench_upright_counts_before_the_getup_is_over(sim) -> None:
    """``until='upright'`` times as bench_getup does: the torso is up during the rise, before the stand takes over."""
    stand = sim.trial({}, 'back', seed=0, noise=0.0)
    upright = sim.trial({}, 'back', seed=0, noise=0.0, until='upright')
    assert stand is not None and upright is not None and upright < stand


def test_the_back_frames_alone_do_not_get_up_from_the_front(sim) -> None:
    """Face down, the back get-up's frames cannot sit the robot up: the front needs its roll."""
    back = load_keyframe_skill(DATA_DIR / 'T1' / 'getup_back.yaml', sim.spec)
    front_as_back = type(back)('GETUP_FRONT', back.frames, back.kp, back.kd)
    assert sim.trial({'GETUP_FRONT': front_as_back}, 'front', seed=0, noise=0.0, timeout=4.0) is None


def test_a_search_generation_writes_a_skill_within_the_joint_limits(offline, sim, tmp_path: Path) -> None:
    """The CMA mean is written as a skill file the player loads (joints clamped to their ranges, twins mirrored)."""
    names = ['3.t', '10.llj1', '10.llj2']
    offline.search(sim, DATA_DIR / 'T1' / 'getup_front.yaml', 'front', names, 1, 1, 0.5, tmp_path / 'cand')
    doc = yaml.safe_load((tmp_path / 'cand.yaml').read_text(encoding='utf-8'))
    skill = load_keyframe_skill(tmp_path / 'cand.yaml', sim.spec)  # raises outside a joint's range
    assert skill.name == 'GETUP_FRONT' and len(skill.frames) == 14
    q = doc['frames'][10]['q']
    assert q['rlj1'] == q['llj1'] and q['rlj2'] == -q['llj2']
    assert 0.02 <= doc['frames'][3]['t'] <= 0.8
