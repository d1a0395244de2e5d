"""What happened in a match, from arrays: possession, goals, kicks, falls, speeds, localization error, load.

Pure functions over numpy arrays and plain dicts (no ROS, no file access): :mod:`robocup3d_tools.match_data`
reads a bag into a :class:`~robocup3d_tools.match_data.MatchData`, :func:`analyze` turns it into an
:class:`Analysis`, :mod:`robocup3d_tools.report` draws it. Times are seconds of server time, positions
metres in the world frame (field centre, +x towards the right goal).
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    'Analysis',
    'Fall',
    'Goal',
    'Kick',
    'LooseBall',
    'PlayerStats',
    'analyze',
    'detect_falls',
    'detect_kicks',
    'goals_from_games',
    'interpolate',
    'localization_error',
    'loose_balls',
    'mark_contact',
    'possession',
    'speeds',
    'walking_speed',
]


@dataclass(frozen=True)
class Goal:
    """A change of score: ``team`` is 'left' or 'right'."""

    t: float
    team: str
    score_left: int
    score_right: int
    game_time: float | None = None  # the game clock then (s), as the server counts it
    half: int | None = None


@dataclass(frozen=True)
class Kick:
    """A jump of the ball's speed, who was nearest and what came of it."""

    t: float
    x: float
    y: float
    speed: float  # m/s just after the jump
    kicker: str | None  # player id ('Team/p3'), None: nobody within reach
    team: str | None  # the kicker's side: 'left' / 'right'
    shot: bool  # heading into the goal mouth the kicker attacks
    outcome: str  # 'goal', 'own goal', 'out', 'teammate', 'opponent', 'loose'


@dataclass(frozen=True)
class LooseBall:
    """A ball lying still in play at one side's feet (a player within ``near`` m, none of the other side as near):
    how long until it moved, and whose player was nearest it then (the one that played it, most likely)."""

    t: float  # when it lay there
    side: str  # 'left' / 'right': whose ball it was to play
    waited: float  # s until it moved
    first: str  # the side nearest it as it moved


@dataclass(frozen=True)
class Fall:
    """A fall seen in the torso height: when it went down, when it was up again (None: never), and whether an
    opponent was within :data:`CONTACT_RADIUS` as it began (None: not known; :func:`mark_contact`)."""

    t: float
    t_up: float | None
    contact: bool | None = None

    @property
    def getup_time(self) -> float | None:
        """Seconds from the fall to standing again."""
        return None if self.t_up is None else self.t_up - self.t


@dataclass
class PlayerStats:
    """One player's figures."""

    player: str
    team: str
    side: str | None
    falls: list[Fall] = field(default_factory=list)
    motion_falls: int | None = None  # falls its motion_state reported (None: not recorded)
    mean_speed: float = float('nan')  # m/s while walking
    max_speed: float = float('nan')  # m/s, over 1 s windows
    distance: float = 0.0  # m walked
    loc_error: tuple[np.ndarray, np.ndarray] | None = None  # (t, m) of its pose against the truth
    cpu: tuple[np.ndarray, np.ndarray] | None = None  # (t, fraction of a core)
    latency: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # (t, p50 ms, p99 ms)

    @property
    def loc_error_median(self) -> float:
        """Median localization error (m), nan without one."""
        return (
            float(np.median(self.loc_error[1]))
            if self.loc_error is not None and len(self.loc_error[1])
            else float('nan')
        )


@dataclass
class Analysis:
    """Everything the report shows."""

    start: float
    end: float
    team_left: str | None
    team_right: str | None
    score: tuple[int, int]
    goals: list[Goal]
    score_t: np.ndarray  # times of the score steps
    score_lr: np.ndarray  # (n, 2) score after each step
    possession_t: np.ndarray
    possession_side: np.ndarray  # 'left' / 'right' / '' per time
    possession_share: dict[str, float]
    kicks: list[Kick]
    players: dict[str, PlayerStats]
    loose: list[LooseBall] = field(default_factory=list)  # balls at one side's feet (:func:`loose_balls`)


def interpolate(t: np.ndarray, values: np.ndarray, at: np.ndarray, max_gap: float = 0.25) -> np.ndarray:
    """``values`` (n, k) sampled at ``t`` linearly interpolated at ``at``; nan outside or across gaps > max_gap."""
    values = np.asarray(values, dtype=float)
    out = np.full((len(at), values.shape[1] if values.ndim == 2 else 1), np.nan)
    if len(t) < 2:  # none or one sample (an empty track included)
        return out
    values = values.reshape(len(t), -1)
    for k in range(values.shape[1]):
        out[:, k] = np.interp(at, t, values[:, k])
    i = np.clip(np.searchsorted(t, at), 1, len(t) - 1)
    bad = (at < t[0]) | (at > t[-1]) | (t[i] - t[i - 1] > max_gap)
    out[bad] = np.nan
    return out


def speeds(t: np.ndarray, xyz: np.ndarray) -> np.ndarray:
    """Speed (m/s) between consecutive samples, one per sample after the first."""
    dt = np.diff(t)
    d = np.linalg.norm(np.diff(np.asarray(xyz, dtype=float), axis=0), axis=1)
    with np.errstate(divide='ignore', invalid='ignore'):
        return np.where(dt > 0, d / np.where(dt > 0, dt, 1.0), 0.0)


def goals_from_games(games: list[tuple[float, dict]]) -> tuple[list[Goal], np.ndarray, np.ndarray]:
    """Goals (score increases) from the game states, and the score as a step series (t, (n, 2))."""
    goals: list[Goal] = []
    ts, scores = [], []
    last = (0, 0)
    for t, g in games:
        left, right = int(g.get('score_left') or 0), int(g.get('score_right') or 0)
        clock = (g.get('game_time'), g.get('half'))
        if not ts:
            ts.append(t)
            scores.append((left, right))
        elif (left, right) != last:
            for _ in range(max(0, left - last[0])):
                goals.append(Goal(t, 'left', left, right, *clock))
            for _ in range(max(0, right - last[1])):
                goals.append(Goal(t, 'right', left, right, *clock))
            ts.append(t)
            scores.append((left, right))
        last = (left, right)
    return goals, np.array(ts, dtype=float), np.array(scores, dtype=int).reshape(-1, 2)


def possession(
    ball_t: np.ndarray,
    ball_xy: np.ndarray,
    players: dict[str, tuple[np.ndarray, np.ndarray]],
    sides: dict[str, str],
    reach: float = 2.0,
) -> np.ndarray:
    """At each ball time, the side ('left' / 'right') of the player nearest the ball ('': none within ``reach`` m).

    ``players``: id -> (t, (n, 2+) positions); ``sides``: id -> side.
    """
    out = np.full(len(ball_t), '', dtype=object)
    if not players or len(ball_t) == 0:
        return out
    ids = [p for p in players if sides.get(p)]
    if not ids:
        return out
    dist = np.full((len(ids), len(ball_t)), np.inf)
    for i, p in enumerate(ids):
        t, xy = players[p]
        at = interpolate(t, np.asarray(xy, dtype=float)[:, :2], ball_t)
        d = np.linalg.norm(at - np.asarray(ball_xy, dtype=float)[:, :2], axis=1)
        dist[i] = np.where(np.isnan(d), np.inf, d)
    best = np.argmin(dist, axis=0)
    near = dist[best, np.arange(len(ball_t))] <= reach
    side_of = np.array([sides[p] for p in ids], dtype=object)
    out[near] = side_of[best[near]]
    return out


def loose_balls(
    ball_t: np.ndarray,
    ball_xy: np.ndarray,
    players: dict[str, tuple[np.ndarray, np.ndarray]],
    sides: dict[str, str],
    games: list[tuple[float, dict]],
    near: float = 1.0,
    still: float = 0.1,
    step: float = 0.1,
) -> list[LooseBall]:
    """The balls that lay still (slower than ``still`` m/s) in play on with one side's player within ``near`` m and
    none of the other side's (see :class:`LooseBall`); sampled every ``step`` s. A team that is quick on the ball
    plays it in a second or two; against UT Austin Villa our Nao took 6-16 s, and lost most of them."""
    if len(ball_t) < 2 or not players:
        return []
    t = np.arange(ball_t[0], ball_t[-1], step)
    b = interpolate(ball_t, np.asarray(ball_xy, dtype=float)[:, :2], t)
    speed = np.r_[0.0, np.linalg.norm(np.diff(b, axis=0), axis=1) / step]
    nearest = {side: np.full(len(t), np.inf) for side in ('left', 'right')}  # m from the ball, that side's nearest
    for p, (pt, xy) in players.items():
        side = sides.get(p)
        if side in nearest:
            d = np.linalg.norm(interpolate(pt, np.asarray(xy, dtype=float)[:, :2], t) - b, axis=1)
            nearest[side] = np.fmin(nearest[side], d)  # a gap in a track (nan) leaves the others'
    modes = [(gt, g.get('play_mode')) for gt, g in games]
    at = np.searchsorted([gt for gt, _ in modes], t, side='right') - 1
    play_on = np.array([i >= 0 and modes[i][1] == 'PlayOn' for i in at])
    out, i = [], 0
    while i < len(t):
        mine = [s for s in ('left', 'right') if nearest[s][i] < near <= nearest['right' if s == 'left' else 'left'][i]]
        if not (mine and play_on[i] and speed[i] < still):
            i += 1
            continue
        j = i
        while j < len(t) and speed[j] < 1.5 * still and play_on[j]:
            j += 1
        if j == len(t) or not play_on[j]:  # still when the match or the play ended: nobody played it
            i = j + 1
            continue
        first = 'left' if nearest['left'][j] <= nearest['right'][j] else 'right'
        out.append(LooseBall(float(t[i]), mine[0], float(t[j] - t[i]), first))
        i = j + 1
    return out


def _nearest_player(
    t: float, x: float, y: float, players: dict[str, tuple[np.ndarray, np.ndarray]], reach: float
) -> str | None:
    best, best_d = None, reach
    for p, (pt, pxy) in players.items():
        at = interpolate(pt, np.asarray(pxy, dtype=float)[:, :2], np.array([t]))[0]
        if np.isnan(at[0]):
            continue
        d = float(np.hypot(at[0] - x, at[1] - y))
        if d <= best_d:
            best, best_d = p, d
    return best


def detect_kicks(
    ball_t: np.ndarray,
    ball_xyz: np.ndarray,
    players: dict[str, tuple[np.ndarray, np.ndarray]],
    sides: dict[str, str],
    half_length: float,
    half_width: float,
    goal_half_width: float,
    jump: float = 1.0,
    reach: float = 1.0,
    settle: float = 0.5,
    placed: float = 40.0,
) -> list[Kick]:
    """Kicks: the ball's speed rises by more than ``jump`` m/s from one sample to the next.

    The kicker is the nearest player within ``reach`` m; a shot heads into the goal mouth its team
    attacks (the left team attacks +x). The outcome follows the ball until the next kick: a goal
    (ball past a goal line between the posts), out (past a line elsewhere), a teammate's or an
    opponent's next touch, or loose. Jumps within ``settle`` s of a kick belong to it. A ball faster
    than ``placed`` m/s was put there (a referee's or trainer's placement), not kicked.
    """
    t = np.asarray(ball_t, dtype=float)
    xyz = np.asarray(ball_xyz, dtype=float)
    if len(t) < 3:
        return []
    v = speeds(t, xyz)
    starts = []
    for i in range(1, len(v)):
        if v[i] - v[i - 1] > jump and v[i] < placed and (not starts or t[i] - t[starts[-1]] > settle):
            starts.append(i)
    raw = []
    for i in starts:
        x, y = xyz[i, 0], xyz[i, 1]
        kicker = _nearest_player(t[i], x, y, players, reach)
        side = sides.get(kicker) if kicker else None
        j = min(i + 2, len(t) - 1)  # direction over the next samples
        dx, dy = xyz[j, 0] - x, xyz[j, 1] - y
        shot = False
        if side and abs(dx) > 1e-6:
            goal_x = half_length if side == 'left' else -half_length
            if np.sign(goal_x - x) == np.sign(dx):
                y_at = y + dy * (goal_x - x) / dx
                shot = abs(y_at) <= goal_half_width
        raw.append((i, float(t[i]), float(x), float(y), float(v[i]), kicker, side, shot))
    kicks = []
    for n, (i, ti, x, y, speed, kicker, side, shot) in enumerate(raw):
        end = raw[n + 1][0] if n + 1 < len(raw) else len(t)
        outcome = 'loose'
        seg = xyz[i:end]
        past = np.nonzero(np.abs(seg[:, 0]) > half_length)[0]
        wide = np.nonzero(np.abs(seg[:, 1]) > half_width)[0]
        if len(past) and (not len(wide) or past[0] <= wide[0]):
            k = past[0]
            if abs(seg[k, 1]) <= goal_half_width:
                scored_by = 'left' if seg[k, 0] > 0 else 'right'
                outcome = 'goal' if side in (None, scored_by) else 'own goal'
            else:
                outcome = 'out'
        elif len(wide):
            outcome = 'out'
        elif n + 1 < len(raw) and raw[n + 1][6] is not None and side is not None:
            outcome = 'teammate' if raw[n + 1][6] == side else 'opponent'
        kicks.append(Kick(ti, x, y, speed, kicker, side, shot, outcome))
    return kicks


def detect_falls(t: np.ndarray, z: np.ndarray, down: float = 0.5, up: float = 0.85) -> list[Fall]:
    """Falls from the torso height: below ``down`` x the standing height, up again above ``up`` x it.

    The standing height is the 90th percentile of ``z`` (the robot stands most of a match).
    """
    t = np.asarray(t, dtype=float)
    z = np.asarray(z, dtype=float)
    if len(z) < 2:
        return []
    stand = float(np.percentile(z, 90))
    falls: list[Fall] = []
    fallen_at = None
    for ti, zi in zip(t, z, strict=True):
        if fallen_at is None and zi < down * stand:
            fallen_at = float(ti)
        elif fallen_at is not None and zi > up * stand:
            falls.append(Fall(fallen_at, float(ti)))
            fallen_at = None
    if fallen_at is not None:
        falls.append(Fall(fallen_at, None))
    return falls


CONTACT_RADIUS = 0.8  # m: an opponent this near a robot as its fall began makes it a fall in contact
CONTACT_LOOKBACK = 0.6  # s before the torso is seen low (a fall takes that long to bring it down)
CONTACT_GAP = 1.0  # s: positions sampled further apart than this are not known in between (sync-mode monitors)


def mark_contact(
    falls: list[Fall],
    own: tuple[np.ndarray, np.ndarray],
    opponents: list[tuple[np.ndarray, np.ndarray]],
    radius: float = CONTACT_RADIUS,
    lookback: float = CONTACT_LOOKBACK,
) -> list[Fall]:
    """``falls`` with ``contact`` set: an opponent within ``radius`` m of the robot ``lookback`` s before each fall
    (``own`` and each of ``opponents``: times and ground positions). None where the robot's place is not known."""
    out = []
    for fall in falls:
        when = np.array([fall.t - lookback])
        me = interpolate(*own, when, CONTACT_GAP)[0]
        if np.isnan(me).any():
            out.append(fall)
            continue
        near = [interpolate(t, xy, when, CONTACT_GAP)[0] for t, xy in opponents]
        contact = any(float(np.hypot(*(p - me))) < radius for p in near if not np.isnan(p).any())
        out.append(dataclasses.replace(fall, contact=contact))
    return out


def walking_speed(
    t: np.ndarray, xy: np.ndarray, window: float = 1.0, moving: float = 0.05, beam: float = 2.5
) -> tuple[float, float, float]:
    """(mean speed while moving, max speed, distance) over ``window``-second steps of the ground track.

    Steps faster than ``beam`` m/s are the server moving the robot (beam, kick-off placement): left out.
    """
    t = np.asarray(t, dtype=float)
    if len(t) < 2 or t[-1] - t[0] < window:
        return float('nan'), float('nan'), 0.0
    grid = np.arange(t[0], t[-1], window)
    at = interpolate(t, np.asarray(xy, dtype=float)[:, :2], grid, max_gap=window)
    step = np.linalg.norm(np.diff(at, axis=0), axis=1) / window
    step = step[~np.isnan(step) & (step <= beam)]
    if not len(step):
        return float('nan'), float('nan'), 0.0
    walking = step[step > moving]
    return (
        float(walking.mean()) if len(walking) else 0.0,
        float(step.max()),
        float(step.sum() * window),
    )


def localization_error(
    truth_t: np.ndarray, truth_xy: np.ndarray, belief_t: np.ndarray, belief_xy: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(t, m): the distance of each believed position from the true one at the same time."""
    belief_t = np.asarray(belief_t, dtype=float)
    at = interpolate(truth_t, np.asarray(truth_xy, dtype=float)[:, :2], belief_t)
    err = np.linalg.norm(at - np.asarray(belief_xy, dtype=float)[:, :2], axis=1)
    ok = ~np.isnan(err)
    return belief_t[ok], err[ok]


def _cpu(diag: list[tuple[float, dict]]) -> tuple[np.ndarray, np.ndarray] | None:
    """CPU (fraction of one core) between consecutive reports of ``process_cpu_s`` over their wall stamps."""
    rows = [(t, float(d['wall']), float(d['process_cpu_s'])) for t, d in diag if 'process_cpu_s' in d and 'wall' in d]
    if len(rows) < 2:
        return None
    a = np.array(rows)
    dw, dc = np.diff(a[:, 1]), np.diff(a[:, 2])
    ok = dw > 0
    return a[1:, 0][ok], dc[ok] / dw[ok]


def _latency(diag: list[tuple[float, dict]]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    rows = [
        (t, float(d['latency_p50_ms']), float(d.get('latency_p99_ms', 'nan'))) for t, d in diag if 'latency_p50_ms' in d
    ]
    if not rows:
        return None
    a = np.array(rows)
    return a[:, 0], a[:, 1], a[:, 2]


def analyze(data: object, reach: float = 2.0) -> Analysis:
    """The whole analysis of a :class:`~robocup3d_tools.match_data.MatchData`."""
    f = data.field
    goals, score_t, score_lr = goals_from_games(data.games)
    last = data.games[-1][1] if data.games else {}
    truth_xy = {p: (s.t, s.v[:, :2]) for p, s in data.truth.items()}
    sides = {p: data.side_of(p) for p in set(data.truth) | set(data.beliefs) | set(data.motion) | set(data.diagnostics)}
    ball_t, ball_v = (data.ball.t, data.ball.v) if data.ball is not None else (np.zeros(0), np.zeros((0, 3)))
    pos = possession(ball_t, ball_v, truth_xy, sides, reach)
    share = {}
    held = pos[pos != '']
    for side in ('left', 'right'):
        share[side] = float(np.mean(held == side)) if len(held) else float('nan')
    kicks = detect_kicks(ball_t, ball_v, truth_xy, sides, f.half_length, f.half_width, f.goal_width / 2)
    players: dict[str, PlayerStats] = {}
    for p in sorted(sides):
        st = PlayerStats(p, p.split('/')[0], sides[p])
        truth = data.truth.get(p)
        if truth is not None:
            st.falls = detect_falls(truth.t, truth.v[:, 2])
            st.mean_speed, st.max_speed, st.distance = walking_speed(truth.t, truth.v[:, :2])
            belief = data.beliefs.get(p)
            if belief is not None:
                st.loc_error = localization_error(truth.t, truth.v[:, :2], belief.t, belief.v[:, :2])
        states = data.motion.get(p)
        if states:
            st.motion_falls = sum(
                1 for (_, a), (_, b) in itertools.pairwise(states) if b.get('fallen') and not a.get('fallen')
            ) + (1 if states[0][1].get('fallen') else 0)
        diag = data.diagnostics.get(p, [])
        st.cpu, st.latency = _cpu(diag), _latency(diag)
        players[p] = st
    for p, st in players.items():  # falls in contact with an opponent
        if p in truth_xy and st.side is not None:
            others = [truth_xy[q] for q in truth_xy if sides.get(q) not in (None, st.side)]
            st.falls = mark_contact(st.falls, truth_xy[p], others)
    return Analysis(
        start=data.start,
        end=data.end,
        team_left=last.get('team_left'),
        team_right=last.get('team_right'),
        score=(int(last.get('score_left') or 0), int(last.get('score_right') or 0)),
        goals=goals,
        score_t=score_t,
        score_lr=score_lr,
        possession_t=np.asarray(ball_t, dtype=float),
        possession_side=pos,
        possession_share=share,
        loose=loose_balls(ball_t, ball_v, truth_xy, sides, data.games),
        kicks=kicks,
        players=players,
    )
