"""Fall detection for the Nao on rcssserver3d: :mod:`robocup3d_motion.fall` plus a foot-contact check.

rcssserver3d's ``GYR``/``ACC`` use its own torso frame (x right, y forward); the
bridge's parser turns them into REP-103 (``parse_percept(text, 'simspark')``), which
is what :class:`~robocup3d_motion.fall.FallDetector` expects.

While down, the direction follows the robot: whenever the torso lies beyond the fall
threshold, the side facing the ground is taken again (a failed get-up may leave the
robot on its other side, and the next get-up must be the one for that side).

Joint data: the foot pressure sensors (``FRP``) veto a recovery. After a fall the
robot only counts as up again when the tilt is small *and* the feet carry some of
its weight (a robot sitting upright on its bottom has a vertical torso too).
"""

from __future__ import annotations

from collections.abc import Mapping

from robocup3d_motion.fall import FallDetector, FallState, fall_direction

__all__ = ['NaoFallDetector', 'feet_load']

Vec3 = tuple[float, float, float]

#: N: total vertical foot force above which the feet carry the robot (the Nao weighs ~ 40 N).
FEET_LOADED_N = 10.0


def feet_load(forces: Mapping[str, object] | None) -> float | None:
    """Total vertical force (N) on the foot (and toe) pressure sensors; ``None`` without readings.

    ``forces`` maps FRP names (``lf``, ``rf``, ``lf1``, ``rf1``) to objects with a force
    vector ``f`` (as :class:`robocup3d_bridge.percept.ForceResistance`) or to plain
    (x, y, z) tuples.
    """
    if not forces:
        return None
    total = 0.0
    for frp in forces.values():
        f = getattr(frp, 'f', frp)
        try:
            total += max(0.0, float(f[2]))
        except (TypeError, IndexError, ValueError):
            continue
    return total


class NaoFallDetector(FallDetector):
    """:class:`FallDetector` with a foot-contact check.

    ``update(gyro, accel, dt, forces=...)``: gyro (rad/s) and accel (m/s^2) in REP-103
    torso axes (as the bridge publishes them). ``forces``: the FRP readings of this cycle; when given,
    a fallen robot is only declared up again once its feet carry ``FEET_LOADED_N``.
    """

    def update(
        self, gyro: Vec3 | None, accel: Vec3 | None, dt: float = 0.02, forces: Mapping[str, object] | None = None
    ) -> FallState:
        was_fallen, was_direction = self.fallen, self.direction
        state = super().update(gyro, accel, dt)
        if was_fallen and state.fallen and state.tilt > self.fallen_tilt:
            direction = fall_direction(state.up)
            if direction != state.direction:
                self.direction = direction
                state = FallState(True, direction, state.tilt, state.pitch, state.roll, state.up)
        if was_fallen and not state.fallen:
            load = feet_load(forces)
            if load is not None and load < FEET_LOADED_N:
                # Upright torso but nothing on the feet: still down (e.g. sitting).
                self.fallen, self.direction = True, was_direction
                return FallState(True, was_direction, state.tilt, state.pitch, state.roll, state.up)
        return state
