"""The walk's gear: a faster parameter set for long straight walks to a target, the robot's own set elsewhere.

A T1's positioning set walks 0.30-0.36 m/s and turns safely; its sprint set walks 0.60 m/s straight ahead but
falls turning towards a target off to the side (a 12 m go-to 31 degrees off: 3 falls). The gear shifts up when
the walk's target is far and nearly straight ahead, and down when it comes near or swings aside. Down from a
sprint it first slows to ``shift_speed`` in the fast set, turning no faster than ``shift_turn`` (dropping the fast
gait at full speed, or turning hard before it has slowed, tips the robot over), then changes sets.
"""

from __future__ import annotations

import math

from robocup3d_motion.motion_config import GearValues as Gear

__all__ = ['Gear', 'GearShift', 'walk_gear']


def walk_gear(walk_cfg: dict, key: str) -> Gear | None:
    """The gear of one robot's section (``nao`` for a Nao type without its own), checked, or None."""
    section = walk_cfg.get(key)
    if section is None and key.startswith('nao'):
        section = walk_cfg.get('nao')
    values = (section or {}).get('gear')
    return Gear.model_validate(values) if values else None


class GearShift:
    """Which set the walk uses each cycle, given its target (robot frame) and its forward speed."""

    def __init__(self, gear: Gear) -> None:
        self.gear = gear
        self.up = False  # in the fast set
        self.slowing = False  # shifting down: slowing in the fast set first

    def update(self, target: tuple[float, float] | None, speed: float) -> bool:
        """Whether to walk with the fast set this cycle; ``target`` None: no walk target (velocity or stand)."""
        g = self.gear
        if target is None:
            dist, off = 0.0, math.pi
        else:
            dist, off = math.hypot(*target), abs(math.atan2(target[1], target[0]))
        if not self.up:
            self.up = dist > g.far and off < math.radians(g.ahead_deg)
            self.slowing = False
        elif dist < g.near or off > math.radians(g.aside_deg):
            self.slowing = True
        elif self.slowing and dist > g.far and off < math.radians(g.ahead_deg):
            self.slowing = False  # straight ahead and far again: on at speed
        if self.up and self.slowing and speed <= g.shift_speed:
            self.up = self.slowing = False
        return self.up

    def cap(self, vx: float, wz: float) -> tuple[float, float]:
        """The forward and turn command while shifting down: slow, and turn little (a T1 told to turn at 0.48 rad/s
        while it slowed from 0.6 m/s fell)."""
        if not self.slowing:
            return (min(vx, self.gear.top), wz) if self.up else (vx, wz)
        turn = self.gear.shift_turn
        return min(vx, self.gear.shift_speed), max(-turn, min(turn, wz))

    def reset(self) -> None:
        self.up = self.slowing = False
