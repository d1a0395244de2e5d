"""REP-105 frames for a recorded or viewed player: ``world -> <player>/odom -> <player>/base_link``.

``odom -> base_link`` is the robot's own odometry: the walk's velocity estimate (the motion node's
``odom`` topic, a twist in the robot frame) integrated on the ground plane, continuous and drifting,
with the torso's height, roll and pitch from the ground truth (the IMU knows those). ``world -> odom``
is then what makes the chain give the ground truth: ``truth @ inverse(odom -> base_link)``, a planar
correction that grows as the odometry drifts and jumps when the robot is placed (beam, referee).
A player whose twist is never heard keeps its odometry where it started, so its ``world -> odom``
carries all its motion.

Pure Python and numpy (no rclpy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ['OdomFrames', 'planar']


def planar(x: float, y: float, yaw: float, z: float = 0.0) -> np.ndarray:
    """The 4x4 of a translation ``(x, y, z)`` and a turn by ``yaw`` about z."""
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0, x], [s, c, 0.0, y], [0.0, 0.0, 1.0, z], [0.0, 0.0, 0.0, 1.0]])


def _rigid(m: np.ndarray) -> np.ndarray:
    """``m`` with its rotation made orthonormal through its quaternion (the monitor rounds its matrices)."""
    from robocup3d_tools.monitor_truth import matrix_quaternion  # noqa: PLC0415

    x, y, z, w = matrix_quaternion(m)
    out = np.array(m, dtype=float)
    out[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    out[3] = (0.0, 0.0, 0.0, 1.0)
    return out


@dataclass
class _Odometry:
    x: float
    y: float
    yaw: float
    t_ns: int
    twist: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def advance(self, t_ns: int) -> None:
        """Integrate the held twist up to ``t_ns`` (midpoint heading; time never runs back)."""
        dt = (t_ns - self.t_ns) * 1e-9
        if dt <= 0.0:
            return
        vx, vy, wz = self.twist
        mid = self.yaw + 0.5 * wz * dt
        self.x += (vx * math.cos(mid) - vy * math.sin(mid)) * dt
        self.y += (vx * math.sin(mid) + vy * math.cos(mid)) * dt
        self.yaw = math.remainder(self.yaw + wz * dt, math.tau)
        self.t_ns = t_ns


class OdomFrames:
    """Each player's odometry, and its ``world -> odom`` and ``odom -> base_link`` at a ground truth."""

    #: a twist that is not finite, or faster than this (m/s, rad/s), is ignored
    MAX_SPEED = 10.0

    def __init__(self) -> None:
        self._odometry: dict[str, _Odometry] = {}
        self._pending: dict[str, tuple[int, tuple[float, float, float]]] = {}

    def twist(self, player: str, t_ns: int, vx: float, vy: float, wz: float) -> None:
        """The walk's velocity estimate (robot frame: m/s forward, m/s left, rad/s) from ``t_ns`` on."""
        v = (float(vx), float(vy), float(wz))
        if not all(math.isfinite(c) and abs(c) <= self.MAX_SPEED for c in v):
            return
        odo = self._odometry.get(player)
        if odo is None:
            self._pending[player] = (t_ns, v)
            return
        odo.advance(t_ns)
        odo.twist = v

    def frames(self, player: str, t_ns: int, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(world -> odom, odom -> base_link)`` at server time ``t_ns`` for the torso's world pose ``truth``."""
        truth = _rigid(truth)
        yaw_t = math.atan2(truth[1, 0], truth[0, 0])
        odo = self._odometry.get(player)
        if odo is None:  # the odometry starts where the robot is: world -> odom is the identity then
            odo = _Odometry(float(truth[0, 3]), float(truth[1, 3]), yaw_t, t_ns)
            pending = self._pending.pop(player, None)
            if pending is not None:
                odo.twist = pending[1]
            self._odometry[player] = odo
        odo.advance(t_ns)
        odom_base = planar(odo.x, odo.y, odo.yaw, float(truth[2, 3]))
        odom_base[:3, :3] = planar(0.0, 0.0, odo.yaw - yaw_t)[:3, :3] @ truth[:3, :3]  # the IMU's roll and pitch
        world_odom = planar(0.0, 0.0, yaw_t - odo.yaw)
        world_odom[:3, 3] = truth[:3, 3] - world_odom[:3, :3] @ odom_base[:3, 3]  # on the ground: z is 0
        return world_odom, odom_base
