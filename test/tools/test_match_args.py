"""``robocup3d match`` arguments and opponent commands, without a server."""

from __future__ import annotations

from pathlib import Path

import pytest

from robocup3d_tools.match import check_args, main, match_parser
from robocup3d_tools.opponent import OpponentError, format_command


def _args(*argv: str):
    args = match_parser().parse_args(list(argv))
    check_args(args)
    return args


def test_defaults_per_server() -> None:
    """The README's command stays one 30 s half of 3 v 3; rcssserver3d gets the rules' 2 x 300 s and 11 Nao."""
    mj = _args()
    assert (mj.server, mj.halves, mj.half_time, mj.players) == ('mujoco', 1, 30.0, 3)
    ss = _args('--server', 'simspark', '--opponent-cmd', 'start.sh {host} {port}')
    assert (ss.halves, ss.half_time, ss.players) == (2, 300.0, 11)
    assert _args('--duration', '12').half_time == 12.0  # the old name still works


@pytest.mark.parametrize(
    ('argv', 'message'),
    [
        (['--server', 'simspark', '--halves', '3'], '1 or 2 halves'),
        (['--opponent-cmd', 'x'], 'needs --server simspark'),
        (['--players', '8'], '--players must be 1-7'),
        (['--server', 'simspark', '--players', '12'], '--players must be 1-11'),
        (['--half-time', '0'], '--half-time > 0'),
        (['--monitor-interval', '3'], 'must divide 250'),
        (['--server', 'simspark', '--monitor-interval', '5'], 'for RCSSServerMJ'),
    ],
)
def test_what_cannot_be_played_is_refused(argv: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _args(*argv)


def test_bad_arguments_exit_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(['--server', 'simspark', '--halves', '3']) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ['robocup3d match: rcssserver3d plays 1 or 2 halves, not 3']


def test_a_bag_directory_that_exists_is_refused_before_a_server_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It used to end in the recorder's traceback after rcssserver3d and the players had started."""
    (tmp_path / 'bag').mkdir()
    assert main(['--server', 'simspark', '--record', str(tmp_path / 'bag'), '--opponent-cmd', 'x {host} {port}']) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'exists already' in err[0], err


def test_opponent_command_placeholders() -> None:
    cmd = format_command('./start.sh {host} {port} {team} --mon {monitor_port} {{literal}}', '127.0.0.1', 3, 4, 'B')
    assert cmd == './start.sh 127.0.0.1 3 B --mon 4 {literal}'
    with pytest.raises(OpponentError, match='placeholders'):
        format_command('./start.sh {prot}', '127.0.0.1', 3, 4, 'B')
    with pytest.raises(OpponentError, match='empty'):
        format_command('  ', '127.0.0.1', 3, 4, 'B')


def test_summary_prints_each_players_cpu_per_cycle_since_the_kick_off() -> None:
    """CPU ms per cycle counts only what the player spent from the kick-off on; without a kick-off
    snapshot, or with no cycles since, it says it does not know."""
    from robocup3d_tools.match import MatchResult, cpu_per_cycle, format_result  # noqa: PLC0415

    start = {'cycles': '100', 'process_cpu_s': '4.000'}
    end = {'cycles': '600', 'process_cpu_s': '5.500', 'replies_fallback': '0'}
    assert cpu_per_cycle(start, end) == '3.00'
    assert cpu_per_cycle(None, end) == '?'
    assert cpu_per_cycle(start, start) == '?'
    assert cpu_per_cycle({'cycles': 'x'}, end) == '?'
    r = MatchResult(teams=('A', 'B'), players={'/A/p1': end, '/B/p1': end}, players_at_kickoff={'/A/p1': start})
    rows = {line.split()[0]: line.split() for line in format_result(r).splitlines() if line.startswith('/')}
    assert rows['/A/p1'][5] == '3.00'
    assert rows['/B/p1'][5] == '?'


def test_a_ros_teardown_that_hangs_is_left_behind_and_the_match_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a 5-minute rcssserver3d half the observer's ``destroy_node`` blocked for good in a Fast DDS publisher's
    deletion, with rcssserver3d still running and no summary printed. A teardown held up here (a real node whose
    ``destroy_node`` waits on an event) is given up after the timeout; released, it completes."""
    pytest.importorskip('rclpy')
    import os  # noqa: PLC0415
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    from robocup3d_tools.match import _DiagnosticsWatcher  # noqa: PLC0415

    watcher = _DiagnosticsWatcher(
        {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST', 'ROS_DOMAIN_ID': os.environ.get('ROS_DOMAIN_ID', '0')}
    )
    release, destroy = threading.Event(), watcher.node.destroy_node
    monkeypatch.setattr(watcher.node, 'destroy_node', lambda: (release.wait(), destroy()))
    start = time.monotonic()
    assert watcher.close(timeout=0.3) is False
    assert time.monotonic() - start < 2.0
    release.set()  # the teardown left behind completes: the node and its context go down
    end = time.monotonic() + 5.0
    while watcher._context.ok() and time.monotonic() < end:
        time.sleep(0.05)
    assert not watcher._context.ok()


@pytest.mark.parametrize(
    ('argv', 'team_file', 'said'),
    [
        ((), 0, 'a process per player'),
        (('--one-process',), 0, 'one process per team'),
        (('--processes', '3'), 0, '3 processes per team'),
        ((), 2, '2 processes per team'),  # the team file's
        (('--processes', '1'), 3, 'one process per team'),  # the command line's over the team file's
        (('--processes', '11'), 0, 'a process per player'),  # as many as the players: one each
    ],
)
def test_the_summary_says_how_our_players_were_run(argv: tuple[str, ...], team_file: int, said: str) -> None:
    from robocup3d_tools.match import MatchResult, format_result, process_layout  # noqa: PLC0415

    r = MatchResult(teams=('A', 'B'), mode='sync', processes=process_layout(_args(*argv), 11, team_file))
    assert f'in sync mode; our players: {said})' in format_result(r)
