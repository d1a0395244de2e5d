"""The walk's gear: the fast set on long straight walks to a target, the robot's own set elsewhere."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from robocup3d_bridge.config_files import ConfigError
from robocup3d_description.robots import robot_spec
from robocup3d_motion.core import MotionCore
from robocup3d_motion.gear import Gear, GearShift
from robocup3d_motion.motion_config import load_robots_config, load_walk_config

GEAR = Gear(fast='sprint')


def _ahead(d: float, deg: float = 0.0) -> tuple[float, float]:
    return d * math.cos(math.radians(deg)), d * math.sin(math.radians(deg))


def test_the_gear_shifts_up_for_a_far_target_straight_ahead_only() -> None:
    for target, up in ((_ahead(8.0), True), (_ahead(8.0, 20.0), False), (_ahead(2.5), False), (None, False)):
        assert GearShift(GEAR).update(target, 0.0) is up, target


def test_shifting_down_it_slows_in_the_fast_set_before_it_changes_sets() -> None:
    """Dropping the fast gait at 0.6 m/s tips a T1 over: it first slows to ``shift_speed``."""
    shift = GearShift(GEAR)
    assert shift.update(_ahead(8.0), 0.0)
    assert shift.update(_ahead(5.0, 20.0), 0.6) and not shift.slowing  # within the band: on at speed
    assert shift.cap(0.7, 0.5) == (0.7, 0.5)
    assert shift.update(_ahead(1.5), 0.6) and shift.slowing  # near: slowing, still in the fast set
    assert shift.cap(0.7, -0.5) == (GEAR.shift_speed, -GEAR.shift_turn)  # and turning little
    assert not shift.update(_ahead(1.4), 0.3) and not shift.slowing  # slow enough: its own set
    assert shift.cap(0.7, 0.5) == (0.7, 0.5)
    shift.update(_ahead(8.0), 0.0)
    assert shift.update(_ahead(8.0, 40.0), 0.6) and shift.slowing  # swung aside: down too
    assert not shift.update(None, 0.2)  # and no target at all


def test_in_the_fast_set_the_gear_keeps_below_its_top_speed() -> None:
    """At the sprint's own 0.69 m/s a T1 walking up to a kick spun and fell 8-13 times in 5 walk-ups; at 0.55 none."""
    shift = GearShift(Gear(fast='sprint', top=0.55))
    assert shift.cap(0.7, 0.1) == (0.7, 0.1)  # its own set: its own limits
    assert shift.update(_ahead(8.0), 0.0)
    assert shift.cap(0.7, 0.1) == (0.55, 0.1)


def _core() -> MotionCore:
    return MotionCore(
        robot_spec('mujoco', 'T1', 0), load_robots_config('robots.yaml'), walk_cfg=load_walk_config('walk.yaml')
    )


def _walk(core: MotionCore, t0: float, seconds: float) -> float:
    t = t0
    while t < t0 + seconds:
        t += 0.02
        core.on_imu(t, (0.0, 0.0, 0.0), (0.0, 0.0, 9.81), wall=t)
        core.step(t, {}, wall=t)
    return t


def test_a_t1_walks_a_far_target_with_the_sprint_and_goes_back_to_its_set_when_it_stops() -> None:
    core = _core()
    assert core.gear is not None and core.walk is not None
    own = core.walk_sets[core.walk_set]
    core.set_walk_target(10.0, 0.0, 0.0, now=0.0)
    t = _walk(core, 0.0, 0.5)
    assert core.walk.params is core.walk_sets['sprint'] and core.state_dict()['walk']['geared']
    core.request('stand')
    _walk(core, t, 3.0)
    assert core.skill == 'stand' and core.walk.params is own and not core.state_dict()['walk']['geared']
    core.set_walk_target(0.5, 2.0, 0.0, now=t)  # near and aside: its own set
    _walk(core, t, 0.5)
    assert core.walk.params is own


def test_a_gear_naming_an_unknown_set_or_with_crossed_bands_is_refused(tmp_path: Path) -> None:
    text = load_walk_config('walk.yaml')
    text['T1']['gear'] = {'fast': 'warp'}
    path = tmp_path / 'walk.yaml'
    path.write_text(yaml.safe_dump(text))
    with pytest.raises(ConfigError, match='warp'):
        load_walk_config(path)
    text['T1']['gear'] = {'fast': 'sprint', 'near': 4.0}
    path.write_text(yaml.safe_dump(text))
    with pytest.raises(ConfigError, match='near < far'):
        load_walk_config(path)
