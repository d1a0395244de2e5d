"""``robocup3d optimize`` get-up tasks: search spaces as data, candidates as skill files, one real generation."""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time
from pathlib import Path

import pytest
import yaml

from robocup3d_bridge.config_files import ConfigError, load_config
from robocup3d_description.robots import robot_spec
from robocup3d_motion.getup import DATA_DIR, load_keyframe_skill
from robocup3d_motion.skills.params import load_params, load_type_params
from robocup3d_motion.walk import WalkParams
from robocup3d_tools.getup_search import GETUP_TASKS, getup_score, getup_space
from robocup3d_tools.optimize import TASKS, main, search_space
from robocup3d_tools.ray_pool import DOMAINS


@pytest.mark.parametrize('server', ['mujoco', 'simspark'])
def test_every_walk_search_name_is_a_walk_parameter(server: str) -> None:
    space = search_space(server)
    fields = {f.name for f in dataclasses.fields(WalkParams)}
    assert space and set(space) <= fields
    assert all(lo < hi for _, lo, hi in space.values())


@pytest.mark.parametrize('robot', ['T1', 'K1'])
@pytest.mark.parametrize('task', GETUP_TASKS)
def test_a_booster_candidate_is_a_skill_file_the_player_loads(robot: str, task: str, tmp_path: Path) -> None:
    space = getup_space(task, robot)
    spec = robot_spec('mujoco', robot)
    shipped = load_keyframe_skill(DATA_DIR / robot / f'getup_{space.skill}.yaml', spec)
    again = load_keyframe_skill(space.write(space.x0(), tmp_path / 'x0'), spec)
    assert again == dataclasses.replace(shipped, source=again.source)  # the start is the shipped skill
    for corner in (0.0, 1.0):  # the extremes stay within every joint's range (the loader checks them)
        skill = load_keyframe_skill(space.write([corner] * len(space.names), tmp_path / f'c{corner}'), spec)
        assert skill.name == shipped.name
    doc = yaml.safe_load(space.write([1.0] * len(space.names), tmp_path / 'hi').read_text())
    frame, joint = next(n.split('.') for n in space.names if not n.endswith('.t'))
    twin, sign = space.mirror[joint]
    assert doc['frames'][int(frame)]['q'][twin] == pytest.approx(sign * doc['frames'][int(frame)]['q'][joint])


def test_t_scale_bounds_a_frames_duration_by_a_factor_of_its_own(tmp_path: Path) -> None:
    """The T1 searches every duration: a long rise may halve, a 0.05 s kick stays short."""
    conf = tmp_path / 'space.yaml'
    conf.write_text(yaml.safe_dump({'getup': {'T1': {'t_scale': [0.4, 1.3], 'back': ['0.t', '8.t']}}}))
    space = getup_space('getup-back', 'T1', config=str(conf))
    for start, lo, hi in zip(space.start, space.lo, space.hi, strict=True):
        assert lo == pytest.approx(max(0.02, 0.4 * start), abs=1e-3) and hi == pytest.approx(1.3 * start, abs=1e-3)
    k1 = getup_space('getup-back', 'K1')  # the K1 scales its durations as the T1 since session 44 (was +-step)
    assert k1.lo[0] == pytest.approx(max(0.02, 0.4 * k1.start[0]), abs=1e-3)


@pytest.mark.parametrize('robot_type', range(5))
@pytest.mark.parametrize('task', ['getup-front', 'getup-back'])
def test_a_nao_candidate_is_a_parameter_file_over_the_types_own(robot_type: int, task: str, tmp_path: Path) -> None:
    space = getup_space(task, 'nao', robot_type)
    path = space.write([0.0] * len(space.names), tmp_path / 'cand')
    written = load_params([path])
    assert set(written) == set(space.names)
    merged = load_type_params(DATA_DIR / 'nao', robot_type, [path])
    assert all(merged[n] == written[n] <= space.start[i] for i, n in enumerate(space.names))


def test_a_wrong_search_space_is_refused_with_its_name(tmp_path: Path) -> None:
    bad = tmp_path / 'space.yaml'
    bad.write_text(yaml.safe_dump({'getup': {'T1': {'back': ['99.llj1']}}}))
    with pytest.raises(ConfigError, match='frames 0-'):
        getup_space('getup-back', 'T1', config=str(bad))
    bad.write_text(yaml.safe_dump({'walk': {'mujoco': {'period': [1, 2]}}}))
    with pytest.raises(ConfigError, match=r'walk.mujoco.period must be'):
        search_space('mujoco', str(bad))
    with pytest.raises(ConfigError, match='not \\$parameters'):
        getup_space('getup-front', 'nao', names=['getup_front_99_leg1'])


def test_failures_and_refalls_score_worse_than_slow_get_ups() -> None:
    fast = {'trials': 2, 'not_knocked': 0, 'times': [2.0, 2.5], 'refalls': 0}
    slow = dict(fast, times=[6.0, 7.0])
    failed = dict(fast, times=[2.0])
    refell = dict(fast, refalls=1)
    assert getup_score(fast) < getup_score(slow) < getup_score(failed)
    assert getup_score(fast) < getup_score(refell)
    assert getup_score({'error': 'exit 1'}) > getup_score(failed)


def test_the_upright_score_times_the_torso_up_as_the_bench_does() -> None:
    """``until='upright'``: the torso up (the get-up maybe still playing); a failure counts alike."""
    result = {'trials': 3, 'not_knocked': 0, 'times': [2.8, 2.9], 'upright_times': [2.4, 2.5], 'refalls': 0}
    assert getup_score(result) == pytest.approx((2.8 + 2.9 + 20.0) / 3)
    assert getup_score(result, until='upright') == pytest.approx((2.4 + 2.5 + 20.0) / 3)


def test_help_lists_the_walk_and_getup_tasks(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(['--help'])
    text = capsys.readouterr().out
    assert all(t in text for t in TASKS)
    assert set(GETUP_TASKS) <= set(TASKS) and 'forward' in TASKS
    assert load_config('optimize.yaml')['getup'].keys() >= {'nao', 'T1', 'K1'}


@pytest.mark.server
def test_one_getup_generation_on_the_real_server_writes_a_skill_the_player_loads(tmp_path: Path) -> None:
    """Two candidates of the T1's back get-up, one knock-down each, on their own RCSSServerMJ.

    A small step keeps them near the shipped skill (20 of 20 in the bench), so they get up.
    """
    pytest.importorskip('cma')
    pytest.importorskip('rcsssmj')
    domain = str(_domain_base(103))
    argv = ['--robot', 'T1', '--task', 'getup-back', '--generations', '1', '--popsize', '2', '--workers', '1']
    argv += ['--trials', '1', '--sigma', '0.02', '--domain-base', domain, '--out', str(tmp_path / 'getup_T1')]
    assert main(argv) == 0
    out = tmp_path / 'getup_T1.yaml'
    skill = load_keyframe_skill(out, robot_spec('mujoco', 'T1'))
    assert skill.name == 'GETUP_BACK'
    measured = out.read_text().splitlines()[1]
    assert '"successes": 1' in measured  # the best candidate got up, as measured on the server


def _domain_base(offset: int) -> int:
    """Where this test's evaluations claim ROS domains: ``offset`` above the test's own, or, when
    that is past the claimable range (a run given domains 190-229), ``offset % 10`` above it."""
    own = int(os.environ['ROS_DOMAIN_ID'])
    return own + offset if own + offset < DOMAINS.stop else own + offset % 10


def _children(pid: int) -> list[int]:
    """Child processes of ``pid``, whichever of its threads started them."""
    out = []
    for task in Path(f'/proc/{pid}/task').glob('*'):
        try:
            out += [int(c) for c in (task / 'children').read_text().split()]
        except OSError:
            continue
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f'/proc/{pid}/cmdline').read_bytes().replace(b'\0', b' ').decode(errors='replace')
    except OSError:
        return ''


def _orphan_servers() -> set[int]:
    """RCSSServerMJ processes whose parent has died (adopted by init)."""
    out = set()
    for proc in Path('/proc').glob('[0-9]*'):
        try:
            ppid = int((proc / 'stat').read_text().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == 1 and 'robocup3d_tools.mujoco_server' in _cmdline(int(proc.name)):
            out.add(int(proc.name))
    return out


def _ray_worker_running_a_candidate() -> int | None:
    """A Ray worker of this process's Ray (driver -> raylet -> worker) that runs getup_tasks now."""
    for raylet in _children(os.getpid()):
        for worker in _children(raylet):
            if any('robocup3d_tools.getup_tasks' in _cmdline(c) for c in _children(worker)):
                return worker
    return None


@pytest.mark.server
def test_a_killed_ray_worker_is_retried_and_the_generation_completes(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    pytest.importorskip('ray')
    pytest.importorskip('rcsssmj')
    domain = str(_domain_base(107))
    argv = ['--robot', 'T1', '--task', 'getup-back', '--generations', '1', '--popsize', '2', '--workers', '1']
    argv += ['--trials', '1', '--sigma', '0.02', '--domain-base', domain, '--out', str(tmp_path / 'getup_T1')]
    done: dict = {}
    run = threading.Thread(target=lambda: done.update(code=main(argv)))
    run.start()
    killed, deadline = None, time.monotonic() + 120
    while killed is None and run.is_alive() and time.monotonic() < deadline:
        killed = _ray_worker_running_a_candidate()
        if killed is None:
            time.sleep(0.2)
    orphans_before = _orphan_servers()
    if killed is not None:
        os.kill(killed, signal.SIGKILL)
    run.join(600)
    out = capsys.readouterr().out
    assert killed is not None, 'no Ray worker ran a candidate'
    assert done.get('code') == 0, out
    assert 'errors 0' in out and 'retried so far 1' in out, out
    assert load_keyframe_skill(tmp_path / 'getup_T1.yaml', robot_spec('mujoco', 'T1')).name == 'GETUP_BACK'
    # the lost worker's task process ended and took its server with it (none left running on its own)
    deadline = time.monotonic() + 15.0
    while _orphan_servers() - orphans_before and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _orphan_servers() - orphans_before


def test_a_skills_own_gains_are_searched_from_the_robots_and_written_with_their_twin(tmp_path: Path) -> None:
    """``kp.JOINT``: the robot's gain where the file has none, within kp_scale of it; the twin gets the same."""
    from robocup3d_tools.getup_search import keyframe_space  # noqa: PLC0415

    doc = yaml.safe_load((DATA_DIR / 'T1' / 'getup_back.yaml').read_text())
    doc.pop('kp', None)  # a skill without gains of its own
    for frame in doc['frames']:
        frame.pop('kp', None)
    plain = tmp_path / 'plain.yaml'
    plain.write_text(yaml.safe_dump(doc))
    conf = yaml.safe_load((Path(__file__).parents[2] / 'config' / 'optimize.yaml').read_text())['getup']['T1']
    space = keyframe_space('T1', 'back', plain, ['kp.llj1', 'kp.llj5', '8.t'], conf)
    assert space.start[:2] == (120.0, 300.0)  # config/robots.yaml's T1 hip pitch and ankle gains
    assert space.lo[:2] == (60.0, 150.0) and space.hi[:2] == (480.0, 1200.0)  # kp_scale [0.5, 4.0]
    spec = robot_spec('mujoco', 'T1')
    skill = load_keyframe_skill(space.write(space.x0(), tmp_path / 'x0'), spec)
    assert skill.kp == {'llj1': 120.0, 'rlj1': 120.0, 'llj5': 300.0, 'rlj5': 300.0}  # the start: the robot's gains
    hi = load_keyframe_skill(space.write([1.0, 1.0, space.x0()[2]], tmp_path / 'hi'), spec)
    assert hi.kp == {'llj1': 480.0, 'rlj1': 480.0, 'llj5': 1200.0, 'rlj5': 1200.0}
    assert hi.frames == skill.frames
    unscaled = tmp_path / 'space.yaml'
    unscaled.write_text(yaml.safe_dump({'getup': {'K1': {'step': {'kp': 25.0}, 'back': ['kp.llj4']}}}))
    k1 = getup_space('getup-back', 'K1', config=str(unscaled))
    assert (k1.lo[0], k1.start[0], k1.hi[0]) == (75.0, 100.0, 125.0)  # +-step.kp about the K1's knee gain
    with pytest.raises(ConfigError, match='no joint'):
        getup_space('getup-back', 'T1', names=['kp.xyz'])


def test_a_frames_own_gain_starts_from_the_one_in_force_and_is_written_into_that_frame(tmp_path: Path) -> None:
    """``FRAME.kp.JOINT``: from that frame on (the skill's ``kp`` and earlier frames' before it)."""
    start = tmp_path / 'g.yaml'
    doc = yaml.safe_load((DATA_DIR / 'T1' / 'getup_back.yaml').read_text())
    for frame in doc['frames']:
        frame.pop('kp', None)
    doc['kp'] = {'llj4': 200, 'rlj4': 200}
    doc['frames'][3]['kp'] = {'llj4': 250, 'rlj4': 250}
    start.write_text(yaml.safe_dump(doc))
    from robocup3d_tools.getup_search import keyframe_space  # noqa: PLC0415

    conf = yaml.safe_load((Path(__file__).parents[2] / 'config' / 'optimize.yaml').read_text())['getup']['T1']
    space = keyframe_space('T1', 'back', start, ['2.kp.llj4', '8.kp.llj4', '8.kp.llj1'], conf)
    assert space.start == (200.0, 250.0, 120.0)
    spec = robot_spec('mujoco', 'T1')
    skill = load_keyframe_skill(space.write([1.0, 1.0, space.x0()[2]], tmp_path / 'c'), spec)
    assert skill.kp == {'llj4': 200.0, 'rlj4': 200.0}
    assert skill.frames[2].kp == {'llj4': 600.0, 'rlj4': 600.0}  # 4 x the robot's 150
    assert skill.frames[8].kp == {'llj4': 600.0, 'rlj4': 600.0, 'llj1': 120.0, 'rlj1': 120.0}
    with pytest.raises(ConfigError, match='frames 0-'):
        keyframe_space('T1', 'back', start, ['99.kp.llj4'], conf)


def test_a_solo_joint_moves_without_its_twin_and_a_plain_one_still_carries_it(tmp_path: Path) -> None:
    """``FRAME.JOINT.solo``: the left joint alone in that frame (the T1 front roll is asymmetric); ``FRAME.JOINT``
    as before, its twin the mirror image."""
    from robocup3d_tools.getup_search import keyframe_space  # noqa: PLC0415

    conf = yaml.safe_load((Path(__file__).parents[2] / 'config' / 'optimize.yaml').read_text())['getup']['T1']
    path = DATA_DIR / 'T1' / 'getup_front.yaml'
    shipped = yaml.safe_load(path.read_text())['frames']
    names = ['0.llj2.solo', '0.rlj2.solo', '1.laj1.solo', '5.llj2']
    space = keyframe_space('T1', 'front', path, names, conf)
    assert space.names == tuple(names)
    assert space.start == (shipped[0]['q']['llj2'], shipped[0]['q']['rlj2'], shipped[1]['q']['laj1'], 10.0)
    x = [1.0, 0.0, 1.0, 1.0]
    got = yaml.safe_load(space.write(x, tmp_path / 'c').read_text())['frames']
    values = space.values(x)
    assert got[0]['q']['llj2'] == values['0.llj2.solo'] and got[0]['q']['rlj2'] == values['0.rlj2.solo']
    assert got[0]['q']['llj2'] != -got[0]['q']['rlj2']  # not each other's mirror image
    assert got[1]['q']['laj1'] == values['1.laj1.solo'] and got[1]['q']['raj1'] == shipped[1]['q']['raj1']
    assert got[5]['q']['llj2'] == values['5.llj2'] and got[5]['q']['rlj2'] == -values['5.llj2']  # twin, as before
    assert load_keyframe_skill(tmp_path / 'c.yaml', robot_spec('mujoco', 'T1')).name == 'GETUP_FRONT'
    again = yaml.safe_load(space.write(space.x0(), tmp_path / 'x0').read_text())['frames']
    assert again == shipped  # the start is the shipped skill
    with pytest.raises(ConfigError, match='does not move'):
        keyframe_space('T1', 'front', path, ['0.t.solo'], conf)
