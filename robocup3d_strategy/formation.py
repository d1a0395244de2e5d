"""Kick-off formations and when to beam into them."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

from pydantic import PlainValidator, field_validator

from robocup3d_bridge.config_files import ConfigError, config_path, load_config
from robocup3d_bridge.config_schema import Section, validate

__all__ = ['BEAM_MODES', 'FormationsFile', 'beam_pose', 'formation_pose', 'load_formations', 'should_beam']

#: Play modes in which the servers accept a beam.
BEAM_MODES = frozenset({'BeforeKickOff', 'Goal_Left', 'Goal_Right'})


def _pose(v: object) -> tuple[float, float, float]:
    ok = isinstance(v, list) and len(v) == 3
    if not ok or not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in v):
        raise ValueError(f'must be [x, y, theta_deg] (finite numbers: m, m, degrees), got {v!r}')
    if abs(v[0]) > 30.0 or abs(v[1]) > 20.0:
        raise ValueError(f'must lie on the field (|x| <= 30 m, |y| <= 20 m), got {v!r}')
    return float(v[0]), float(v[1]), float(v[2])


#: A kick-off place in the team frame: x (m), y (m), theta (degrees).
Pose = Annotated[tuple[float, float, float], PlainValidator(_pose)]


class FormationsFile(Section):
    """``config/formations.yaml``: per server, player number -> kick-off place; ``<server>_<robot>`` tables give one
    robot's own places for some players (a kick-off taker at its own kick's spot), the server's for the rest."""

    simspark: dict[int, Pose] | None = None
    mujoco: dict[int, Pose] | None = None
    mujoco_K1: dict[int, Pose] | None = None

    @field_validator('simspark', 'mujoco', 'mujoco_K1', mode='before')
    @classmethod
    def _numbers(cls, table: object) -> object:
        if isinstance(table, dict):
            bad = [n for n in table if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 11]
            if bad:
                raise ValueError(f'player numbers must be 1-11, got {bad[0]!r}')
        return table


def load_formations(name_or_path: str | Path) -> dict:
    """``formations.yaml`` (by name or path), checked against :class:`FormationsFile`."""
    path = config_path(name_or_path)
    data = load_config(path)
    validate(FormationsFile, data, str(path))
    return data


def formation_pose(formations: dict, server: str, unum: int, robot: str = '') -> tuple[float, float, float]:
    """Kick-off pose (x m, y m, theta rad) of player ``unum`` in the team frame: ``robot``'s own place on ``server``
    (the ``<server>_<robot>`` table) if it has one, else the server's."""
    table = formations.get(server)
    if not isinstance(table, dict):
        raise ConfigError(f'formations.yaml has no {server!r} formation')
    own = formations.get(f'{server}_{robot}') if robot else None
    if isinstance(own, dict) and (unum in own or str(unum) in own):
        table = own
    pose = table.get(unum, table.get(str(unum)))
    if pose is None:
        raise ConfigError(f'formation {server!r} has no place for player {unum}')
    if len(pose) != 3 or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in pose):
        raise ConfigError(f'formation {server!r} player {unum}: expected [x, y, theta_deg], got {pose!r}')
    return float(pose[0]), float(pose[1]), math.radians(pose[2])


def beam_pose(
    home: tuple[float, float, float], play_mode: str | None, side: str | None, keep: float
) -> tuple[float, float, float]:
    """Where to beam in ``play_mode``: the kick-off place, or, after our goal (the opponents kick off
    next), that place moved out to ``keep`` m from the centre: the servers put a player of ours inside
    the centre circle during their kick-off off the field (RCSSServerMJ) or away (rcssserver3d)."""
    x, y, theta = home
    d = math.hypot(x, y)
    ours_scored = side in ('left', 'right') and play_mode == f'Goal_{side.capitalize()}'
    if not ours_scored or d >= keep:
        return home
    if d < 1e-6:
        return -keep, 0.0, theta
    return x * keep / d, y * keep / d, theta


def should_beam(play_mode: str | None, last_beam_time: float | None, now: float, period: float = 1.0) -> bool:
    """Beam when a beam is allowed, repeating every ``period`` seconds while it still is."""
    if play_mode not in BEAM_MODES:
        return False
    return last_beam_time is None or now - last_beam_time >= period
