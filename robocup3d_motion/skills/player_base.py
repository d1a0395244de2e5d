"""What the two skill players (``.skl`` keyframes and YAML keyframe skills) share."""

from __future__ import annotations

from robocup3d_description.robots import RobotSpec

__all__ = ['PlayerBase']


class PlayerBase:
    """A skill's name, the keyframe being played, and clamping to the robot's joint ranges.

    Args:
        skill: the skill played (anything with a ``name``).
        robot: if given, targets are limited to its joints and clamped to their ranges.
    """

    def __init__(self, skill: object, robot: RobotSpec | None = None) -> None:
        self.skill = skill
        self._limits = {j.name: (j.lower, j.upper) for j in robot.joints} if robot else None
        self._index = -1  # keyframe being played; -1: not started
        self._finished = False

    @property
    def name(self) -> str:
        """The skill's name."""
        return self.skill.name

    @property
    def keyframe(self) -> int:
        """Index of the keyframe being played (-1 before the first ``execute``)."""
        return self._index

    def _clamp(self, joint: str, value: float) -> float | None:
        """``value`` within the joint's range; ``None`` for a joint the robot does not have."""
        if self._limits is None:
            return value
        limits = self._limits.get(joint)
        if limits is None:
            return None
        return min(max(value, limits[0]), limits[1])
