"""The world model's per-cycle input from a parsed server message."""

from __future__ import annotations

from robocup3d_bridge.percept import Percept
from robocup3d_perception.representations import CycleInput
from robocup3d_perception.vision_geometry import observations_from_vision

__all__ = ['cycle_input']


def cycle_input(p: Percept, side: str = 'left', team: str = '', unum: int = 0) -> CycleInput:
    """The world model's input from a parsed message; ground truth is left out."""
    vision = observations_from_vision(p.vision) if p.vision is not None else None
    g = p.game
    return CycleInput(
        time=p.time if p.time is not None else 0.0,
        joints=dict(p.joint_positions),
        gyro=p.gyro,
        accel=p.accel,
        vision=vision,
        side=side,
        team=team,
        unum=unum,
        play_mode=g.play_mode if g else None,
    )
