"""The torso tilt checked against the landmarks of a ``See``, and the observations turned by the error found.

The level frame comes from the orientation filter's roll and pitch. A tilt a few degrees off turns every far
observation: a landmark 30 m away seen with the pitch 9 degrees off lies 4.7 m too high or low, and its distance
along the ground comes out 0.2-0.3 m short, so a rigid fit of the landmarks moves the robot by that much. A T1 at
its kick-off place, its filter 9 degrees off 2 s after a beam's landing, was placed 0.22 m nearer the ball than it
stood and walked into it (7 v 7, session 43).

Landmarks' heights are known (field corners and line points on the ground, goal posts' tops), so the heights at
which they are seen measure the error: seen from a torso ``h`` above the ground, with the level frame turned by a
small roll ``r`` and pitch ``p`` about the torso, a landmark at height ``z`` and level-frame ``(x, y)`` is seen at
``z - h + r*y - p*x``. A least-squares fit of ``(h, r, p)`` over four landmarks or more, spread both ways (not
strung along one line from the robot), gives the error; :func:`correct_tilt` turns the whole ``See`` back by it
(two Gauss-Newton passes where the error matters: the rotation is not small enough for one). With noiseless vision
(RCSSServerMJ) the fit is exact; it is skipped where it is not clearly determined (landmarks too few or strung
along a line, residuals large, an error beyond :data:`MAX_ERROR`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from robocup3d_perception.representations import LevelObservations
from robocup3d_perception.vision_geometry import transform_level

__all__ = ['MAX_ERROR', 'MAX_RESIDUAL', 'MIN_ERROR', 'MIN_LANDMARKS', 'MIN_SPREAD', 'correct_tilt', 'tilt_error']

MIN_LANDMARKS = 4  # three fit any tilt exactly: a fourth checks it
# m (rms) the landmarks must spread across their own main direction: strung along one line from the robot (a goal
# line's points seen end on) they tell the tilt along that line only, and fits of them came out 10-15 degrees off
MIN_SPREAD = 1.0
MAX_RESIDUAL = 0.05  # m rms of the heights after the fit; more, and something seen is not what it is named
MAX_ERROR = math.radians(15.0)  # beyond this no mistake of the filter's (seen: up to 10 degrees): left alone
# below this nothing is turned: a 0.5 degree error moves a landmark 30 m away by a few millimetres along the ground,
# and a ball 1 m away by about a centimetre
MIN_ERROR = math.radians(0.5)


def _rotation(roll: float, pitch: float) -> np.ndarray:
    """The rotation by the rotation vector ``(roll, pitch, 0)`` (rad): Rodrigues' formula on plain floats."""
    angle = math.hypot(roll, pitch)
    if angle < 1e-12:
        return np.eye(3)
    x, y = roll / angle, pitch / angle
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    return np.array([[t * x * x + c, t * x * y, s * y], [t * x * y, t * y * y + c, -s * x], [-s * y, s * x, c]])


def _fit(pts: np.ndarray, heights: np.ndarray) -> tuple[float, float, float] | None:
    """Least squares of ``z - height = -h + r*y - p*x`` over the points (k, 3): ``(r, p, rms)``; None when they
    do not spread across (:data:`MIN_SPREAD`). The normal equations come from one Gram matrix of (1, x, y, b),
    solved on plain floats (numpy's per-call cost on a 3x3 was most of the work)."""
    m = np.empty((len(pts), 4))
    m[:, 0] = 1.0
    m[:, 1:3] = pts[:, :2]
    m[:, 3] = pts[:, 2] - heights
    (n, sx, sy, sb), (_, sxx, sxy, sxb), (_, _, syy, syb), (_, _, _, sbb) = (m.T @ m).tolist()
    # the spread across the landmarks' main direction: the smaller eigenvalue of their centred second moments
    cxx, cyy, cxy = sxx - sx * sx / n, syy - sy * sy / n, sxy - sx * sy / n
    across = 0.5 * (cxx + cyy - math.sqrt((cxx - cyy) ** 2 + 4.0 * cxy * cxy))
    if across < n * MIN_SPREAD * MIN_SPREAD:
        return None
    # columns (-1, y, -x): the normal matrix a (symmetric) and right-hand side r, solved by cofactors
    a00, a01, a02, a11, a12, a22 = n, -sy, sx, syy, -sxy, sxx
    r0, r1, r2 = -sb, syb, -sxb
    c00, c01, c02 = a11 * a22 - a12 * a12, a02 * a12 - a01 * a22, a01 * a12 - a02 * a11
    c11, c12, c22 = a00 * a22 - a02 * a02, a01 * a02 - a00 * a12, a00 * a11 - a01 * a01
    det = a00 * c00 + a01 * c01 + a02 * c02
    if not det > 0.0:  # NaN or inf seen (a percept the sanitizer let through): no fit
        return None
    u0 = (c00 * r0 + c01 * r1 + c02 * r2) / det
    u1 = (c01 * r0 + c11 * r1 + c12 * r2) / det
    u2 = (c02 * r0 + c12 * r1 + c22 * r2) / det
    sse = sbb - (u0 * r0 + u1 * r1 + u2 * r2)  # at the solution |b - Cu|^2 = b.b - u.(C^T b)
    return u1, u2, math.sqrt(max(sse, 0.0) / n)


def tilt_error(level: LevelObservations, marks: Mapping[str, np.ndarray]) -> tuple[float, float] | None:
    """The roll and pitch (rad) by which ``level`` is turned from the true level frame, from the heights of its
    known landmarks; None when they do not tell (too few, strung along a line, or not fitting)."""
    names = level.landmark_names
    known = [i for i, n in enumerate(names) if n in marks]
    if len(known) < MIN_LANDMARKS:
        return None
    pts = level.landmarks[known]
    heights = np.array([float(marks[names[i]][2]) for i in known])
    fit = _fit(pts, heights)
    if fit is None:
        return None
    roll, pitch, rms = fit
    if math.hypot(roll, pitch) >= MIN_ERROR:  # turned enough to matter: once more, from the points turned back
        fit = _fit(pts @ _rotation(roll, pitch), heights)
        if fit is None:
            return None
        roll, pitch, rms = roll + fit[0], pitch + fit[1], fit[2]
    if not (math.isfinite(roll) and math.isfinite(pitch) and rms <= MAX_RESIDUAL):
        return None
    if math.hypot(roll, pitch) > MAX_ERROR:
        return None
    return roll, pitch


def correct_tilt(level: LevelObservations, marks: Mapping[str, np.ndarray]) -> LevelObservations:
    """``level`` turned back by the tilt error its landmarks show (:func:`tilt_error`); unchanged when they
    show none that matters (:data:`MIN_ERROR`) or do not tell."""
    err = tilt_error(level, marks)
    if err is None or math.hypot(*err) < MIN_ERROR:
        return level
    back = _rotation(*err).T  # R^T: observed -> true level frame

    def turn(points: np.ndarray) -> np.ndarray:
        return points @ back.T

    rot = back @ level.camera_rot if level.camera_rot is not None else None
    yaw = math.atan2(rot[1, 0], rot[0, 0]) if rot is not None else level.camera_yaw
    return transform_level(level, turn, back, yaw)
