"""A live match's statistics from the server's monitor stream, for ``robocup3d match``'s summary.

:class:`MatchStats` takes every monitor message the match's trainer connection receives
(``TrainerClient.listeners``): the ground truth (ball and robots, :mod:`~robocup3d_tools.monitor_truth`),
the game state and the fouls. At the end it builds a :class:`~robocup3d_tools.match_data.MatchData`
and analyses it as ``robocup3d report`` analyses a bag (:mod:`~robocup3d_tools.match_analysis`):
goals and their scorers, possession, kicks, shots and passes, falls and get-ups. On rcssserver3d the
scene comes from :class:`~robocup3d_tools.simspark_truth.SimsparkTracker`, which needs a full scene
first: :meth:`MatchStats.tick` asks the server for one while it has none. rcssserver3d's monitor reports each
record of a foul once, by name (``trainer.SIMSPARK_FOULS``: charging, touching, illegal defence, incapable, ...), and
a foul it punishes by lifting the player is recorded every cycle of the lift (:data:`SIMSPARK_FOUL_GAP`); RCSSServerMJ's
repeats a foul's code while it stands, and misses half its fouls (:data:`FOUL_KICKS`): a free kick no foul came with
counts one.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from pathlib import Path

from robocup3d_bridge.trainer import SIMSPARK_FOULS, MonitorState
from robocup3d_perception.field import field_for
from robocup3d_tools.match_analysis import Analysis, analyze
from robocup3d_tools.match_data import MatchData, Series
from robocup3d_tools.monitor_truth import SceneTracker, game_of, matrix_quaternion, read_truths

__all__ = ['MatchStats', 'summary_lines']

ROBOT_EVERY = 5  # monitor messages per robot sample (10 Hz): enough for falls and possession
#: RCSSServerMJ 0.2.1's foul codes (``soccer_referee.Foul``), as the monitor sends them: rcssserver3d's, and three more
FOUL_NAMES = (*SIMSPARK_FOULS, 'ball holding', 'double touch', 'hand')
#: RCSSServerMJ 0.2.1's play modes that only a foul gives, and that foul (``soccer_referee``): its monitor sends
#: every other frame (``RSMPMonitor``'s update interval 2) and a foul stands in one frame only, so half of them
#: never reach a monitor; the play mode they lead to does, and counts the foul the stream missed
FOUL_KICKS = {'free_kick': 'double touch', 'direct_free_kick': 'hand'}
FOUL_SEEN_S = 0.2  # s: a foul reported this long before its kick is that kick's
#: s of game time: rcssserver3d's records of one player's foul of one kind closer than this are one foul (it records
#: a punished foul again every cycle it holds the player in the air, ``FoulHoldTime`` 0.5 s)
SIMSPARK_FOUL_GAP = 1.0


class MatchStats:
    """Gathers the ground truth of one match (``server``: ``mujoco`` or ``simspark``); :meth:`analysis` at the end."""

    def __init__(self, server: str = 'mujoco') -> None:
        from robocup3d_tools.simspark_truth import SimsparkTracker  # noqa: PLC0415

        self.server = server
        self.state = MonitorState()
        self.tracker = SimsparkTracker() if server == 'simspark' else SceneTracker()
        self._full_asked = 0.0
        self.ball: list[tuple[float, ...]] = []
        self.robots: dict[str, list[tuple[float, ...]]] = {}
        self.games: list[tuple[float, dict]] = []
        self.fouls: Counter[tuple[str, str]] = Counter()  # (side, kind) -> count
        self._seen_fouls: set[tuple] = set()
        self._foul_at: dict[tuple[str, str], float] = {}  # (side, kind) -> server time last reported
        self._simspark_last: dict[tuple[str, str, int], float] = {}  # (side, kind, unum) -> game time last recorded
        self._mode = ''
        self._n = 0
        self._game_key: tuple | None = None

    def take(self, raw: bytes) -> None:
        """One monitor message (a ``TrainerClient`` listener)."""
        self._take_truth(raw)
        t = self.state.server_time
        if self.server == 'simspark':
            self._take_simspark_fouls()
            return
        for kind, team, unum in self.state.fouls:  # a message lists the fouls it reports
            mark = (kind, team, unum, round(t or 0.0))  # RCSSServerMJ repeats a foul while it stands
            if mark not in self._seen_fouls:
                self._seen_fouls.add(mark)
                name = FOUL_NAMES[int(kind)] if kind.isdigit() and int(kind) < len(FOUL_NAMES) else kind
                self.fouls[('left' if team == 1 else 'right', name)] += 1
                self._foul_at[('left' if team == 1 else 'right', name)] = t or 0.0
        if self.server == 'mujoco' and self.state.play_mode != self._mode:
            self._mode = self.state.play_mode
            self._foul_of_kick(self._mode, t or 0.0)

    def _take_simspark_fouls(self) -> None:
        """rcssserver3d records a foul it punishes by lifting the player again every cycle of the lift (0.5 s): the
        records of one player and kind with less than :data:`SIMSPARK_FOUL_GAP` s of game time between them are one."""
        t = self.state.game_time
        for kind, team, unum in self.state.fouls:
            side = 'left' if team == 1 else 'right'
            key = (side, kind, unum)
            if t - self._simspark_last.get(key, -math.inf) > SIMSPARK_FOUL_GAP:
                self.fouls[(side, kind)] += 1
            self._simspark_last[key] = t

    def _foul_of_kick(self, mode: str, t: float) -> None:
        """Count the foul a free kick came from when the stream did not report it (:data:`FOUL_KICKS`)."""
        kind, _, side = mode.rpartition('_')
        name = FOUL_KICKS.get(kind)
        if name is None or side not in ('left', 'right'):
            return
        against = 'right' if side == 'left' else 'left'
        if t - self._foul_at.get((against, name), -math.inf) > FOUL_SEEN_S:
            self.fouls[(against, name)] += 1
            self._foul_at[(against, name)] = t

    def tick(self, trainer: object) -> None:
        """Ask ``trainer`` for a full scene while an rcssserver3d tracker waits for one (at most once a second)."""
        if getattr(self.tracker, 'needs_full', False) and time.monotonic() > self._full_asked + 1.0:
            self._full_asked = time.monotonic()
            trainer.request_full_state()

    def _take_truth(self, raw: bytes) -> None:
        for ns, truth in read_truths([raw], self.state, self.tracker):
            t = ns / 1e9
            if truth.ball is not None:
                self.ball.append((t, *truth.ball))
            self._n += 1
            if self._n % ROBOT_EVERY == 0:
                for (team, unum), m in truth.robots.items():
                    self.robots.setdefault(f'{team}/p{unum}', []).append((t, *m[:3, 3], *matrix_quaternion(m)))
            s = self.state
            key = (s.play_mode, s.score_left, s.score_right, s.team_left, s.team_right, s.half)
            if key != self._game_key:
                self._game_key = key
                self.games.append((t, game_of(s)))

    def analysis(self) -> tuple[Analysis, MatchData] | None:
        """The match analysed, or None before any ground truth came."""
        if not self.ball and not self.robots:
            return None
        times = [r[0] for r in self.ball] + [r[0] for rows in self.robots.values() for r in rows]
        data = MatchData(Path('(live)'), min(times), max(times), field_for(self.server))
        data.ball = Series.of(self.ball, 3) if self.ball else None
        data.truth = {p: Series.of(rows, 7) for p, rows in self.robots.items()}
        data.games = list(self.games)
        last = self.games[-1][1] if self.games else {}
        data.sides = {t: side for t, side in ((last.get('team_left'), 'left'), (last.get('team_right'), 'right')) if t}
        return analyze(data), data


def summary_lines(a: Analysis, fouls: Counter | None = None) -> list[str]:
    """Goals (time, team, scorer), possession, kicks, shots, passes, set plays, fouls, falls per team."""
    names = {'left': a.team_left or 'left', 'right': a.team_right or 'right'}
    lines = []
    for g in a.goals:
        scoring = [k for k in a.kicks if k.t <= g.t and k.outcome in ('goal', 'own goal')]
        kick = max(scoring, key=lambda k: k.t, default=None)
        by = ''
        if kick is not None and kick.kicker:
            by = f' by {kick.kicker}' + (' (own goal)' if kick.outcome == 'own goal' else '')
        # the game clock as the play-mode lines have it (the stream's own time counts the set-up before the kick-off)
        when = f'{g.t - a.start:6.1f} s' if g.game_time is None else f'{g.game_time:6.1f} s of half {g.half or 1}'
        lines.append(f'goal: {when}  {names[g.team]}{by}  ({g.score_left}:{g.score_right})')
    share = a.possession_share
    if not any(math.isnan(v) for v in share.values()):
        lines.append(f'possession: {names["left"]} {share["left"]:.0%}, {names["right"]} {share["right"]:.0%}')
    for side in ('left', 'right'):
        mine = [k for k in a.kicks if k.team == side]
        shots = sum(k.shot for k in mine)
        passes = sum(k.outcome == 'teammate' for k in mine)
        players = [s for s in a.players.values() if s.side == side]
        falls = sum(len(s.falls) for s in players)
        ups = [f.getup_time for s in players for f in s.falls if f.getup_time is not None]
        up = f', get-up {sum(ups) / len(ups):.1f} s on average' if ups else ''
        foul = ''
        if fouls is not None:
            mine_f = {kind: n for (s, kind), n in fouls.items() if s == side}
            foul = ', fouls: ' + (', '.join(f'{n} {k}' for k, n in sorted(mine_f.items())) or 'none')
        lines.append(
            f'{names[side]}: {len(mine)} kicks, {shots} shots, {passes} passes to a teammate, {falls} falls{up}{foul}'
        )
    return lines
