"""Team configuration checks (no server needed): the seeds' rules, the shipped configs, the CLI's exit code."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from robocup3d_bridge.config_files import ConfigError, load_config
from robocup3d_tools.team_config import check_hetero_types, parse_team_config, player_args
from robocup3d_tools.team_runner import TeamRunner, load_team, team_parser

REPO = Path(__file__).resolve().parents[2]


def simspark_team(types: list[int], **extra: object) -> dict:
    """A team YAML mapping with players 1..n of the given Nao types."""
    return {'server': 'simspark', 'team': 'Alpha', 'players': {u: {'type': t} for u, t in enumerate(types, 1)}, **extra}


# ----------------------------------------------------------------------------- the rules


@pytest.mark.parametrize(
    ('types', 'message'),
    [
        pytest.param([0] * 7 + [1] * 4, 'at least 3 robot types', id='two-types-full-team'),
        pytest.param([0] * 11, 'at least 3 robot types', id='one-type-full-team'),
        pytest.param([0] * 8 + [1, 2, 3], 'at most 7 players may be of one type; type 0 has 8', id='eight-of-one'),
        pytest.param([0] * 8, 'at most 7 players may be of one type', id='eight-of-one-partial-team'),
        pytest.param([0] * 6 + [1] * 4 + [2], 'at most 9 players may be of any two types', id='ten-of-two'),
        pytest.param([3] * 5 + [4] * 5 + [0], 'types 3 and 4 have 10', id='ten-of-two-names-them'),
        # rcssserver3d checks the two-type cap on every join (GameStateAspect::InsertRobotType), full team or not
        pytest.param([2] * 5 + [3] * 5, 'types 2 and 3 have 10', id='ten-of-two-partial-team'),
        pytest.param([0, 1, 5], 'Nao types must be 0-4, got [5]', id='type-5'),
        pytest.param([0, -1, 2], 'Nao types must be 0-4', id='negative-type'),
    ],
)
def test_hetero_rules_rejected(types: list[int], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_team_config(simspark_team(types))
    assert message in str(err.value)


@pytest.mark.parametrize(
    'types',
    [
        pytest.param([0, 1, 1, 0, 2, 2, 3, 3, 4, 4, 0], id='shipped-mix'),
        pytest.param([0] * 7 + [1] * 2 + [2] * 2, id='seven-of-one-nine-of-two'),
        pytest.param([0, 1, 2, 3, 4] * 2 + [0], id='all-five-types'),
        pytest.param([0, 0, 0], id='partial-team-one-type'),
        pytest.param([4] * 7, id='partial-team-seven-of-one'),
    ],
)
def test_hetero_rules_accepted(types: list[int]) -> None:
    cfg = parse_team_config(simspark_team(types))
    assert [p.robot_type for p in cfg.players] == types
    assert all(p.robot == 'nao' for p in cfg.players)


def test_check_hetero_types_directly() -> None:
    check_hetero_types({1: 0, 2: 1, 3: 2})
    with pytest.raises(ConfigError, match='at most 7'):
        check_hetero_types(dict.fromkeys(range(1, 9), 1))


@pytest.mark.parametrize(
    ('data', 'message'),
    [
        pytest.param(simspark_team([0, 1, 2], players=None), 'players must be a non-empty', id='no-players'),
        pytest.param(
            {'server': 'simspark', 'players': {12: {'type': 0}}}, 'player numbers must be 1-11, got 12', id='player-12'
        ),
        pytest.param({'server': 'simspark', 'players': [0, 1]}, 'player numbers must be 1-11, got 0', id='player-0'),
        pytest.param(
            {'server': 'mujoco', 'players': [1, 2, 12]}, 'player numbers must be 1-11, got 12', id='player-12-mujoco'
        ),
        pytest.param(
            {'server': 'rcssserver2d', 'players': [1]}, "server must be 'simspark' or 'mujoco'", id='unknown-server'
        ),
        pytest.param(simspark_team([0, 1, 2], team='my team'), "team name 'my team' must be", id='team-with-space'),
        pytest.param(simspark_team([0], team=''), 'team name', id='empty-team'),
        pytest.param(simspark_team([0], team='x' * 21), 'team name', id='team-too-long'),
        pytest.param(simspark_team([0], team='a(b)'), 'team name', id='team-with-parens'),
        pytest.param(
            {'server': 'simspark', 'robot': 'T1', 'players': [1, 2]},
            'rcssserver3d runs the Nao only, not',
            id='T1-on-simspark',
        ),
        pytest.param(
            {'server': 'simspark', 'players': {1: {'robot': 'K1'}}},
            'player 1: rcssserver3d runs the Nao',
            id='K1-on-simspark-per-player',
        ),
        pytest.param(
            {'server': 'mujoco', 'robot': 'nao', 'players': [1]}, 'RCSSServerMJ robots are', id='nao-on-mujoco'
        ),
        pytest.param(
            {'server': 'mujoco', 'players': {1: {}, 2: {'robot': 'NAO'}}},
            'player 2: RCSSServerMJ robots',
            id='bad-robot-per-player-mujoco',
        ),
    ],
)
def test_bad_configs_rejected(data: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_team_config(data)
    assert message in str(err.value)


def test_shipped_simspark_config_accepted() -> None:
    cfg = parse_team_config(load_config('team_simspark.yaml'))
    assert cfg.server == 'simspark'
    assert cfg.port == 3100 and cfg.host == '127.0.0.1'
    assert [p.unum for p in cfg.players] == list(range(1, 12))
    assert all(p.robot == 'nao' for p in cfg.players)
    counts = Counter(p.robot_type for p in cfg.players)
    assert len(counts) >= 3 and max(counts.values()) <= 7
    assert all(a + b <= 9 for a in counts.values() for b in counts.values() if a is not b)


def test_shipped_mujoco_config_accepted() -> None:
    cfg = parse_team_config(load_config('team_mujoco.yaml'))
    assert cfg.server == 'mujoco'
    assert cfg.port == 60000
    assert [p.unum for p in cfg.players] == list(range(1, 8))
    assert {p.robot for p in cfg.players} == {'T1'}


def test_player_args_start_each_player_as_configured() -> None:
    """The arguments the runner and team.launch.py give each player parse back to its config entry."""
    pytest.importorskip('rclpy')
    from robocup3d_tools.player import player_parser  # noqa: PLC0415

    cfg = parse_team_config(load_config('team_simspark.yaml'))
    for p in cfg.players:
        args = player_parser().parse_args(player_args(cfg, p, publish_clock=p.unum == 1))
        assert (args.server, args.host, args.port, args.team) == (cfg.server, cfg.host, cfg.port, cfg.team)
        assert (args.unum, args.robot, args.robot_type) == (p.unum, p.robot, p.robot_type)
        assert args.publish_clock == (p.unum == 1)


def test_load_team_overrides() -> None:
    args = team_parser().parse_args(['--server', 'simspark', '--players', '3', '--team', 'Beta', '--port', '3101'])
    cfg = load_team(args)
    assert (cfg.server, cfg.team, cfg.port) == ('simspark', 'Beta', 3101)
    assert [(p.unum, p.robot_type) for p in cfg.players] == [(1, 0), (2, 1), (3, 1)]
    with pytest.raises(ConfigError, match='team name'):
        load_team(team_parser().parse_args(['--server', 'simspark', '--team', 'my team']))


# ----------------------------------------------------------------------------- the CLI


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(REPO), env.get('PYTHONPATH', '')) if p)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env.setdefault('ROS_DOMAIN_ID', '77')
    return subprocess.run(
        [sys.executable, '-m', 'robocup3d_tools.cli', 'team', *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


BAD_CONFIGS = {
    'two-types': (simspark_team([0] * 7 + [1] * 4), 'at least 3 robot types'),
    'eight-of-one': (simspark_team([0] * 8 + [1, 2, 3]), 'at most 7 players may be of one type'),
    'ten-of-two': (simspark_team([0] * 6 + [1] * 4 + [2]), 'at most 9 players may be of any two types'),
    'type-5': (simspark_team([0, 1, 5]), 'Nao types must be 0-4'),
    'player-12': ({'server': 'simspark', 'players': {12: {'type': 0}}}, 'player numbers must be 1-11'),
    'unknown-server': ({'server': 'webots', 'players': [1]}, "server must be 'simspark' or 'mujoco'"),
    'team-name': (simspark_team([0, 1, 2], team='my team'), "team name 'my team'"),
    'wrong-robot': ({'server': 'simspark', 'robot': 'T1', 'players': [1]}, 'rcssserver3d runs the Nao only'),
    # issue 24: each of these was accepted silently or ended in a traceback
    'typo-tpye': (
        {'server': 'simspark', 'players': {1: {'type': 0}, 2: {'tpye': 3}, 3: {'type': 2}}},
        "bad.yaml: players.2: unknown key 'tpye'; allowed: robot, type",
    ),
    'type-zero': (simspark_team([0, 'zero', 2]), "players.2.type must be an integer (Nao type 0-4), got 'zero'"),
    'type-1.9': (simspark_team([0, 1.9, 2]), 'players.2.type must be an integer (Nao type 0-4), got 1.9'),
    'bare-number': (
        {'server': 'simspark', 'players': {1: 5}},
        'players.1: expected a mapping with the keys robot, type',
    ),
    'duplicate-number': ({'server': 'mujoco', 'players': [1, 1, 2]}, 'players: shirt number 1 is given twice'),
    'port-99999': ({'server': 'mujoco', 'port': 99999, 'players': [1]}, 'port must be a port 1-65535, got 99999'),
    'unknown-top-key': ({'sever': 'mujoco', 'players': [1]}, "unknown key 'sever'; allowed: host, players, port"),
    'team-not-a-ros-name': ({'team': 'a-b', 'players': [1]}, "team name 'a-b' must start with a letter"),
}


@pytest.mark.parametrize('case', sorted(BAD_CONFIGS))
def test_cli_rejects_bad_config(case: str, tmp_path: Path) -> None:
    """``robocup3d team --config bad.yaml`` exits 2 with the reason on stderr, before starting anything."""
    data, message = BAD_CONFIGS[case]
    bad = tmp_path / 'bad.yaml'
    bad.write_text(yaml.safe_dump(data))
    logs = tmp_path / 'logs'
    t0 = time.monotonic()
    res = _cli('--config', str(bad), '--log-dir', str(logs), cwd=tmp_path)
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert message in res.stderr, res.stderr
    assert res.stderr.startswith('robocup3d team: '), res.stderr
    assert 'Traceback' not in res.stderr
    assert 'players on' not in res.stdout  # the start banner: nothing was started
    assert not logs.exists(), 'the runner created its log dir: it got as far as starting players'
    assert time.monotonic() - t0 < 30


def test_cli_rejects_missing_and_broken_files(tmp_path: Path) -> None:
    res = _cli('--config', str(tmp_path / 'nope.yaml'), '--log-dir', str(tmp_path / 'logs'), cwd=tmp_path)
    assert res.returncode == 2 and 'config file not found' in res.stderr, res.stderr
    broken = tmp_path / 'broken.yaml'
    broken.write_text('players: [1, 2\n')
    res = _cli('--config', str(broken), '--log-dir', str(tmp_path / 'logs'), cwd=tmp_path)
    assert res.returncode == 2 and 'not valid YAML' in res.stderr, res.stderr
    not_a_mapping = tmp_path / 'list.yaml'
    not_a_mapping.write_text('- 1\n- 2\n')
    res = _cli('--config', str(not_a_mapping), '--log-dir', str(tmp_path / 'logs'), cwd=tmp_path)
    assert res.returncode == 2 and 'expected a mapping' in res.stderr, res.stderr
    assert not (tmp_path / 'logs').exists()


def test_cli_rejects_a_key_given_twice(tmp_path: Path) -> None:
    """YAML keeps the last of two equal keys; a team file with player 1 twice is refused instead."""
    dup = tmp_path / 'dup.yaml'
    dup.write_text('server: simspark\nplayers:\n  1: {type: 0}\n  1: {type: 3}\n')
    res = _cli('--config', str(dup), '--log-dir', str(tmp_path / 'logs'), cwd=tmp_path)
    assert res.returncode == 2, res
    assert f'{dup}: line 4: key 1 is given twice' in res.stderr, res.stderr
    assert 'Traceback' not in res.stderr


def test_cli_rejects_bad_port_option(tmp_path: Path) -> None:
    res = _cli('--port', '99999', '--log-dir', str(tmp_path / 'logs'), cwd=tmp_path)
    assert res.returncode == 2 and 'port must be a port 1-65535, got 99999' in res.stderr, res.stderr
    assert not (tmp_path / 'logs').exists()


def test_cli_rejects_bad_team_name_option(tmp_path: Path) -> None:
    """The --team override goes through the same check as the file."""
    res = _cli('--server', 'simspark', '--team', 'my team', '--log-dir', str(tmp_path / 'logs'), cwd=tmp_path)
    assert res.returncode == 2, res
    assert "team name 'my team'" in res.stderr
    assert not (tmp_path / 'logs').exists()


@pytest.mark.parametrize('value', ['0', '-1', 'nan', 'inf', 'soon'])
def test_player_refuses_a_cmd_timeout_that_is_not_a_positive_time(value: str, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip('rclpy')
    from robocup3d_tools.player import player_parser  # noqa: PLC0415

    assert player_parser().parse_args(['--cmd-timeout', '2.5']).cmd_timeout == 2.5
    with pytest.raises(SystemExit):
        player_parser().parse_args(['--cmd-timeout', value])
    assert '--cmd-timeout' in capsys.readouterr().err


def test_the_team_secret_reaches_the_players_environment_and_never_their_command_line(tmp_path: Path) -> None:
    """Real player processes of a runner (bridge only, no server: they keep trying to connect)."""
    from robocup3d_bridge.team_talk import SECRET_ENV  # noqa: PLC0415

    config = parse_team_config({'server': 'mujoco', 'team': 'Keyed', 'port': 9, 'secret': 's3cret', 'players': [1, 2]})
    assert config.secret == 's3cret'
    runner = TeamRunner(config, tmp_path, extra_args=['--bridge-only'])
    runner.start(stagger=0.0)
    try:
        pids = runner.pids
        assert len(pids) == 2
        for pid in pids:
            env = Path(f'/proc/{pid}/environ').read_bytes().split(b'\0')
            cmdline = Path(f'/proc/{pid}/cmdline').read_bytes()
            assert f'{SECRET_ENV}=s3cret'.encode() in env
            assert b's3cret' not in cmdline
    finally:
        runner.stop()


# ----------------------------------------------------------------------------- processes


@pytest.mark.parametrize(
    ('processes', 'one_process', 'expected'),
    [
        pytest.param(0, False, [[u] for u in range(1, 12)], id='one-each'),
        pytest.param(1, False, [list(range(1, 12))], id='one'),
        pytest.param(0, True, [list(range(1, 12))], id='one-process-flag'),
        pytest.param(3, False, [[1, 4, 7, 10], [2, 5, 8, 11], [3, 6, 9]], id='three-dealt'),
        pytest.param(11, False, [[u] for u in range(1, 12)], id='as-many-as-players'),
        pytest.param(20, False, [[u] for u in range(1, 12)], id='more-than-players'),
    ],
)
def test_players_are_dealt_into_the_processes_asked_for(processes: int, one_process: bool, expected: list) -> None:
    cfg = parse_team_config(simspark_team([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 4]))
    runner = TeamRunner(cfg, Path('/nonexistent'), env={}, one_process=one_process, processes=processes)
    assert [[p.unum for p in g] for g in runner.groups()] == expected
    assert sorted(p.unum for g in runner.groups() for p in g) == list(range(1, 12))  # every player exactly once


def test_the_team_command_takes_a_number_of_processes(capsys: pytest.CaptureFixture[str]) -> None:
    assert team_parser().parse_args(['--processes', '3']).processes == 3
    assert team_parser().parse_args([]).processes == 0
    for bad, said in (('-2', 'cannot be negative'), ('two', 'whole number')):
        with pytest.raises(SystemExit):
            team_parser().parse_args(['--processes', bad])
        assert said in capsys.readouterr().err


def test_a_team_file_sets_the_processes_and_the_command_line_overrides_it() -> None:
    cfg = parse_team_config(simspark_team([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 4], processes=2))
    assert cfg.processes == 2
    assert [len(g) for g in TeamRunner(cfg, Path('/nonexistent'), env={}).groups()] == [6, 5]
    assert [len(g) for g in TeamRunner(cfg, Path('/nonexistent'), env={}, processes=11).groups()] == [1] * 11
    assert [len(g) for g in TeamRunner(cfg, Path('/nonexistent'), env={}, one_process=True).groups()] == [11]


@pytest.mark.parametrize('value', [-1, 12, 1.5, 'two', True])
def test_a_wrong_number_of_processes_is_refused_by_name(value: object) -> None:
    with pytest.raises(ConfigError, match='processes'):
        parse_team_config(simspark_team([0, 1, 2], processes=value))
