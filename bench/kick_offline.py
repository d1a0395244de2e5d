"""Offline T1/K1 kick loop: RCSSServerMJ's own simulation and our motion core in one process (no sockets).

An experiment tool, not a measurement: every figure in the docs comes from ``kick_tasks`` on the real server.
The simulation is ``mj_offline``'s (the server's ``SoccerSimulation`` and our ``MotionCore`` in lockstep).
A settled stand (and one 0.5 s after a 3 s walk at 0.15 m/s stopped, as ``kick_tasks --walk-in 3``) is
saved once and restored for every trial, so a kick costs only its own seconds (about 3-5 s of wall time on
the shared 2-core machine).

``--search OUT`` runs CMA-ES over :data:`NAMES`, a right-foot kick of six frames (weight shift, draw-back, hip
swing with the knee bent, knee snap, landing, stand) with IMU feedback on the stance leg (a skill's
``balance:``), scored by ``score``: minus the distance along the heading (capped), plus a graded fall penalty
(later falls and smaller tilts score better), so that the search has a direction before any candidate stands.
``--eval FILE`` kicks a skill file ``--trials`` times (both feet, ball within +-3 cm; stand and walk-in by turns).
``--robot K1`` does all this with a K1 (:data:`ROBOT_NAMES`: its own ball spot's start and bounds, its gains).

    PYTHONPATH=. python bench/kick_offline.py --search t1_stand --generations 10 --popsize 10 --trials 2
    PYTHONPATH=. python bench/kick_offline.py --eval robocup3d_motion/skills/data/T1/kick_long.yaml --trials 8
    PYTHONPATH=. python bench/kick_offline.py --robot K1 --search k1_long --generations 10 --popsize 10 --trials 2
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path

import numpy as np
import yaml
from mj_offline import CYCLE, Snapshot, stand

#: name, start, step (CMA sigma 1 = this), lower, upper; deg, s and m; a right-foot kick (the left mirrors it)
NAMES = [
    ('s1', 6, 3, 0, 11),  # stance hip roll inwards (llj2 = -s1)
    ('s2', 6, 4, -5, 20),  # kicking hip roll outwards (rlj2 = -s2)
    ('s3', 6, 3, -5, 14),  # both ankle rolls (llj6 = rlj6 = s3)
    ('c', 5, 5, -5, 25),  # stance crouch (knee 25 + c)
    ('t0', 0.25, 0.06, 0.12, 0.5),
    ('h1', 10, 10, -20, 40),  # draw-back: hip, knee, ankle of the kicking leg
    ('k1', 70, 15, 30, 120),
    ('a1', -20, 8, -45, 15),
    ('t1', 0.2, 0.06, 0.08, 0.4),
    ('h2', -45, 10, -90, -10),  # hip swing, the knee still bent
    ('k2', 75, 12, 20, 120),
    ('a2', -10, 8, -40, 15),
    ('t2', 0.12, 0.04, 0.05, 0.3),
    ('h2b', -55, 10, -90, -10),  # knee snap
    ('k2b', 10, 10, 0, 60),
    ('a2b', 0, 8, -30, 15),
    ('t2b', 0.08, 0.03, 0.03, 0.2),
    ('h3', -25, 10, -60, 0),  # landing
    ('k3', 30, 10, 0, 80),
    ('a3', -10, 8, -40, 15),
    ('t3', 0.2, 0.06, 0.06, 0.45),
    ('r3', 0.5, 0.3, -0.5, 1.0),  # share of the weight shift kept while landing
    ('arm3', 10, 20, -60, 65),  # both shoulders' pitch while landing
    ('t4', 0.35, 0.1, 0.15, 0.8),
    ('arm1', -20, 15, -80, 60),  # both shoulders' pitch in the draw-back (negative: forwards)
    ('arm', 50, 15, -20, 65),  # both shoulders' pitch in the swing (positive: backwards)
    ('lean', 0, 4, -10, 10),  # stance hip pitch offset in the shift (positive: torso back)
    ('bp_h', 0, 0.3, -2, 2),  # feedback: stance hip pitch per torso pitch
    ('bp_a', 0, 0.3, -2, 2),  # stance ankle pitch per torso pitch
    ('bd_p', 0, 0.05, -0.3, 0.3),  # stance hip and ankle pitch per pitch rate
    ('br_h', 0, 0.3, -2, 2),  # stance hip roll per torso roll
    ('br_a', 0, 0.3, -2, 2),  # stance ankle roll per torso roll
    ('bd_r', 0, 0.05, -0.3, 0.3),  # stance ankle roll per roll rate
    ('x', 0.40, 0.02, 0.34, 0.46),  # ball spot
    ('y', -0.10, 0.02, -0.18, -0.02),
]
#: per robot, :data:`NAMES` entries that differ from the T1's (the K1's legs are about 0.8 times as long)
ROBOT_NAMES = {
    'T1': [],
    'K1': [('x', 0.28, 0.02, 0.2, 0.36), ('y', -0.08, 0.02, -0.15, -0.02)],
}
#: per robot, values the T1's kick does not have: hip yaws (deg) of the kicking leg from the draw-back to the snap
#: and of the stance leg from the weight shift to the landing, both back to 0 in the return
ROBOT_EXTRA = {'T1': [], 'K1': [('yaw', 0, 5, -20, 20), ('syaw', 0, 5, -20, 20)]}
EXTRA_NAMES = {n[0] for extra in ROBOT_EXTRA.values() for n in extra}
STAND = {'llj1': -12, 'llj4': 25, 'llj5': -13, 'rlj1': -12, 'rlj4': 25, 'rlj5': -13, 'laj1': 10, 'raj1': 10}
GAINS_KP = {'rlj1': 250, 'rlj4': 250, 'rlj5': 150, 'llj1': 300, 'llj4': 300, 'llj5': 300, 'llj2': 200}
GAINS_KP |= {'llj6': 200, 'rlj2': 150, 'rlj6': 150}
#: the kick's gains per robot (the K1's hip and knee motors give 30-40 N m, the T1's 45-60)
ROBOT_KP = {'T1': GAINS_KP, 'K1': GAINS_KP | {'rlj1': 160, 'rlj4': 160, 'llj1': 200, 'llj4': 200}}


def _yaws(p: dict[str, float], frames: list[tuple[float, dict]]) -> None:
    """Add the hip yaws of ``p`` (if it has them) to ``frames``."""
    if 'yaw' not in p:
        return
    for k in (1, 2, 3):
        frames[k][1]['rlj3'] = p['yaw']
    for k in range(5):
        frames[k][1]['llj3'] = p['syaw']
    frames[5][1].update(rlj3=0.0, llj3=0.0)


def use_robot(robot: str) -> None:
    """Make :data:`NAMES` and :data:`GAINS_KP` ``robot``'s (the T1's by default)."""
    global GAINS_KP  # noqa: PLW0603
    over = {n[0]: n for n in ROBOT_NAMES[robot]}
    NAMES[:] = [over.get(n[0], n) for n in NAMES if n[0] not in EXTRA_NAMES] + ROBOT_EXTRA[robot]
    GAINS_KP = ROBOT_KP[robot]


def clamp(p: dict[str, float]) -> dict[str, float]:
    """``p`` completed with :data:`NAMES`' starts and clamped to their bounds."""
    return {n: min(max(float(p.get(n, x0)), lo), hi) for n, x0, _, lo, hi in NAMES}


def skill(p: dict[str, float]) -> dict:
    """The YAML skill (``KICK_LONG_RIGHT`` with its mirror) of the values ``p`` (rounded as optimize writes)."""
    c, lean, r3 = p['c'], p['lean'], p['r3']
    frames = [
        (p['t0'], {'llj2': -p['s1'], 'rlj2': -p['s2'], 'llj6': p['s3'], 'rlj6': p['s3'], 'llj4': 25 + c,
                   'llj1': -12 - c / 2 + lean, 'llj5': -13 - c / 2}),
        (p['t1'], {'rlj1': p['h1'], 'rlj4': p['k1'], 'rlj5': p['a1'], 'laj1': p['arm1'], 'raj1': p['arm1']}),
        (p['t2'], {'rlj1': p['h2'], 'rlj4': p['k2'], 'rlj5': p['a2'], 'laj1': p['arm'], 'raj1': p['arm']}),
        (p['t2b'], {'rlj1': p['h2b'], 'rlj4': p['k2b'], 'rlj5': p['a2b']}),
        (p['t3'], {'rlj1': p['h3'], 'rlj4': p['k3'], 'rlj5': p['a3'], 'llj2': -p['s1'] * r3, 'rlj2': -p['s2'] * r3,
                   'llj6': p['s3'] * r3, 'rlj6': p['s3'] * r3, 'laj1': p['arm3'], 'raj1': p['arm3']}),
        (p['t4'], {'llj2': 0, 'rlj2': 0, 'llj6': 0, 'rlj6': 0, **STAND}),
    ]  # fmt: skip
    _yaws(p, frames)
    until = sum(t for t, _ in frames[:5]) + p['t4'] * 0.5  # up to half way through the return
    r3f = lambda v: round(float(v), 3)  # noqa: E731
    return {
        'name': 'KICK_LONG_RIGHT',
        'mirror': 'KICK_LONG_LEFT',
        'ball': [r3f(p['x']), r3f(p['y'])],
        'swing': r3f(p['t0'] + p['t1']),
        'kp': GAINS_KP,
        'kd': {'llj1': 4, 'llj4': 4},
        'balance': {
            'pitch': {'llj1': r3f(p['bp_h']), 'llj5': r3f(p['bp_a'])},
            'pitch_rate': {'llj1': r3f(p['bd_p']), 'llj5': r3f(p['bd_p'])},
            'roll': {'llj2': r3f(p['br_h']), 'llj6': r3f(p['br_a'])},
            'roll_rate': {'llj6': r3f(p['bd_r'])},
            'max_offset_deg': 15,
            'from': 0.0,
            'until': r3f(until),
        },
        'frames': [{'t': round(float(t), 3), 'q': {k: round(float(v), 1) for k, v in q.items()}} for t, q in frames],
    }


class Bench:
    """A settled stand (after a walk-in of ``walk_in`` s) saved once and restored for each kick."""

    def __init__(self, walk_in: float = 0.0, rest: float = 0.5, robot: str = 'T1') -> None:
        self.o = o = stand(robot=robot)
        if walk_in > 0.0:
            for _ in range(round(walk_in / CYCLE)):
                o.core.set_velocity(0.15, 0.0, 0.0)
                o.cycle()
            o.core.set_velocity(0.0, 0.0, 0.0)
            for _ in range(500):
                o.cycle()
                if o.core.skill == 'stand':
                    break
            o.run(rest)
        self.snapshot = Snapshot(o)

    def trial(self, path: str, foot: str, spot: tuple[float, float], noise: tuple[float, float], after: float = 1.5):
        """One kick of the skill file ``path``: distance, angle (deg), fall time (s) or None, largest tilt (deg)."""
        from robocup3d_motion.getup import load_keyframe_skills  # noqa: PLC0415

        o = self.snapshot.restore()
        o.run(0.3)
        right, left = load_keyframe_skills(path, o.spec)
        o.core.skills.update({right.name: right, left.name: left})
        kick = right if foot == 'right' else left
        sx, sy = spot[0] + noise[0], (spot[1] if foot == 'right' else -spot[1]) + noise[1]
        pos, yaw = o.sim.mj_data.xpos[o.torso], o.yaw()
        c, s = math.cos(yaw), math.sin(yaw)
        bx, by = pos[0] + c * sx - s * sy, pos[1] + s * sx + c * sy
        o.sim.request_drop_ball((bx, by))  # play on again: a ball out of play is held by the referee
        o.sim.request_place_ball((bx, by, 0.11))
        o.run(0.1)
        b0 = o.ball()
        assert o.core.request(kick.name) == ''
        fell, tilt = None, 0.0
        for i in range(round((kick.duration + after) / CYCLE)):
            o.cycle()
            tilt = max(tilt, math.degrees(math.acos(max(-1.0, min(1.0, o.up())))))
            if o.up() < 0.5:
                fell = (i + 1) * CYCLE
                break
        for _ in range(200):  # let the ball roll out
            b = o.ball()
            o.cycle()
            if math.dist(o.ball()[:2], b[:2]) < 0.001:
                break
        b = o.ball()
        dx, dy = b[0] - b0[0], b[1] - b0[1]
        return {
            'dist': round(math.hypot(dx, dy), 2),
            'along': round(float(dx * c + dy * s), 2),
            'angle': round(math.degrees(math.remainder(math.atan2(dy, dx) - yaw, math.tau)), 1),
            'fell_t': fell,
            'max_tilt': round(tilt, 1),
            'duration': kick.duration,
        }


def score(r: dict, cap: float, target: float | None = None, angle_weight: float = 0.05) -> float:
    """Lower is better: minus the distance along the heading (up to ``cap`` m), or how far it ends from ``target`` m
    along it; a graded fall penalty; ``angle_weight`` per deg of direction error beyond 8."""
    reach = -min(r['along'], cap) if target is None else abs(r['along'] - target)
    s = reach + (3.0 if r['dist'] < 0.1 else 0.0) + 0.3 * max(0.0, r['max_tilt'] - 12.0)
    if r['fell_t'] is not None:
        s += 20.0 + 20.0 * max(0.0, 1.0 - r['fell_t'] / (r['duration'] + 1.5))
    return s + angle_weight * max(0.0, abs(r['angle']) - 8.0)


def _benches(args: argparse.Namespace) -> list[Bench]:
    """The starts trials take by turns: a settled stand and a walk-in, or (``--walk-in-only``) the walk-in twice."""
    walk = Bench(3.0, args.rest, args.robot)
    return [walk, walk] if args.walk_in_only else [Bench(robot=args.robot), walk]


def write_blend(soft_file: Path, hard_file: str, strength: float, out: Path) -> None:
    """The right-foot kick ``strength`` of the way from ``soft_file``'s to ``hard_file``'s (``blend_skills``, as a
    kick of chosen length plays it) as a skill file at ``out``, with the hard kick's ball spot and mirror."""
    from robocup3d_motion.getup import blend_skills, load_keyframe_skills  # noqa: PLC0415

    soft, hard = load_keyframe_skills(soft_file)[0], load_keyframe_skills(hard_file)[0]
    doc = yaml.safe_load(Path(hard_file).read_text())
    blend = blend_skills(soft, hard, strength)
    b = blend.balance
    assert b is not None
    doc['balance'] = {
        'pitch': b.pitch, 'pitch_rate': b.pitch_rate, 'roll': b.roll, 'roll_rate': b.roll_rate,
        'max_offset_deg': round(math.degrees(b.max_offset), 3), 'from': b.start, 'until': b.end,
    }  # fmt: skip
    doc['frames'] = [{'t': f.duration, 'q': {j: math.degrees(v) for j, v in f.targets.items()}} for f in blend.frames]
    out.write_text(yaml.safe_dump(doc, sort_keys=False))


def _blend_score(args: argparse.Namespace, benches: list[Bench], cand: Path, rng: random.Random):
    """A soft kick candidate scored by its blends with ``--blend`` at ``--strengths``, each against its target."""
    spot = tuple(yaml.safe_load(Path(args.blend).read_text())['ball'])
    per = max(1, args.trials // len(args.strengths))
    res, total = [], 0.0
    for k, (strength, target) in enumerate(zip(args.strengths, args.targets, strict=True)):
        path = cand.with_suffix(f'.{k}.yaml')
        write_blend(cand, args.blend, strength, path)
        for i in range(per):
            noise = (rng.uniform(-0.03, 0.03), rng.uniform(-0.03, 0.03))
            r = benches[i % 2].trial(str(path), 'right', spot, noise)
            total += score(r, args.cap, target)
            res.append({**r, 'strength': strength})
    return total / len(res), res


def search(args: argparse.Namespace) -> None:
    import cma  # noqa: PLC0415

    start = clamp(json.loads(Path(args.start).read_text()) if args.start else {})
    x0, sig = [start[n[0]] for n in NAMES], [n[2] for n in NAMES]
    benches = _benches(args)
    rng = random.Random(args.seed)
    out = Path(args.search)
    cand = out.with_suffix('.cand.yaml')
    es = cma.CMAEvolutionStrategy(np.zeros(len(NAMES)), args.sigma, {'popsize': args.popsize, 'seed': args.seed})
    best = math.inf
    with out.with_suffix('.jsonl').open('a') as log:
        for g in range(args.generations):
            zs, fs = es.ask(), []
            for z in zs:
                p = clamp({n[0]: x + s * zi for n, x, s, zi in zip(NAMES, x0, sig, z, strict=True)})
                cand.write_text(yaml.safe_dump(skill(p), sort_keys=False))
                if args.blend:
                    f, res = _blend_score(args, benches, cand, rng)
                else:
                    res = [
                        benches[k % 2].trial(str(cand), 'right', (p['x'], p['y']), (rng.uniform(-0.03, 0.03),
                                             rng.uniform(-0.03, 0.03)))
                        for k in range(args.trials)
                    ]  # fmt: skip
                    f = sum(score(r, args.cap, args.target, args.angle_weight) for r in res) / len(res)
                fs.append(f)
                log.write(json.dumps({'g': g, 'score': f, 'p': p, 'res': res}) + '\n')
                log.flush()
                if f < best:
                    best = f
                    out.with_suffix('.json').write_text(json.dumps(p))
                    out.with_suffix('.yaml').write_text(yaml.safe_dump(skill(p), sort_keys=False))
            es.tell(zs, fs)
            print(f'generation {g}: best {min(fs):.2f}, overall {best:.2f}', flush=True)


def evaluate(args: argparse.Namespace) -> None:
    doc = yaml.safe_load(Path(args.eval).read_text())
    spot = tuple(doc['ball'])
    benches = _benches(args)
    rng = random.Random(args.seed)
    for k in range(args.trials):
        foot = 'right' if (k // 2) % 2 == 0 else 'left'
        r = benches[k % 2].trial(args.eval, foot, spot, (rng.uniform(-0.03, 0.03), rng.uniform(-0.03, 0.03)))
        print(('walk-in ' if k % 2 or args.walk_in_only else 'stand   ') + foot, json.dumps(r), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--search', metavar='OUT', help='CMA-ES; writes OUT.jsonl, OUT.json and OUT.yaml (the best)')
    ap.add_argument('--start', help='JSON of NAMES values to start from')
    ap.add_argument('--eval', metavar='FILE', help='kick this skill file --trials times')
    ap.add_argument('--generations', type=int, default=20)
    ap.add_argument('--popsize', type=int, default=10)
    ap.add_argument('--trials', type=int, default=2, help='per candidate: stand and walk-in by turns')
    ap.add_argument('--sigma', type=float, default=1.0, help='in units of each value step')
    ap.add_argument('--cap', type=float, default=12.0, help='m: longer kicks score no better')
    ap.add_argument('--rest', type=float, default=0.5, help='s the walk-in start stands after its walk stopped')
    ap.add_argument('--walk-in-only', action='store_true', help='every trial from the walk-in (as a walk-up kicks)')
    ap.add_argument('--blend', metavar='HARD', help='search the soft end of a kick of chosen length blended with HARD')
    ap.add_argument('--strengths', type=float, nargs='+', default=[0.0, 0.3, 0.6], help='--blend: strengths tried')
    ap.add_argument('--targets', type=float, nargs='+', default=[4.5, 7.0, 9.5], help='--blend: m, one a strength')
    ap.add_argument('--target', type=float, help='m: search a kick of this length (along the heading) instead')
    ap.add_argument('--angle-weight', type=float, default=0.05, help='score per deg of direction error beyond 8')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--robot', default='T1', choices=sorted(ROBOT_NAMES), help='T1 or K1')
    args = ap.parse_args()
    use_robot(args.robot)
    if args.search:
        search(args)
    elif args.eval:
        evaluate(args)
    else:
        ap.error('--search OUT or --eval FILE')


if __name__ == '__main__':
    sys.exit(main())
