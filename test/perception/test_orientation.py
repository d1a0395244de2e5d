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


def test_extreme_readings_are_left_out() -> None:
    """A gyro of 1e200 rad/s raised OverflowError (issue 24); inf, nan and 1e308 m/s^2 tipped the estimate."""
    lines = WALK.read_text().splitlines()[:100]
    clean, bad = OrientationFilter(), OrientationFilter()
    prev = None
    for i, ln in enumerate(lines):
        p = parse_percept(ln)
        dt = 0.0 if prev is None else p.time - prev
        prev = p.time
        clean.update(p.gyro, p.accel, dt)
        gyro = (1e200, 1e200, 1e200) if i == 40 else (math.nan, 0.0, 0.0) if i == 41 else p.gyro
        accel = (1e308, -1e308, 0.0) if i == 42 else (math.inf, 0.0, 9.8) if i == 43 else p.accel
        bad.update(gyro, accel, dt)
    assert bad.rejected == 4 and clean.rejected == 0
    assert np.all(np.isfinite(bad.rotation))
    assert abs(bad.roll - clean.roll) < math.radians(1) and abs(bad.pitch - clean.pitch) < math.radians(1)
