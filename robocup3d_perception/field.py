"""Field models of both servers: landmark positions and field lines, in the server's frame.

The server frame ("absolute" frame): origin at the centre spot, +x towards the right
goal, +y to the left of +x, z up. Landmark names are absolute on both servers: a
right-team agent sees the same names; which goal we attack is decided by our side.

* rcssserver3d (SimSpark 0.7.x): 30 x 20 m; flags ``F1L F2L F1R F2R`` on the corners at
  ground level (``1`` = +y), goal posts ``G1L G2L G1R G2R`` at 0.8 m, goals 2.1 m wide;
  field lines: border, halfway line, centre circle (r = 2 m), penalty areas 1.8 x 6.0 m (the server's
  ``PenaltyWidth`` 3.9 plus ``GoalWidth`` 2.1: its ``soccer.rsg`` draws them so and its rules use the same box).
  The line geometry is checked against the ground-truth capture in
  ``test/perception/test_field.py``.
* RCSSServerMJ (``rcsssmj``): the field dimensions come from the installed package's
  ``rcsssmj.games.soccer.soccer_fields`` (``fifa7vs7`` for the ``ssim`` rule books,
  ``fifa`` for ``fifa``), and the point landmarks follow the server's own placement code
  (``rcsssmj/games/soccer/sim/soccer_sim.py``, ``add_marker``), including its quirks:
  the goalie- and penalty-area markers use the area's *full* width as their y (so the
  ``fifa`` penalty-area markers sit outside the field). Posts (``g_*``) are the tops.
  Values written down here are the fallback when the package is not installed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

import numpy as np

__all__ = [
    'MUJOCO_RULES',
    'FieldModel',
    'field_for',
    'mujoco_field',
    'simspark_field',
]

#: RCSSServerMJ rule books and the field version each uses by default.
MUJOCO_RULES = {'ssim': 'fifa7vs7', 'ssim26': 'fifa7vs7', 'fifa': 'fifa', 'fifa7vs7': 'fifa7vs7'}

# Fallback dimensions (field_dim, goal_dim, goalie_area_dim, penalty_area_dim,
# penalty_spot_distance, center_circle_radius), copied from rcsssmj 0.2.1.
_MJ_FALLBACK = {
    'fifa7vs7': ((55.0, 36.0), (1.0, 3.66, 1.83), (4.0, 7.3), (9.0, 16.5), 7.32, 5.5),
    'fifa': ((105.0, 68.0), (1.6, 7.32, 2.44), (5.5, 18.32), (16.5, 40.32), 11.0, 9.15),
}


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, slots=True, eq=False)  # identity hash: caches key on the instance
class FieldModel:
    """One field: size (m), point landmarks (m, server frame) and straight lines.

    ``lines`` is an (n, 4) array of segments ``x1 y1 x2 y2`` on the ground;
    ``circles`` an (m, 3) array ``cx cy r`` (the centre circle). Arrays are read-only.
    """

    name: str
    length: float  # m, along x
    width: float  # m, along y
    goal_width: float  # m
    goal_height: float  # m
    border: float = 1.0  # m of ground around the field where robots may stand (MJ spawns there)
    landmarks: dict[str, np.ndarray] = field(default_factory=dict)
    lines: np.ndarray = field(default_factory=lambda: _readonly(np.zeros((0, 4))))
    circles: np.ndarray = field(default_factory=lambda: _readonly(np.zeros((0, 3))))

    @property
    def half_length(self) -> float:
        """Half the length (m): the goal lines are at x = +-half_length."""
        return self.length / 2

    @property
    def half_width(self) -> float:
        """Half the width (m): the touch lines are at y = +-half_width."""
        return self.width / 2

    def landmark_array(self, names: list[str] | tuple[str, ...]) -> np.ndarray:
        """Positions (k, 3) of the named landmarks, in the given order.

        Raises:
            KeyError: a name this field does not have.
        """
        return np.array([self.landmarks[n] for n in names], dtype=float).reshape(-1, 3)

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        """Whether (x, y) lies on the field, widened by ``margin`` (m)."""
        return abs(x) <= self.half_length + margin and abs(y) <= self.half_width + margin


def _make(
    name: str,
    length: float,
    width: float,
    goal_w: float,
    goal_h: float,
    marks: dict,
    lines: list,
    circles: list,
    border: float = 1.0,
):
    return FieldModel(
        name,
        length,
        width,
        goal_w,
        goal_h,
        border,
        {k: _readonly(np.array(v, dtype=float)) for k, v in marks.items()},
        _readonly(np.array(lines, dtype=float).reshape(-1, 4)),
        _readonly(np.array(circles, dtype=float).reshape(-1, 3)),
    )


def _rect_lines(hx: float, hy: float, area_depth: float, area_half_w: float) -> list[tuple[float, ...]]:
    """Border, halfway line and both areas' three lines each."""
    out = [
        (-hx, hy, hx, hy),
        (-hx, -hy, hx, -hy),
        (-hx, -hy, -hx, hy),
        (hx, -hy, hx, hy),
        (0.0, -hy, 0.0, hy),
    ]
    for s in (-1.0, 1.0):
        x_in = s * (hx - area_depth)
        out += [
            (s * hx, area_half_w, x_in, area_half_w),
            (s * hx, -area_half_w, x_in, -area_half_w),
            (x_in, -area_half_w, x_in, area_half_w),
        ]
    return out


@cache
def simspark_field() -> FieldModel:
    """The rcssserver3d 0.7.x field (30 x 20 m)."""
    hx, hy, goal_hw, goal_h = 15.0, 10.0, 1.05, 0.8
    marks = {
        'F1L': (-hx, hy, 0.0),
        'F2L': (-hx, -hy, 0.0),
        'F1R': (hx, hy, 0.0),
        'F2R': (hx, -hy, 0.0),
        'G1L': (-hx, goal_hw, goal_h),
        'G2L': (-hx, -goal_hw, goal_h),
        'G1R': (hx, goal_hw, goal_h),
        'G2R': (hx, -goal_hw, goal_h),
    }
    return _make('simspark', 2 * hx, 2 * hy, 2 * goal_hw, goal_h, marks, _rect_lines(hx, hy, 1.8, 3.0), [(0, 0, 2.0)])


def _mj_dims(version: str) -> tuple:
    try:
        from rcsssmj.games.soccer.soccer_fields import create_soccer_field  # noqa: PLC0415 - optional package
    except ImportError:
        return _MJ_FALLBACK[version]
    f = create_soccer_field(version)
    return (
        tuple(f.field_dim[:2]),
        tuple(f.goal_dim),
        tuple(f.goalie_area_dim),
        tuple(f.penalty_area_dim) if f.penalty_area_dim is not None else None,
        float(f.penalty_spot_distance),
        float(f.center_circle_radius),
    )


@cache
def mujoco_field(rules: str = 'ssim') -> FieldModel:
    """The RCSSServerMJ field of a rule book (``ssim``, ``ssim26``, ``fifa``) or field version.

    Raises:
        ValueError: an unknown rule book or field version.
    """
    if rules not in MUJOCO_RULES:
        raise ValueError(f'rules must be one of {sorted(MUJOCO_RULES)}, got {rules!r}')
    version = MUJOCO_RULES[rules]
    (length, width), goal, goalie, penalty, spot, circle = _mj_dims(version)
    hx, hy = length / 2, width / 2
    goal_hy, goal_z = goal[1] / 2, goal[2]
    ga_x, ga_y = hx - goalie[0], goalie[1]  # the server uses the full width as y
    marks: dict[str, tuple[float, float, float]] = {
        'l_luf': (-hx, hy, 0),
        'l_llf': (-hx, -hy, 0),
        'l_ruf': (hx, hy, 0),
        'l_rlf': (hx, -hy, 0),
        't_cuf': (0, hy, 0),
        't_clf': (0, -hy, 0),
        'x_cuc': (0, circle, 0),
        'x_clc': (0, -circle, 0),
        'p_lpm': (-(hx - spot), 0, 0),
        'p_rpm': (hx - spot, 0, 0),
        'g_lup': (-hx, goal_hy, goal_z),
        'g_llp': (-hx, -goal_hy, goal_z),
        'g_rup': (hx, goal_hy, goal_z),
        'g_rlp': (hx, -goal_hy, goal_z),
        'l_luga': (-ga_x, ga_y, 0),
        'l_llga': (-ga_x, -ga_y, 0),
        'l_ruga': (ga_x, ga_y, 0),
        'l_rlga': (ga_x, -ga_y, 0),
        't_luga': (-hx, ga_y, 0),
        't_llga': (-hx, -ga_y, 0),
        't_ruga': (hx, ga_y, 0),
        't_rlga': (hx, -ga_y, 0),
    }
    if penalty is not None:
        pa_x, pa_y = hx - penalty[0], penalty[1]
        marks |= {
            'l_lupa': (-pa_x, pa_y, 0),
            'l_llpa': (-pa_x, -pa_y, 0),
            'l_rupa': (pa_x, pa_y, 0),
            'l_rlpa': (pa_x, -pa_y, 0),
            't_lupa': (-hx, pa_y, 0),
            't_llpa': (-hx, -pa_y, 0),
            't_rupa': (hx, pa_y, 0),
            't_rlpa': (hx, -pa_y, 0),
        }
    # Lines are drawn with the real (half-width) areas; MJ sends no lines, they are for display.
    lines = _rect_lines(hx, hy, goalie[0], goalie[1] / 2)
    if penalty is not None:
        lines += _rect_lines(hx, hy, penalty[0], penalty[1] / 2)[5:]
    # The server's field_border is 3 m; spawn poses lie on it (e.g. y = 21 on the 36 m field).
    return _make(f'mujoco-{version}', length, width, 2 * goal_hy, goal_z, marks, lines, [(0, 0, circle)], border=4.0)


def field_for(server: str, rules: str = 'ssim') -> FieldModel:
    """The field of ``server`` (``simspark`` or ``mujoco``; ``rules`` only for mujoco).

    Raises:
        ValueError: an unknown server or rule book.
    """
    if server == 'simspark':
        return simspark_field()
    if server == 'mujoco':
        return mujoco_field(rules)
    raise ValueError(f"server must be 'simspark' or 'mujoco', got {server!r}")


def wrap_angle(a: float) -> float:
    """``a`` (rad) wrapped into [-pi, pi)."""
    return (a + math.pi) % (2 * math.pi) - math.pi
