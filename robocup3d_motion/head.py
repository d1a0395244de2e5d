"""Keep the ball in view: neck yaw and pitch towards a point on the ground.

The servers' cameras see 60 degrees either side of their axis. With the head level, a ball
at a T1's feet is 77 degrees below it: out of sight just when a kick or a dribble needs it
most. :class:`HeadControl` turns the head towards the ball and pitches it down just enough
that the ball sits :data:`BELOW` below the camera axis, so the far landmarks stay in view
for localization. With no ball to look at, :meth:`HeadControl.scan` sweeps the head from
side to side: with the cameras' 120 degrees that covers 240 degrees round the robot without
turning it. Which way is "down" for ``hj2`` and how high the camera is come from the
robot's kinematic model (the Nao's neck pitch runs the other way from the T1's and K1's).
"""

from __future__ import annotations

import math

from robocup3d_description.body import Body
from robocup3d_description.kinematics import camera_pose, foot_pose
from robocup3d_description.robots import RobotSpec

__all__ = ['HeadControl']

BELOW = math.radians(30.0)  # where the ball is kept below the camera axis
YAW_MAX = math.radians(60.0)
SCAN_PERIOD = 3.0  # s: a sweep left, right and back
SCAN_DISTANCE = 2.5  # m ahead where the sweeping line of sight (BELOW under the axis) meets the ground


class HeadControl:
    """Neck targets (rad) that look at a point given in the robot's ground frame."""

    def __init__(self, body: Body, spec: RobotSpec) -> None:
        joints = {j.name: j for j in spec.joints}
        self.ok = 'hj1' in joints and 'hj2' in joints
        if not self.ok:
            return
        down = camera_pose(body, {'hj2': 0.3})[2, 0]  # the line of sight's z with the neck pitched +0.3 rad
        self.down_sign = -1.0 if down > 0.0 else 1.0
        cam = camera_pose(body, {})[2, 3]
        f = foot_pose(body, 'l', {})
        self.height = float(cam - (f[:3, :3] @ body.leg('l').sole + f[:3, 3])[2])
        pitch = joints['hj2']
        self.pitch_max = pitch.upper if self.down_sign > 0 else -pitch.lower
        yaw = joints['hj1']
        self.yaw_lo, self.yaw_hi = max(yaw.lower, -YAW_MAX), min(yaw.upper, YAW_MAX)

    def look_at(self, x: float, y: float) -> dict[str, float]:
        """``hj1``/``hj2`` targets towards the ground point (x, y) m; {} for a robot without a neck."""
        if not self.ok:
            return {}
        return {'hj1': min(self.yaw_hi, max(self.yaw_lo, math.atan2(y, x))), 'hj2': self._pitch(math.hypot(x, y))}

    def scan(self, t: float) -> dict[str, float]:
        """``hj1``/``hj2`` targets of a sweep from side to side at time ``t`` (s); {} without a neck."""
        if not self.ok:
            return {}
        phase = (t / SCAN_PERIOD) % 1.0
        side = 1.0 - 4.0 * abs(phase - 0.5)  # -1 .. 1 .. -1, a triangle
        return {'hj1': side * min(self.yaw_hi, -self.yaw_lo), 'hj2': self._pitch(SCAN_DISTANCE)}

    def _pitch(self, distance: float) -> float:
        """The neck pitch that keeps a ground point ``distance`` m away BELOW under the camera axis."""
        below = math.atan2(self.height, max(distance, 0.05))
        return self.down_sign * min(self.pitch_max, max(0.0, below - BELOW))
