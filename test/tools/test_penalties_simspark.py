"""``robocup3d penalties --server simspark``: a shoot-out on a real rcssserver3d, against a team given by its
start command, and which of that team's players the referee holds off the field in each kick."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from simspark_support import kill_pid

from robocup3d_tools.penalties import _numbers, _park, penalties_parser, pitch_for, run_shootout

needs_rcssserver3d = pytest.mark.skipif(
    shutil.which('rcssserver3d') is None, reason='rcssserver3d (SimSpark) is not on PATH'
)

#: two of our players under another team's name, started by a shell command as a team's start script does
OPPONENT = (
    f'{sys.executable} -m robocup3d_tools.player --server simspark --host {{host}} --port {{port}} --team {{team}} '
    '--unum 1 --robot nao --type 0 --no-raw & '
    f'{sys.executable} -m robocup3d_tools.player --server simspark --host {{host}} --port {{port}} --team {{team}} '
    '--unum 2 --robot nao --type 2 --no-raw & wait'
)


class _Placements:
    """Records the trainer's agent placements (the referee's bookkeeping, not a server)."""

    def __init__(self) -> None:
        self.moved: list[tuple[int, str, float, float]] = []

    def move_agent(self, unum: int, team: str, x: float, y: float, z: float, theta: float) -> None:
        self.moved.append((unum, team, x, y))


def test_the_opponent_players_taking_no_part_in_a_kick_wait_off_the_field() -> None:
    args = penalties_parser().parse_args(['--server', 'simspark', '--opponent-cmd', 'x', '--opponent-kicker', '2'])
    pitch = pitch_for('simspark', 'nao')
    assert _numbers(args, 0) == (1, 1)  # ours kicks at their keeper, number 1
    assert _numbers(args, 1) == (2, 1)  # their number 2 kicks at our keeper
    for kicking, active in ((0, 1), (1, 2)):
        trainer = _Placements()
        _park(trainer, pitch, args, kicking)()
        parked = {unum for unum, team, _, y in trainer.moved if team == 'Right' and abs(y) > pitch.half_width}
        assert parked == set(range(1, 12)) - {active}
        assert all(abs(x) < pitch.half_length for _, _, x, _ in trainer.moved)
    ours = penalties_parser().parse_args(['--server', 'simspark'])
    trainer = _Placements()
    _park(trainer, pitch, ours, 0)()
    assert trainer.moved == []  # two of our teams: one player each, nobody to hold


def test_the_penalty_mark_on_rcssserver3d_is_where_fifa_would_put_it() -> None:
    pitch = pitch_for('simspark', 'nao')
    assert pitch.half_length - pitch.mark == pytest.approx(15.0 * 11.0 / 52.5)
    assert pitch_for('mujoco', 'T1').mark == pytest.approx(20.18)  # RCSSServerMJ's own mark


@needs_rcssserver3d
def test_a_round_of_penalties_against_a_team_started_by_its_command(tmp_path: Path) -> None:
    argv = ['--server', 'simspark', '--kicks', '1', '--sudden-death', '0', '--time', '20', '--sync']
    argv += ['--teams', 'Alpha', 'Gamma', '--run-dir', str(tmp_path), '--opponent-kicker', '2']
    argv += ['--opponent-cmd', OPPONENT]
    args: argparse.Namespace = penalties_parser().parse_args(argv)
    lines: list[str] = []
    result = run_shootout(args, log=lines.append)
    started = next((line for line in lines if line.startswith('starting the opponent: ')), '')
    port = re.search(r'--port (\d+)', started)
    assert port, lines
    left = subprocess.run(
        ['pgrep', '-f', rf'(--agent-port|--port) {port.group(1)}( |$)'], check=False, capture_output=True, text=True
    )
    left_pids = [int(p) for p in left.stdout.split()]
    for pid in left_pids:  # a failed run must not leave them behind for the next test
        kill_pid(pid)
    assert not left_pids, f'processes left running after the shoot-out: {left_pids}'
    assert result.teams == ('Alpha', 'Gamma'), lines
    assert [k.team for k in result.kicks] == ['Alpha', 'Gamma'], lines
    for k in result.kicks:
        assert k.why in ('goal', 'time') or k.why.startswith('out'), k
        assert k.goal == (k.why == 'goal')
