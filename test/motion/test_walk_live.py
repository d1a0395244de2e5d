"""The walk through the running graph on a real RCSSServerMJ (sync mode).

The player is the real process (bridge + motion + strategy); this test commands it over
DDS (``cmd_vel``, ``walk_target``) like any node would and scores it from the server's
torso ground truth, which the player never uses.
"""

from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

import pytest

from robocup3d_tools.sim_session import SimSession
from robocup3d_tools.walk_tasks import START, run_task

pytestmark = pytest.mark.skipif(
    shutil.which('rcssservermj') is None and not (Path(sys.executable).parent / 'rcssservermj').exists(),
    reason='RCSSServerMJ is not installed (pip install rcsssmj)',
)


@pytest.fixture
def t1(tmp_path: Path) -> SimSession:
    with SimSession('T1', log_dir=tmp_path) as session:  # a fresh server and player per test
        yield session


def test_t1_walks_forward_10_s_without_falling_and_covers_2_m(t1: SimSession) -> None:
    result = run_task(t1, 'forward', 0.0, 10.0)
    print(f'T1 forward: {result.as_dict()}')
    assert result.falls == 0
    assert result.forward >= 2.0
    assert abs(result.lateral) < 0.25 * result.forward  # it went where it was sent


def test_t1_turns_in_place(t1: SimSession) -> None:
    result = run_task(t1, 'turn', 0.0, 10.0)  # as fast as the set allows (30 deg/s commanded)
    print(f'T1 turn: {result.as_dict()}')
    assert result.falls == 0
    assert math.degrees(result.turned) > 80.0  # measured 126 deg in 10 s (4.8 deg/s before the soles stopped twisting)
    assert math.hypot(result.forward, result.lateral) < 1.0  # in place, more or less (drifts ~0.5 m sideways)


def test_t1_follows_a_square_course_with_turns_without_falling(t1: SimSession) -> None:
    result = run_task(t1, 'square', 0.3, 1.5)
    print(f'T1 square: {result.as_dict()}')
    assert result.falls == 0
    assert result.turned == pytest.approx(1.5 * math.pi, abs=math.radians(60))  # three left turns
    assert result.path > 4.0  # it walked the sides (4 x 1.5 m commanded)
    assert result.extra['closure_m'] < 1.5  # and came back near the start


def test_t1_lines_up_on_a_course_of_small_steps_and_creeps_stepping_in_place(t1: SimSession) -> None:
    """``walk_tasks --task lineup``: a kick's lining-up steps, then a step in place; the creep is measured (the
    positioning set's: about 5 cm/s in place, docs/benchmarks.md session 27)."""
    result = run_task(t1, 'lineup', 0.0, 2.0, seed=1)
    print(f'T1 lineup: {result.as_dict()}')
    assert result.task == 'lineup' and result.falls == 0
    assert result.seconds > 5.0  # 2 s of course (and its last step) and 4 s in place, after their arrivals
    assert 0.0 < result.extra['in_place'] < 0.2
    assert result.extra['creep'] > 0.0 and result.extra['lean'] > 0.0


def test_t1_gains_on_a_seeded_course_of_go_to_targets(t1: SimSession) -> None:
    """``walk_tasks --task goto``: targets 1-4 m apart with any heading, as positioning asks in a match."""
    result = run_task(t1, 'goto', 0.0, 30.0, seed=1)
    print(f'T1 goto: {result.as_dict()}')
    assert result.task == 'goto' and result.seconds >= 30.0
    assert result.extra['reached'] >= 1 and len(result.extra['times']) == result.extra['reached']
    assert result.forward > 1.0  # metres gained on the targets (straight line)
    assert result.path >= result.forward


@pytest.mark.parametrize(
    'target',
    [(1.5, 0.0, 0.0), (1.2, 0.8, 0.8), (1.0, -1.0, -1.2)],
    ids=['ahead', 'ahead-left-turned', 'ahead-right-turned'],
)
def test_t1_walks_to_a_target_pose_and_stops_there(t1: SimSession, target: tuple[float, float, float]) -> None:
    tx, ty, tyaw = target
    t1.place(*START)
    start = t1.pose
    t1.walk_to(tx, ty, tyaw)
    t1.spin_until(lambda: t1.state.get('skill') == 'walk', 10.0, 'the walk did not start')
    for _ in range(int(20.0 / 0.02)):  # up to 20 s of server time, until the walk is back to standing
        t1.wait_cycles(1)
        if t1.state.get('skill') == 'stand':
            break
    t1.wait_cycles(25)
    end = t1.pose
    dx, dy = end.x - start.x, end.y - start.y
    c, s = math.cos(start.yaw), math.sin(start.yaw)
    rx, ry = c * dx + s * dy, -s * dx + c * dy  # where it stopped, in the start's frame
    turned = (end.yaw - start.yaw + math.pi) % (2 * math.pi) - math.pi
    print(f'T1 walk_to {target}: reached ({rx:.2f}, {ry:.2f}, {turned:.2f}), state {t1.state}')
    assert end.up > 0.8  # still upright
    # walk odometry (translation) and gyro (turn) only: within 0.2 m and 10 degrees of the target
    assert math.hypot(rx - tx, ry - ty) < 0.2
    assert abs(math.degrees(turned - tyaw)) < 10.0
    assert t1.state.get('walk', {}).get('target') is None  # reached: the walk stopped


def test_k1_starts_its_sprint_from_a_stand_in_every_direction_without_falling(tmp_path: Path) -> None:
    """Forward, to each side, and turning each way, each from a fresh stand, 5 s each.

    Before its stand trim, roll feedback and stance width were retuned (2026-11-23) about 1 start in 3
    fell: the stand rocked, and turns to the right tipped it over sideways.
    """
    with SimSession('K1', log_dir=tmp_path) as k1:
        k1.request('walk_set sprint')
        result = run_task(k1, 'starts', 0.0, 5.0, seed=1)
    print(f'K1 starts: {result.as_dict()}')
    assert result.falls == 0, f'the K1 fell starting {result.extra["fell"]}'
    assert result.path > 2.0  # it walked: 3.8 m in all (measured), the turns' steps included
    assert math.degrees(result.turned) > 180.0  # 290-300 degrees in all (measured), most in the two turns


def test_k1_sprint_walks_over_4_m_in_10_s_from_standstill_without_falling(tmp_path: Path) -> None:
    """Straight ahead the K1's sprint blends into its fast part (top speed 0.5 m/s).

    4.42-4.47 m measured (walk_tasks); the set without a fast part walked 2.3 m.
    """
    with SimSession('K1', log_dir=tmp_path) as k1:
        k1.request('walk_set sprint')
        result = run_task(k1, 'forward', 0.0, 10.0)
    print(f'K1 forward: {result.as_dict()}')
    assert result.falls == 0
    assert result.forward > 4.0
    assert abs(result.lateral) < 1.0
