"""The schemas of the files in config/: the shipped files pass, bad ones get one message.

Each bad file is a shipped file with one change; the message must name the file, the key and what is allowed.
The ``robocup3d player`` command refuses a bad file with exit 2 and no traceback, before it starts a node.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from robocup3d_bridge.config_files import ConfigError, load_config
from robocup3d_motion.kick_config import load_kicks_config
from robocup3d_motion.motion_config import load_robots_config, load_walk_config
from robocup3d_strategy.formation import load_formations
from robocup3d_strategy.roles import load_roles
from robocup3d_tools.optimize_config import load_optimize_config

REPO = Path(__file__).resolve().parents[2]


def test_shipped_files_pass() -> None:
    assert set(load_robots_config('robots.yaml')) == {'nao', 'T1', 'K1'}
    assert {'T1', 'K1', 'nao'} <= set(load_walk_config('walk.yaml'))
    assert set(load_formations('formations.yaml')) == {'simspark', 'mujoco', 'mujoco_K1'}
    assert {'T1', 'K1', 'nao'} <= set(load_kicks_config('kicks.yaml'))
    assert set(load_optimize_config('optimize.yaml').walk) == {'mujoco', 'simspark'}


def _edit(name: str, change: Callable[[dict], None], tmp_path: Path) -> Path:
    data = copy.deepcopy(load_config(name))
    change(data)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


CASES = {
    'robots-unknown-key': (
        'robots.yaml',
        lambda d: d['T1']['controller'].update(kpp=1),
        "T1.controller: unknown key 'kpp'; allowed: kd, kp",
    ),
    'robots-gain-not-a-number': (
        'robots.yaml',
        lambda d: d['K1']['controller']['kp'].update(llj5='stiff'),
        "K1.controller.kp: llj5: must be a finite number, got 'stiff'",
    ),
    'robots-unknown-joint': (
        'robots.yaml',
        lambda d: d['nao']['hold_pose'].update(llj9=3.0),
        "nao.hold_pose: unknown joint 'llj9'; joints: hj1, hj2",
    ),
    'robots-cycles-fraction': (
        'robots.yaml',
        lambda d: d['nao']['fall'].update(confirm_cycles=2.5),
        'nao.fall.confirm_cycles must be a number of cycles 1-1000, got 2.5',
    ),
    'robots-sign': (
        'robots.yaml',
        lambda d: d['T1']['balance']['pitch_joints'].update(llj5=2),
        'T1.balance.pitch_joints.llj5 must be 1 or -1, got 2',
    ),
    'robots-unknown-robot': ('robots.yaml', lambda d: d.update(T2={}), "unknown key 'T2'; allowed: K1, T1, nao"),
    'walk-typo': (
        'walk.yaml',
        lambda d: d['T1']['sets']['positioning'].update(max_xv=0.3),
        "T1.sets.positioning: unknown key 'max_xv'; allowed: accel_w",
    ),
    'walk-not-a-number': (
        'walk.yaml',
        lambda d: d['K1']['base'].update(period='fast'),
        "K1.base.period must be a finite number, got 'fast'",
    ),
    'walk-rule': ('walk.yaml', lambda d: d['nao3']['base'].update(period=0.01), 'nao3.base: walk: period > 0.04 s'),
    'walk-no-sets': ('walk.yaml', lambda d: d['T1'].update(sets={}), 'T1.sets must not be empty'),
    'walk-unknown-robot': ('walk.yaml', lambda d: d.update(nao5={}), "unknown key 'nao5'; allowed: K1, T1, nao, nao0"),
    'formation-short': (
        'formations.yaml',
        lambda d: d['mujoco'].update({3: [1.0, 2.0]}),
        'mujoco.3 must be [x, y, theta_deg] (finite numbers: m, m, degrees), got [1.0, 2.0]',
    ),
    'formation-player-12': (
        'formations.yaml',
        lambda d: d['simspark'].update({12: [0.0, 0.0, 0.0]}),
        'simspark: player numbers must be 1-11, got 12',
    ),
    'formation-off-the-field': (
        'formations.yaml',
        lambda d: d['simspark'].update({2: [-99.0, 0.0, 0.0]}),
        'simspark.2 must lie on the field',
    ),
    'kicks-typo': (
        'kicks.yaml',
        lambda d: d['robots']['T1']['dribble'].update(sped=0.3),
        "robots.T1.dribble: unknown key 'sped'; allowed: ahead, ball, lateral, speed",
    ),
    'kicks-negative-speed': (
        'kicks.yaml',
        lambda d: d['robots']['K1']['dribble'].update(speed=-1),
        'robots.K1.dribble.speed must be a number > 0, got -1',
    ),
    'roles-empty': ('roles.yaml', lambda d: d['mujoco'].update(theirs=[]), 'mujoco.theirs must not be empty'),
    'roles-typo': (
        'roles.yaml',
        lambda d: d['simspark']['ours'][0].update(bal=[1, 2]),
        "simspark.ours.0: unknown key 'bal'; allowed: ball, mirror, role",
    ),
    'optimize-range': (
        'optimize.yaml',
        lambda d: d['walk']['mujoco'].update(period=['abs', 0.5, 0.2]),
        "walk.mujoco.period: lo must be below hi, got ['abs', 0.5, 0.2]",
    ),
    'optimize-kind': (
        'optimize.yaml',
        lambda d: d['walk']['simspark'].update(sway=['absolute', 0.0, 0.1]),
        "walk.simspark.sway must be [abs|rel, lo, hi], got ['absolute', 0.0, 0.1]",
    ),
    'optimize-getup-typo': (
        'optimize.yaml',
        lambda d: d['getup']['nao'].update(fornt=['getup_front_1_leg1']),
        "getup.nao: unknown key 'fornt'; allowed: back, bounds, front, kp_scale, mirror, step, t_scale",
    ),
    'optimize-mirror': (
        'optimize.yaml',
        lambda d: d['getup']['T1']['mirror'].update(llj1=['rlj1', 2]),
        "getup.T1.mirror.llj1 must be [twin_joint, 1 or -1], got ['rlj1', 2]",
    ),
}
LOADERS = {
    'robots.yaml': load_robots_config,
    'walk.yaml': load_walk_config,
    'formations.yaml': load_formations,
    'kicks.yaml': load_kicks_config,
    'optimize.yaml': load_optimize_config,
    'roles.yaml': load_roles,
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_bad_file_gets_one_message(case: str, tmp_path: Path) -> None:
    name, change, message = CASES[case]
    path = _edit(name, change, tmp_path)
    with pytest.raises(ConfigError) as err:
        LOADERS[name](path)
    assert str(err.value).startswith(f'{path}: '), err.value
    assert message in str(err.value), err.value
    assert '\n' not in str(err.value)


def _player(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(REPO), env.get('PYTHONPATH', '')) if p)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    return subprocess.run(
        [sys.executable, '-m', 'robocup3d_tools.cli', 'player', *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_player_refuses_a_bad_walk_file(tmp_path: Path) -> None:
    path = _edit('walk.yaml', lambda d: d['T1']['sets']['sprint'].update(perod=0.2), tmp_path)
    res = _player('--walk-config', str(path), '--port', '9', cwd=tmp_path)
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert res.stderr.startswith(f"robocup3d player: {path}: T1.sets.sprint: unknown key 'perod'"), res.stderr
    assert 'Traceback' not in res.stderr
