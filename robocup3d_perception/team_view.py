"""The world model's estimate as our team sees it (pure Python): what motion and strategy read.

Everything is in our team's frame (+x towards the goal we attack; a 180-degree turn of the
absolute frame for the right team). The world model publishes the same values as messages
(``pose``, ``ball``, ``ball/stop``, ``players``); nodes in its own process take a
:class:`TeamView` straight from it instead, without the round trip through DDS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from robocup3d_perception.representations import WorldState

__all__ = ['TeamView', 'player_dicts', 'team_view', 'to_team_frame']


def to_team_frame(x: float, y: float, yaw: float, side: str) -> tuple[float, float, float]:
    """Absolute frame -> our team frame (a 180-degree turn for the right team)."""
    if side == 'right':
        return -x, -y, (yaw + 2 * math.pi) % (2 * math.pi) - math.pi
    return x, y, yaw


@dataclass(frozen=True, slots=True)
class TeamView:
    """One world-model update in the team frame (m, rad, s)."""

    time: float
    pose: tuple[float, float, float]  # x, y, yaw of the torso
    pose_sigma: float  # sqrt of the x and y variances
    ball: tuple[float, float] | None  # None unless the ball estimate is valid
    ball_sigma: float
    ball_stop: tuple[float, float] | None  # where it will come to rest
    ball_seen: float | None  # s, the last own sighting
    players: tuple[dict, ...] | None  # the tracked robots (as in ``players``), in cycles with a See only


def player_dicts(state: WorldState) -> list[dict]:
    """Tracked robots (team frame): team, unum, teammate, x, y, vx, vy, sigma, age; fallen and intent
    as teammates last said them."""
    out = []
    s = -1.0 if state.side == 'right' else 1.0
    for e in state.players:
        px, py = e.position.tolist()  # floats in one call each (indexing numpy arrays value by value cost more)
        vx, vy = e.velocity.tolist()
        cov = e.covariance
        x, y, _ = to_team_frame(px, py, 0.0, state.side)
        out.append(
            {
                'team': e.team,
                'unum': e.unum,
                'teammate': e.teammate,
                'x': round(x, 3),
                'y': round(y, 3),
                'vx': round(s * vx, 3),
                'vy': round(s * vy, 3),
                'sigma': round(math.sqrt(cov.item(0, 0) + cov.item(1, 1)), 3),
                'age': round(state.time - e.last_update, 3),
                'fallen': e.fallen,
                'intent': e.intent,
            }
        )
    return out


def team_view(state: WorldState, with_players: bool) -> TeamView:
    """``state`` in the team frame; ``with_players``: include the tracked robots (a cycle with a See)."""
    p, b = state.pose, state.ball
    pose = to_team_frame(p.x, p.y, p.yaw, state.side)
    pose_sigma = math.sqrt(max(0.0, float(p.covariance[0, 0] + p.covariance[1, 1])))
    ball = stop = None
    ball_sigma = math.inf
    if b.valid:
        ball = to_team_frame(float(b.position[0]), float(b.position[1]), 0.0, state.side)[:2]
        stop = to_team_frame(float(b.stop[0]), float(b.stop[1]), 0.0, state.side)[:2]
        ball_sigma = math.sqrt(max(0.0, float(b.covariance[0, 0] + b.covariance[1, 1])))
    players = tuple(player_dicts(state)) if with_players else None
    return TeamView(state.time, pose, pose_sigma, ball, ball_sigma, stop, b.last_seen, players)
