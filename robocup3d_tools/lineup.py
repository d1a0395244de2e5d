"""Lining-up courses: the small steps a kick takes in front of the ball, as walk commands, and their creep.

A course (:func:`course`) is what ``KickTask``'s fine steps send near the ball: after an arrival
(:data:`ARRIVE`, not scored), small ``vx`` in [-0.15, 0.15] m/s, ``vy`` in [-0.2, 0.2] m/s and ``wz`` in
[-0.8, 0.8] rad/s (often only one or two of them), each held 0.5-1.5 s, with stops and steps in place
between. :func:`drift` is how far the robot ended from where a held command would have taken it: the creep.
Played offline by ``bench/walk_offline.py`` and on the server by ``walk_tasks --task lineup``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

__all__ = ['ARRIVE', 'IN_PLACE', 'Command', 'Segment', 'course', 'drift', 'in_place']

Command = tuple[float, float, float]  # cmd_vel: m/s, m/s, rad/s (robot frame)
Segment = tuple[Command, float]  # a command held for s
IN_PLACE: Command = (1e-3, 0.0, 0.0)  # keeps stepping (a command of 0 stops the walk), in place
#: the arrival, not scored: walking in at 0.2 m/s, then slowing to the fine steps' 0.05
ARRIVE: tuple[Segment, ...] = (((0.2, 0.0, 0.0), 1.5), ((0.05, 0.0, 0.0), 1.0))
LIMITS = (0.15, 0.2, 0.8)
AXES = ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, 0, 1), (0, 1, 1), (1, 1, 1))


def course(seed: int, seconds: float = 10.0) -> list[Segment]:
    """A seeded course: :data:`ARRIVE`, then lining-up commands for at least ``seconds``."""
    rng = random.Random(seed)
    out, t = list(ARRIVE), 0.0
    while t < seconds:
        hold, r = rng.uniform(0.5, 1.5), rng.random()
        if r < 0.15:
            cmd: Command = (0.0, 0.0, 0.0)
        elif r < 0.3:
            cmd = IN_PLACE
        else:
            axes = rng.choice(AXES)
            vx, vy, wz = (a * rng.uniform(-m, m) for a, m in zip(axes, LIMITS, strict=True))
            cmd = (vx, vy, wz)
        out.append((cmd, hold))
        t += hold
    return out


def in_place(seconds: float = 4.0) -> list[Segment]:
    """A step in place for ``seconds`` after :data:`ARRIVE`."""
    return [*ARRIVE, (IN_PLACE, seconds)]


def drift(poses: Sequence[tuple[float, float, float]], cmd: Command, dt: float) -> tuple[float, float]:
    """How far (m) and how much turned (rad) the robot ended from where ``cmd`` would have taken it.

    ``poses``: the torso's (x, y, yaw) on the field each ``dt`` s while ``cmd`` was held, the one before the
    command first; the command's displacement is summed along the headings the robot really had.
    """
    if len(poses) < 2:
        return 0.0, 0.0
    vx, vy, wz = cmd
    wx = wy = 0.0
    for _, _, h in poses[:-1]:
        c, s = math.cos(h), math.sin(h)
        wx, wy = wx + (vx * c - vy * s) * dt, wy + (vx * s + vy * c) * dt
    (x0, y0, h0), (x1, y1, h1) = poses[0], poses[-1]
    turned = math.remainder(h1 - h0 - wz * dt * (len(poses) - 1), math.tau)
    return math.hypot(x1 - x0 - wx, y1 - y0 - wy), abs(turned)
