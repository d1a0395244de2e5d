"""Team configuration: which players, which robots, which server; checked against the rules."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations

from robocup3d_bridge.config_files import ConfigError
from robocup3d_bridge.protocol import ActionError, check_team_name
from robocup3d_description.robots import MUJOCO_ROBOTS, NAO_TYPES

__all__ = ['PlayerConfig', 'TeamConfig', 'check_hetero_types', 'parse_team_config', 'player_args']

MAX_PLAYERS = {'simspark': 11, 'mujoco': 11}


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


def parse_team_config(data: dict, server: str | None = None) -> TeamConfig:
    """Validate a team YAML mapping (see ``config/team_*.yaml``)."""
    server = server or data.get('server', 'mujoco')
    if server not in MAX_PLAYERS:
        raise ConfigError(f"server must be 'simspark' or 'mujoco', got {server!r}")
    try:
        team = check_team_name(str(data.get('team', 'robocup3d')))
    except ActionError as exc:
        raise ConfigError(str(exc)) from None
    raw = data.get('players')
    if isinstance(raw, list):
        raw = {int(u): {} for u in raw}
    if not isinstance(raw, dict) or not raw:
        raise ConfigError('players must be a non-empty list of numbers or a mapping number -> settings')
    default_robot = data.get('robot', 'nao' if server == 'simspark' else 'T1')
    players = []
    for unum, settings in sorted((int(k), v or {}) for k, v in raw.items()):
        if not 1 <= unum <= 11:
            raise ConfigError(f'player numbers must be 1-11, got {unum}')
        robot = settings.get('robot', default_robot)
        rtype = int(settings.get('type', 0))
        if server == 'mujoco' and robot not in MUJOCO_ROBOTS:
            raise ConfigError(f'player {unum}: RCSSServerMJ robots are {MUJOCO_ROBOTS}, not {robot!r}')
        if server == 'simspark' and robot != 'nao':
            raise ConfigError(f'player {unum}: rcssserver3d runs the Nao only, not {robot!r}')
        players.append(PlayerConfig(unum, robot, rtype))
    if len(players) > MAX_PLAYERS[server]:
        raise ConfigError(f'at most {MAX_PLAYERS[server]} players, got {len(players)}')
    if server == 'simspark':
        check_hetero_types({p.unum: p.robot_type for p in players})
    default_port = 3100 if server == 'simspark' else 60000
    return TeamConfig(
        server, team, str(data.get('host', '127.0.0.1')), int(data.get('port', default_port)), tuple(players)
    )


def player_args(config: TeamConfig, player: PlayerConfig, publish_clock: bool = False) -> list[str]:
    """The ``robocup3d player`` arguments that put ``player`` of ``config`` on its server."""
    args = ['--server', config.server, '--host', config.host, '--port', str(config.port), '--team', config.team]
    args += ['--unum', str(player.unum), '--robot', player.robot, '--type', str(player.robot_type)]
    return [*args, '--publish-clock'] if publish_clock else args
