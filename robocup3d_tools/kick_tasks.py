"""Kick tasks run through the graph and scored from the server's ground truth.

A trial places the standing robot (trainer), puts the ball at the kick's spot relative to it
(the ball's x forward and y left of the torso projected to the ground, with optional noise),
requests the kick skill on ``motion_request`` and watches the server's ground truth: the torso
(as the get-up tasks do) and the ball, read from the monitor stream on both servers
(RCSSServerMJ: the scene's ball node; rcssserver3d: the full scenes the session asks for).

Measured per trial: how far the ball went (from where it lay to where it came to rest, or where
it was :data:`ROLL_TIMEOUT` s after it started moving), its travel along the wanted direction (the
robot's heading when the kick was requested, turned by ``--direction`` deg) and the angle between
the two, the time from the request to the ball's first motion, whether the robot fell (the torso's
z axis below :data:`FALLEN_UP`, or the motion node reporting a fall) before it had stood
:data:`STAND_AFTER` s after the kick, whether it touched the ball before the kick's swing (the
skill's ``swing`` time, s from its start), and whether the ball went backwards. A kick that has
not moved the ball :data:`NO_KICK_S` s after the request did not happen.

The kick spot and swing time of a T1/K1 kick are its YAML file's ``ball: [x, y]`` and ``swing``
(right-foot kick; the left one mirrors y); the Nao's spots are its parameters ``kl_spot_x/y`` and
``kq_spot_x/y`` (:data:`NAO_KICKS` without them); ``--spot X Y`` and ``--swing`` override both.

``python -m robocup3d_tools.kick_tasks --robot T1 --kick long --trials 10`` (or ``--server simspark
--type 2``) prints the result as JSON; ``robocup3d optimize --task kick-long`` runs candidates this
way, one process each, and scores them with :func:`kick_score`.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from robocup3d_motion.getup import DATA_DIR
from robocup3d_motion.requests import Kick
from robocup3d_motion.skills.params import load_type_params
from robocup3d_tools.servers import end_with_parent
from robocup3d_tools.sim_session import CYCLE, SERVERS, SimSession

__all__ = [
    'KICKS',
    'KickResult',
    'KickTrial',
    'kick_score',
    'kick_setup',
    'run_kicks',
    'trial_score',
]

KICKS = ('long', 'quick', 'walk', 'var')  # var: the Nao's kick of chosen strength (kick_var.skl)
WALK_KICK_FROM = (0.8, 1.4)  # m behind the ball an in-walk kick's walk-up starts (``walk``)
WALK_KICK_TARGET = 10.0  # m beyond the ball its target lies
WALK_STOP_S = 3.0  # s after an in-walk kick's task at most until the walk has stopped (then STAND_AFTER counts)
#: where the robot stands for the trials (m, m): clear of the lines for a kick of 15 m
START = {'mujoco': (-14.0, 0.0), 'simspark': (-9.0, 0.0)}
#: the ball's radius (m) per server
BALL_R = {'mujoco': 0.11, 'simspark': 0.042}
#: the Nao's kicks (``.skl``): ball spot (x, y) of the right-foot kick and swing start (s) when
#: the parameter files do not say (``kl_spot_x/y``, ``kq_spot_x/y``)
NAO_KICKS = {'long': ((0.19, -0.05), 0.0), 'quick': ((0.17, -0.05), 0.0), 'var': ((0.17, -0.05), 0.0)}
TRACE_JOINTS = ('llj1', 'llj2', 'llj3', 'llj4', 'llj5', 'llj6', 'rlj1', 'rlj2', 'rlj3', 'rlj4', 'rlj5')
MOVED = 0.03  # m the ball must move to count as touched
NO_KICK_S = 15.0  # s after the request without a touch: the kick did not happen
ROLL_TIMEOUT = 12.0  # s after the touch at most until the ball's position is taken
REST_SPEED = 0.05  # m/s below which the ball is at rest (over REST_S)
REST_S = 0.5
# s the robot must stand after the skill has ended (1 s until session 30 missed Nao kicks that tipped over slowly,
# 1.0-1.5 s after it: docs/kick.md)
STAND_AFTER = 2.0
FALLEN_UP = 0.5  # z of the torso's z axis below which it has fallen
WALK_IN_SPEED = 0.15  # m/s forward before the kick (``--walk-in``)
WALK_IN_EASE = 0.5  # s the motion node eases from the walk's stance into the stand
#: wall s a walk-in may take to stop: the walk's last steps, its linger and the stand (about 2 s of server time)
#: took more than 10 wall s on the shared 2-core machine in sync mode (2026-11-28)
WALK_STOP_WAIT = 60.0

# Score (lower is better), per trial, as UT Austin Villa's kick optimization: the distance along the
# wanted direction, with penalties (m) for what makes a kick useless.
FALL_PENALTY = 10.0
EARLY_PENALTY = 10.0  # touched the ball before the swing (ran into it)
BACKWARD_PENALTY = 10.0  # went backwards, or the kick did not happen / barely moved the ball (< 0.1 m)
ANGLE_FREE_DEG = 8.0  # angle error that costs nothing
ANGLE_PENALTY = 0.1  # m per degree of angle error beyond ANGLE_FREE_DEG
SHORT_M = 0.1
GRACE_CAP_S = 3.0  # s upright at most that ``fall_grace`` credits


@dataclass
class KickTrial:
    """One kick (m, deg, s of server time); ``contact_s`` is None when the ball never moved."""

    distance: float = 0.0  # from where the ball lay to where it came to rest
    along: float = 0.0  # of that, along the wanted direction
    angle_err_deg: float = 180.0  # between the ball's travel and the wanted direction
    angle_deg: float = 0.0  # the same, signed: + the ball went left of it
    contact_s: float | None = None  # from the request to the ball's first motion
    fell: bool = False
    fell_s: float | None = None  # from the request to the fall
    kick_s: float | None = 0.0  # from the request to the kick's start (in-walk: its kicking phase; None: never)
    early: bool = False  # touched before the swing
    backward: bool = False
    standing: bool = False  # stood STAND_AFTER s after the skill ended
    spot: tuple[float, float] = (0.0, 0.0)  # where the ball lay, robot frame (noise included)

    @property
    def kicked(self) -> bool:
        return self.contact_s is not None


@dataclass
class KickResult:
    """What the trials of one kick measured."""

    task: str  # kick-long, kick-quick
    skill: str
    trials: int
    kicks: list[KickTrial] = field(default_factory=list)

    def as_dict(self) -> dict:
        d = {'task': self.task, 'skill': self.skill, 'trials': self.trials, 'kicks': [asdict(k) for k in self.kicks]}
        d.update(summarize(self.kicks))
        return d


def _pct(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (0-1) by linear interpolation, or None."""
    if not values:
        return None
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return round(v[lo] + (v[hi] - v[lo]) * (pos - lo), 3)


def summarize(kicks: list[KickTrial] | list[dict]) -> dict:
    """Figures over trials: distance median/p10, angle error median/p90, contact time median/p90, counts."""
    ks = [k if isinstance(k, dict) else asdict(k) for k in kicks]
    kicked = [k for k in ks if k['contact_s'] is not None]
    dist = [k['distance'] for k in ks]  # a kick that did not happen counts as 0 m
    angle = [k['angle_err_deg'] for k in kicked]
    contact = [k['contact_s'] for k in kicked]
    return {
        'distance_median': _pct(dist, 0.5),
        'distance_p10': _pct(dist, 0.1),
        'along_median': _pct([k['along'] for k in ks], 0.5),
        'angle_err_median': _pct(angle, 0.5),
        'angle_err_p90': _pct(angle, 0.9),
        'contact_median_s': _pct(contact, 0.5),
        'contact_p90_s': _pct(contact, 0.9),
        'falls': sum(k['fell'] for k in ks),
        'not_standing': sum(not k['standing'] for k in ks),
        'early': sum(k['early'] for k in ks),
        'backward': sum(k['backward'] for k in ks),
        'no_kick': sum(k['contact_s'] is None for k in ks),
    }


def trial_score(k: dict, fall_penalty: float = FALL_PENALTY, fall_grace: float = 0.0) -> float:
    """One kick's score (lower is better): minus the distance along the wanted direction, plus penalties.

    ``fall_penalty``: m added for a fall or not standing afterwards (above the longest kick: a fall never pays);
    ``fall_grace``: m taken off a fall's penalty per s the robot stood from the kick's start (``kick_s``: the
    request for a kick skill, the kicking phase of an in-walk kick, whose walk-up comes first; up to
    :data:`GRACE_CAP_S`), so that a search whose candidates all fall learns which fall came later. A fall
    before an in-walk kick began earns no grace.
    """
    if k['contact_s'] is None or k['distance'] < SHORT_M or k['backward']:
        f = BACKWARD_PENALTY
    else:
        f = -k['along'] + ANGLE_PENALTY * max(0.0, k['angle_err_deg'] - ANGLE_FREE_DEG)
    if k['fell'] or not k['standing']:
        fell_s, kick_s = k.get('fell_s'), k.get('kick_s', 0.0)
        if fell_s is None:  # not standing at the end, the fall itself not seen
            upright = GRACE_CAP_S
        else:
            upright = 0.0 if kick_s is None else max(0.0, fell_s - kick_s)
        f += fall_penalty - fall_grace * min(GRACE_CAP_S, upright)
    if k['early']:
        f += EARLY_PENALTY
    return f


def kick_score(result: dict, fall_penalty: float = FALL_PENALTY, fall_grace: float = 0.0) -> float:
    """A candidate's score: the mean of its trials' :func:`trial_score` (an error scores the worst)."""
    if 'error' in result or not result.get('kicks'):
        return BACKWARD_PENALTY + fall_penalty + EARLY_PENALTY
    return sum(trial_score(k, fall_penalty, fall_grace) for k in result['kicks']) / len(result['kicks'])


def skill_name(kick: str, foot: str = 'right') -> str:
    return f'KICK_{kick.upper()}_{foot.upper()}'


def kick_setup(
    robot: str, kick: str, skill_files: list[str] | tuple[str, ...] = (), robot_type: int = 0
) -> tuple[tuple[float, float], float]:
    """The right-foot kick's ball spot (x, y, m, robot frame) and swing start (s from the skill's start).

    T1/K1: the ``ball`` and ``swing`` of the kick's YAML file (a ``--skill-params`` file of the same
    skill name comes first); the Nao: ``kl_spot_x/y`` (long) or ``kq_spot_x/y`` (quick) of its type's
    parameter files and the ``--skill-params`` ones, else :data:`NAO_KICKS`.
    """
    if robot == 'nao':
        spot, swing = NAO_KICKS[kick]
        extra = [f for f in skill_files if str(f).endswith('.txt')]
        params = load_type_params(DATA_DIR / 'nao', robot_type, extra)
        key = {'long': 'kl_spot', 'quick': 'kq_spot', 'var': 'kq_spot'}[kick]  # var: the quick kick's motion
        if f'{key}_x' in params and f'{key}_y' in params:
            spot = (params[f'{key}_x'], params[f'{key}_y'])
        return spot, swing
    name = skill_name(kick)
    for f in [*skill_files, DATA_DIR / robot / f'kick_{kick}.yaml']:
        p = Path(f)
        if p.suffix not in ('.yaml', '.yml') or not p.is_file():
            continue
        doc = yaml.safe_load(p.read_text(encoding='utf-8')) or {}
        if doc.get('name') == name:
            x, y = doc.get('ball', (0.3, -0.1))
            return (float(x), float(y)), float(doc.get('swing', 0.0))
    raise FileNotFoundError(f'no {name} for {robot}: {DATA_DIR / robot}/kick_{kick}.yaml')


def _note_fall(session: SimSession, trial: KickTrial, since_request: float, counts: bool) -> None:
    """Mark ``trial`` fallen (and when) if the robot lies now and a fall ``counts`` (the kick is not long over)."""
    if counts and _fallen(session):
        if not trial.fell:
            trial.fell_s = round(since_request, 3)
        trial.fell = True


def _fallen(session: SimSession) -> bool:
    p = session.pose
    return bool(session.state.get('fallen')) or (p is not None and p.up < FALLEN_UP)


def kick_once(
    session: SimSession,
    skill: str,
    spot: tuple[float, float],
    swing_s: float = 0.0,
    direction_deg: float = 0.0,
    yaw: float = 0.0,
    trace: bool = False,
    walk_in: float = 0.0,
    walk_in_rest: float = WALK_IN_EASE,
) -> KickTrial:
    """One kick from a fresh stand: place the robot, the ball at ``spot`` (robot frame), kick, measure.

    ``walk_in`` > 0: before the ball is put down the robot walks forward (:data:`WALK_IN_SPEED`) that many
    s and stops as a kick task stops it, so the kick starts from the end of a walk, as in play; the ball is put
    down and the kick requested ``walk_in_rest`` s after the walk's stop (a kick's ``rest`` in play).
    """
    x0, y0 = START[session.server_kind]
    _stand(session, x0, y0, yaw)
    if walk_in > 0.0:
        session.drive(walk_in, lambda t: (WALK_IN_SPEED, 0.0, 0.0))
        session.velocity(0.0, 0.0, 0.0)
        # the walk's own stop: its last steps, the linger and the ease into the stand (a kick task kicks then)
        session.spin_until(lambda: session.state.get('skill') == 'stand', WALK_STOP_WAIT, 'the walk did not stop')
        session.wait_cycles(int(walk_in_rest / CYCLE))
    p = session.pose
    assert p is not None
    c, s = math.cos(p.yaw), math.sin(p.yaw)
    bx, by = p.x + c * spot[0] - s * spot[1], p.y + s * spot[0] + c * spot[1]
    session.trainer.move_ball(bx, by, BALL_R[session.server_kind])
    moved_at = session.cycles * CYCLE
    # the monitor stream may lag behind the agents' cycles: wait until it shows the ball put down (or 1 s)
    session.spin_until(
        lambda: (
            session.ball is not None
            and session.ball_t > moved_at + CYCLE
            and (math.hypot(session.ball[0] - bx, session.ball[1] - by) < MOVED or session.ball_t > moved_at + 1.0)
        ),
        60.0,
        'the monitor stream did not tell where the ball went',
    )
    session.wait_cycles(5)
    start = session.ball
    assert start is not None
    pushed = math.hypot(start[0] - bx, start[1] - by) > MOVED  # the robot stood in the ball's way
    if trace:
        q = session.pose
        rx, ry = start[0] - q.x, start[1] - q.y
        c2, s2 = math.cos(q.yaw), math.sin(q.yaw)
        print(
            f'ball at {c2 * rx + s2 * ry:+.3f} {-s2 * rx + c2 * ry:+.3f} z {start[2]:.3f} (robot frame)',
            file=sys.stderr,
        )
    trial = KickTrial(spot=(round(spot[0], 3), round(spot[1], 3)), early=pushed)
    heading = p.yaw + math.radians(direction_deg)
    joints: dict[str, float] = {}
    if trace and not hasattr(session, '_kick_trace_sub'):
        from sensor_msgs.msg import JointState  # noqa: PLC0415

        def on_joints(msg: JointState) -> None:
            joints.clear()
            joints.update(zip(msg.name, msg.position, strict=False))

        session._kick_trace_sub = session.node.create_subscription(
            JointState, f'/{session.team}/p{session.unum}/joint_states', on_joints, 10
        )
        session._kick_trace_joints = joints
    joints = getattr(session, '_kick_trace_joints', joints)
    t0 = session.cycles * CYCLE
    session.request(skill)
    seen = ended = None  # server times the skill was seen running / ended
    rest_from: tuple[float, tuple[float, float, float]] | None = None
    last = start
    while True:
        session.wait_cycles(1)
        now = session.cycles * CYCLE
        running = session.state.get('skill') == skill
        if running and seen is None:
            seen = now
        if seen is not None and not running and ended is None:
            ended = now
        _note_fall(session, trial, now - t0, ended is None or now - ended < STAND_AFTER)
        ball = session.ball or last
        if trace and session.cycles % 2 == 0 and session.pose is not None:
            q = session.pose
            fwd, left = (math.degrees(math.asin(max(-1.0, min(1.0, v)))) for v in (q.forward, q.left))
            print(
                f'{now - t0:6.2f} up {q.up:.2f} lean fwd {fwd:+3.0f} left {left:+3.0f} z {q.z:.2f} '
                f'xy {q.x - p.x:+.2f} {q.y - p.y:+.2f} '
                f'{session.state.get("skill")} ball {ball[0] - start[0]:+.2f} {ball[1] - start[1]:+.2f} '
                f'bz {ball[2]:.3f} '
                + ' '.join(f'{j} {math.degrees(joints[j]):.0f}' for j in TRACE_JOINTS if j in joints),
                file=sys.stderr,
            )
        if trial.contact_s is None and math.dist(ball[:2], start[:2]) > MOVED:
            trial.contact_s = round(session.ball_t - t0, 3)
            trial.early = trial.early or seen is None or session.ball_t - seen < swing_s
        if ball != last:
            last = ball
        if rest_from is None or math.dist(ball[:2], rest_from[1][:2]) > REST_SPEED * REST_S:
            rest_from = (now, ball)
        stood = ended is not None and now - ended >= STAND_AFTER
        if now - t0 > NO_KICK_S + ROLL_TIMEOUT:  # a skill that never ended, a ball that never stopped
            break
        if trial.contact_s is None:
            if now - t0 > NO_KICK_S and (stood or trial.fell or seen is None):  # None: the request was refused
                break
            continue
        at_rest = now - rest_from[0] >= REST_S
        if (at_rest or now - t0 - trial.contact_s > ROLL_TIMEOUT) and (stood or trial.fell or now - t0 > NO_KICK_S):
            break
    trial.standing = not trial.fell and not _fallen(session)
    _measure(trial, start, last, heading)
    return trial


def _stand(session: SimSession, x: float, y: float, yaw: float) -> None:
    """Put the robot at (x, y, yaw) and wait until it stands (a get-up still running throws it over: again)."""
    for _ in range(3):
        session.place(x, y, yaw)
        if session.spin_until(
            lambda: (
                session.state.get('skill') == 'stand'
                and not session.state.get('fallen')
                and session.pose is not None
                and session.pose.up > 0.95
            ),
            5.0,
        ):
            return


def walk_kick_once(
    session: SimSession, behind: float, across: float, direction_deg: float = 0.0, yaw: float = 0.0, name: str = 'walk'
) -> KickTrial:
    """One in-walk kick as strategy asks for it: the ball ``behind`` m ahead of the standing robot (``across`` m
    to its left), a ``Kick`` task towards a target :data:`WALK_KICK_TARGET` m beyond it, ``direction_deg`` left of
    the robot's heading; the walk-up, the kick step and the ball's roll measured from the ground truth. A touch
    before the task's kicking phase is early (the walk-up ran into the ball). A fall counts until the robot has
    stood :data:`STAND_AFTER` s after the task, and the walk that took the kick, stopped (at most
    :data:`WALK_STOP_S` s after the task)."""
    x0, y0 = START[session.server_kind]
    _stand(session, x0, y0, yaw)
    p = session.pose
    assert p is not None
    c, s = math.cos(p.yaw), math.sin(p.yaw)
    bx, by = p.x + c * behind - s * across, p.y + s * behind + c * across
    session.trainer.move_ball(bx, by, BALL_R[session.server_kind])
    session.spin_until(
        lambda: session.ball is not None and math.hypot(session.ball[0] - bx, session.ball[1] - by) < MOVED,
        30.0,
        'the monitor stream did not tell where the ball went',
    )
    session.wait_cycles(10)
    start = session.ball
    assert start is not None
    heading = p.yaw + math.radians(direction_deg)
    target = (start[0] + WALK_KICK_TARGET * math.cos(heading), start[1] + WALK_KICK_TARGET * math.sin(heading))
    trial = KickTrial(spot=(round(behind, 3), round(across, 3)), kick_s=None)
    t0 = session.cycles * CYCLE
    request = Kick(target=target, kick=name, id=session.cycles)
    session.request(request.to_text())
    kicking = over = ended = None  # server times the task was seen kicking / over / over with the walk stopped
    rest_from: tuple[float, tuple[float, ...]] = (t0, start)
    last = start
    while True:
        session.wait_cycles(1)
        now = session.cycles * CYCLE
        task = session.state.get('task') or {}
        phase = task.get('phase', '') if task.get('id') == request.id else ''
        if phase == 'kicking' and kicking is None:
            kicking = now
            trial.kick_s = round(now - t0, 3)
        if phase in ('done', 'failed', 'cancelled') and over is None:
            over = now
        # the kick is over once the walk that took it has stopped: a fall in its last steps is the kick's
        stopped = not (session.state.get('walk') or {}).get('moving') or session.state.get('skill') != 'walk'
        if over is not None and ended is None and (stopped or now - over >= WALK_STOP_S):
            ended = now
        _note_fall(session, trial, now - t0, ended is None or now - ended < STAND_AFTER)
        ball = session.ball or last
        last = ball
        if trial.contact_s is None and math.dist(ball[:2], start[:2]) > MOVED:
            trial.contact_s = round(session.ball_t - t0, 3)
            trial.early = kicking is None and phase != 'kicking'
        if math.dist(ball[:2], rest_from[1][:2]) > REST_SPEED * REST_S:
            rest_from = (now, ball)
        if now - t0 > NO_KICK_S + ROLL_TIMEOUT:
            break
        settled = ended is not None and (now - ended >= STAND_AFTER or trial.fell)
        if trial.contact_s is None:
            if (now - t0 > NO_KICK_S and settled) or (ended is not None and now - ended > 2.0):
                break
            continue
        if settled and (now - rest_from[0] >= REST_S or now - t0 - trial.contact_s > ROLL_TIMEOUT):
            break
    trial.standing = not trial.fell and not _fallen(session)
    _measure(trial, start, last, heading)
    return trial


def _measure(trial: KickTrial, start: tuple[float, ...], end: tuple[float, ...], heading: float) -> None:
    """The ball's travel from ``start`` to ``end``: its distance, along ``heading`` (rad), and the angle off it."""
    dx, dy = end[0] - start[0], end[1] - start[1]
    trial.distance = round(math.hypot(dx, dy), 3)
    ux, uy = math.cos(heading), math.sin(heading)
    trial.along = round(dx * ux + dy * uy, 3)
    if trial.kicked:
        trial.angle_deg = round(math.degrees(math.atan2(ux * dy - uy * dx, dx * ux + dy * uy)), 2)
        trial.angle_err_deg = abs(trial.angle_deg)
        trial.backward = trial.along < 0.0


def run_kicks(
    session: SimSession,
    kick: str,
    trials: int = 5,
    seed: int = 1,
    foot: str = 'right',
    noise: float = 0.0,
    direction_deg: float = 0.0,
    spot: tuple[float, float] | None = None,
    swing_s: float | None = None,
    skill_files: tuple[str, ...] = (),
    trace: bool = False,
    yaw_spread: float = 0.3,
    walk_in: float = 0.0,
    walk_in_rest: float = WALK_IN_EASE,
    strength: float | None = None,
) -> KickResult:
    """``trials`` kicks (see the module doc); ``foot`` right, left or both (by turns); ``noise``:
    the ball's spot uniformly within +-``noise`` m in x and y; ``strength``: the Nao's ``var`` kick's
    ``kick_strength`` (0-1)."""
    if kick not in KICKS:
        raise ValueError(f'unknown kick {kick!r}; kicks: {", ".join(KICKS)}')
    rng = random.Random(seed)
    if kick == 'walk':  # an in-walk kick: a walk-up from 0.8-1.4 m, the foot the task chooses
        result = KickResult('kick-walk', 'walk', trials)
        for _ in range(trials):
            behind, across = rng.uniform(*WALK_KICK_FROM), rng.uniform(-noise, noise)
            yaw = rng.uniform(-yaw_spread, yaw_spread)
            result.kicks.append(walk_kick_once(session, behind, across, direction_deg, yaw))
        return result
    base, swing = kick_setup(session.robot, kick, skill_files, session.robot_type)
    base = spot or base
    swing = swing if swing_s is None else swing_s
    result = KickResult(f'kick-{kick}', skill_name(kick, foot if foot != 'both' else 'right'), trials)
    for k in range(trials):
        side = ('right', 'left')[k % 2] if foot == 'both' else foot
        x, y = base[0], base[1] if side == 'right' else -base[1]
        x, y = x + rng.uniform(-noise, noise), y + rng.uniform(-noise, noise)
        yaw = rng.uniform(-yaw_spread, yaw_spread)
        name = skill_name(kick, side) + (f' kick_strength={strength:g}' if strength is not None else '')
        result.kicks.append(kick_once(session, name, (x, y), swing, direction_deg, yaw, trace, walk_in, walk_in_rest))
    return result


def main(argv: list[str] | None = None) -> int:
    """Run kick trials in a fresh session and print the result as JSON."""
    ap = argparse.ArgumentParser(prog='python -m robocup3d_tools.kick_tasks', description=__doc__.split('\n')[0])
    ap.add_argument('--server', choices=SERVERS, default='mujoco')
    ap.add_argument('--robot', default='T1', help='T1 or K1 (mujoco); simspark always runs the Nao')
    ap.add_argument('--type', dest='robot_type', type=int, default=0, help='Nao type 0-4 (simspark)')
    ap.add_argument('--kick', choices=KICKS, default='long')
    ap.add_argument('--foot', choices=('right', 'left', 'both'), default='right')
    ap.add_argument('--strength', type=float, default=None, help="var (the Nao's): its kick_strength, 0-1")
    ap.add_argument('--trials', type=int, default=5)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--noise', type=float, default=0.0, help='m: the ball within +-noise of its spot in x and y')
    ap.add_argument('--direction', type=float, default=0.0, help='wanted direction, deg left of the heading')
    ap.add_argument('--spot', type=float, nargs=2, default=None, metavar=('X', 'Y'), help='ball spot (right foot)')
    ap.add_argument('--swing', type=float, default=None, help='s from the skill start before which a touch is early')
    ap.add_argument('--skill-params', nargs='*', default=[], metavar='FILE', help='skill files the player loads')
    ap.add_argument('--yaw-spread', type=float, default=0.3, help='rad: the robot faces a random way within +-this')
    ap.add_argument('--walk-in', type=float, default=0.0, help='s the robot walks forward before each kick')
    ap.add_argument(
        '--walk-in-rest',
        type=float,
        default=WALK_IN_EASE,
        help="s after the walk-in stops before the kick is requested (a kick's rest in play)",
    )
    ap.add_argument('--kicks-config', default='', help='walk: the kicks file the player reads (default: shipped)')
    ap.add_argument(
        '--trace',
        action='store_true',
        help='the torso, the ball (its height: bz) and the legs every other cycle, on stderr',
    )
    ap.add_argument('--realtime', action='store_true', help='the server at real time (default: sync, flat out)')
    args = ap.parse_args(argv)
    end_with_parent()  # a lost optimize worker takes this session's server and player with it
    player_args = ['--skill-params', *args.skill_params] if args.skill_params else []
    if args.kick == 'walk':  # the walk-up needs the player's own estimates, as in play
        player_args += ['--world-model', *(['--kicks-config', args.kicks_config] if args.kicks_config else [])]
    with SimSession(
        args.robot, server=args.server, robot_type=args.robot_type, player_args=player_args, fast=not args.realtime
    ) as session:
        result = run_kicks(
            session,
            args.kick,
            args.trials,
            args.seed,
            args.foot,
            args.noise,
            args.direction,
            tuple(args.spot) if args.spot else None,
            args.swing,
            tuple(args.skill_params),
            args.trace,
            args.yaw_spread,
            args.walk_in,
            args.walk_in_rest,
            args.strength,
        )
        print(json.dumps(result.as_dict()), flush=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
