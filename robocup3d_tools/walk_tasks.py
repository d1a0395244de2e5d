"""Walk tasks run through the graph and scored from the server's ground truth.

Each task drives ``cmd_vel`` of one player in a :class:`~robocup3d_tools.sim_session.SimSession`
and measures what the robot really did (the torso's ground truth from the server: RCSSServerMJ's
``pos``/``quat``, rcssserver3d's monitor scene):

* ``forward`` / ``backward`` / ``sideways`` / ``turn``: one velocity from standstill for ``seconds``;
  speed = displacement (along the start heading / across it) or heading change per second;
* ``square``: four sides of walking forward and four 90-degree turns on the spot;
* ``random``: a seeded course of random commands changing every 1-3 s; a fall is counted,
  the robot is put upright again and the course goes on; reports falls per 100 m;
* ``starts``: walk starts from a fresh stand, as fast as the set allows, forward, to each side and
  turning each way, ``seconds`` each, after a seeded wait of 0.5-1.5 s (a stand that rocks
  shows up as falls); every start is a new one: the robot is put upright before each;
* ``stops``: five stops from walking flat out straight ahead: ``seconds`` of it (plus 0-0.4 s, so the
  stops come at different phases of the step), then ``cmd_vel`` 0 for 4 s; the robot is put upright
  before each; ``extra['run_on']`` is how far it went on after each stop command;
* ``goto``: seeded go-to targets 1-4 m apart with any heading (:func:`goto_targets`), each sent as a
  ``walk_target`` until the robot stands on it or 20 s pass, for ``seconds``; a fallen robot gets up by
  itself; ``speed`` is the straight-line distance gained on the targets per second, ``extra['reached']``;
* ``chase``: a match's positioning (:func:`chase_course`): the target changes every 1-3 s (a new one 0.5-4 m
  away, the old one moved up to 1 m, or a stop), so the walk is asked to speed up, turn, reverse and stop at
  any moment; scored as ``goto``; each fall is traced in ``extra['falls_at']`` (the segment, how long after its
  change, the walk's command and step speed before it, which way it tipped) for :func:`fall_class`;
* ``lineup``: a seeded course of a kick's lining-up steps (:mod:`robocup3d_tools.lineup`, ``seconds`` of
  them after the arrival) and 4 s of stepping in place; falls are counted (the robot is put upright and
  the course goes on); ``extra``: ``creep`` (m/s off the commanded displacement), ``creep_turn``
  (rad/s), ``in_place`` (m/s of it stepping in place) and ``lean`` (deg, the torso's largest tilt).

``python -m robocup3d_tools.walk_tasks --robot T1 --task forward --speed 0.6`` (or
``--server simspark --type 0`` for a Nao on rcssserver3d) prints the result as JSON (the
optimizer runs candidates this way, one process each).
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

from robocup3d_tools.lineup import ARRIVE, Segment, course, drift, in_place
from robocup3d_tools.servers import end_with_parent
from robocup3d_tools.sim_session import CYCLE, SERVERS, Pose, SimSession

__all__ = ['TASKS', 'TaskResult', 'run_task']

START = (-6.0, 0.0, 0.0)  # where the robot starts: own half, facing the opponent goal


@dataclass
class TaskResult:
    """What a task measured. Speeds in m/s and rad/s over the whole task (from standstill)."""

    task: str
    seconds: float  # server time walked
    falls: int = 0
    forward: float = 0.0  # m along the start heading
    lateral: float = 0.0  # m across it (left positive)
    turned: float = 0.0  # rad, unwrapped heading change
    path: float = 0.0  # m travelled (sum of per-cycle displacements)
    extra: dict = field(default_factory=dict)

    @property
    def speed(self) -> float:
        return self.forward / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict:
        d = asdict(self)
        d['speed'] = self.speed
        d['falls_per_100m'] = 100.0 * self.falls / self.path if self.path > 0.0 else None
        return d


def _unwrap(a: float) -> float:
    return math.atan2(math.sin(a), math.cos(a))


def _measure(task: str, traj: list[Pose], start: Pose, fell: bool) -> TaskResult:
    end = traj[-1] if traj else start
    c, s = math.cos(start.yaw), math.sin(start.yaw)
    dx, dy = end.x - start.x, end.y - start.y
    turned, path, prev = 0.0, 0.0, start
    for p in traj:
        turned += _unwrap(p.yaw - prev.yaw)
        path += math.hypot(p.x - prev.x, p.y - prev.y)
        prev = p
    return TaskResult(
        task, end.t - start.t, int(fell), c * dx + s * dy, -s * dx + c * dy, turned, path, {'end': asdict(end)}
    )


def _at_rest(pose: Pose, t: float) -> Pose:
    """``pose``, seen while the robot stood still, as it still was at server time ``t`` (the first
    command): times then run from the command, not from a pose that came late (rcssserver3d)."""
    return replace(pose, t=max(pose.t, t))


def _constant(v: tuple[float, float, float]) -> Callable[[float], tuple[float, float, float]]:
    return lambda t: v


def run_task(session: SimSession, task: str, speed: float = 0.0, seconds: float = 10.0, seed: int = 1) -> TaskResult:
    """Run one task (see the module doc) from an upright start; ``speed`` 0 means the set's maximum."""
    if task == 'starts':  # puts the robot upright before each start itself
        return _starts(session, seconds, seed)
    if task == 'stops':
        return _stops(session, seconds)
    if task == 'lineup':
        return _lineup(session, seconds, seed)
    session.place(*START)
    assert session.pose is not None
    start = session.pose
    if task in ('forward', 'backward', 'sideways', 'turn'):
        v = speed or 10.0  # clipped by the walk to its max
        back = -abs(v)
        cmd = {'forward': (v, 0, 0), 'backward': (back, 0, 0), 'sideways': (0, v, 0), 'turn': (0, 0, v)}[task]
        traj = session.drive(seconds, _constant(cmd))
        start = _at_rest(start, session.drive_started)
        session.drive(0.5, _constant((0.0, 0.0, 0.0)))
        return _measure(task, traj, start, bool(traj) and traj[-1].up < 0.5)
    if task == 'square':
        return _square(session, start, speed or 0.3, side=max(1.0, seconds))
    if task == 'random':
        return _random_course(session, start, seconds, seed)
    if task == 'goto':
        return _goto_course(session, start, seconds, seed)
    if task == 'chase':
        return _chase(session, start, seconds, seed)
    raise ValueError(f'unknown task {task!r}; tasks: {", ".join(TASKS)}')


def _square(session: SimSession, start: Pose, speed: float, side: float) -> TaskResult:
    """Walk a square of ``side`` m anticlockwise, turning at each corner to face the next side (3 turns).

    A coach (this harness, which knows the true pose the player does not) sends the
    next corner as a ``walk_target`` relative to the robot every half second, with the
    heading of the next side: the player's walk-to-pose does the rest (walk at it,
    turn into the heading near it). ``speed`` limits the walk (``walk_set`` is not changed).
    """
    traj: list[Pose] = []
    corners = []
    c, s = math.cos(start.yaw), math.sin(start.yaw)
    for k, (cx, cy) in enumerate(((side, 0.0), (side, side), (0.0, side), (0.0, 0.0))):
        goal = (start.x + c * cx - s * cy, start.y + s * cx + c * cy)
        heading = start.yaw + min(k + 1, 3) * math.pi / 2  # turn at three corners, stop at the last
        deadline = session.cycles + int((side / max(speed, 0.05) * 3 + 15.0) / 0.02)
        while session.cycles < deadline:
            p = session.pose
            dx, dy = goal[0] - p.x, goal[1] - p.y
            cr, sr = math.cos(p.yaw), math.sin(p.yaw)
            err = math.atan2(math.sin(heading - p.yaw), math.cos(heading - p.yaw))
            if math.hypot(dx, dy) < 0.25 and abs(err) < 0.3:
                break
            session.walk_to(cr * dx + sr * dy, -sr * dx + cr * dy, err)
            for _ in range(25):
                session.wait_cycles(1)
                traj.append(session.pose)
                if session.pose.up < 0.5:
                    return _measure('square', traj, start, True)
        corners.append(asdict(traj[-1]))
    session.velocity(0.0, 0.0, 0.0)
    for _ in range(50):
        session.wait_cycles(1)
        traj.append(session.pose)
    result = _measure('square', traj, start, traj[-1].up < 0.5)
    result.extra['corners'] = corners
    result.extra['closure_m'] = math.hypot(traj[-1].x - start.x, traj[-1].y - start.y)
    return result


def _random_course(session: SimSession, start: Pose, seconds: float, seed: int) -> TaskResult:
    """Random commands (seeded) for ``seconds``; falls are counted and the robot is set upright again.

    Path and turn are summed over the walking only (not the trainer's moves after a fall).
    """
    rng = random.Random(seed)
    falls, t, path, turned = 0, 0.0, 0.0, 0.0
    walked = 0.0
    origin = start
    while t < seconds:
        hold = rng.uniform(1.0, 3.0)
        cmd = (rng.uniform(-0.3, 1.0), rng.uniform(-0.3, 0.3), rng.uniform(-1.0, 1.0))
        c0 = session.cycles
        part = session.drive(min(hold, seconds - t), _constant(cmd))
        t += (session.cycles - c0) * CYCLE
        if not part:
            continue
        m = _measure('random', part, origin, False)
        path, turned, walked = path + m.path, turned + m.turned, walked + m.seconds
        origin = part[-1]
        if part[-1].up < 0.5:
            falls += 1
            session.place(*START)
            assert session.pose is not None
            origin = session.pose
    end = session.pose or start
    return TaskResult('random', walked, falls, 0.0, 0.0, turned, path, {'end': asdict(end), 'commanded_s': t})


STARTS = {  # cmd_vel of each start (clipped by the walk to its set's maximum)
    'forward': (10.0, 0.0, 0.0),
    'left': (0.0, 10.0, 0.0),
    'right': (0.0, -10.0, 0.0),
    'turn left': (0.0, 0.0, 10.0),
    'turn right': (0.0, 0.0, -10.0),
}


def _starts(session: SimSession, seconds: float, seed: int) -> TaskResult:
    """One start from a fresh stand in each direction of :data:`STARTS`; ``extra['fell']`` names the falls."""
    rng = random.Random(seed)
    fell, walked, path, turned = [], 0.0, 0.0, 0.0
    for name, cmd in STARTS.items():
        session.place(*START)
        session.wait_cycles(round(rng.uniform(0.5, 1.5) / CYCLE))
        origin = session.pose
        assert origin is not None
        traj = session.drive(seconds, _constant(cmd))
        m = _measure('starts', traj, _at_rest(origin, session.drive_started), bool(traj) and traj[-1].up < 0.5)
        walked, path, turned = walked + m.seconds, path + m.path, turned + abs(m.turned)
        if m.falls:
            fell.append(name)
    return TaskResult('starts', walked, len(fell), 0.0, 0.0, turned, path, {'end': asdict(session.pose), 'fell': fell})


STOP_WATCH_S = 4.0  # s watched after each stop command


def _stops(session: SimSession, seconds: float, n: int = 5) -> TaskResult:
    """Five stops from flat out straight ahead (see the module doc); falls counted, run-on in ``extra``."""
    falls, walked, path, run_on = 0, 0.0, 0.0, []
    for k in range(n):
        session.place(*START)
        origin = session.pose
        assert origin is not None
        traj = session.drive(seconds + 0.1 * k, _constant((10.0, 0.0, 0.0)))
        started = session.drive_started
        if traj and traj[-1].up >= 0.5:
            at = traj[-1]
            traj += session.drive(STOP_WATCH_S, _constant((0.0, 0.0, 0.0)))
            c, s = math.cos(at.yaw), math.sin(at.yaw)
            run_on.append(round(c * (traj[-1].x - at.x) + s * (traj[-1].y - at.y), 3))
        m = _measure('stops', traj, _at_rest(origin, started), bool(traj) and traj[-1].up < 0.5)
        falls, walked, path = falls + m.falls, walked + m.seconds, path + m.path
    return TaskResult('stops', walked, falls, 0.0, 0.0, 0.0, path, {'end': asdict(session.pose), 'run_on': run_on})


def _play(session: SimSession, segments: list[Segment]) -> tuple[list[float], float, int, float, float]:
    """``segments`` from an upright start (:data:`ARRIVE` first, not scored): the drift (m) and turn (rad)
    off each command summed, the seconds scored, falls, and the largest tilt (deg)."""
    session.place(*START)
    err, seconds, falls, lean = [0.0, 0.0], 0.0, 0, 0.0
    for k, (cmd, hold) in enumerate(segments):
        before = session.pose
        assert before is not None
        traj = session.drive(hold, _constant(cmd))
        fell = bool(traj) and traj[-1].up < 0.5
        if k >= len(ARRIVE) and traj and not fell:
            d, dw = drift([(p.x, p.y, p.yaw) for p in [before, *traj]], cmd, CYCLE)
            err, seconds = [err[0] + d, err[1] + dw], seconds + traj[-1].t - before.t
            lean = max(lean, *(math.degrees(math.acos(max(-1.0, min(1.0, p.up)))) for p in traj))
        if fell:
            falls += 1
            session.place(*START)
    return err, seconds, falls, lean


def _lineup(session: SimSession, seconds: float, seed: int) -> TaskResult:
    """A lining-up course and a step in place (see the module doc)."""
    err, walked, falls, lean = _play(session, course(seed, seconds))
    still, still_s, still_falls, still_lean = _play(session, in_place())
    total = walked + still_s
    extra = {
        'end': asdict(session.pose),
        'creep': round((err[0] + still[0]) / total, 4) if total else None,
        'creep_turn': round((err[1] + still[1]) / total, 4) if total else None,
        'in_place': round(still[0] / still_s, 4) if still_s else None,
        'lean': round(max(lean, still_lean), 1),
    }
    return TaskResult('lineup', total, falls + still_falls, 0.0, 0.0, 0.0, 0.0, extra)


GOTO_REACH = (0.25, 0.3)  # m, rad: a go-to's target counts as reached this near, in position and heading
GOTO_LIMIT = 20.0  # s for one go-to; then the next
GOTO_FIELD = (-12.0, 12.0, -8.0, 8.0)  # x, y bounds the targets keep within (the field, a metre inside)


def goto_targets(seed: int, n: int, start: tuple[float, float, float]) -> list[tuple[float, float, float]]:
    """``n`` seeded go-to targets (field x, y, heading), each 1-4 m from the last one in any direction, with any
    heading, kept in :data:`GOTO_FIELD`: what a player's positioning asks of the walk in a match."""
    rng = random.Random(seed)
    x, y, _ = start
    out = []
    for _ in range(n):
        d, a = rng.uniform(1.0, 4.0), rng.uniform(-math.pi, math.pi)
        x = min(max(x + d * math.cos(a), GOTO_FIELD[0]), GOTO_FIELD[1])
        y = min(max(y + d * math.sin(a), GOTO_FIELD[2]), GOTO_FIELD[3])
        out.append((x, y, rng.uniform(-math.pi, math.pi)))
    return out


def _goto_course(session: SimSession, start: Pose, seconds: float, seed: int) -> TaskResult:
    """Seeded go-to targets one after the other for ``seconds`` (see the module doc).

    A coach (this harness, which knows the true pose) sends the target as a ``walk_target`` relative to the
    robot every half second, as the strategy's go-to does; the robot gets up by itself after a fall (the
    get-up's time counts). ``forward``: the straight-line metres the targets were brought nearer by (a target
    not reached counts what was gained on it); ``extra``: ``reached``, ``times`` (s per reached target).
    """
    traj: list[Pose] = []
    targets = goto_targets(seed, 100, (start.x, start.y, start.yaw))
    gained, falls, reached, times = 0.0, 0, 0, []
    first_cycle = session.cycles
    end = first_cycle + round(seconds / CYCLE)
    for gx, gy, heading in targets:
        if session.cycles >= end:
            break
        p = session.pose
        first = math.hypot(gx - p.x, gy - p.y)
        began, down = session.cycles, False
        limit = min(end, began + round(GOTO_LIMIT / CYCLE))
        while session.cycles < limit:
            p = session.pose
            dx, dy = gx - p.x, gy - p.y
            err = _unwrap(heading - p.yaw)
            if p.up >= 0.5 and math.hypot(dx, dy) < GOTO_REACH[0] and abs(err) < GOTO_REACH[1]:
                reached += 1
                times.append(round((session.cycles - began) * CYCLE, 2))
                break
            if p.up < 0.5 and not down:
                falls += 1
            down = p.up < 0.5
            cr, sr = math.cos(p.yaw), math.sin(p.yaw)
            session.walk_to(cr * dx + sr * dy, -sr * dx + cr * dy, err)
            for _ in range(25):
                session.wait_cycles(1)
                traj.append(session.pose)
        p = session.pose
        gained += first - math.hypot(gx - p.x, gy - p.y)
    session.velocity(0.0, 0.0, 0.0)
    walked = (session.cycles - first_cycle) * CYCLE
    m = _measure('goto', traj, start, False)
    extra = {'end': asdict(session.pose), 'reached': reached, 'times': times}
    return TaskResult('goto', walked, falls, gained, 0.0, m.turned, m.path, extra)


CHASE_HOLD = (1.0, 3.0)  # s a chase segment lasts
CHASE_KINDS = (('jump', 0.5), ('nudge', 0.3), ('stop', 0.2))  # a chase segment's kinds and their odds


@dataclass(frozen=True, slots=True)
class ChaseSegment:
    """One segment of a chase course: ``kind`` (``jump``: a new target ``dist`` m away at ``bearing`` rad from the
    robot's heading; ``nudge``: the last target moved ``dist`` m towards ``bearing`` in the field; ``stop``: cmd_vel
    0), with the target's heading ``yaw`` (rad, relative to the robot's for a jump, to the old target's for a
    nudge), held ``hold`` s."""

    kind: str
    hold: float
    dist: float = 0.0
    bearing: float = 0.0
    yaw: float = 0.0


def chase_course(seed: int, seconds: float) -> list[ChaseSegment]:
    """Seeded chase segments (see the module doc) covering ``seconds``; the first is always a jump."""
    rng = random.Random(seed)
    out: list[ChaseSegment] = []
    t = 0.0
    while t < seconds:
        kind = 'jump'
        if out:
            r, acc = rng.random(), 0.0
            for name, odds in CHASE_KINDS:
                acc += odds
                if r < acc:
                    kind = name
                    break
        hold = rng.uniform(*CHASE_HOLD)
        dist = rng.uniform(0.5, 4.0) if kind == 'jump' else rng.uniform(0.0, 1.0) if kind == 'nudge' else 0.0
        bearing, yaw = rng.uniform(-math.pi, math.pi), rng.uniform(-math.pi, math.pi)
        if kind == 'nudge':
            yaw *= 0.25  # the heading wanted moves a little with the target
        out.append(ChaseSegment(kind, hold, dist, bearing, yaw if kind != 'stop' else 0.0))
        t += hold
    return out


TIP_UP = 0.985  # the torso's z axis below this (10 deg of lean): a chase fall is under way
UPRIGHT_CYCLES = 50  # cycles upright after which a chase fall is over


def fall_class(fall: dict) -> str:
    """What a chase fall came with (``extra['falls_at']`` entry, taken as the torso began to tip): ``stop`` (in a
    stop segment), ``start`` (the walk at rest within the second before), ``change`` (within 1 s after a new target),
    ``turn in place``, ``turn at speed`` or ``steady``."""
    sx, sy, sw = fall['speed']
    if fall['kind'] == 'stop':
        return 'stop'
    if fall['from_rest']:
        return 'start'
    if 0.0 <= fall['since'] < 1.0:
        return 'change'
    if abs(sw) > 0.3:
        return 'turn at speed' if math.hypot(sx, sy) > 0.1 else 'turn in place'
    return 'steady'


def _chase(session: SimSession, start: Pose, seconds: float, seed: int) -> TaskResult:
    """A chase course (see the module doc): targets sent as ``walk_target`` every half second, as ``goto``'s; a fallen
    robot gets up by itself; ``forward`` the metres gained on the targets, ``extra['falls_at']`` the falls traced."""
    traj: list[Pose] = []
    gained, falls, falls_at, down, upright = 0.0, 0, [], False, 0
    history: list[tuple[float, list, list]] = []  # (t, walk speed, walk command) per motion_state seen
    first_cycle = session.cycles
    end = first_cycle + round(seconds / CYCLE)
    goal: tuple[float, float, float] | None = None
    still_since = 0.0  # server s the walk's step speed was last zero
    for seg in chase_course(seed, seconds):
        if session.cycles >= end:
            break
        p = session.pose
        assert p is not None
        if seg.kind == 'jump':
            a = p.yaw + seg.bearing
            gx = min(max(p.x + seg.dist * math.cos(a), GOTO_FIELD[0]), GOTO_FIELD[1])
            gy = min(max(p.y + seg.dist * math.sin(a), GOTO_FIELD[2]), GOTO_FIELD[3])
            goal = (gx, gy, _unwrap(p.yaw + seg.yaw))
        elif seg.kind == 'nudge' and goal is not None:
            gx = min(max(goal[0] + seg.dist * math.cos(seg.bearing), GOTO_FIELD[0]), GOTO_FIELD[1])
            gy = min(max(goal[1] + seg.dist * math.sin(seg.bearing), GOTO_FIELD[2]), GOTO_FIELD[3])
            goal = (gx, gy, _unwrap(goal[2] + seg.yaw))
        stop = seg.kind == 'stop' or goal is None
        first = 0.0 if stop else math.hypot(goal[0] - p.x, goal[1] - p.y)
        began = session.cycles
        limit = min(end, began + round(seg.hold / CYCLE))
        while session.cycles < limit:
            p = session.pose
            if stop:
                session.velocity(0.0, 0.0, 0.0)
            else:
                dx, dy = goal[0] - p.x, goal[1] - p.y
                cr, sr = math.cos(p.yaw), math.sin(p.yaw)
                session.walk_to(cr * dx + sr * dy, -sr * dx + cr * dy, _unwrap(goal[2] - p.yaw))
            for _ in range(25 if not stop else 10):
                session.wait_cycles(1)
                p = session.pose
                traj.append(p)
                w = session.state.get('walk') or {}
                if w.get('speed') is not None and (not history or history[-1][1:] != (w['speed'], w['command'])):
                    history.append((p.t, w['speed'], w['command']))
                    if not any(w['speed']):
                        still_since = p.t
                if p.up < 0.5 and not down:
                    falls += 1
                    falls_at.append(_fall_trace(traj, seg, began * CYCLE, history, still_since))
                # a fall ends once the robot has stood upright for a second (a get-up that tips over again is no
                # new fall until then)
                upright = upright + 1 if p.up >= TIP_UP else 0
                down = p.up < 0.5 or (down and upright < UPRIGHT_CYCLES)
                if session.cycles >= limit:
                    break
        if not stop:
            p = session.pose
            gained += first - math.hypot(goal[0] - p.x, goal[1] - p.y)
    session.velocity(0.0, 0.0, 0.0)
    walked = (session.cycles - first_cycle) * CYCLE
    m = _measure('chase', traj, start, False)
    extra = {'end': asdict(session.pose), 'falls_at': falls_at}
    return TaskResult('chase', walked, falls, gained, 0.0, m.turned, m.path, extra)


def _fall_trace(traj: list[Pose], seg: ChaseSegment, began: float, history: list, still_since: float) -> dict:
    """A chase fall: its segment; when the torso began to tip (:data:`TIP_UP`), how long after the segment began;
    the walk's step speed and command then and as the segment began (as ``motion_state`` had them); how long the
    tipping took and which way the torso went."""

    def at(t: float) -> tuple[float, list, list]:
        seen = [h for h in history if h[0] <= t] or history[:1] or [(t, [0.0] * 3, [0.0] * 3)]
        return seen[-1]

    p = traj[-1]
    k = len(traj) - 1
    while k > 0 and traj[k - 1].up < TIP_UP:
        k -= 1
    tip = traj[k].t
    _, speed, command = at(tip)
    way = (
        ('forward' if p.forward > 0 else 'back') if abs(p.forward) >= abs(p.left) else 'left' if p.left > 0 else 'right'
    )
    fall = {
        't': round(p.t, 2),
        'kind': seg.kind,
        'since': round(tip - began, 2),
        'tip_s': round(p.t - tip, 2),
        'speed': [round(v, 3) for v in speed],
        'command': [round(v, 3) for v in command],
        'speed_before': [round(v, 3) for v in at(began)[1]],
        'from_rest': tip - still_since < 1.0,
        'way': way,
    }
    fall['class'] = fall_class(fall)
    return fall


TASKS = ('forward', 'backward', 'sideways', 'turn', 'square', 'random', 'starts', 'stops', 'lineup', 'goto', 'chase')


def main(argv: list[str] | None = None) -> int:
    """Run one task in a fresh session and print its result as JSON."""
    ap = argparse.ArgumentParser(prog='python -m robocup3d_tools.walk_tasks', description=__doc__.split('\n')[0])
    ap.add_argument('--server', choices=SERVERS, default='mujoco')
    ap.add_argument('--robot', default='T1', help='T1 or K1 (mujoco); simspark always runs the Nao')
    ap.add_argument('--type', dest='robot_type', type=int, default=0, help='Nao type 0-4 (simspark)')
    ap.add_argument('--task', choices=TASKS, default='forward')
    ap.add_argument('--speed', type=float, default=0.0, help='command (m/s or rad/s); 0: as fast as the set allows')
    ap.add_argument('--seconds', type=float, default=10.0, help='task length (square: side length in m)')
    ap.add_argument('--walk-config', default='', help='walk parameter file (default: the shipped walk.yaml)')
    ap.add_argument(
        '--walk-set',
        nargs='*',
        default=[],
        help='parameter set(s) to use (default: the robot default); several: the task for each, one JSON line each',
    )
    ap.add_argument('--seed', type=int, default=1)
    args = ap.parse_args(argv)
    end_with_parent()  # a lost optimize worker takes this session's server and player with it
    with SimSession(
        args.robot, walk_config=args.walk_config or None, server=args.server, robot_type=args.robot_type
    ) as session:
        for name in args.walk_set or ['']:
            if name:
                session.request(f'walk_set {name}')
                session.wait_cycles(2)
            result = run_task(session, args.task, args.speed, args.seconds, args.seed).as_dict()
            if name:
                result['set'] = name
            print(json.dumps(result), flush=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
