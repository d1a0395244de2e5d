"""Team configuration: which players, which robots, which server; checked by a schema and against the rules."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import Annotated

from pydantic import PlainValidator, field_validator

from robocup3d_bridge.config_files import ConfigError
from robocup3d_bridge.config_schema import Choice, Section, Text, ranged_int, validate
from robocup3d_bridge.protocol import check_team_name
from robocup3d_description.robots import MUJOCO_ROBOTS, NAO_TYPES

__all__ = ['PlayerConfig', 'TeamConfig', 'TeamFile', 'check_hetero_types', 'parse_team_config', 'player_args']

MAX_PLAYERS = {'simspark': 11, 'mujoco': 11}
_ROS_NAME = re.compile('[A-Za-z][A-Za-z0-9_]*')


@dataclass(frozen=True, slots=True)
class PlayerConfig:
    """One player: number, robot model and (Nao) type."""

    unum: int
    robot: str
    robot_type: int = 0


@dataclass(frozen=True, slots=True)
class TeamConfig:
    """A whole team."""

    server: str
    team: str
    host: str
    port: int
    players: tuple[PlayerConfig, ...]
    secret: str = ''  # keys team talk; given to the players in their environment, never on a command line
    processes: int = 0  # the players dealt into this many processes (robocup3d_tools.team_process); 0: one each


def check_hetero_types(types: dict[int, int]) -> None:
    """Enforce rcssserver3d's heterogeneous-robot rules for a full team.

    At least 3 different types, at most 7 players of one type, at most 9 players of
    any two types. Teams of fewer than 11 (test setups) skip only the 3-types rule.
    """
    counts = Counter(types.values())
    bad = [t for t in counts if t not in NAO_TYPES]
    if bad:
        raise ConfigError(f'Nao types must be 0-4, got {sorted(bad)}')
    if len(types) >= 11 and len(counts) < 3:
        raise ConfigError(f'a team must use at least 3 robot types, this one uses {sorted(counts)}')
    for t, n in counts.items():
        if n > 7:
            raise ConfigError(f'at most 7 players may be of one type; type {t} has {n}')
    for (a, na), (b, nb) in combinations(counts.items(), 2):
        if na + nb > 9:
            raise ConfigError(f'at most 9 players may be of any two types; types {a} and {b} have {na + nb}')


def _team_name(v: object) -> str:
    """A team name that both servers take and that can name the players' ROS namespaces."""
    name = check_team_name(v)
    if not _ROS_NAME.fullmatch(name):
        raise ValueError(
            f'team name {name!r} must start with a letter and hold only A-Z a-z 0-9 _ (it names the '
            "players' ROS namespace /<team>/p<unum>)"
        )
    return name


class PlayerSettings(Section):
    """One entry of ``players:`` in mapping form."""

    robot: Text | None = None  # default: the team's ``robot``
    type: ranged_int(what='an integer (Nao type 0-4)') = 0


class TeamFile(Section):
    """A team file (``config/team_*.yaml``)."""

    server: Choice(*MAX_PLAYERS) = 'mujoco'
    team: Annotated[str, PlainValidator(_team_name)] = 'robocup3d'
    host: Text = '127.0.0.1'
    port: ranged_int(1, 65535, 'a port') | None = None  # default: the server's
    robot: Text | None = None  # default: nao on rcssserver3d, T1 on RCSSServerMJ
    secret: Text = ''  # keys the team-talk check; keep the file private
    processes: ranged_int(0, 11, 'a number of processes') = 0  # players dealt into N processes; 0: one each
    players: dict[int, PlayerSettings]

    @field_validator('players', mode='before')
    @classmethod
    def _numbers(cls, raw: object) -> dict:
        """A list of numbers or a mapping number -> settings; numbers 1-11, each once."""
        if not raw or not isinstance(raw, list | dict):
            raise ValueError('players must be a non-empty list of numbers or a mapping number -> settings')
        numbers = list(raw)
        for n in numbers:
            if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 11:
                raise ValueError(f'player numbers must be 1-11, got {n!r}')
        twice = sorted({n for n in numbers if numbers.count(n) > 1})
        if twice:
            raise ValueError(f'shirt number {twice[0]} is given twice; each player needs its own number 1-11')
        return {n: raw[n] if isinstance(raw, dict) else None for n in sorted(numbers)}


def parse_team_config(data: dict, server: str | None = None, source: str = 'team file') -> TeamConfig:
    """Validate a team YAML mapping (see ``config/team_*.yaml``); ``source`` names it in messages.

    Raises :class:`ConfigError` with one message that names ``source``, the key and what is allowed.
    """
    if server is not None:
        data = {**data, 'server': server}
    f = validate(TeamFile, data, source)
    server, team = f.server, f.team
    default_robot = f.robot or ('nao' if server == 'simspark' else 'T1')
    players = []
    for unum, settings in f.players.items():
        robot = settings.robot or default_robot
        if server == 'mujoco' and robot not in MUJOCO_ROBOTS:
            raise ConfigError(f'{source}: player {unum}: RCSSServerMJ robots are {MUJOCO_ROBOTS}, not {robot!r}')
        if server == 'simspark' and robot != 'nao':
            raise ConfigError(f'{source}: player {unum}: rcssserver3d runs the Nao only, not {robot!r}')
        players.append(PlayerConfig(unum, robot, settings.type))
    if len(players) > MAX_PLAYERS[server]:
        raise ConfigError(f'{source}: at most {MAX_PLAYERS[server]} players, got {len(players)}')
    if server == 'simspark':
        try:
            check_hetero_types({p.unum: p.robot_type for p in players})
        except ConfigError as exc:
            raise ConfigError(f'{source}: players: {exc}') from None
    port = f.port if f.port is not None else 3100 if server == 'simspark' else 60000
    return TeamConfig(server, team, f.host, port, tuple(players), f.secret, f.processes)


def player_args(config: TeamConfig, player: PlayerConfig, publish_clock: bool = False) -> list[str]:
    """The ``robocup3d player`` arguments that put ``player`` of ``config`` on its server."""
    args = ['--server', config.server, '--host', config.host, '--port', str(config.port), '--team', config.team]
    args += ['--unum', str(player.unum), '--robot', player.robot, '--type', str(player.robot_type)]
    return [*args, '--publish-clock'] if publish_clock else args
