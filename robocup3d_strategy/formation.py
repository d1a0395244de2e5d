"""Kick-off formations and when to beam into them."""

from __future__ import annotations

import math

from robocup3d_bridge.config_files import ConfigError

__all__ = ['BEAM_MODES', 'formation_pose', 'should_beam']

#: Play modes in which the servers accept a beam.
BEAM_MODES = frozenset({'BeforeKickOff', 'Goal_Left', 'Goal_Right'})


def formation_pose(formations: dict, server: str, unum: int) -> tuple[float, float, float]:
    """Kick-off pose (x m, y m, theta rad) of player ``unum`` in the team frame."""
    table = formations.get(server)
    if not isinstance(table, dict):
        raise ConfigError(f'formations.yaml has no {server!r} formation')
    pose = table.get(unum, table.get(str(unum)))
    if pose is None:
        raise ConfigError(f'formation {server!r} has no place for player {unum}')
    if len(pose) != 3 or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in pose):
        raise ConfigError(f'formation {server!r} player {unum}: expected [x, y, theta_deg], got {pose!r}')
    return float(pose[0]), float(pose[1]), math.radians(pose[2])


def should_beam(play_mode: str | None, last_beam_time: float | None, now: float, period: float = 1.0) -> bool:
    """Beam when a beam is allowed, repeating every ``period`` seconds while it still is."""
    if play_mode not in BEAM_MODES:
        return False
    return last_beam_time is None or now - last_beam_time >= period
