"""Ground truth from RCSSServerMJ's monitor stream (RSMP 1.0 scene graph): every robot's pose and the ball.

The scene graph section ``((sg 1 0)full|diff (nd ...))`` is a tree of nodes: ``(nd TRF (SLT m0..m15) ...)``
carries a transform relative to its parent (a column-major 4x4), ``(nd DSC (agent <team> <unum>) ...)``
or ``(nd DSC (ball) ...)`` names the body whose transform node it wraps, ``(nd SMN ...)`` is a shape.
A ``full`` message sends the whole tree (on a join or leave, and every 250 frames); a ``diff`` sends the
same tree, node for node, with a ``TRF (SLT ..)`` only where a transform changed (by more than 0.005)
and nothing else. An agent's transform node hangs from the world's root: its SLT is the world pose of
the robot's root body (the T1/K1 ``Trunk``, our ``torso`` / ``base_link``).

:class:`SceneTracker` keeps the tree from a full message and applies the diffs; :meth:`SceneTracker.truth`
gives the world poses. Pure Python and numpy (no rclpy).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

from robocup3d_bridge.sexp import SExpParseError, parse_sexp

__all__ = ['SceneTracker', 'Truth', 'game_of', 'matrix_quaternion', 'read_truths', 'server_time']


@dataclass
class _Node:
    slt: np.ndarray | None = None  # 4x4, relative to the parent
    dsc: tuple[tuple[str, ...], ...] = ()
    children: list[_Node] = field(default_factory=list)


@dataclass
class Truth:
    """World poses at one server time: ``robots[(team, unum)]`` is a 4x4 of the root body (torso)."""

    time: float | None
    ball: tuple[float, float, float] | None
    robots: dict[tuple[str, int], np.ndarray]


def _slt(expr: list) -> np.ndarray | None:
    for item in expr:
        if isinstance(item, list) and item and item[0] == 'SLT':
            values = [float(v) for v in item[1:]]
            if len(values) != 16 or not all(math.isfinite(v) for v in values):
                raise ValueError(f'SLT needs 16 finite numbers, got {item[1:]!r}')
            return np.array(values).reshape(4, 4).T  # column-major
    return None


def _build(expr: list) -> _Node:
    node = _Node(slt=_slt(expr))
    if len(expr) > 1 and expr[1] == 'DSC':
        node.dsc = tuple(tuple(i) for i in expr[2:] if isinstance(i, list) and i and i[0] != 'nd')
    node.children = [_build(c) for c in expr if isinstance(c, list) and c and c[0] == 'nd']
    return node


def _apply(node: _Node, expr: list) -> None:
    slt = _slt(expr)
    if slt is not None:
        node.slt = slt
    kids = [c for c in expr if isinstance(c, list) and c and c[0] == 'nd']
    if len(kids) != len(node.children):
        raise ValueError('diff does not match the scene graph (a full state was missed)')
    for child, sub in zip(node.children, kids, strict=True):
        _apply(child, sub)


def _section(text: str, tag: str) -> str | None:
    start = text.find(f'(({tag} ')
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def server_time(text: str) -> float | None:
    """The ``gt`` (server time, s) of an RSMP message, or None."""
    gt = _section(text, 'gt')
    if gt is None:
        return None
    try:
        return float(gt[gt.index(')') + 1 : -1])
    except ValueError:
        return None


class SceneTracker:
    """The scene graph of one monitor connection, kept up to date message by message."""

    dialect = 'mujoco'

    def __init__(self) -> None:
        self.root: _Node | None = None
        self.time: float | None = None
        self.errors = 0

    def update(self, message: str | bytes) -> bool:
        """Apply one RSMP message; False (and the tree dropped until the next full state) if it does not fit."""
        text = bytes(message).decode('ascii', 'replace') if not isinstance(message, str) else message
        t = server_time(text)
        if t is not None:
            self.time = t
        sg = _section(text, 'sg')
        if sg is None:
            return self.root is not None
        try:
            (expr,) = parse_sexp(sg)
            kind = expr[1] if len(expr) > 1 else None
            tree = next((c for c in expr[2:] if isinstance(c, list) and c and c[0] == 'nd'), None)
            if tree is None:
                raise ValueError('scene graph without a root node')
            if kind == 'full':
                self.root = _build(tree)
            elif kind == 'diff' and self.root is not None:
                _apply(self.root, tree)
            else:
                return False
        except (SExpParseError, ValueError, IndexError):
            self.errors += 1
            self.root = None
            return False
        return True

    def truth(self) -> Truth:
        """World poses of the robots and the ball in the current tree."""
        robots: dict[tuple[str, int], np.ndarray] = {}
        ball: list[tuple[float, float, float]] = []

        def walk(node: _Node, world: np.ndarray, owner: tuple[str, ...] | None) -> None:
            if node.slt is not None:
                world = world @ node.slt
                if owner is not None:  # the transform node a DSC wraps: that body's world pose
                    if owner[0] == 'ball':
                        ball.append((float(world[0, 3]), float(world[1, 3]), float(world[2, 3])))
                    elif owner[0] == 'agent' and len(owner) >= 3 and owner[2].isdigit():
                        robots[(owner[1], int(owner[2]))] = world
                    return  # nothing of interest inside a body
            mark = next((d for d in node.dsc if d and d[0] in ('ball', 'agent')), None)
            for child in node.children:
                walk(child, world, mark or owner if node.slt is None else mark)

        if self.root is not None:
            walk(self.root, np.eye(4), None)
        return Truth(self.time, ball[0] if ball else None, robots)


def matrix_quaternion(m: np.ndarray) -> tuple[float, float, float, float]:
    """``(x, y, z, w)`` of a rotation matrix (the 3x3 block of ``m``), normalised."""
    r = np.asarray(m, dtype=float)[:3, :3]
    tr = r[0, 0] + r[1, 1] + r[2, 2]
    if tr > 0:
        s = math.sqrt(tr + 1.0) * 2
        w, x, y, z = 0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s
    elif r[0, 0] > r[1, 1] and r[0, 0] > r[2, 2]:
        s = math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2]) * 2
        w, x, y, z = (r[2, 1] - r[1, 2]) / s, 0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s
    elif r[1, 1] > r[2, 2]:
        s = math.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2]) * 2
        w, x, y, z = (r[0, 2] - r[2, 0]) / s, (r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s
    else:
        s = math.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1]) * 2
        w, x, y, z = (r[1, 0] - r[0, 1]) / s, (r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s
    n = math.sqrt(w * w + x * x + y * y + z * z) or 1.0
    return x / n, y / n, z / n, w / n


def read_truths(
    batch: Iterable[bytes | str], state: object, tracker: SceneTracker, dump: TextIO | None = None
) -> Iterator[tuple[int, Truth]]:
    """Monitor messages into ``state`` (a ``MonitorState``: play mode, score, ...) and ``tracker``;
    ``(time in ns, truth)`` for each that updates the scene at a known time. ``dump`` gets every
    message as a line.

    ``tracker`` is a :class:`SceneTracker` (RCSSServerMJ: the time is the server time) or a
    ``simspark_truth.SimsparkTracker`` (rcssserver3d: the monitor time, robots under their team names).
    """
    from robocup3d_bridge.trainer import MonitorParseError, parse_monitor_message  # noqa: PLC0415

    for raw in batch:
        text = raw if isinstance(raw, str) else bytes(raw).decode('ascii', 'replace')
        if dump is not None:
            dump.write(text + '\n')
        try:
            parse_monitor_message(text, tracker.dialect, state)
        except MonitorParseError:
            pass
        if not tracker.update(text):
            continue
        truth = tracker.truth() if tracker.dialect == 'mujoco' else tracker.truth(state.team_left, state.team_right)
        if truth.time is not None:
            yield round(truth.time * 1e9), truth


def game_of(state: object, fouls: bool = False) -> dict:
    """The game as the monitor last told it (a ``MonitorState``): play mode, time, half, score, teams[, fouls]."""
    game = {
        'play_mode': state.play_mode,
        'game_time': state.game_time,
        'half': state.half,
        'score_left': state.score_left,
        'score_right': state.score_right,
        'team_left': state.team_left,
        'team_right': state.team_right,
    }
    if fouls:
        game['fouls'] = [list(f) for f in state.fouls]
    return game
