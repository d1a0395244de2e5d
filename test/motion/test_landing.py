"""The get-up's start on the landing (``robocup3d_motion.landing``) and MotionCore's use of it: pure, no server."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from robocup3d_bridge.config_files import load_config
from robocup3d_description.robots import nao
from robocup3d_motion.core import MotionCore
from robocup3d_motion.landing import G, LandingRule, LandingWatch

BACK = (G, 0.0, 0.0)  # the accelerometer of a Nao lying on its back (REP-103 torso axes)
NO_FAST = 'getup_back_fast\t0\n'  # type 0 then plays GETUP_BACK itself, whose rules these tests set


def _fall(watch: LandingWatch, samples: list[tuple[float, float]]) -> float | None:
    """Feed (pitch rate rad/s, |accel| m/s^2) every 0.02 s from the report at 0; when it landed."""
    watch.start(0.0)
    for k, (rate, acc) in enumerate(samples):
        t = 0.02 * k
        if watch.update(t, (0.0, rate, 0.0), (acc, 0.0, 0.0)):
            return t
    return None


# a fall reported 0.1 s before the impact: falling at -3 rad/s, the impact, 0.1 s airborne, then lying
EARLY = [(-3.0, 8.0)] * 5 + [(2.5, 40.0), (1.0, 2.0), (0.4, 3.0), (0.3, 5.0), (0.2, 9.5)] + [(0.1, G)] * 20
# a fall reported at the impact
LATE = [(-3.0, 38.0), (0.5, 16.0), (0.7, 9.0), (0.3, 8.0), (0.2, 9.6)] + [(0.1, G)] * 20


def test_the_rebound_fires_at_the_impact_however_early_the_fall_was_reported() -> None:
    watch = LandingWatch(LandingRule(rebound=1.0))
    assert _fall(watch, EARLY) == pytest.approx(0.10)
    assert watch.how == 'rebound'
    assert _fall(watch, LATE) == pytest.approx(0.02)


def test_the_calm_fires_once_the_bounce_is_over() -> None:
    watch = LandingWatch(LandingRule(calm_rate=0.6, calm_acc=2.0, calm_s=0.04))
    assert _fall(watch, EARLY) == pytest.approx(0.22)  # calm from 0.18 s (|a| 9.5), held 0.04 s
    assert watch.how == 'calm'
    assert _fall(watch, LATE) == pytest.approx(0.10)  # calm (|a| 8.0) from 0.06 s


def test_a_calm_gyro_in_free_fall_is_not_calm() -> None:
    """Airborne after the impact the torso turns slowly, but the accelerometer reads far below g."""
    watch = LandingWatch(LandingRule(calm_rate=0.6, calm_acc=2.0))
    assert _fall(watch, [(0.1, 1.0)] * 10) is None


def test_without_the_event_it_starts_at_the_timeout_and_without_a_rule_at_once() -> None:
    watch = LandingWatch(LandingRule(rebound=1.0, max_s=0.5))
    watch.start(3.0)
    for k in range(20):  # lying still from the report on: no rebound
        watch.update(3.0 + 0.02 * k, (0.0, 0.0, 0.0), BACK)
    assert not watch.ready(3.48)
    assert watch.ready(3.5) and watch.how == 'timeout'
    assert LandingWatch(LandingRule()).ready(0.0)  # no rule: no wait


def test_the_rule_is_read_from_skill_parameters() -> None:
    params = {'getup_back_land_rebound': 1.5, 'getup_back_land_max': 0.4, 'getup_back_land_calm_acc': 0.0}
    rule = LandingRule.from_params(params.get, 'getup_back')
    assert rule == LandingRule(rebound=1.5, max_s=0.4) and rule.active
    assert not LandingRule.from_params(lambda name, default: default, 'getup_back').active
    with pytest.raises(ValueError):
        LandingRule(calm_rate=-1.0)


def _back_fall(tmp_path: Path, params: str, impact_s: float | None) -> float:
    """A Nao falling onto its back, the impact ``impact_s`` after the report (None: put on its back, no fall seen
    by the gyro): when its get-up started, after the report."""
    path = tmp_path / 'params.txt'
    path.write_text(params + NO_FAST)
    core = MotionCore(nao(0), load_config('robots.yaml'), skill_params=(str(path),))
    joints = dict.fromkeys(nao(0).joint_names, 0.0)
    for k in range(5):  # standing still: the detector's estimate starts here
        core.on_imu(0.02 * k, (0.0, 0.0, 0.0), (0.0, 0.0, G), wall=0.0)
    t, reported = 0.1, None
    for _ in range(200):
        if impact_s is None:
            gyro, acc = (0.0, 0.0, 0.0), BACK
        elif reported is None:
            gyro, acc = (0.0, -4.0, 0.0), (0.0, 0.0, 0.0)  # falling backwards, accelerometer useless
        elif t - reported < impact_s:
            gyro, acc = (0.0, -1.5, 0.0), (0.0, 0.0, 0.0)  # still falling, more slowly
        else:
            gyro, acc = (0.0, 0.0, 0.0), BACK  # landed
        core.on_imu(t, gyro, acc, wall=0.0)
        if core.state.fallen and reported is None:
            reported = t
        core.step(t, joints, wall=0.0)
        if core.is_getup:
            assert core.skill == 'GETUP_BACK'
            return t - reported
        t += 0.02
    return math.inf


def test_the_back_getup_waits_for_its_landing_when_its_parameters_ask(tmp_path: Path) -> None:
    rule = 'getup_back_land_rebound\t1.0\ngetup_back_land_max\t0.6\n'
    assert _back_fall(tmp_path, rule, 0.2) == pytest.approx(0.2)
    assert _back_fall(tmp_path, rule, 0.4) == pytest.approx(0.4)
    assert _back_fall(tmp_path, rule, None) == pytest.approx(0.6)  # no impact seen: the timeout
    assert _back_fall(tmp_path, '', 0.4) == pytest.approx(0.0)  # the shipped rule (none): at once


def test_while_the_body_lands_it_holds_the_hold_pose_not_the_asked_targets(tmp_path: Path) -> None:
    """The bench (and a strategy) may still be asking for a pose through ``joint_targets`` when the fall is reported;
    the body lands in the hold pose, as the get-up would have it, not in the pose that threw it over."""
    path = tmp_path / 'params.txt'
    path.write_text('getup_back_land_rebound\t1.0\ngetup_back_land_max\t0.6\n' + NO_FAST)
    core = MotionCore(nao(0), load_config('robots.yaml'), skill_params=(str(path),))
    core.targets = {'llj3': -0.4, 'rlj3': -0.4}  # hips extended: the bench's knock-down pose
    joints = dict.fromkeys(nao(0).joint_names, 0.0)
    for k in range(5):
        core.on_imu(0.02 * k, (0.0, 0.0, 0.0), (0.0, 0.0, G), wall=0.0)
    t = 0.1
    while not core.state.fallen:
        core.on_imu(t, (0.0, -4.0, 0.0), (0.0, 0.0, 0.0), wall=0.0)
        t += 0.02
    out = core.step(t, joints, wall=0.0)
    assert core.state_dict()['landing'] == 'waiting' and not core.is_getup
    assert out['llj3'] == pytest.approx(core.settings.hold_pose['llj3'])


def test_a_getup_that_reanchors_restarts_the_fall_detector_when_it_ends(tmp_path: Path) -> None:
    """``$getup_back_reanchor 1``: once GETUP_BACK ends the tilt estimate starts afresh from the accelerometer
    (a fast get-up leaves the gyro-integrated estimate tens of degrees off); without it the estimate is kept."""
    for reanchor, fresh in ((1, True), (0, False)):
        path = tmp_path / 'params.txt'
        path.write_text(f'getup_back_reanchor\t{reanchor}\n' + NO_FAST)
        core = MotionCore(nao(0), load_config('robots.yaml'), skill_params=(str(path),))
        joints = dict.fromkeys(nao(0).joint_names, 0.0)
        t, ended = 0.0, None
        for _ in range(600):
            core.on_imu(t, (0.0, 0.0, 0.0), BACK, wall=0.0)  # lying on its back all along (teleported: no gyro)
            was = core.is_getup
            core.step(t, joints, wall=0.0)
            if was and not core.is_getup:
                ended = t
                break
            t += 0.02
        assert ended is not None
        assert (core.fall.up is None) == fresh
        assert core.state.fallen  # the state of the cycle it ended in


FAST_BACK_TYPES = (0, 2, 4)  # $getup_back_fast 1 (types 0 and 4 since session 37, 2 since session 38)


@pytest.mark.parametrize('robot_type', range(5))
def test_some_types_play_the_fast_back_getup_on_its_landing_and_the_others_as_before(robot_type: int) -> None:
    """``$getup_back_fast 1`` (:data:`FAST_BACK_TYPES`): GETUP_BACK plays GETUP_BACK_FAST, with its own gain, landing
    rule and re-anchoring; the others play GETUP_BACK at once, at the robot's gains, as before session 37."""
    core = MotionCore(nao(robot_type), load_config('robots.yaml'))
    fast = robot_type in FAST_BACK_TYPES
    assert core._skl.played('GETUP_BACK') == ('GETUP_BACK_FAST' if fast else 'GETUP_BACK')
    assert core._skl.played('GETUP_FRONT') == 'GETUP_FRONT'
    assert ('back' in core.landing) == fast and 'front' not in core.landing
    assert core._reanchors('GETUP_BACK') == fast
    core.request('GETUP_BACK')
    assert core.player.skill.name == ('GETUP_BACK_FAST' if fast else 'GETUP_BACK')
    kp = set(core.gains()[0].values())
    assert kp == ({core._skl.param('getup_back_fast_kp', 0.0)} if fast else set(core.settings.kp.values()))


@pytest.mark.parametrize('after_side', [None, 1, 0])
def test_after_a_side_fall_a_type_may_play_the_plain_back_getup(tmp_path: Path, after_side: int | None) -> None:
    """``$getup_back_fast_after_side 0``: a fall first reported to a side ends in GETUP_BACK itself (its gains, no
    re-anchoring), one first reported to the back in GETUP_BACK_FAST; unset or 1, both in GETUP_BACK_FAST."""
    path = tmp_path / 'params.txt'
    path.write_text(
        'getup_back_fast\t1\n' + ('' if after_side is None else f'getup_back_fast_after_side\t{after_side}\n')
    )
    for fell_to in ('back', 'left', 'right'):
        core = MotionCore(nao(0), load_config('robots.yaml'), skill_params=(str(path),))
        core._fell_to = fell_to
        core._start('GETUP_BACK', getup=True)
        fast = fell_to == 'back' or after_side != 0
        assert core.player.skill.name == ('GETUP_BACK_FAST' if fast else 'GETUP_BACK')
        assert core._reanchors('GETUP_BACK') == fast
        kp = set(core.gains()[0].values())
        assert kp == ({core._skl.param('getup_back_fast_kp', 0.0)} if fast else set(core.settings.kp.values()))
