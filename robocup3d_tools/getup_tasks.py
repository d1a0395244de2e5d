"""Get-up tasks run through the graph and scored from the server's ground truth.

A trial knocks the standing robot over and times it back to upright:

* RCSSServerMJ (T1, K1): the trainer lays it down (``move3d``), face down (``front``), on its
  back (``back``) or on a side (``left``/``right``; ``side``: both by turns), facing a random way;
* rcssserver3d (Nao): the trainer can only place a robot upright, so this process holds a
  falling pose on the player's ``joint_targets`` (:data:`KNOCK_DEG`) until the motion node
  reports the fall, then lets go. Each trial places the robot somewhere else within
  :data:`SPREAD` of :data:`START`, facing a random way, waits a random while, and knocks it
  down with the pose's angles scaled by a random factor within :data:`KNOCK_SCALE`, so that a
  candidate's trials are not one fall repeated.

Time runs from the motion node's fall report (``motion_state``) to the start of a stretch of
:data:`HOLD` seconds in which the torso stands (its z axis within about 25 degrees of vertical, its
height above :data:`UPRIGHT_Z`) and the motion node is neither fallen nor getting up. A trial
fails when that has not begun :data:`TIMEOUT` s after the report; a robot that stands and falls
again within :data:`REFALL_S` counts as a ``refall``. ``upright_times`` holds, for the same successful
trials, when the torso came upright in the stretch that ended so, whether the get-up still played then
or not (as ``bench/bench_getup.py`` counts; a get-up's last frames often only straighten a robot that is up).

``python -m robocup3d_tools.getup_tasks --robot T1 --direction back --trials 5`` (or ``--server
simspark --type 2``) prints the result as JSON; ``robocup3d optimize --task getup-back`` runs
candidates this way, one process each.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
from dataclasses import asdict, dataclass, field

from robocup3d_tools.servers import end_with_parent
from robocup3d_tools.sim_session import CYCLE, SERVERS, SimSession

__all__ = ['DIRECTIONS', 'GetupResult', 'run_getup']

DIRECTIONS = ('front', 'back', 'left', 'right', 'side')  # side: left and right by turns
START = (-3.0, 0.0, 0.0)
SPREAD = 2.0  # m: rcssserver3d trials stand within this of START, each facing a random way
KNOCK_SCALE = (0.85, 1.15)  # rcssserver3d: each trial's falling pose is KNOCK_DEG times a factor within this
HOLD = 0.5  # s upright that counts as standing
TIMEOUT = 10.0  # s from the fall report
REFALL_S = 2.0  # s after standing in which a fall counts against the get-up
UPRIGHT_UP = 0.9  # z of the torso's z axis (cos 25.8 deg)
#: torso height (m) above which a robot stands
UPRIGHT_Z = {'T1': 0.55, 'K1': 0.46, 'nao': 0.30}
#: the Nao's falling poses (deg) per direction, held on ``joint_targets`` until the fall is reported
KNOCK_DEG = {
    'front': {'llj3': 70, 'rlj3': 70, 'llj4': 0, 'rlj4': 0, 'llj5': 30, 'rlj5': 30, 'laj1': 90, 'raj1': 90},
    'back': {'llj3': -25, 'rlj3': -25, 'llj4': -60, 'rlj4': -60, 'llj5': -45, 'rlj5': -45, 'laj1': -120, 'raj1': -120},
    'left': {'llj2': -35, 'rlj2': -35, 'llj6': 25, 'rlj6': 25, 'raj2': -90},
    'right': {'llj2': 35, 'rlj2': 35, 'llj6': -25, 'rlj6': -25, 'laj2': 90},
}
#: RCSSServerMJ: the torso's (pitch, roll) lying down, rad
LYING = {
    'front': (math.pi / 2, 0.0),
    'back': (-math.pi / 2, 0.0),
    'left': (0.0, -math.pi / 2),
    'right': (0.0, math.pi / 2),
}


@dataclass
class GetupResult:
    """What the trials of one direction measured (times in s of server time)."""

    task: str
    trials: int
    times: list[float] = field(default_factory=list)  # of the successful trials
    upright_times: list[float] = field(default_factory=list)  # the same trials: the torso up, the skill maybe playing
    refalls: int = 0
    not_knocked: int = 0  # trials where the robot never fell (not counted as failures)

    @property
    def successes(self) -> int:
        return len(self.times)

    def as_dict(self) -> dict:
        d = asdict(self)
        counted = self.trials - self.not_knocked
        d['successes'] = self.successes
        d['success_rate'] = self.successes / counted if counted else None
        d['median_s'] = round(statistics.median(self.times), 3) if self.times else None
        return d


def _upright(session: SimSession) -> bool:
    p, state = session.pose, session.state
    if p is None or state.get('fallen') or state.get('getup'):
        return False
    return p.up > UPRIGHT_UP and p.z > UPRIGHT_Z.get(session.robot, 0.3)


def _knock(session: SimSession, direction: str, rng: random.Random) -> float | None:
    """Knock the standing robot over; the server time (s) of the fall report, or None if it never fell."""
    if session.simspark:
        scale = rng.uniform(*KNOCK_SCALE)
        pose = {joint: deg * scale for joint, deg in KNOCK_DEG[direction].items()}
        deadline = session.cycles + round(4.0 / CYCLE)
        while not session.state.get('fallen') and session.cycles < deadline:
            session.hold_pose(pose)
            session.wait_cycles(1)
        session.hold_pose({})
    else:
        pitch, roll = LYING[direction]
        x, y, _ = START
        session.lay_down(
            x + rng.uniform(-0.2, 0.2), y + rng.uniform(-0.2, 0.2), rng.uniform(-math.pi, math.pi), pitch, roll
        )
        deadline = session.cycles + round(4.0 / CYCLE)
        while not session.state.get('fallen') and session.cycles < deadline:
            session.wait_cycles(1)
    return session.cycles * CYCLE if session.state.get('fallen') else None


def _torso_up(session: SimSession) -> bool:
    """The torso upright and high (the get-up may still play), the robot not reported fallen."""
    p = session.pose
    if p is None or session.state.get('fallen'):
        return False
    return p.up > UPRIGHT_UP and p.z > UPRIGHT_Z.get(session.robot, 0.3)


def _time_to_upright(session: SimSession, fell_at: float) -> tuple[float, float] | None:
    """Seconds from ``fell_at`` until the robot has stood for :data:`HOLD`, and until its torso came up in the
    stretch that led there (:func:`_torso_up`; at most the first); None after :data:`TIMEOUT`."""
    up_since: float | None = None
    torso_since: float | None = None
    while session.cycles * CYCLE - fell_at < TIMEOUT + HOLD:
        session.wait_cycles(1)
        now = session.cycles * CYCLE
        if not _torso_up(session):
            torso_since = None
        elif torso_since is None:
            torso_since = now
        if not _upright(session):
            up_since = None
        elif up_since is None:
            up_since = now
        elif now - up_since >= HOLD:
            if up_since - fell_at > TIMEOUT:
                return None
            return up_since - fell_at, min(torso_since if torso_since is not None else up_since, up_since) - fell_at
    return None


def _falls_within(session: SimSession, seconds: float) -> bool:
    end = session.cycles + round(seconds / CYCLE)
    while session.cycles < end:
        session.wait_cycles(1)
        if session.state.get('fallen'):
            return True
    return False


def run_getup(session: SimSession, direction: str, trials: int = 5, seed: int = 1) -> GetupResult:
    """``trials`` knock-downs in ``direction`` (see the module doc), each from a fresh stand."""
    if direction not in DIRECTIONS:
        raise ValueError(f'unknown direction {direction!r}; directions: {", ".join(DIRECTIONS)}')
    rng = random.Random(seed)
    result = GetupResult(f'getup-{direction}', trials)
    for k in range(trials):
        if session.simspark:
            x, y, _ = START
            session.place(
                x + rng.uniform(-SPREAD, SPREAD), y + rng.uniform(-SPREAD, SPREAD), rng.uniform(-math.pi, math.pi)
            )
        else:
            session.place(*START)
        session.wait_cycles(round(rng.uniform(0.2, 0.6) / CYCLE))
        fell_at = _knock(session, ('left', 'right')[k % 2] if direction == 'side' else direction, rng)
        if fell_at is None:
            result.not_knocked += 1
            continue
        took = _time_to_upright(session, fell_at)
        if took is not None:
            result.times.append(round(took[0], 3))
            result.upright_times.append(round(took[1], 3))
            result.refalls += _falls_within(session, REFALL_S)
    return result


def main(argv: list[str] | None = None) -> int:
    """Run get-up trials in a fresh session and print the result as JSON."""
    ap = argparse.ArgumentParser(prog='python -m robocup3d_tools.getup_tasks', description=__doc__.split('\n')[0])
    ap.add_argument('--server', choices=SERVERS, default='mujoco')
    ap.add_argument('--robot', default='T1', help='T1 or K1 (mujoco); simspark always runs the Nao')
    ap.add_argument('--type', dest='robot_type', type=int, default=0, help='Nao type 0-4 (simspark)')
    ap.add_argument('--direction', choices=DIRECTIONS, default='back')
    ap.add_argument('--trials', type=int, default=5)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--skill-params', nargs='*', default=[], metavar='FILE', help='skill files the player loads')
    args = ap.parse_args(argv)
    end_with_parent()  # a lost optimize worker takes this session's server and player with it
    player_args = ['--skill-params', *args.skill_params] if args.skill_params else []
    with SimSession(args.robot, server=args.server, robot_type=args.robot_type, player_args=player_args) as session:
        print(json.dumps(run_getup(session, args.direction, args.trials, args.seed).as_dict()), flush=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
