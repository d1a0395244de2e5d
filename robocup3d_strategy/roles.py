"""Role assignment: who goes on the ball, and SCRAM for everyone else.

Every player runs the same deterministic functions on the same shared picture (its own pose
and its teammates' from vision and team talk), so that, given the same picture, all of them
reach the same assignment and no two chase the ball:

* :func:`on_ball_player`: the field player nearest the ball (fallen and stale players left
  out), the current one kept unless another is nearer by :data:`ON_BALL_MARGIN`; ties go to
  the lower number;
* :func:`scram`: the others to the role places of ``config/roles.yaml`` (ball-relative, per
  play phase) by UT Austin Villa's SCRAM, MMD+MSD²: the assignment that minimises the longest
  walk, and among those the sum of squared walks (MacAlpine, Price and Stone, AAAI 2015), solved
  with the Hungarian algorithm (``scipy.optimize.linear_sum_assignment``).

Distances are straight lines: the players do not know each other's headings, and the same
picture must give the same answer on every player.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from pydantic import Field
from scipy.optimize import linear_sum_assignment

from robocup3d_bridge.config_files import config_path, load_config
from robocup3d_bridge.config_schema import Finite, Section, Text, validate

__all__ = ['Slot', 'load_roles', 'on_ball_player', 'scram', 'slot_places']

ON_BALL_MARGIN = 0.5  # m nearer the ball another player must be to take it over
Point = tuple[float, float]


class Slot(Section):
    """A role place relative to the ball."""

    role: Text
    ball: tuple[Finite, Finite]
    mirror: bool = False


class ServerRoles(Section):
    play_on: list[Slot] = Field(min_length=1)
    ours: list[Slot] = Field(min_length=1)
    theirs: list[Slot] = Field(min_length=1)
    kickoff: list[Slot] | None = Field(default=None, min_length=1)  # our kick-off (default: ``ours``)

    def slots(self, phase: str, set_play: str = '') -> list[Slot]:
        """The slots for a phase (``ours``, ``theirs``; any other: ``play_on``) and set play."""
        if phase == 'ours' and set_play == 'kickoff' and self.kickoff:
            return self.kickoff
        return getattr(self, phase if phase in ('ours', 'theirs') else 'play_on')


class RolesFile(Section):
    simspark: ServerRoles
    mujoco: ServerRoles


def load_roles(name_or_path: str | Path = 'roles.yaml') -> dict[str, ServerRoles]:
    """``roles.yaml`` checked against its schema, by server."""
    path = config_path(name_or_path)
    f = validate(RolesFile, load_config(path), str(path))
    return {'simspark': f.simspark, 'mujoco': f.mujoco}


def slot_places(slots: Sequence[Slot], ball: Point, half: Point) -> list[tuple[str, Point]]:
    """Each slot's role and place for a ball at ``ball``, kept ``0.5`` m inside a field of half-size ``half``."""
    out = []
    side = 1.0 if ball[1] >= 0.0 else -1.0
    for s in slots:
        dx, dy = s.ball
        if s.mirror:
            dy *= side
        x = max(-half[0] + 0.5, min(half[0] - 0.5, ball[0] + dx))
        y = max(-half[1] + 0.5, min(half[1] - 0.5, ball[1] + dy))
        out.append((s.role, (x, y)))
    return out


def on_ball_player(positions: Mapping[int, Point], ball: Point, current: int | None) -> int | None:
    """The player to go on the ball (see the module doc); ``positions`` holds the available field players."""
    if not positions:
        return None
    dist = {u: math.hypot(p[0] - ball[0], p[1] - ball[1]) for u, p in positions.items()}
    best = min(sorted(dist), key=dist.__getitem__)
    if current in dist and dist[current] <= dist[best] + ON_BALL_MARGIN:
        return current
    return best


def scram(positions: Mapping[int, Point], places: Sequence[Point]) -> dict[int, int]:
    """SCRAM (MMD+MSD²): player number -> index of its place; the first ``len(positions)`` places are filled."""
    players = sorted(positions)
    n = min(len(players), len(places))
    if n == 0:
        return {}
    players = players[:n]
    p = np.array([positions[u] for u in players], dtype=float)
    q = np.array(places[:n], dtype=float)
    d = np.hypot(p[:, None, 0] - q[None, :, 0], p[:, None, 1] - q[None, :, 1])
    big = 1e9
    # MMD: the least bottleneck for which a perfect assignment exists (binary search over the distances)
    levels = np.sort(d, axis=None)  # repeated values do no harm to the search (np.unique's dedupe cost more)
    lo, hi = 0, len(levels) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        cost = np.where(d <= levels[mid], 0.0, 1.0)
        r, c = linear_sum_assignment(cost)
        if cost[r, c].sum() == 0.0:
            hi = mid
        else:
            lo = mid + 1
    bottleneck = levels[lo]
    # MSD²: the least sum of squares among the assignments within it
    cost = np.where(d <= bottleneck + 1e-9, d * d, big)
    r, c = linear_sum_assignment(cost)
    return {players[i]: int(j) for i, j in zip(r, c, strict=True)}
