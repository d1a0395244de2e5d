"""Ground truth from rcssserver3d's monitor stream: every Nao's torso pose and the ball.

The stream sends ``(header)(RSG 0 1)(<full scene>)`` when the scene graph changes (a join, a leave, or
after a ``(reqfullstate)``) and ``((time T)...)(RDS 0 1)(<diff>)`` otherwise; a new monitor connection
starts with diffs, so ask for a full state first. The scene is a list of nodes: ``(nd TRF (SLT m0..m15)
...)`` carries a column-major 4x4 relative to its parent, ``(nd StaticMesh ... (load <model>) ...)`` and
``(nd SMN ...)`` are shapes. A diff is the same tree, node for node, with ``(SLT ..)`` only where a
transform changed.

A Nao's body mesh is ``naobody<type>.obj`` with ``matNum<N>`` and ``matLeft|matRight`` among its
materials; the TRF above the mesh only turns the mesh, the TRF above that is the torso. The ball is the
TRF right above the ``soccerball.obj`` mesh. Where they are in the tree is found once per full scene;
a diff then only updates the tree, and :meth:`SimsparkTracker.truth` composes the transforms on those
few paths.

The Nao faces its torso's +y axis in rcssserver3d; a truth pose is turned to REP-103 (x forward,
y left, z up: our ``torso`` / ``base_link``), so its yaw is the robot's heading.

rcssserver3d sends no server time: it sends a monitor message every ``$monitorStep`` (0.04 s) of
simulated time (a requested full state replaces one), so :attr:`Truth.time` is the monitor time,
``step`` per message since the first one of the connection; :class:`MonitorClock` puts it on the
server time of ``/clock``.
Pure Python and numpy (no rclpy).
"""

from __future__ import annotations

import math
import re
import statistics

import numpy as np

from robocup3d_bridge.sexp import SExpParseError, parse_sexp
from robocup3d_tools.monitor_truth import Truth

__all__ = ['DEFAULT_STEP', 'MonitorClock', 'SimsparkTracker', 'is_simspark_message']

#: seconds of server time between two monitor messages (rcssserver3d's ``$monitorStep``)
DEFAULT_STEP = 0.04
_SCENE = re.compile(r'\((RSG|RDS) \d+ \d+\)')
_TIME = re.compile(r'\(time ([-+0-9.eE]+)\)')
#: torso frame (Nao: +y forward, -x left) to base_link (x forward, y left): a quarter turn about z
_TO_BASE_LINK = np.array([[0.0, -1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])


class _Misfit(ValueError):
    """A diff that does not match the tree."""


def is_simspark_message(text: str | bytes) -> bool:
    """Whether a monitor message is rcssserver3d's (an ``(RSG ..)`` or ``(RDS ..)`` scene after the header)."""
    head = text[:20000] if isinstance(text, str) else bytes(text[:20000]).decode('ascii', 'replace')
    return head.startswith('((') and _SCENE.search(head) is not None


def _build(expr: list) -> list:
    """``[slt tokens or None, children]`` of a parsed node."""
    slt = None
    kids = []
    for c in expr:
        if c.__class__ is list and c:
            head = c[0]
            if head == 'nd':
                kids.append(_build(c))
            elif head == 'SLT':
                slt = c
    return [slt, kids]


def _apply(node: list, expr: list) -> None:
    kids = node[1]
    i = 0
    for c in expr:
        if c.__class__ is list and c:
            head = c[0]
            if head == 'nd':
                if i >= len(kids):
                    raise _Misfit
                _apply(kids[i], c)
                i += 1
            elif head == 'SLT':
                node[0] = c
    if i != len(kids):
        raise _Misfit


def _child(node: list, key: str) -> list:
    return next((c for c in node if isinstance(c, list) and c and c[0] == key), [])


def _find(scene: list) -> tuple[dict[tuple[str, int], tuple[int, ...]], tuple[int, ...] | None]:
    """Paths (child indices from the root) of every torso TRF and of the ball's TRF in a full scene."""
    torsos: dict[tuple[str, int], tuple[int, ...]] = {}
    ball: list[tuple[int, ...]] = []

    def walk(node: list, path: tuple[int, ...], trfs: tuple[tuple[int, ...], ...]) -> None:
        kind = node[1] if len(node) > 1 and isinstance(node[1], str) else None
        if kind == 'TRF':
            trfs = (*trfs, path)
        elif kind == 'StaticMesh':
            load = _child(node, 'load')
            model = str(load[1]) if len(load) > 1 else ''
            if 'naobody' in model and len(trfs) >= 2:
                mats = _child(node, 'resetMaterials')[1:]
                num = next((m[6:] for m in mats if isinstance(m, str) and m.startswith('matNum')), '')
                side = 'Left' if 'matLeft' in mats else 'Right' if 'matRight' in mats else None
                if num.isdigit() and side:
                    torsos[(side, int(num))] = trfs[-2]
            elif 'soccerball' in model and trfs and not ball:
                ball.append(trfs[-1])
        i = 0
        for c in node:
            if isinstance(c, list) and c and c[0] == 'nd':
                walk(c, (*path, i), trfs)
                i += 1

    walk(['nd', None, *scene], (), ())
    return torsos, ball[0] if ball else None


def _matrix(slt: list) -> np.ndarray:
    values = [float(v) for v in slt[1:]]
    if len(values) != 16 or not all(math.isfinite(v) for v in values):
        raise ValueError(f'SLT needs 16 finite numbers, got {slt[1:]!r}')
    return np.array(values).reshape(4, 4).T  # column-major


class SimsparkTracker:
    """The scene graph of one rcssserver3d monitor connection, kept up to date message by message.

    ``needs_full`` is true while there is no tree (at the start, or after a diff that did not fit):
    ask the server for a full state (``TrainerClient.request_full_state()``) then.
    """

    dialect = 'simspark'

    def __init__(self, step: float = DEFAULT_STEP) -> None:
        self.root: list | None = None
        self.step = step
        self.messages = 0  # monitor messages seen
        self.time_ns = 0  # monitor time: ``step`` per message after the first
        self.errors = 0  # diffs that did not fit and messages that did not parse
        self.game_time: float | None = None
        self._torsos: dict[tuple[str, int], tuple[int, ...]] = {}
        self._ball: tuple[int, ...] | None = None
        self._last_game_time: float | None = None
        self._delta: float | None = None

    @property
    def needs_full(self) -> bool:
        """Whether the tracker waits for a full scene."""
        return self.root is None

    def update(self, message: str | bytes) -> bool:
        """Apply one monitor message; False (and the tree dropped until the next full state) if it does not fit."""
        text = message if isinstance(message, str) else bytes(message).decode('ascii', 'replace')
        if self.messages:
            self.time_ns += round(self.step * 1e9)
        self.messages += 1
        m = _SCENE.search(text, 0, 20000)
        if m is None or not text.startswith('(('):
            self.errors += 1
            return False
        self._game_time(text[: m.start()])
        try:
            parsed = parse_sexp(text[m.end() :])
            if len(parsed) != 1 or not isinstance(parsed[0], list):
                raise _Misfit
            scene = parsed[0]
            if m.group(1) == 'RSG':
                self.root = [None, [_build(c) for c in scene if isinstance(c, list) and c and c[0] == 'nd']]
                self._torsos, self._ball = _find(scene)
            elif self.root is not None:
                _apply(self.root, scene)
            else:
                return False
        except (SExpParseError, _Misfit):
            self.errors += 1
            self.root = None
            return False
        return True

    def _game_time(self, header: str) -> None:
        """Learn the monitor step from the game time, which moves with the server time while the game runs."""
        t = _TIME.search(header)
        if t is None:
            self._last_game_time = None
            return
        try:
            now = float(t.group(1))
        except ValueError:
            return
        before, self._last_game_time, self.game_time = self._last_game_time, now, now
        delta = round(now - before, 3) if before is not None else None
        if delta is not None and 0.005 < delta < 0.25 and delta == self._delta:  # twice: not a (time t) command
            self.step = delta
        self._delta = delta

    def _world(self, path: tuple[int, ...]) -> np.ndarray:
        node = self.root
        world = np.eye(4)
        for i in path:
            node = node[1][i]
            if node[0] is not None:
                world = world @ _matrix(node[0])
        return world

    def truth(self, team_left: str | None = None, team_right: str | None = None) -> Truth:
        """World poses now: ``robots[(team name, unum)]`` is the torso as base_link (4x4), ``ball`` its centre.

        Robots of a side whose team name is not known (``None``) are left out.
        """
        robots: dict[tuple[str, int], np.ndarray] = {}
        ball = None
        if self.root is not None:
            names = {'Left': team_left, 'Right': team_right}
            for (side, unum), path in self._torsos.items():
                if names[side] is None:
                    continue
                try:
                    robots[(names[side], unum)] = self._world(path) @ _TO_BASE_LINK
                except (ValueError, IndexError):
                    self.errors += 1
            if self._ball is not None:
                try:
                    m = self._world(self._ball)
                    ball = (float(m[0, 3]), float(m[1, 3]), float(m[2, 3]))
                except (ValueError, IndexError):
                    self.errors += 1
        return Truth(self.time_ns / 1e9, ball, robots)


class MonitorClock:
    """Server time (ns) of monitor messages: monitor time plus an offset learnt from ``/clock``.

    The offset is the median of ``clock - monitor time`` over the first ``samples`` messages that
    came with a known ``/clock`` (the players' server time, which reaches the recorder a little
    late or early), and is fixed from then on, so the stamps keep the monitor's exact spacing; it
    is learnt again when the two drift apart by more than ``resync`` s. Without any ``/clock`` the
    stamps are the monitor time.
    """

    def __init__(self, samples: int = 25, resync: float = 0.5) -> None:
        self.samples = samples
        self.resync_ns = int(resync * 1e9)
        self._offsets: list[int] = []
        self.offset = 0

    def stamp(self, monitor_ns: int, clock_ns: int | None) -> int:
        """The server time of a message at ``monitor_ns``, given the latest ``/clock`` (None or 0: none yet)."""
        if clock_ns:
            if len(self._offsets) < self.samples:
                self._offsets.append(clock_ns - monitor_ns)
                self.offset = int(statistics.median(self._offsets))
            elif abs(monitor_ns + self.offset - clock_ns) > self.resync_ns:
                self._offsets = [clock_ns - monitor_ns]
                self.offset = self._offsets[0]
        return monitor_ns + self.offset
