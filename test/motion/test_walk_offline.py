"""``bench/walk_offline.py`` and ``bench/kick_offline.py``: RCSSServerMJ's own simulation with our motion core
(``bench/mj_offline.py``), the lining-up walk's score and its search, and a kick."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from offline_support import bench_script

from robocup3d_motion.getup import DATA_DIR
from robocup3d_motion.motion_config import load_walk_config
from robocup3d_motion.walk import walk_sets


@pytest.fixture(scope='module')
def offline():
    return bench_script('walk_offline')


@pytest.fixture(scope='module')
def bench(offline):
    return offline.Bench('positioning')


def test_the_t1_creeps_forward_stepping_in_place_and_a_fall_scores_worse_the_earlier(offline, bench) -> None:
    """The shipped set creeps stepping in place (the server: about 5 cm/s, ``walk_tasks --task lineup``); a step
    back the set cannot make (min_vx 0) is drift too."""
    shipped = offline.shipped_set('positioning')
    still = bench.trial(shipped, offline.in_place(2.0))
    assert still.fell_t is None and still.seconds == pytest.approx(2.0)
    assert 0.01 < still.creep < 0.2
    assert still.pitch_max > 0.0 and still.roll_max > 0.0
    back = bench.trial(shipped, [*offline.ARRIVE, ((-0.1, 0.0, 0.0), 1.5)])
    assert back.fell_t is None and len(back.drift) == 1
    assert back.drift[0] > 0.1  # commanded 0.15 m back; it went on forwards
    s = offline.score(back, 1.5)
    assert s < offline.score(replace(back, fell_t=1.4), 1.5) < offline.score(replace(back, fell_t=0.2), 1.5)


def test_a_search_generation_writes_a_walk_file_the_player_loads(offline, tmp_path: Path) -> None:
    out = tmp_path / 'lineup'
    args = ['--search', str(out), '--generations', '1', '--popsize', '2', '--courses', '1', '--seconds', '1']
    args += ['--delay', '1']  # each command a cycle later still
    offline.main([*args, '--params', 'sole_x', 'min_vx'])
    sets, default = walk_sets(load_walk_config(out.with_suffix('.yaml')), 'T1')
    assert default == 'positioning'
    assert -0.25 <= sets['positioning'].min_vx <= 0.0
    assert len(out.with_suffix('.jsonl').read_text().splitlines()) == 2


def test_kick_offline_kicks_the_shipped_long_kick_forward(offline) -> None:
    kick_offline = bench_script('kick_offline')
    path = DATA_DIR / 'T1' / 'kick_long.yaml'
    spot = tuple(yaml.safe_load(path.read_text())['ball'])
    r = kick_offline.Bench().trial(str(path), 'right', spot, (0.0, 0.0))
    assert r['along'] > 1.0, r


def test_kick_offline_kicks_the_k1_long_kick_forward_and_the_k1_stays_up() -> None:
    """``--robot K1``: the offline loop with a K1 (on the server this kick goes 14.5 m, 21 deg outwards)."""
    kick_offline = bench_script('kick_offline')
    path = DATA_DIR / 'K1' / 'kick_long.yaml'
    spot = tuple(yaml.safe_load(path.read_text())['ball'])
    r = kick_offline.Bench(robot='K1').trial(str(path), 'right', spot, (0.0, 0.0))
    assert r['along'] > 5.0 and r['fell_t'] is None, r
