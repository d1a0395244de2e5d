"""Our recording of a T1 walking 10 s on RCSSServerMJ (``test/data/t1_walk_forward.txt``), cycle by cycle."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from robocup3d_bridge.percept import Percept
from robocup3d_bridge.perception import PerceptParseError, parse_percept
from robocup3d_perception.inputs import cycle_input
from robocup3d_perception.representations import CycleInput

WALK = Path(__file__).resolve().parents[1] / 'data' / 't1_walk_forward.txt'


def walk_cycles() -> Iterator[tuple[int, Percept, CycleInput]]:
    """``(line number, percept, world-model input)`` of every message with a time."""
    for i, line in enumerate(WALK.read_text().splitlines()):
        try:
            p = parse_percept(line, 'mujoco')
        except PerceptParseError:
            continue
        if p.time is not None:
            yield i, p, cycle_input(p)
