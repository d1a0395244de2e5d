"""What the walk is asked to do: a velocity (``cmd_vel``) or a pose to walk to.

Times are server seconds. A velocity holds for ``timeout`` seconds after it arrived; then the walk
stops. A target pose is relative to the robot when it arrives; the commander moves it
by the robot's own motion each cycle (the speed the walk engine is stepping at, and the
turn rate the gyro measures, as the motion core passes it) and steers
towards it: turn towards it and walk when it is far, sidestep and turn into the final
heading when near, done within ``reach`` m and ``reach_yaw`` rad. A target lapses after
``target_timeout`` s without a new one. Pure Python.
"""

from __future__ import annotations

import math

from robocup3d_motion.walk import WalkParams, stop_speed, top_vx

__all__ = ['WalkCommander']

BEHIND = 0.1  # m behind a robot that cannot step back: a target further back turns it round


def _wrap(a: float) -> float:
    return math.atan2(math.sin(a), math.cos(a))


class WalkCommander:
    """Turns cmd_vel / walk targets into the walk's velocity command, cycle by cycle."""

    def __init__(
        self,
        timeout: float = 0.5,
        target_timeout: float = 10.0,
        reach: float = 0.05,
        reach_yaw: float = 0.1,
        gain: float = 1.5,
        near: float = 0.6,
    ) -> None:
        self.timeout = timeout
        self.target_timeout = target_timeout
        self.reach, self.reach_yaw, self.gain, self.near = reach, reach_yaw, gain, near
        self.stop()

    def stop(self) -> None:
        """Forget every command: the walk comes to rest."""
        self.cmd = (0.0, 0.0, 0.0)
        self.since: float | None = None
        self.target: list[float] | None = None
        self.turn_round = False

    def set_velocity(self, vx: float, vy: float, wz: float, now: float) -> None:
        """A velocity in the robot frame (m/s, m/s, rad/s); replaces any target."""
        self.cmd, self.since, self.target = (vx, vy, wz), now, None

    def set_target(self, x: float, y: float, yaw: float, now: float, turn_round: bool = False) -> None:
        """A pose relative to the robot now (m, m, rad); replaces any velocity.

        ``turn_round``: a robot whose walk cannot step backwards turns to a target more than
        :data:`BEHIND` m behind it and walks there (the ball-skill tasks, which re-plan every cycle);
        otherwise it steps in place towards it as the walk allows.
        """
        self.cmd, self.since, self.target = (0.0, 0.0, 0.0), now, [x, y, _wrap(yaw)]
        self.turn_round = turn_round

    def active(self, now: float) -> bool:
        """A command is in force."""
        if self.since is None:
            return False
        limit = self.target_timeout if self.target is not None else self.timeout
        if now - self.since > limit:
            self.stop()
            return False
        return True

    def target_state(self) -> list[float] | None:
        """The target relative to the robot now, rounded, or None."""
        return None if self.target is None else [round(v, 3) for v in self.target]

    def velocity(
        self, now: float, params: WalkParams, speed: tuple[float, float, float], dt: float
    ) -> tuple[float, float, float]:
        """The velocity to command this cycle (zero when nothing is in force)."""
        if not self.active(now):
            return (0.0, 0.0, 0.0)
        if self.target is None:
            return self.cmd
        self._odometry(speed, dt)
        x, y, yaw = self.target
        dist = math.hypot(x, y)
        if dist < self.reach and abs(yaw) < self.reach_yaw:
            self.stop()
            return (0.0, 0.0, 0.0)
        k = self.gain
        # no faster than the walk can brake to a stop at the target (it slows by accel_x per step, and in
        # a fast gait no faster than its brake)
        brake = stop_speed(params, dist - self.reach)
        # far, or behind a robot that cannot step backwards: face the target and walk at it
        if dist > self.near or (self.turn_round and x < -BEHIND and params.min_vx >= 0.0):
            bearing = math.atan2(y, x)
            # a dead band: the gait itself sways the heading by a few degrees every step
            wz = k * math.copysign(max(0.0, abs(bearing) - 0.15), bearing)  # no jump at the band's edge
            vx = min(top_vx(params, 0.0, wz), brake) * max(0.0, math.cos(bearing)) ** 2
            return (vx, 0.0, wz)
        # near: omnidirectional, turning into the final heading; a big turn first, with little
        # translation (sidestepping while turning hard tips the robot over)
        slow = 0.3 if abs(yaw) > 0.5 else 1.0
        scale = min(1.0, brake / max(k * dist, 1e-6))
        return (slow * scale * k * x, slow * scale * k * y, k * yaw)

    def _odometry(self, speed: tuple[float, float, float], dt: float) -> None:
        """Move the target by the robot's own motion over ``dt`` (frame follows the robot)."""
        assert self.target is not None
        vx, vy, wz = speed
        x, y, yaw = self.target
        x, y = x - vx * dt, y - vy * dt
        a = -wz * dt
        c, s = math.cos(a), math.sin(a)
        self.target = [c * x - s * y, s * x + c * y, _wrap(yaw + a)]
