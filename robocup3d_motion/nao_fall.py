"""Fall detection for the Nao on rcssserver3d: :mod:`robocup3d_motion.fall` in SimSpark's IMU frame.

:class:`~robocup3d_motion.fall.FallDetector` assumes the ROS body frame (x forward,
y left, z up). SimSpark's ``GYR``/``ACC`` perceptors on the Nao torso report in its
own frame, **x right, y forward, z up** (measured on rcssserver3d 0.7.3: lying on the
face reads ``ACC`` ~ (0, -8, -5.5), a forward fall turns ``GYR`` x negative). Both are
right-handed, so one rotation of -90 degrees about z maps gyro and accelerometer alike:
``(x, y, z)_body = (y, -x, z)_simspark``.

Joint data: the foot pressure sensors (``FRP``) veto a recovery. After a fall the
robot only counts as up again when the tilt is small *and* the feet carry some of
its weight (a robot sitting upright on its bottom has a vertical torso too).

The fix that belongs in the bridge (publish ``imu`` in the ROS body frame for
SimSpark) would make :func:`simspark_to_body` unnecessary; until then the motion node
must use :class:`NaoFallDetector` for ``server == 'simspark'``.
"""

from __future__ import annotations

from collections.abc import Mapping

from robocup3d_motion.fall import FallDetector, FallState

__all__ = ['NaoFallDetector', 'feet_load', 'simspark_to_body']

Vec3 = tuple[float, float, float]

#: N: total vertical foot force above which the feet carry the robot (the Nao weighs ~ 40 N).
FEET_LOADED_N = 10.0


def simspark_to_body(v: Vec3 | None) -> Vec3 | None:
    """A SimSpark torso-frame vector (x right, y forward) in the ROS body frame (x forward, y left)."""
    if v is None:
        return None
    return (v[1], -v[0], v[2])


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
    """:class:`FallDetector` fed with SimSpark IMU readings, with a foot-contact check.

    ``update(gyro, accel, dt, forces=...)``: gyro (rad/s) and accel (m/s^2) as the
    Nao's perceptors give them. ``forces``: the FRP readings of this cycle; when given,
    a fallen robot is only declared up again once its feet carry ``FEET_LOADED_N``.
    """

    def update(self, gyro: Vec3 | None, accel: Vec3 | None, dt: float = 0.02,
               forces: Mapping[str, object] | None = None) -> FallState:
        was_fallen = self.fallen
        state = super().update(simspark_to_body(gyro), simspark_to_body(accel), dt)
        if was_fallen and not state.fallen:
            load = feet_load(forces)
            if load is not None and load < FEET_LOADED_N:
                # Upright torso but nothing on the feet: still down (e.g. sitting).
                self.fallen, self.direction = True, was_direction(self, state)
                return FallState(True, self.direction, state.tilt, state.pitch, state.roll, state.up)
        return state


def was_direction(det: NaoFallDetector, state: FallState) -> str:
    """Direction to keep reporting while the feet veto a recovery."""
    from robocup3d_motion.fall import fall_direction  # noqa: PLC0415

    return fall_direction(state.up) if state.tilt > 0.35 else 'back'
