"""Ground truth from rcssserver3d's monitor stream: every Nao's torso pose and the ball.

The stream sends ``(header)(RSG 0 1)(<full scene>)`` when the scene graph changes (a join, a leave, or
after a ``(reqfullstate)``) and ``((time T)...)(RDS 0 1)(<diff>)`` otherwise; a new monitor connection
starts with diffs, so ask for a full state first. The scene is a list of nodes: ``(nd TRF (SLT m0..m15)
...)`` carries a column-major 4x4 relative to its parent, ``(nd StaticMesh ... (load <model>) ...)`` and
``(nd SMN ...)`` are shapes. A diff is the same tree, node for node, with ``(SLT ..)`` only where a
transform changed.

A Nao's body mesh is ``naobody<type>.obj`` with ``matNum<N>`` and ``matLeft|matRight`` among its
materials; the TRF above the mesh only turns the mesh, the TRF above that is the torso. The ball is the
TRF right above the ``soccerball.obj`` mesh. Where they are in the tree is found once per full scene
(the only message parsed into a tree). A diff is checked against the tree's shape and applied by
position: node ``k`` in its text is the tree's node ``k``, and only the transforms of the few nodes
above the torsos and the ball are read (two regular-expression passes over the text, no parse), which
:meth:`SimsparkTracker.truth` composes.

The Nao faces its torso's +y axis in rcssserver3d; a truth pose is turned to REP-103 (x forward,
y left, z up: our ``torso`` / ``base_link``), so its yaw is the robot's heading.

rcssserver3d sends no server time: it sends a monitor message every ``$monitorStep`` (0.04 s) of
simulated time, in real-time and in sync mode (a requested full state replaces one), so
:attr:`Truth.time` is the monitor time, ``step`` per message since the first one of the connection;
:class:`MonitorClock` puts it on the server time of ``/clock``.
Pure Python and numpy (no rclpy).
"""

from __future__ import annotations

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


_LEAF = re.compile(r'\((?!nd[\s()])[^()]*\)')  # an item that is not a node and holds no other: (SLT ..), (load ..)
_NOT_PAREN = re.compile(r'[^()]+')
_ND = re.compile(r'\(nd(?=[\s()])')
_SLT_AT = re.compile(r'\(nd\s*(?:TRF\s*)?\(SLT ([^()]*)\)')  # a node's transform comes first in it


def is_simspark_message(text: str | bytes) -> bool:
    """Whether a monitor message is rcssserver3d's (an ``(RSG ..)`` or ``(RDS ..)`` scene after the header)."""
    head = text[:20000] if isinstance(text, str) else bytes(text[:20000]).decode('ascii', 'replace')
    return head.startswith('((') and _SCENE.search(head) is not None


def _shape(scene: str) -> str:
    """The tree's shape: the scene with everything but the nodes' parentheses taken out (same for a diff)."""
    n = 1
    while n:
        scene, n = _LEAF.subn('', scene)
    return _NOT_PAREN.sub('', scene)


def _child(node: list, key: str) -> list:
    return next((c for c in node if isinstance(c, list) and c and c[0] == key), [])


def _find(scene: list) -> tuple[dict[tuple[str, int], tuple[int, ...]], tuple[int, ...] | None]:
    """Chains of nodes (pre-order indices, from the top) down to every torso TRF and to the ball's TRF."""
    torsos: dict[tuple[str, int], tuple[int, ...]] = {}
    ball: list[tuple[int, ...]] = []
    count = [0]

    def walk(node: list, chain: tuple[int, ...], trfs: tuple[tuple[int, ...], ...]) -> None:
        kind = node[1] if len(node) > 1 and isinstance(node[1], str) else None
        if kind == 'TRF':
            trfs = (*trfs, chain)
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
        for c in node:
            if isinstance(c, list) and c and c[0] == 'nd':
                index = count[0]
                count[0] += 1
                walk(c, (*chain, index), trfs)

    walk(['nd', None, *scene], (), ())
    return torsos, ball[0] if ball else None


def _matrix(values: str) -> np.ndarray:
    m = np.array(values.split(), dtype=float)
    if m.shape != (16,) or not np.isfinite(m).all():
        raise ValueError(f'SLT needs 16 finite numbers, got {values!r}')
    return m.reshape(4, 4).T  # column-major


class SimsparkTracker:
    """The scene graph of one rcssserver3d monitor connection, kept up to date message by message.

    Of the tree it keeps the shape (the nodes' parentheses) and the transforms of the nodes above
    the torsos and the ball. A diff fits when its shape is the same; its node ``k`` (in text order)
    is the tree's node ``k``, and only the nodes kept are read.

    ``needs_full`` is true while there is no tree (at the start, or after a diff that did not fit):
    ask the server for a full state (``TrainerClient.request_full_state()``) then.
    """

    dialect = 'simspark'

    def __init__(self, step: float = DEFAULT_STEP) -> None:
        self.shape: str | None = None
        self.step = step
        self.messages = 0  # monitor messages seen
        self.time_ns = 0  # monitor time: ``step`` per message after the first
        self.errors = 0  # diffs that did not fit and messages that did not parse
        self.game_time: float | None = None  # of the latest message's header
        self.running = False  # whether the game time moved by one step since the message before
        self._torsos: dict[tuple[str, int], tuple[int, ...]] = {}
        self._ball: tuple[int, ...] | None = None
        self._kept: list[int] = []  # nodes whose transforms are kept (pre-order indices)
        self._mats: dict[int, np.ndarray] = {}
        self._last_game_time: float | None = None
        self._delta: float | None = None

    @property
    def needs_full(self) -> bool:
        """Whether the tracker waits for a full scene."""
        return self.shape is None

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
        scene = text[m.end() :].strip()
        try:
            if m.group(1) == 'RSG':
                parsed = parse_sexp(scene)
                if len(parsed) != 1 or not isinstance(parsed[0], list):
                    raise _Misfit
                self._torsos, self._ball = _find(parsed[0])
                self._kept = sorted({k for chain in (*self._torsos.values(), self._ball or ()) for k in chain})
                self._mats = {}
                self.shape = _shape(scene)
            elif self.shape is None:
                return False
            elif _shape(scene) != self.shape:
                raise _Misfit
            self._read_transforms(scene)
        except (SExpParseError, _Misfit, ValueError):
            self.errors += 1
            self.shape = None
            return False
        return True

    def _read_transforms(self, scene: str) -> None:
        starts = [n.start() for n in _ND.finditer(scene)]
        for k in self._kept:
            slt = _SLT_AT.match(scene, starts[k])
            if slt is not None:
                self._mats[k] = _matrix(slt.group(1))

    def _game_time(self, header: str) -> None:
        """Learn the monitor step from the game time, which moves with the server time while the game runs."""
        t = _TIME.search(header)
        self.running = False
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
        self.running = delta is not None and abs(delta - self.step) < 0.0015

    def _world(self, chain: tuple[int, ...]) -> np.ndarray:
        world = np.eye(4)
        for k in chain:
            m = self._mats.get(k)
            if m is not None:
                world = world @ m
        return world

    def truth(self, team_left: str | None = None, team_right: str | None = None) -> Truth:
        """World poses now: ``robots[(team name, unum)]`` is the torso as base_link (4x4), ``ball`` its centre.

        Robots of a side whose team name is not known (``None``) are left out.
        """
        robots: dict[tuple[str, int], np.ndarray] = {}
        ball = None
        if self.shape is not None:
            names = {'Left': team_left, 'Right': team_right}
            for (side, unum), chain in self._torsos.items():
                if names[side] is not None:
                    robots[(names[side], unum)] = self._world(chain) @ _TO_BASE_LINK
            if self._ball is not None:
                m = self._world(self._ball)
                ball = (float(m[0, 3]), float(m[1, 3]), float(m[2, 3]))
        return Truth(self.time_ns / 1e9, ball, robots)


class MonitorClock:
    """Server time (ns) of monitor messages: monitor time plus an offset.

    The monitor time is exact (0.04 s of simulated time a message, in real-time and in sync mode);
    the offset is found two ways:

    * exactly, while the game time runs: a player's ``game_state`` pairs its server time with the
      game time of the same percept, and the monitor header sends the game time of each message;
      the median of the latest ``exact_samples`` such pairs, the game times less than 1 s apart. It is
      learnt all the while the game time runs: the monitor time, counted in messages, can fall behind
      the server's (in one recorded 150 s half by 3.25 s at once, 20-40 s after the kick-off, which left
      every later truth 3.25 s early), and the latest pairs put it right within a few messages;
    * until then, from the ``/clock`` the recorder has seen when a message comes, which reaches it a
      cycle late or early in real time, up to 0.5 s when a sync-mode server runs fast: the median
      of ``clock - monitor time`` over the first ``samples`` messages, learnt again only when the
      two are ``resync`` s apart (the clock's source restarted).

    Without either the stamps are the monitor time.
    """

    def __init__(self, samples: int = 50, resync: float = 5.0, exact_samples: int = 5) -> None:
        self.samples = samples
        self.resync_ns = int(resync * 1e9)
        self.exact_samples = exact_samples
        self._offsets: list[int] = []
        self._exact: list[int] = []
        self._player: tuple[int, float] | None = None
        self.offset = 0

    @property
    def exact(self) -> bool:
        """Whether the offset comes from the game time."""
        return bool(self._exact)

    def player(self, server_ns: int, game_time: float | None, play_mode: str | None) -> None:
        """A player's server time and game time of one percept (from its ``game_state``)."""
        if game_time and play_mode not in (None, 'BeforeKickOff', 'GameOver'):
            self._player = (server_ns, float(game_time))

    def stamp(
        self, monitor_ns: int, clock_ns: int | None, game_time: float | None = None, running: bool = False
    ) -> int:
        """The server time of a message at ``monitor_ns``, given the latest ``/clock`` (None or 0: none yet)
        and the message's game time (``running``: it moved by one step since the message before)."""
        if running and game_time is not None and self._player is not None:
            server_ns, player_game = self._player
            if abs(game_time - player_game) < 1.0:
                self._exact.append(server_ns + round((game_time - player_game) * 1e9) - monitor_ns)
                del self._exact[: -self.exact_samples]
                self.offset = int(statistics.median(self._exact))
            self._player = None
        if clock_ns and not self._exact:
            if len(self._offsets) < self.samples:
                self._offsets.append(clock_ns - monitor_ns)
                self.offset = int(statistics.median(self._offsets))
            elif abs(monitor_ns + self.offset - clock_ns) > self.resync_ns:
                self._offsets = [clock_ns - monitor_ns]
                self.offset = self._offsets[0]
        return monitor_ns + self.offset
