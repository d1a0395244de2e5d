"""The orientation filter on a real walk: T1 walking forward on RCSSServerMJ.

``test/data/t1_walk_forward.txt`` is our own recording of the server's messages
(bridge ``raw/percept``) while the T1 stood for 1 s, walked at 0.4 m/s for 10 s and
stopped. Each message carries the torso's true orientation (``quat``); the filter gets
only the gyro and the accelerometer. A walk's accelerometer readings swing by +-10 m/s^2
about 1 g: the filter must average them, not pick the calm ones (that tipped it 30
degrees forward within seconds of walking, and the localization with it).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from robocup3d_bridge.perception import parse_percept
from robocup3d_perception.orientation import OrientationFilter

WALK = Path(__file__).resolve().parents[1] / 'data' / 't1_walk_forward.txt'


def _true_roll_pitch(q: tuple[float, float, float, float]) -> tuple[float, float]:
    w, x, y, z = q
    return math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y)), math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))


def test_tilt_follows_the_torso_through_a_walk() -> None:
    f = OrientationFilter()
    last = None
    errors = []
    for line in WALK.read_text().splitlines():
        p = parse_percept(line, 'mujoco')
        f.update(p.gyro, p.accel, 0.0 if last is None else p.time - last)
        last = p.time
        roll, pitch = _true_roll_pitch(p.torso_orientation)
        errors.append((abs(math.degrees(f.roll - roll)), abs(math.degrees(f.pitch - pitch))))
    e = np.array(errors[50:])  # from 1 s on: the first reading sets the tilt, the averages settle
    assert len(e) > 600
    assert np.median(e[:, 1]) < 3.0 and e[:, 1].max() < 8.0, (np.median(e[:, 1]), e[:, 1].max())
    assert np.median(e[:, 0]) < 3.0 and e[:, 0].max() < 8.0, (np.median(e[:, 0]), e[:, 0].max())
