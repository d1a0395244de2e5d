"""``robocup3d penalties``: the shoot-out's rules, and one round on a real RCSSServerMJ."""

from __future__ import annotations

import argparse

import pytest

from robocup3d_tools.penalties import Kick, penalties_parser, run_shootout, shootout_over

TEAMS = ('A', 'B')


def _kicks(*marks: str) -> list[Kick]:
    """Kicks in turns, A first: 'o' a goal, 'x' a miss."""
    return [Kick(TEAMS[i % 2], m == 'o', 1.0, 'goal' if m == 'o' else 'time') for i, m in enumerate(marks)]


@pytest.mark.parametrize(
    ('marks', 'over'),
    [
        ('', False),
        ('oxox', False),  # 2:0 after two each, three left each
        ('oxoxox', True),  # 3:0 after three each: B's two left cannot make it up
        ('ooooooooo', False),  # 5:4, B's fifth to come
        ('oooooooooo', False),  # 5:5: sudden death
        ('oooooooooooo', False),  # 6:6
        ('oooooooooooo' + 'ox', True),  # 7:6 after seven each (A scored, B missed)
        ('ooooooooooox', True),  # 6:5 in the first round of sudden death
    ],
)
def test_the_shootout_ends_when_one_team_cannot_catch_up_or_a_sudden_death_round_differs(
    marks: str, over: bool
) -> None:
    assert shootout_over(_kicks(*marks), TEAMS, 5) is over


def test_bad_options_are_refused() -> None:
    from robocup3d_tools.penalties import main  # noqa: PLC0415

    assert main(['--kicks', '0']) == 2
    assert main(['--server', 'simspark', '--opponent-cmd', 'x {port}', '--opponent-kicker', '12']) == 2
    assert main(['--opponent-cmd', 'x {port}']) == 2  # another team's command needs rcssserver3d


@pytest.mark.server
def test_a_round_of_penalties_on_the_real_server_takes_one_kick_each(tmp_path) -> None:
    pytest.importorskip('rcsssmj')
    args: argparse.Namespace = penalties_parser().parse_args(
        ['--kicks', '1', '--sudden-death', '0', '--time', '10', '--sync', '--run-dir', str(tmp_path)]
    )
    result = run_shootout(args, log=lambda _: None)
    assert [k.team for k in result.kicks] == ['Robo3dA', 'Robo3dB']
    for k in result.kicks:
        assert k.why in ('goal', 'time') or k.why.startswith('out'), k
        assert k.goal == (k.why == 'goal')
