"""Keep the ball in view: neck yaw and pitch towards a point on the ground.

The servers' cameras see 60 degrees either side of their axis. With the head level, a ball
at a T1's feet is 77 degrees below it: out of sight just when a kick or a dribble needs it
most. :class:`HeadControl` turns the head towards the ball and pitches it down just enough
that the ball sits :data:`BELOW` below the camera axis, so the far landmarks stay in view
for localization. Which way is "down" for ``hj2`` and how high the camera is come from the
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
        yaw = min(self.yaw_hi, max(self.yaw_lo, math.atan2(y, x)))
        below = math.atan2(self.height, max(math.hypot(x, y), 0.05))
        pitch = min(self.pitch_max, max(0.0, below - BELOW))
        return {'hj1': yaw, 'hj2': self.down_sign * pitch}
