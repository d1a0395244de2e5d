"""What the world model node feeds the core each cycle, without rclpy: :class:`WorldModelFeed`.

Shared by :mod:`robocup3d_perception.world_model_node` and ``robocup3d replay --rerun world-model``
(:mod:`robocup3d_tools.rerun`), so that a rerun of recorded percepts feeds the core as the node did:
the cycle's percept (or IMU and ``See`` topics), the walk's velocity integrated into odometry, the
game state (side, play mode) and heard team talk taken in since the last cycle.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping

from robocup3d_bridge.percept import Percept
from robocup3d_perception.hearing import HEAR_OUTCOMES, implausible, teammate_report
from robocup3d_perception.representations import CycleInput, TeammateReport, WorldState
from robocup3d_perception.representations import Odometry as WalkOdometry
from robocup3d_perception.vision_geometry import observations_from_vision
from robocup3d_perception.world_model import WorldModel

__all__ = ['WorldModelFeed', 'stamp_time']


def stamp_time(t: float) -> float:
    """``t`` as it comes back from a ROS time stamp (whole nanoseconds), as the node's inputs carry it."""
    sec = math.floor(t)
    return int(sec) + (round((t - sec) * 1e9) % 1_000_000_000) * 1e-9


class WorldModelFeed:
    """One player's world model and the inputs gathered for its next cycle."""

    def __init__(self, model: WorldModel, team: str, unum: int, side: str = '', secret: str = '') -> None:
        self.model = model
        self.team = team
        self.unum = unum
        self.side = side or 'left'  # the game state sets it when not given
        self.side_fixed = bool(side)
        self.secret = secret  # keys team talk
        self.joints: dict[str, float] = {}
        self.play_mode: str | None = None
        self.reports: list[TeammateReport] = []  # heard since the last update
        self.heard = 0  # team-talk messages of teammates taken in
        self.hear_outcomes: Counter[str] = Counter(dict.fromkeys(HEAR_OUTCOMES, 0))  # heard messages by outcome
        self.last_report: dict[int, TeammateReport] = {}  # the last report taken in, per teammate
        self.walk: tuple[float, float, float, float] | None = None  # (t, vx, vy, wz) from the walk
        self.last_imu_t: float | None = None

    def on_game(self, g: Mapping) -> None:
        """A game state (the bridge's ``game_state`` dict): side, team, play mode."""
        if not self.side_fixed and g.get('side') in ('left', 'right'):
            self.side = g['side']
        self.team = self.team or g.get('team') or ''
        self.play_mode = g.get('play_mode')

    def on_hear(self, heard: Mapping) -> None:
        """A heard message (the bridge's ``hear`` dict); a teammate's report is kept for the next cycle."""
        if not self.team or self.model.time is None:
            return
        report, outcome = teammate_report(heard, self.team, self.unum, self.side, self.model.time, self.secret)
        if report is not None:
            last = self.last_report.get(report.unum)
            if self.play_mode == 'PlayOn' and implausible(last, report):
                report, outcome = None, 'implausible'
            else:
                self.last_report[report.unum] = report
        self.hear_outcomes[outcome] += 1
        if report is None:
            return
        self.reports.append(report)
        del self.reports[:-20]
        self.heard += 1

    def on_walk(self, t: float, vx: float, vy: float, wz: float) -> None:
        """The walk's velocity estimate (robot frame) at ``t``."""
        self.walk = (t, vx, vy, wz)

    def odometry(self, t: float) -> WalkOdometry | None:
        """The walk's motion since the last IMU cycle (None: no walk, or a stale one)."""
        last, self.last_imu_t = self.last_imu_t, t
        if self.walk is None or last is None or not 0.0 < t - last <= 0.1 or t - self.walk[0] > 0.2:
            return None  # the gyro alone moves the estimate
        dt = t - last
        _, vx, vy, wz = self.walk
        return WalkOdometry(vx * dt, vy * dt, wz * dt)

    def cycle_input(self, time: float, **kw: object) -> CycleInput:
        """The input of one update at ``time`` (a stamp's time), with the reports heard since the last."""
        reports, self.reports = tuple(self.reports), []
        return CycleInput(
            reports=reports,
            time=time,
            joints=self.joints,
            side=self.side,
            team=self.team,
            unum=self.unum,
            play_mode=self.play_mode,
            **kw,
        )

    def percept_input(self, p: Percept) -> CycleInput:
        """The input of one server cycle's percept (``p.time`` set)."""
        self.joints = dict(p.joint_positions)
        vision = observations_from_vision(p.vision) if p.vision is not None else None  # as cycle_input(p) has it
        t = stamp_time(p.time)
        return self.cycle_input(t, gyro=p.gyro, accel=p.accel, vision=vision, odometry=self.odometry(p.time))

    def update(self, inp: CycleInput) -> tuple[WorldState, bool]:
        """Run the core on ``inp``; also whether it started afresh (the server time went back by over 1 s)."""
        afresh = self.model.time is not None and inp.time < self.model.time - 1.0
        if afresh:
            self.model.time = None
        return self.model.update(inp), afresh
