"""Kicks: the T1/K1 kick files, their mirror images, the ball in the monitor stream, the kick tasks'
scoring and search spaces (no server), and one real kick of a T1 on RCSSServerMJ."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
import yaml
from search_support import given_results_pool

from robocup3d_bridge.config_files import ConfigError
from robocup3d_bridge.trainer import MonitorState, parse_monitor_message
from robocup3d_description.robots import robot_spec
from robocup3d_motion.getup import DATA_DIR, load_keyframe_dir, load_keyframe_skills, mirror_joint, mirror_skill
from robocup3d_motion.kick_config import load_kicks_config
from robocup3d_tools import kick_search, optimize
from robocup3d_tools.getup_search import keyframe_space
from robocup3d_tools.kick_search import KICK_TASKS, KickTrials, kick_space, run_kick_candidate
from robocup3d_tools.kick_tasks import (
    FALL_PENALTY,
    STAND_AFTER,
    KickTrial,
    kick_score,
    kick_setup,
    summarize,
    trial_score,
    walk_kick_once,
)
from robocup3d_tools.sim_session import CYCLE, Pose

ROBOTS = ('T1', 'K1')
KICK_NAMES = ('KICK_LONG_RIGHT', 'KICK_LONG_LEFT', 'KICK_QUICK_RIGHT', 'KICK_QUICK_LEFT')


@pytest.mark.parametrize('robot', ROBOTS)
def test_the_kicks_load_with_their_mirror_images_within_the_joint_limits(robot: str) -> None:
    skills = load_keyframe_dir(robot_spec('mujoco', robot))  # the loader checks names and limits, mirrors too
    assert set(KICK_NAMES) <= set(skills)
    for kick in ('LONG', 'QUICK'):
        right, left = skills[f'KICK_{kick}_RIGHT'], skills[f'KICK_{kick}_LEFT']
        assert left == dataclasses.replace(mirror_skill(right, left.name), source=left.source)
        assert left.duration == right.duration
    # a quick kick: the kicking leg's motion (hip and knee) is over within half a second
    quick = skills['KICK_QUICK_RIGHT'].frames
    moving = max(i for i, f in enumerate(quick) if {'rlj1', 'rlj4'} & set(f.targets))
    assert sum(f.duration for f in quick[: moving + 1]) <= 0.5


@pytest.mark.parametrize('robot', ROBOTS)
@pytest.mark.parametrize('kick', ['long', 'quick'])
def test_each_kick_names_its_ball_spot_in_front_of_the_right_foot(robot: str, kick: str) -> None:
    (x, y), swing = kick_setup(robot, kick)
    assert 0.15 < x < 0.45 and -0.2 < y < 0.0  # ahead, on the right
    skill = load_keyframe_dir(robot_spec('mujoco', robot))[f'KICK_{kick.upper()}_RIGHT']
    assert 0.0 <= swing < skill.duration


def test_a_mirror_swaps_sides_and_flips_rolls_and_yaws() -> None:
    assert mirror_joint('llj1') == ('rlj1', 1)  # hip pitch
    assert mirror_joint('rlj2') == ('llj2', -1)  # hip roll
    assert mirror_joint('llj3') == ('rlj3', -1)  # hip yaw
    assert mirror_joint('laj2') == ('raj2', -1)  # shoulder roll
    assert mirror_joint('raj4') == ('laj4', -1)  # elbow yaw
    assert mirror_joint('tj1') == ('tj1', -1) and mirror_joint('hj2') == ('hj2', 1)
    with pytest.raises(ValueError, match='no mirror twin'):
        mirror_joint('xyz')
    skill = load_keyframe_dir(robot_spec('mujoco', 'T1'))['KICK_LONG_RIGHT']
    twice = mirror_skill(mirror_skill(skill, 'A'), skill.name)
    assert twice.frames == skill.frames and twice.kp == skill.kp


def test_a_skill_file_naming_a_mirror_defines_both_skills(tmp_path: Path) -> None:
    path = tmp_path / 'k.yaml'
    frame = {'t': 0.1, 'q': {'llj2': 30, 'laj4': -120}}
    path.write_text(yaml.safe_dump({'name': 'A', 'mirror': 'B', 'frames': [frame]}))
    a, b = load_keyframe_skills(path, robot_spec('mujoco', 'T1'))
    assert (a.name, b.name) == ('A', 'B')
    assert b.frames[0].targets == pytest.approx({'rlj2': math.radians(-30), 'raj4': math.radians(120)})
    path.write_text(yaml.safe_dump({'name': 'A', 'mirror': 'B', 'frames': [{'t': 0.1, 'q': {'llj2': 95}}]}))
    with pytest.raises(ConfigError, match=r'llj2=95\.0 deg is outside'):
        load_keyframe_skills(path, robot_spec('mujoco', 'T1'))


def _kick(**kw: object) -> dict:
    return dataclasses.asdict(
        dataclasses.replace(KickTrial(distance=8.0, along=7.9, angle_err_deg=3.0, contact_s=0.6, standing=True), **kw)
    )


def test_a_kick_scores_its_distance_along_the_wanted_direction_and_penalties() -> None:
    good = _kick()
    assert trial_score(good) == pytest.approx(-7.9)
    assert trial_score(_kick(along=9.0, distance=9.1)) < trial_score(good)  # farther is better
    assert trial_score(_kick(angle_err_deg=20.0)) == pytest.approx(-7.9 + 0.1 * 12.0)  # beyond 8 deg costs
    fell = _kick(fell=True, standing=False)
    assert trial_score(fell) == pytest.approx(-7.9 + FALL_PENALTY)
    assert trial_score(_kick(standing=False)) == trial_score(fell)  # not standing afterwards is a fall
    assert trial_score(_kick(early=True)) > trial_score(good)
    backward = _kick(along=-2.0, backward=True, angle_err_deg=170.0)
    missed = dataclasses.asdict(KickTrial(standing=True))
    short = _kick(distance=0.05, along=0.05)
    assert trial_score(backward) == trial_score(missed) == trial_score(short) > 0 > trial_score(good)
    # a short kick that stands beats a long one that falls only when the long one is short of the penalty
    assert trial_score(_kick(along=2.0, distance=2.0)) < trial_score(fell)
    result = {'kicks': [good, fell]}
    assert kick_score(result) == pytest.approx((trial_score(good) + trial_score(fell)) / 2)
    assert kick_score({'error': 'exit 1'}) > kick_score({'kicks': [missed, fell]}) - 1e-9


def test_the_fall_penalty_is_an_option_of_the_score_the_search_and_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fell = _kick(fell=True, standing=False, along=16.0, distance=16.0)
    short = _kick(along=2.0, distance=2.0)
    assert trial_score(fell) < trial_score(short)  # the default penalty: a long kick that falls wins
    assert trial_score(fell, fall_penalty=40.0) == pytest.approx(-16.0 + 40.0)
    assert trial_score(fell, 40.0) > trial_score(short, 40.0)  # a heavy one: the kick that stands wins
    assert kick_score({'kicks': [fell, short]}, 40.0) == pytest.approx((24.0 - 2.0) / 2)
    assert kick_score({'error': 'x'}, 40.0) == kick_score({'error': 'x'}) + 40.0 - FALL_PENALTY
    # fall_grace: a later fall costs less, and with the penalty above 3 s of grace plus the longest kick,
    # a standing kick still beats every fall
    early_fall, late_fall = _kick(fell=True, standing=False, fell_s=1.0), _kick(fell=True, standing=False, fell_s=2.5)
    assert trial_score(late_fall, 60.0, 10.0) == pytest.approx(-7.9 + 60.0 - 25.0)
    assert trial_score(late_fall, 60.0, 10.0) < trial_score(early_fall, 60.0, 10.0)
    assert trial_score(_kick(fell=True, standing=False, fell_s=9.0), 60.0, 10.0) == pytest.approx(-7.9 + 30.0)
    assert trial_score(early_fall, 40.0) == trial_score(late_fall, 40.0)  # no grace: a fall is a fall
    # an in-walk kick's grace counts from its kicking phase (its walk-up takes 4-7 s), none for a fall before it
    walk_fall = _kick(fell=True, standing=False, fell_s=6.5, kick_s=5.0)
    assert trial_score(walk_fall, 60.0, 10.0) == pytest.approx(-7.9 + 60.0 - 15.0)
    assert trial_score(_kick(fell=True, standing=False, fell_s=6.5, kick_s=None), 60.0, 10.0) == pytest.approx(52.1)
    assert trial_score(walk_fall, 60.0, 10.0) > trial_score(
        _kick(fell=True, standing=False, fell_s=7.5, kick_s=5.0), 60.0, 10.0
    )
    assert trial_score(short, 60.0, 10.0) < trial_score(
        _kick(fell=True, standing=False, fell_s=3.0, along=25.0), 60.0, 10.0
    )
    how = KickTrials(noise=0.03, walk_in=3.0, direction=-25.0, fall_penalty=40.0)
    assert how.score({'kicks': [fell]}) == pytest.approx(24.0) and KickTrials().score({'kicks': [fell]}) < 0

    seen: list[list[str]] = []
    monkeypatch.setattr(kick_search, 'run_task', lambda module, args, *rest: seen.append(args) or {'kicks': []})
    run_kick_candidate(tmp_path / 'c.yaml', 'kick-long', 'mujoco', 'T1', 0, 3, 1, 150, how)
    args = seen[0]
    assert args[args.index('--walk-in') + 1] == '3.0' and args[args.index('--direction') + 1] == '-25.0'
    assert args[args.index('--noise') + 1] == '0.03' and args[args.index('--kick') + 1] == 'long'

    called: dict = {}
    monkeypatch.setattr(optimize, 'optimize_skill', lambda *a, **kw: called.update(kw) or (0.0, tmp_path / 'k.yaml'))
    argv = ['--task', 'kick-long', '--fall-penalty', '40', '--walk-in', '3', '--noise', '0.03', '--domain-last', '179']
    assert optimize.main(argv) == 0
    assert called['kick_trials'] == KickTrials(noise=0.03, walk_in=3.0, fall_penalty=40.0)
    assert called['domain_last'] == 179
    assert optimize.main(['--task', 'kick-long']) == 0 and called['kick_trials'] == KickTrials()
    assert optimize._domains(150, 179) == range(150, 180) and optimize._domains(0) == optimize.DOMAINS
    with pytest.raises(ConfigError, match='no ROS domain'):
        optimize._domains(180, 179)


def test_figures_over_trials() -> None:
    kicks = [_kick(distance=d, angle_err_deg=a, contact_s=c) for d, a, c in [(4, 2, 0.5), (8, 6, 0.6), (9, 10, 0.7)]]
    kicks.append(dataclasses.asdict(KickTrial(standing=True)))  # no kick: 0 m, no angle, no contact
    s = summarize(kicks)
    assert s['distance_median'] == pytest.approx(6.0) and s['distance_p10'] == pytest.approx(1.2)
    assert s['angle_err_median'] == pytest.approx(6.0) and s['contact_median_s'] == pytest.approx(0.6)
    assert s['no_kick'] == 1 and s['falls'] == 0 and s['not_standing'] == 0


def test_the_ball_is_read_from_rcssservermj_monitor_scenes(shared_dir: Path) -> None:
    state = MonitorState()
    seen = []
    for line in (shared_dir / 'captures/rcssservermj/monitor_rsmp.txt').read_text().splitlines():
        parse_monitor_message(line, 'mujoco', state)
        seen.append(state.ball)
    assert seen[0] == pytest.approx((0.0, 0.0, 0.1097))  # full scene: on the centre spot
    assert seen[-1] == pytest.approx((1.0, 2.0, 0.1094))  # moved by the trainer: a diff carries it
    gs = '((gs 1 0)(time 1.0)(half 1)(score_left 0)(score_right 0)(play_mode 3)))'
    still = '((RSMP 1 0)((gt 1 0)1.0)((sg 1 0)diff(nd(nd(nd(nd))))(nd(nd)))' + gs
    assert parse_monitor_message(still, 'mujoco', MonitorState(ball=(1.0, 2.0, 0.1))).ball == (1.0, 2.0, 0.1)
    slt = '(SLT 1 0 0 0 0 1 0 0 0 0 1 0 3 -4 0.11 1)'
    moved = f'((RSMP 1 0)((gt 1 0)1.0)((sg 1 0)diff(nd(nd(nd TRF{slt}(nd))))(nd(nd)))'
    assert parse_monitor_message(moved + gs, 'mujoco', MonitorState(ball=(1.0, 2.0, 0.1))).ball == (3.0, -4.0, 0.11)


@pytest.mark.parametrize('robot', ROBOTS)
@pytest.mark.parametrize('task', [t for t in KICK_TASKS if t != 'kick-walk'])
def test_a_kick_candidate_is_a_skill_file_with_its_mirror(robot: str, task: str, tmp_path: Path) -> None:
    space = kick_space(task, robot)
    spec = robot_spec('mujoco', robot)
    shipped = load_keyframe_skills(DATA_DIR / robot / f'kick_{space.skill}.yaml', spec)
    again = load_keyframe_skills(space.write(space.x0(), tmp_path / 'x0'), spec)
    assert [dataclasses.replace(s, source='') for s in again] == [dataclasses.replace(s, source='') for s in shipped]
    for corner in (0.0, 1.0):  # the extremes stay within every joint's range, mirror included
        written = space.write([corner] * len(space.names), tmp_path / f'c{corner}')
        assert [s.name for s in load_keyframe_skills(written, spec)] == [s.name for s in shipped]
        assert kick_setup(robot, space.skill, [str(written)]) == kick_setup(robot, space.skill)


def test_an_in_walk_kick_candidate_is_a_kicks_file_the_player_loads_with_its_values(tmp_path: Path) -> None:
    space = kick_space('kick-walk', 'T1')
    assert {'reach', 'slow', 'ball_x', 'near', 'far', 'angle_deg'} <= set(space.names)
    shipped = load_kicks_config()['T1'].kicks['walk']
    again = load_kicks_config(str(space.write(space.x0(), tmp_path / 'x0')))['T1'].kicks['walk']
    assert again.walk.reach == pytest.approx(shipped.walk.reach) and again.ball == pytest.approx(shipped.ball)
    for corner in (0.0, 1.0):  # every corner of the space is a valid kicks file, the window never empty
        robots = load_kicks_config(str(space.write([corner] * len(space.names), tmp_path / f'c{corner}')))
        kick = robots['T1'].kicks['walk']
        bound = dict(zip(space.names, space.lo if corner == 0.0 else space.hi, strict=True))
        assert kick.walk.reach == pytest.approx(bound['reach']) and kick.ball[0] == pytest.approx(bound['ball_x'])
        assert kick.walk.window[0] < kick.walk.window[1]
        assert robots['T1'].kicks['long'] == load_kicks_config()['T1'].kicks['long']  # the rest as shipped
    with pytest.raises(ConfigError, match='in-walk'):
        kick_space('kick-walk', 'K1')


def test_the_naos_in_walk_kick_is_searchable_and_every_corner_loads_for_every_type(tmp_path: Path) -> None:
    """``robocup3d optimize --server simspark --task kick-walk``: the Nao's in-walk kick as a kicks file."""
    from robocup3d_motion.kick_config import ball_skills_for  # noqa: PLC0415

    space = kick_space('kick-walk', 'nao', 0)
    assert {'reach', 'slow', 'ball_x', 'near', 'far'} <= set(space.names)
    for corner in (0.0, 1.0):
        path = str(space.write([corner] * len(space.names), tmp_path / f'c{corner}'))
        for robot_type in range(5):  # every type takes the nao section's walk kick
            kick = ball_skills_for(load_kicks_config(path), 'nao', robot_type, 'simspark').kicks['walk']
            assert kick.walk.window[0] < kick.walk.window[1] and not kick.stop
    assert load_kicks_config()['nao'].kicks['walk'].fall_rate == 1.0  # the strategy leaves it alone as shipped


def test_a_keyframe_step_may_be_given_per_name_or_per_joint() -> None:
    path = DATA_DIR / 'T1' / 'kick_long.yaml'
    names = ('0.t', '0.llj1', '2.rlj1', '3.rlj1', '5.llj1')
    step = {'t': 0.05, 'default': 8.0, '2.rlj1': 20.0, 'llj1': 3.0}
    space = keyframe_space('T1', 'long', path, names, {'step': step})
    half = {n: (hi - lo) / 2 for n, lo, hi in zip(space.names, space.lo, space.hi, strict=True)}
    assert half['0.t'] == pytest.approx(0.05) and half['3.rlj1'] == pytest.approx(8.0)  # by kind, the default
    assert half['2.rlj1'] == pytest.approx(20.0)  # by its own name
    assert half['0.llj1'] == pytest.approx(3.0) == half['5.llj1']  # by the joint


def test_the_nao_kick_space_takes_the_kicks_parameters_by_prefix() -> None:
    try:
        space = kick_space('kick-long', 'nao', 2)
    except ConfigError as exc:  # the Nao's kick parameters are not shipped on this branch yet
        assert 'kl_' in str(exc)
        return
    assert space.names and all(n.startswith('kl_') for n in space.names)
    assert all(a <= s <= b for s, a, b in zip(space.start, space.lo, space.hi, strict=True))


#: what the T1's quick kick must reach in the live test (m, median of 3): 10 trials measured a median of
#: 0.47 m and a p10 of 0.15 m (docs/benchmarks.md#kick). Its long kick (median 6.5 m) falls every time, so
#: it is not held to standing here yet.
MIN_T1_QUICK_M = 0.15


@pytest.mark.server
def test_a_t1_at_its_kick_spot_kicks_the_ball_forwards_without_falling_in_the_kick() -> None:
    pytest.importorskip('rcsssmj')
    from robocup3d_tools.kick_tasks import run_kicks  # noqa: PLC0415
    from robocup3d_tools.sim_session import SimSession  # noqa: PLC0415

    with SimSession('T1') as session:
        result = run_kicks(session, 'quick', trials=3, seed=3).as_dict()
    assert result['distance_median'] >= MIN_T1_QUICK_M, result
    in_kick = load_kicks_config()['T1'].kicks['quick'].duration + 1.0  # s from the request: the kick and 1 s after
    for k in result['kicks']:
        # no fall in the kick or the second after it; whether it still stands 2 s after (kick_tasks' count since
        # session 30: 1 of 8 went over 1.3 s after, the first trial of seed 3) and early touches are bench_kick's
        assert not k['fell'] or k['fell_s'] > in_kick, result
        assert k['contact_s'] is None or k['along'] > 0.0, result  # forwards


def test_the_nao_kick_spot_comes_from_its_parameters(tmp_path: Path) -> None:
    params = tmp_path / 'cand.txt'
    params.write_text('kq_spot_x\t0.2\nkq_spot_y\t-0.03\n')
    assert kick_setup('nao', 'quick', [str(params)], robot_type=1) == ((0.2, -0.03), 0.0)
    spot, _ = kick_setup('nao', 'long')  # the shipped parameters, or the defaults without them
    assert 0.1 < spot[0] < 0.3 and -0.15 < spot[1] < 0.0


def test_a_kick_search_with_trace_logs_every_candidate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``robocup3d optimize --task kick-walk --trace``: every candidate's values, score and result in OUT.jsonl."""

    # no server: every candidate kicks 2 m straight, standing
    pool = given_results_pool(lambda jobs: [{'kicks': [_kick(along=2.0, distance=2.0)], 'falls': 0} for _ in jobs])
    monkeypatch.setattr(optimize, 'RayPool', pool)
    out = tmp_path / 't1_walk'
    argv = ['--task', 'kick-walk', '--popsize', '4', '--generations', '2', '--trace', '--out', str(out)]
    argv += ['--fall-penalty', '20']
    assert optimize.main(argv) == 0
    rows = [json.loads(line) for line in out.with_suffix('.jsonl').read_text().splitlines()]
    assert len(rows) == 8 and {r['generation'] for r in rows} == {0, 1}
    space = kick_space('kick-walk', 'T1')
    for r in rows:
        assert set(r['params']) == set(space.names) and r['score'] == pytest.approx(-2.0)
        assert r['result']['kicks'][0]['along'] == 2.0


class _ScriptedSession:
    """A session without a server for :func:`walk_kick_once`: the motion state, torso and ball follow ``script``
    (server time since the kick request -> state, torso up, ball x)."""

    server_kind = 'mujoco'

    def __init__(self, script) -> None:
        self.script, self.cycles, self.t0 = script, 0, None
        self.state: dict = {'skill': 'stand', 'fallen': False}
        self.pose: Pose | None = Pose(0.0, -14.0, 0.0, 0.6, 0.0, 1.0)
        self.ball: tuple[float, float, float] | None = None
        self.ball_t = 0.0
        self.trainer = self

    def move_ball(self, x: float, y: float, z: float) -> None:
        self.ball = (x, y, z)

    def place(self, x: float, y: float, yaw: float) -> None:
        self.pose = Pose(self.cycles * CYCLE, x, y, 0.6, yaw, 1.0)

    def spin_until(self, pred, timeout: float, what: str = '') -> bool:
        self.wait_cycles(1)
        assert pred(), what
        return True

    def request(self, text: str) -> None:
        self.request_id = json.loads(text)['id']
        self.t0 = self.cycles

    def wait_cycles(self, n: int) -> None:
        for _ in range(n):
            self.cycles += 1
            if self.t0 is None:
                continue
            state, up, ball_x = self.script((self.cycles - self.t0) * CYCLE)
            self.state = {**state, 'task': {'id': self.request_id, 'phase': state['phase']}}
            assert self.pose is not None and self.ball is not None
            self.pose = Pose(self.cycles * CYCLE, self.pose.x, self.pose.y, 0.6, 0.0, up)
            self.ball, self.ball_t = (ball_x, self.ball[1], self.ball[2]), self.cycles * CYCLE


def test_an_in_walk_kick_counts_a_fall_while_the_walk_that_took_it_stops() -> None:
    """The walk stops after the kick's task is done; a fall then (more than 1 s after the task) is the kick's."""

    def script(t: float, fall_at: float = 7.6):
        phase = 'approaching' if t < 5.0 else 'kicking' if t < 6.5 else 'done'
        moving = t < 7.7  # the walk's last steps after the task
        fallen = t >= fall_at
        state = {'skill': 'GETUP_FRONT' if fallen else 'walk' if moving else 'stand', 'fallen': fallen}
        state |= {'walk': {'moving': moving and not fallen}, 'phase': phase}
        ball_x = -13.0 + max(0.0, min(t - 5.5, 2.0))  # kicked at 5.5 s, rolls 2 m
        return state, (-0.2 if fallen else 1.0), ball_x

    trial = walk_kick_once(_ScriptedSession(script), 1.0, 0.0)
    assert trial.fell and trial.fell_s == pytest.approx(7.6, abs=0.05) and not trial.standing
    assert trial.kick_s == pytest.approx(5.0, abs=0.05)  # the kicking phase: where a fall's grace counts from
    assert trial.distance == pytest.approx(2.0, abs=0.05) and not trial.early
    # a robot that stands STAND_AFTER s after the walk stopped has not fallen with the kick (a fall long after is not
    # counted)
    trial = walk_kick_once(_ScriptedSession(lambda t: script(t, fall_at=7.7 + STAND_AFTER + 0.3)), 1.0, 0.0)
    assert not trial.fell and trial.fell_s is None
    # one that tips over slowly, 1.5 s after (the Nao's lofting kicks of session 30), has
    trial = walk_kick_once(_ScriptedSession(lambda t: script(t, fall_at=7.7 + 1.5)), 1.0, 0.0)
    assert trial.fell and not trial.standing
