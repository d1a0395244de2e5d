"""Where a recorded match's time goes between our kicks (offline, over bags of ``robocup3d match --record``).

Not a benchmark: a reader of recorded halves (``match_data.load_match``, ground truth), session 42's figures
([team_play](../docs/team_play.md)). Our team is the left one; its field players are p2 and up. Per half:

* every 0.5 s of play on, our field player nearest the ball: the time it was more than :data:`NEAR` m from the
  ball (the walk to it) and its speed then, and the time within;
* each kick of ours (``match_analysis.detect_kicks``; goals left out): where the ball came to rest (slower than
  :data:`REST_SPEED` m/s for 0.5 s, the next kick, or play stopping), how long it rolled and how far, our nearest
  field player then (and the nearest but the kicker), the time until one of ours was within :data:`TOUCH` m of it
  again and until our next kick; the kicker's reason (``strategy_state``) and target (``motion_request``), and who
  was walking to where it would stop (reason ``go where the kick will stop``): his aim, and how far he was from
  where it stopped as it was kicked and as it stopped;
* the walks to the ball of 4 s and more (``--walks``), and what came before each;
* player-seconds of play on per strategy reason.

    PYTHONPATH=. python bench/kick_gaps.py runs/h1 runs/h2 [--walks]
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np

from robocup3d_tools.match_analysis import analyze, interpolate
from robocup3d_tools.match_data import load_match

STEP = 0.5  # s between samples of the timeline
FINE = 0.1  # s between samples of the ball's roll
NEAR = 2.0  # m: our nearest player further than this walks to the ball
REST_SPEED = 0.15  # m/s: a ball slower than this for 0.5 s lies still
TOUCH = 0.5  # m: one of ours this near the ball (torso) touches it
FAR_KICK = 6.0  # m a kick's ball went to count among the far ones
GOING = 'go where the kick will stop'


def field_players(data, side: str = 'left') -> list[str]:
    return sorted(p for p in data.truth if data.side_of(p) == side and not p.endswith('/p1'))


def play_on(games: list, t: np.ndarray) -> np.ndarray:
    times = [gt for gt, _ in games]
    at = np.searchsorted(times, t, side='right') - 1
    return np.array([i >= 0 and games[i][1].get('play_mode') == 'PlayOn' for i in at])


def decisions(bag: Path) -> tuple[dict, dict]:
    """Per player ('Team/p3'): [(t, strategy_state)] and [(t, motion_request; None for a skill)]."""
    from rosbags.typesys import Stores, get_typestore  # noqa: PLC0415 - the [ros] extra

    from robocup3d_tools.replay import open_bag  # noqa: PLC0415

    store = get_typestore(Stores.ROS2_KILTED)
    reader = open_bag(bag)
    states: dict[str, list] = {}
    requests: dict[str, list] = {}
    try:
        conns = [c for c in reader.connections if c.topic.endswith(('/strategy_state', '/motion_request'))]
        for conn, t_ns, raw in reader.messages(connections=conns):
            text = store.deserialize_cdr(raw, conn.msgtype).data
            player = conn.topic.strip('/').rsplit('/', 1)[0]
            if conn.topic.endswith('/strategy_state'):
                states.setdefault(player, []).append((t_ns * 1e-9, json.loads(text)))
            else:
                requests.setdefault(player, []).append(
                    (t_ns * 1e-9, json.loads(text) if text.startswith('{') else None)
                )
    finally:
        reader.close()
    return states, requests


def last_before(rows: list, t: float):
    out = None
    for tt, v in rows:
        if tt > t:
            break
        out = v
    return out


def half(bag: Path) -> dict:
    data = load_match(bag)
    an = analyze(data)
    states, requests = decisions(bag)
    ours = field_players(data)
    ball_t, ball = data.ball.t, data.ball.v[:, :2]

    def timeline(step: float):
        t = np.arange(ball_t[0], ball_t[-1], step)
        b = interpolate(ball_t, ball, t)
        pos = {p: interpolate(data.truth[p].t, data.truth[p].v[:, :2], t) for p in ours}
        d = np.array([np.linalg.norm(pos[p] - b, axis=1) for p in ours])
        return t, b, pos, np.where(np.isnan(d), np.inf, d), play_on(data.games, t)

    t, b, pos, dist, on = timeline(STEP)
    near_i = np.argmin(dist, axis=0)
    near_d = dist[near_i, np.arange(len(t))]
    far = on & (near_d > NEAR) & np.isfinite(near_d)
    speed = [
        np.linalg.norm(pos[ours[near_i[k]]][k + 1] - pos[ours[near_i[k]]][k]) / STEP
        for k in np.nonzero(far)[0]
        if k + 1 < len(t) and near_i[k + 1] == near_i[k]
    ]
    speed = [v for v in speed if v < 2.5]  # not a beam
    ft, fb, fpos, fdist, fon = timeline(FINE)
    fv = np.r_[0.0, np.linalg.norm(np.diff(fb, axis=0), axis=1) / FINE]
    fnear = fdist.min(axis=0)
    kicks = [k for k in an.kicks if k.team == 'left']
    rows = []
    for k in kicks:
        if k.outcome in ('goal', 'own goal'):
            continue
        nxt = next((q.t for q in an.kicks if q.t > k.t + 0.5), ft[-1])
        i_end = min(int(np.searchsorted(ft, nxt)), len(ft) - 1)
        rest = next(
            (
                i
                for i in range(int(np.searchsorted(ft, k.t + 0.5)), i_end)
                if np.all(fv[i : i + 5] < REST_SPEED) or not fon[i]
            ),
            i_end,
        )
        kicker = k.kicker if k.kicker in ours else None
        at_rest = {p: float(fdist[ours.index(p), rest]) for p in ours}
        j = int(np.searchsorted(ft, k.t + 1.0))
        touch = next((ft[i] for i in range(j, len(ft)) if fnear[i] < TOUCH), None)
        next_ours = next((q.t for q in kicks if q.t > k.t + 0.5), None)
        req = last_before(requests.get(kicker, []), k.t) if kicker else None
        going = []
        for p in ours:
            st = last_before(states.get(p, []), k.t - 0.3)
            if st and st.get('reason') == GOING:
                rq = last_before(requests.get(p, []), k.t - 0.3)
                aim = (round(rq['x'], 1), round(rq['y'], 1)) if rq and 'x' in rq else None
                at_kick = float(np.linalg.norm(fpos[p][np.searchsorted(ft, k.t)] - fb[rest]))
                going.append((p.rsplit('/', 1)[-1], aim, round(at_kick, 1), round(at_rest[p], 1)))
        rows.append(
            {
                't': k.t - data.start,
                'kicker': k.kicker,
                'at': (k.x, k.y),
                'in_play': bool(fon[rest]),
                'outcome': k.outcome,
                'roll': ft[rest] - k.t,
                'rest': (float(fb[rest, 0]), float(fb[rest, 1])),
                'travel': float(np.hypot(fb[rest, 0] - k.x, fb[rest, 1] - k.y)),
                'nearest': min(at_rest.values()),
                'nearest_other': min((v for p, v in at_rest.items() if p != kicker), default=np.inf),
                'to_touch': None if touch is None else touch - k.t,
                'to_next_kick': None if next_ours is None else next_ours - k.t,
                'why': (last_before(states.get(kicker, []), k.t) or {}).get('reason') if kicker else None,
                'target': tuple(req['target']) if req and 'target' in req else None,
                'going': going,
            }
        )
    reasons: dict[str, float] = {}
    for p, rs in states.items():
        if data.side_of(p) != 'left':
            continue
        for (t0, a), (t1, _) in itertools.pairwise(rs):
            if a.get('phase') == 'play_on':
                reasons[str(a.get('reason'))] = reasons.get(str(a.get('reason')), 0.0) + (t1 - t0)
    walks = []
    i = 0
    while i < len(t):
        if not far[i]:
            i += 1
            continue
        j = i
        while j < len(t) and far[j]:
            j += 1
        if (j - i) * STEP >= 4.0:
            before = [q for q in an.kicks if q.t <= t[i] + 0.5]
            walks.append((t[i] - data.start, (j - i) * STEP, near_d[i], b[i], before[-1] if before else None))
        i = j
    return {
        'score': an.score,
        'play_on': float(on.sum() * STEP),
        'far': float(far.sum() * STEP),
        'far_speed': float(np.mean(speed)) if speed else float('nan'),
        'close': float((on & (near_d <= NEAR)).sum() * STEP),
        'kicks': len(kicks),
        'falls': sum(len(st.falls) for st in an.players.values() if st.side == 'left'),
        'walked': sum(an.players[p].distance for p in ours if p in an.players),
        'rows': rows,
        'reasons': reasons,
        'walks': walks,
        'start': data.start,
    }


def _f(v: float | None) -> str:
    return '    - ' if v is None else f'{v:6.1f}'


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('bags', nargs='+', type=Path)
    ap.add_argument('--walks', action='store_true', help='list the walks to the ball of 4 s and more')
    args = ap.parse_args()
    for bag in args.bags:
        h = half(bag)
        print(f'== {bag}: {h["score"][0]} : {h["score"][1]}; play on {h["play_on"]:.0f} s')
        print(
            f'   our nearest more than {NEAR:.0f} m from the ball {h["far"]:.0f} s (walking {h["far_speed"]:.2f} m/s), '
            f'within {h["close"]:.0f} s; {h["kicks"]} kicks, {h["falls"]} falls, '
            f'field players walked {h["walked"]:.0f} m'
        )
        print(
            '   t (s)  kicker        from          outcome   roll  went  rest          nearest  not-kicker'
            '   touch  next kick'
        )
        for r in h['rows']:
            print(
                f'   {r["t"]:5.1f}  {r["kicker"]!s:12s} ({r["at"][0]:5.1f},{r["at"][1]:5.1f})  '
                f'{r["outcome"] if r["in_play"] else "play off":9s} {r["roll"]:4.1f} {r["travel"]:5.1f}  '
                f'({r["rest"][0]:5.1f},{r["rest"][1]:5.1f})  {r["nearest"]:6.1f}  {r["nearest_other"]:9.1f}  '
                f'{_f(r["to_touch"])} {_f(r["to_next_kick"])}'
            )
            aim = '-' if r['target'] is None else f'({r["target"][0]:.1f},{r["target"][1]:.1f})'
            going = (
                f'; going there (player, aim, m from the rest at the kick, at the rest): {r["going"]}'
                if r['going']
                else ''
            )
            print(f'          {r["why"]} at {aim}{going}')
        far = [r for r in h['rows'] if r['travel'] > FAR_KICK and r['in_play']]
        if far:
            touches = [r['to_touch'] for r in far if r['to_touch'] is not None]
            print(
                f'   kicks that went more than {FAR_KICK:.0f} m and stayed in: {len(far)}; '
                f'our nearest at the rest median '
                f'{np.median([r["nearest"] for r in far]):.1f} m, the next touch after median '
                f'{np.median(touches) if touches else float("nan"):.1f} s'
            )
        if args.walks:
            for t0, dur, d0, where, kick in h['walks']:
                last = '-' if kick is None else f'{kick.t - h["start"]:.1f} {kick.kicker} {kick.outcome}'
                print(
                    f'   walk {t0:5.1f} s, {dur:4.1f} s from {d0:4.1f} m, '
                    f'ball ({where[0]:5.1f},{where[1]:5.1f}); last kick {last}'
                )
        top = sorted(h['reasons'].items(), key=lambda kv: -kv[1])
        print('   player-seconds of play on by reason:', ', '.join(f'{k} {v:.0f}' for k, v in top))


if __name__ == '__main__':
    main()
