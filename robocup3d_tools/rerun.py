"""``robocup3d replay BAG --rerun world-model``: our world model again on a bag's recorded percepts.

For every player whose ``raw/percept`` (each server message as it came) the bag holds, the messages go
through the bridge's own parser and sanitizer and the world-model core, in their recorded order, with
the walk's velocity from the player's recorded ``odom``, heard team talk and the game state taken
where the player's node takes them (after the cycle they came with). No ROS: the bag is read with
``rosbags`` and the core runs as fast as it can. The estimates are scored against the recorded ground
truth, side by side with the estimates the player published live (``pose``, ``ball``): the regression
tool for localization and tracking.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robocup3d_tools.match_analysis import interpolate
from robocup3d_tools.replay import BagError, _why, open_bag

__all__ = ['MissingInputs', 'PlayerRun', 'compare', 'rerun_bag', 'rerun_main', 'stats', 'table']

_RAW = re.compile(r'^/(?P<team>[^/]+)/p(?P<unum>\d+)/(?P<rest>raw/percept|odom|robot_description)$')
MAX_TRUTH_GAP = 0.1  # s: the truth is interpolated to an estimate's time, not across longer gaps


class MissingInputs(Exception):
    """The bag lacks what a rerun needs; the message names what is missing."""


@dataclass
class PlayerRun:
    """One player's estimates (world frame) from the rerun: per cycle ``t``, ``pose`` (x, y, yaw) and,
    on cycles whose ``See`` held the ball, ``ball_t`` and ``ball`` (x, y)."""

    player: str
    robot: str
    t: list[float] = field(default_factory=list)
    pose: list[tuple[float, float, float]] = field(default_factory=list)
    ball_t: list[float] = field(default_factory=list)
    ball: list[tuple[float, float]] = field(default_factory=list)
    odometry: bool = True  # the bag had the walk's odom for this player


def _stamp_ns(t: float) -> int:
    """Nanoseconds of a stamp made from ``t`` as the nodes make it (``stamp_from_seconds``)."""
    sec = math.floor(t)
    return int(sec) * 1_000_000_000 + round((t - sec) * 1e9) % 1_000_000_000


def _robot_of(joints: set[str], server: str, urdf: str | None) -> str:
    """The player's robot: as its recorded ``robot_description`` names it, else from its joints
    (:func:`~robocup3d_description.guess.guess_robot`; RCSSServerMJ's percepts carry joint velocities),
    else the server's default robot (T1, or a Nao built as type 0)."""
    from robocup3d_description.guess import guess_robot  # noqa: PLC0415

    guess = guess_robot(joints, velocities=server == 'mujoco', urdf=urdf)
    if guess is not None:
        return guess.name
    return 'nao0' if server == 'simspark' else 'T1'


class _Player:
    """One player's world model fed as its node fed it in the player's process (``WorldModelNode.step_percept``,
    ``local``): the same :class:`~robocup3d_perception.feed.WorldModelFeed`, without ROS."""

    def __init__(self, team: str, unum: int, robot: str, server: str, rules: str, secret: str) -> None:
        from robocup3d_bridge.percept import Dialect  # noqa: PLC0415
        from robocup3d_bridge.protocol import make_protocol  # noqa: PLC0415
        from robocup3d_bridge.sanitize import PerceptSanitizer  # noqa: PLC0415
        from robocup3d_description.body import body_for  # noqa: PLC0415
        from robocup3d_description.robots import robot_spec  # noqa: PLC0415
        from robocup3d_perception.feed import WorldModelFeed  # noqa: PLC0415
        from robocup3d_perception.field import field_for  # noqa: PLC0415
        from robocup3d_perception.world_model import WorldModel, WorldModelParameters  # noqa: PLC0415

        nao = robot.startswith('nao')
        spec = robot_spec(server, 'nao', int(robot[3:])) if nao else robot_spec(server, robot)
        self.dialect = Dialect.SIMSPARK if server == 'simspark' else Dialect.MUJOCO
        self.protocol = make_protocol(spec, team, unum)  # the side, from the game state, as the bridge learns it
        self.sanitizer = PerceptSanitizer(spec.joint_names)
        # as the world model node makes it (its parameters' defaults: seed 0)
        model = WorldModel(
            body_for(robot), field_for(server, rules), use_lines=server == 'simspark', params=WorldModelParameters()
        )
        self.feed = WorldModelFeed(model, team, unum, secret=secret)

    def step(self, text: str, odom: dict[int, tuple[float, float, float]]) -> tuple[object, object] | None:
        """One recorded server message: the percept and the new world state (None: no cycle)."""
        from robocup3d_bridge.perception import PerceptParseError, parse_percept  # noqa: PLC0415

        try:
            p = parse_percept(text, self.dialect)
        except PerceptParseError:
            return None
        self.sanitizer.clean(p)
        self.protocol.observe(p)
        feed = self.feed
        state = None
        if p.time is not None:
            walk = odom.get(_stamp_ns(p.time))
            if walk is not None:  # the walk's velocity the motion node had this cycle
                feed.on_walk(p.time, *walk)
            state, _ = feed.update(feed.percept_input(p))
        # what the node takes from the bridge's topics after the cycle: the game state, then what was heard
        if p.game is not None:
            feed.on_game({'side': self.protocol.side.value, 'team': feed.team, 'play_mode': p.game.play_mode})
        for h in p.hear:
            feed.on_hear({'team': h.team, 'time': h.time, 'direction': h.direction, 'self': h.is_self, 'text': h.text})
        return (p, state) if state is not None else None


def _read_inputs(
    bag: Path,
) -> tuple[dict[str, list[str]], dict[str, dict[int, tuple[float, float, float]]], dict[str, str]]:
    """Each player's recorded server messages (in order), walk velocities (by stamp, ns) and
    ``robot_description`` (its URDF text)."""
    from rosbags.typesys import Stores, get_typestore  # noqa: PLC0415

    store = get_typestore(Stores.ROS2_KILTED)
    reader = open_bag(bag)
    texts: dict[str, list[str]] = {}
    odom: dict[str, dict[int, tuple[float, float, float]]] = {}
    urdfs: dict[str, str] = {}
    try:
        conns = [c for c in reader.connections if _RAW.match(c.topic)]
        try:
            for conn, _, raw in reader.messages(connections=conns):
                m = _RAW.match(conn.topic)
                player = f'{m["team"]}/p{m["unum"]}'
                msg = store.deserialize_cdr(raw, conn.msgtype)
                if m['rest'] == 'odom':
                    s, v, w = msg.header.stamp, msg.twist.twist.linear, msg.twist.twist.angular
                    odom.setdefault(player, {})[s.sec * 1_000_000_000 + s.nanosec] = (v.x, v.y, w.z)
                elif m['rest'] == 'robot_description':
                    urdfs[player] = msg.data
                else:
                    texts.setdefault(player, []).append(msg.data)
        except Exception as exc:  # noqa: BLE001 - rosbags raises many kinds for a bad chunk
            raise BagError(f'{reader.bag_name}: corrupted or truncated data ({_why(exc)})') from None
    finally:
        reader.close()
    return texts, odom, urdfs


def rerun_bag(bag: Path, rules: str = 'ssim', secret: str = '') -> tuple[dict[str, PlayerRun], object]:
    """Run the world model on every player's recorded percepts; also returns the bag's
    :class:`~robocup3d_tools.match_data.MatchData` (truth, live estimates).

    Raises:
        BagError: the bag cannot be read.
        MissingInputs: no player has both recorded percepts and ground truth.
    """
    from robocup3d_tools.match_data import load_match  # noqa: PLC0415

    data = load_match(bag, rules=rules)  # the server as the bag's /truth/game names it
    server = 'simspark' if data.field.name.startswith('simspark') else 'mujoco'
    texts, odom, urdfs = _read_inputs(bag)
    if not texts:
        raise MissingInputs(
            'no /<team>/p<unum>/raw/percept topics (the server messages the rerun needs): record with '
            'robocup3d match --record or team --record, whose players publish them (not with --no-raw)'
        )
    mujoco = server == 'mujoco'
    other = sorted(p for p, msgs in texts.items() if any('(n q_' in m for m in msgs[:20]) != mujoco)
    if other:  # rcssserver3d names its joints hj1, ... (RCSSServerMJ: q_hj1, ...)
        raise MissingInputs(
            f'the percepts of {", ".join(other)} are not {"RCSSServerMJ" if mujoco else "rcssserver3d"} messages, '
            f"but the bag's ground truth is: one server's field and robots per rerun"
        )
    players = sorted(p for p in texts if p in data.truth)
    if not players:
        raise MissingInputs(
            'no ground truth /truth/<team>/p<unum>/pose for the players with raw/percept '
            f"({', '.join(sorted(texts))}): record with the server's monitor port (--monitor-port)"
        )
    runs = {}
    for player in players:
        runs[player] = _rerun_player(player, texts[player], odom.get(player), server, urdfs.get(player), rules, secret)
    return runs, data


def _rerun_player(
    player: str,
    texts: list[str],
    odom: dict[int, tuple[float, float, float]] | None,
    server: str,
    urdf: str | None,
    rules: str,
    secret: str,
) -> PlayerRun:
    from robocup3d_bridge.percept import Dialect  # noqa: PLC0415
    from robocup3d_bridge.perception import PerceptParseError, parse_percept  # noqa: PLC0415

    team, unum = player.rsplit('/p', 1)
    dialect = Dialect.SIMSPARK if server == 'simspark' else Dialect.MUJOCO
    joints: set[str] = set()
    for text in texts[:50]:
        try:
            joints |= set(parse_percept(text, dialect).joint_positions)
        except PerceptParseError:
            continue
    robot = _robot_of(joints, server, urdf)
    sim = _Player(team, int(unum), robot, server, rules, secret)
    out = PlayerRun(player, robot, odometry=odom is not None)
    for text in texts:
        done = sim.step(text, odom or {})
        if done is None:
            continue
        p, state = done
        pose = state.pose
        out.t.append(state.time)
        out.pose.append((pose.x, pose.y, pose.yaw))
        if p.vision is not None and p.vision.ball is not None and state.ball.valid:
            out.ball_t.append(state.time)
            out.ball.append((float(state.ball.position[0]), float(state.ball.position[1])))
    return out


def _quat_yaw(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    return np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def _summary(values: np.ndarray) -> dict[str, float] | None:
    if len(values) == 0:
        return None
    return {
        'mean': float(np.mean(values)),
        'p50': float(np.percentile(values, 50)),
        'p90': float(np.percentile(values, 90)),
    }


def stats(
    truth: object, ball: object, t: np.ndarray, pose: np.ndarray, ball_t: np.ndarray, ball_xy: np.ndarray
) -> dict:
    """Errors of estimates against the truth: position (m) and heading (deg) of the poses at times ``t``,
    the ball (m) at ``ball_t``; each as mean, p50, p90 (``None`` without samples), and the sample counts."""
    t, pose = np.asarray(t, float), np.asarray(pose, float).reshape(-1, 3)
    at = interpolate(truth.t, truth.v[:, :2], t, MAX_TRUTH_GAP)
    yaw = interpolate(truth.t, np.unwrap(_quat_yaw(truth.v[:, 3:7])), t, MAX_TRUTH_GAP)[:, 0]
    ok = ~np.isnan(yaw)
    pos_err = np.linalg.norm(pose[ok, :2] - at[ok], axis=1)
    yaw_err = np.degrees(np.abs((pose[ok, 2] - yaw[ok] + math.pi) % (2 * math.pi) - math.pi))
    out = {'samples': int(ok.sum()), 'position_m': _summary(pos_err), 'heading_deg': _summary(yaw_err)}
    ball_err = np.zeros(0)
    if ball is not None and len(ball_t):
        b_at = interpolate(ball.t, ball.v[:, :2], np.asarray(ball_t, float), MAX_TRUTH_GAP)
        b_ok = ~np.isnan(b_at[:, 0])
        ball_err = np.linalg.norm(np.asarray(ball_xy, float).reshape(-1, 2)[b_ok] - b_at[b_ok], axis=1)
    out['ball_samples'] = len(ball_err)
    out['ball_m'] = _summary(ball_err)
    return out


def compare(runs: dict[str, PlayerRun], data: object) -> dict[str, dict]:
    """Per player: the rerun's and the live estimates' errors (:func:`stats`) on the same cycles: those with
    both a live estimate and a percept in the bag (the recorder may have subscribed to ``pose`` later than to
    ``raw/percept``, and may miss one at the end); all the rerun's cycles for a player without live estimates."""
    out = {}
    for player, run in runs.items():
        truth = data.truth[player]
        row = {'robot': run.robot, 'side': data.side_of(player), 'odometry': run.odometry, 'cycles': len(run.t)}
        live = data.beliefs.get(player)
        if live is None:
            row['rerun'] = stats(truth, data.ball, run.t, run.pose, run.ball_t, run.ball)
            row['live'] = row['same_as_live'] = None
            out[player] = row
            continue
        live_t = {_stamp_ns(t) for t in live.t}
        pick = [i for i, t in enumerate(run.t) if _stamp_ns(t) in live_t]
        # and the live estimates of those cycles only: a cycle's pose may be in the bag without its percept
        # (the recorder stopped between them, or dropped one under load)
        run_t = {_stamp_ns(run.t[i]) for i in pick}
        live_pick = [i for i, t in enumerate(live.t) if _stamp_ns(t) in run_t]
        seen = {_stamp_ns(t) for t in run.ball_t}  # the cycles whose See held the ball
        lb = data.belief_ball.get(player)
        keep = [i for i, t in enumerate(lb.t) if _stamp_ns(t) in seen] if lb is not None else []
        bt = lb.t[keep] if keep else np.zeros(0)
        bxy = lb.v[keep, :2] if keep else np.zeros((0, 2))
        both = {_stamp_ns(t) for t in bt}
        ball_pick = [i for i, t in enumerate(run.ball_t) if _stamp_ns(t) in both]
        row['rerun'] = stats(
            truth,
            data.ball,
            [run.t[i] for i in pick],
            [run.pose[i] for i in pick],
            [run.ball_t[i] for i in ball_pick],
            [run.ball[i] for i in ball_pick],
        )
        row['live'] = stats(truth, data.ball, live.t[live_pick], live.v[live_pick], bt, bxy)
        row['same_as_live'] = _same_share(run, live)
        out[player] = row
    return out


def _same_share(run: PlayerRun, live: object) -> float:
    """The share of the live poses that the rerun's pose of the same cycle equals (within 1 mm and 0.001 rad)."""
    mine = {_stamp_ns(t): pose for t, pose in zip(run.t, run.pose, strict=True)}
    same = 0
    for t, (x, y, yaw) in zip(live.t, live.v, strict=True):
        p = mine.get(_stamp_ns(t))
        d_yaw = abs((p[2] - yaw + math.pi) % (2 * math.pi) - math.pi) if p is not None else 1.0
        same += p is not None and math.hypot(p[0] - x, p[1] - y) < 1e-3 and d_yaw < 1e-3
    return same / len(live.t) if len(live.t) else 0.0


def _cells(s: dict | None) -> list[str]:
    if s is None:
        return ['-'] * 11
    cells = [str(s['samples'])]
    for key, fmt in (('position_m', '{:.3f}'), ('heading_deg', '{:.1f}')):
        v = s[key]
        cells += [fmt.format(v[k]) for k in ('mean', 'p50', 'p90')] if v else ['-'] * 3
    cells.append(str(s['ball_samples']))
    v = s['ball_m']
    cells += [f'{v[k]:.3f}' for k in ('mean', 'p50', 'p90')] if v else ['-'] * 3
    return cells


def table(result: dict[str, dict]) -> str:
    """The figures as a text table: a rerun and a live row per player."""
    head = [
        'player',
        'estimate',
        'cycles',
        'pos mean',
        'p50',
        'p90 (m)',
        'heading mean',
        'p50',
        'p90 (deg)',
        'ball seen',
        'ball mean',
        'p50',
        'p90 (m)',
        '= live',
    ]
    rows = [head]
    for player, r in result.items():
        same = '-' if r['same_as_live'] is None else f'{100 * r["same_as_live"]:.0f} %'
        rows.append([player, 'rerun', *_cells(r['rerun']), same])
        rows.append(['', 'live', *_cells(r['live']), ''])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [
        '  '.join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        for row in rows
    ]
    return '\n'.join(line.rstrip() for line in lines)


def rerun_main(bag: Path, rules: str = 'ssim', json_path: Path | None = None) -> int:
    """``replay --rerun world-model``: print the table; 0, 1 (a bad bag) or 2 (inputs missing)."""
    try:
        runs, data = rerun_bag(bag, rules, os.environ.get('ROBOCUP3D_TEAM_SECRET', ''))
    except BagError as exc:
        print(f'robocup3d replay: {exc}', file=sys.stderr)
        return 1
    except MissingInputs as exc:
        print(f'robocup3d replay: {bag}: cannot rerun the world model: {exc}', file=sys.stderr)
        return 2
    result = compare(runs, data)
    print(f'world model rerun on {bag} (errors against the recorded ground truth; live: the recorded estimates)')
    print(table(result))
    print('= live: the share of the live poses the rerun reproduced (within 1 mm and 0.001 rad)')
    for player, r in result.items():
        if not r['odometry']:
            print(f'note: {player}: no odom in the bag, rerun without the walk odometry')
    if json_path is not None:
        json_path.write_text(json.dumps({'bag': str(bag), 'players': result}, indent=1) + '\n', encoding='utf-8')
    return 0
