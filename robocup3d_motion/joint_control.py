"""Joint control: turn target angles into what each server's motors take.

* rcssserver3d: hinge velocities. A P controller, ``v = kp * (target - angle)`` (``kp`` in 1/s:
  the robot's, or the gains in force that the caller passes, e.g. a walk set's stiffer legs), plus
  the target's own velocity ``(target - previous target) / 0.02 s`` while the target moves
  smoothly (it changed the cycle before too, by no more than the joint can follow; a step
  change, such as a new keyframe, gets no feed-forward), clamped to the joint's speed limit.
* RCSSServerMJ: the server runs a PD loop itself; we send the target angle with
  ``kp``/``kd`` gains (and zero target velocity and feed-forward torque).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from robocup3d_bridge.config_files import ConfigError
from robocup3d_description.robots import RobotSpec

__all__ = ['ControlSettings', 'JointController', 'JointTargets', 'control_settings']

_D2R = math.pi / 180.0
SIMSPARK_CYCLE = 0.02  # s between commands on rcssserver3d


@dataclass(frozen=True, slots=True)
class ControlSettings:
    """Per-robot gains and hold pose (rad)."""

    hold_pose: dict[str, float]
    kp: dict[str, float]
    kd: dict[str, float]


@dataclass(slots=True)
class JointTargets:
    """What goes to the bridge: positions (rad) and/or velocities (rad/s) per joint."""

    names: list[str]
    position: list[float]
    velocity: list[float]


def _per_joint(robot: RobotSpec, value: object, what: str) -> dict[str, float]:
    if isinstance(value, (int, float)):
        return dict.fromkeys(robot.joint_names, float(value))
    if not isinstance(value, dict):
        raise ConfigError(f'{robot.name}: {what} must be a number or a mapping')
    default = float(value.get('default', 0.0))
    unknown = set(value) - set(robot.joint_names) - {'default'}
    if unknown:
        raise ConfigError(f'{robot.name}: {what} names unknown joints {sorted(unknown)}')
    return {n: float(value.get(n, default)) for n in robot.joint_names}


def control_settings(robot: RobotSpec, robots_cfg: dict) -> ControlSettings:
    """Read a robot's section of ``config/robots.yaml`` (keyed ``nao``, ``T1``, ``K1``)."""
    key = 'nao' if robot.server == 'simspark' else robot.name
    section = robots_cfg.get(key)
    if not isinstance(section, dict):
        raise ConfigError(f'robots.yaml has no section {key!r}')
    pose_deg = section.get('hold_pose', {}) or {}
    unknown = set(pose_deg) - set(robot.joint_names)
    if unknown:
        raise ConfigError(f'{robot.name}: hold_pose names unknown joints {sorted(unknown)}')
    spec = robot.by_name
    pose = {}
    for n in robot.joint_names:
        a = float(pose_deg.get(n, 0.0)) * _D2R
        pose[n] = min(max(a, spec[n].lower), spec[n].upper)
    ctrl = section.get('controller', {}) or {}
    return ControlSettings(
        pose, _per_joint(robot, ctrl.get('kp', 0.0), 'kp'), _per_joint(robot, ctrl.get('kd', 0.0), 'kd')
    )


class JointController:
    """Computes per-cycle joint commands towards target angles."""

    def __init__(self, robot: RobotSpec, settings: ControlSettings) -> None:
        self.robot = robot
        self.settings = settings
        self._names = list(robot.joint_names)
        self._limits = [
            (robot.by_name[n].lower, robot.by_name[n].upper, robot.by_name[n].max_speed) for n in self._names
        ]
        #: rcssserver3d: weight of the target-velocity feed-forward (0 turns it off)
        self.feedforward = 1.0
        # per joint, in ``_names``' order: the last goal (None before the first command) and its last change
        self._prev_goal: list[float | None] = [None] * len(self._names)
        self._prev_delta: list[float] = [0.0] * len(self._names)

    def command(
        self,
        targets: dict[str, float],
        measured: dict[str, float],
        kp: dict[str, float] | None = None,
        speed_caps: dict[str, float] | None = None,
    ) -> JointTargets:
        """Commands for every joint: towards ``targets`` (rad), hold pose where none is given.

        ``kp``: rcssserver3d P gains (1/s) in force, per joint (default: the robot's own);
        ``speed_caps``: rcssserver3d velocity limits (rad/s) in force below the joints' own, per joint.
        """
        hold = self.settings.hold_pose
        names = self._names
        goal = [targets.get(n, hold[n]) for n in names]
        # clamped into the joints' ranges: min(max(g, lo), hi) written out (NaN too), at half the cost
        goal = [lo if g < lo else hi if g > hi else g for g, (lo, hi, _) in zip(goal, self._limits, strict=True)]
        if self.robot.server == 'mujoco':
            return JointTargets(names, goal, [0.0] * len(names))
        kp = kp or self.settings.kp
        vel = []
        ff = self.feedforward
        befores = self._prev_delta
        deltas = [0.0 if last is None else g - last for g, last in zip(goal, self._prev_goal, strict=True)]
        self._prev_goal, self._prev_delta = goal, deltas
        for n, g, delta, before, (_, _, vmax) in zip(names, goal, deltas, befores, self._limits, strict=True):
            if speed_caps:
                vmax = min(vmax, speed_caps.get(n, vmax))
            q = measured.get(n)
            v = 0.0 if q is None else kp[n] * (g - q)
            if ff and delta * before > 0.0 and abs(delta) <= vmax * SIMSPARK_CYCLE:  # a smooth trajectory
                v += ff * delta / SIMSPARK_CYCLE
            vel.append(-vmax if v < -vmax else vmax if v > vmax else v)
        return JointTargets(names, [], vel)
