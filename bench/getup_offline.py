"""Direct-MuJoCo get-up trials of the T1/K1 keyframe skills: a fast, rough stand-in for the server.

    PYTHONPATH=. python bench/getup_offline.py --robot T1 --direction front --trials 20 [--skill FILE ...]
        [--noise 1.0] [--trace]
    PYTHONPATH=. python bench/getup_offline.py --direction front --search 3.t 4.t 9.llj5 ... --generations 40 \
        --trials 6 --sigma 0.08 --out CANDIDATE       # CMA-ES over the shipped skill's values

The scene and the actuators are RCSSServerMJ's (its ``world.xml`` and ``robot.xml``, 4 substeps of 5 ms per
20 ms cycle, the PD law of ``BaseSimulation.ctrl_motor`` on the shared joint with its torque limit); the
controller is the real :class:`~robocup3d_motion.core.MotionCore`, whose command takes effect one
cycle later. A trial lays the robot down as ``getup_tasks`` does and times it from the fall report to
the start of 0.5 s upright. ``noise`` perturbs the joints at the lay-down, its height and tilt, and drops a
command now and then, standing in for what this model lacks. Its verdicts carried over to the server only
roughly before (docs/getup.md): a candidate found here must be timed there.

``--search`` runs CMA-ES (popsize 10) over ``FRAME.t``/``FRAME.JOINT`` values of the shipped skill (or ``--skill``):
a duration within 0.3-1.5 times the file's (the hold after the front roll, ``3.t``, 0.02-0.8 s), a joint within
+-15 deg and its range, a left joint carrying its right twin (not if named ``FRAME.JOINT.solo``); each candidate
is scored by the mean over ``--trials`` trials perturbed at ``--noise`` (new ones each generation) of the time to
upright (``--until``), 12 s for a failure.
The CMA mean of every generation is written to ``OUT.yaml``, the best candidate so far (on its generation's trials) to
``OUT.best.yaml``. ``--until upright`` times as ``bench_getup`` does (1 s upright, the get-up's last frames may still
play), ``stand`` (the default) until the get-up is over.

For a skill of a new shape (session 35: free frames of a get-up from prone, written by hand): ``--step`` widens the
joints' range around the file's values, ``--shaped`` scores a failure by how far up it got (12 s plus up to 4 s: the
best over the trial of the torso's height x its uprightness, halved the farther the CoM is from above the feet),
``--direct`` fails a trial that plays GETUP_BACK (no roll onto the back), ``--timeout`` gives up a trial sooner.
``--trace`` also prints the torso's pitch forward about the lay-down's lateral axis (90 prone, 180 head down).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import mujoco
import numpy as np
import rcsssmj
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from robocup3d_description.robots import mujoco_robot  # noqa: E402
from robocup3d_motion.core import MotionCore  # noqa: E402
from robocup3d_motion.getup import DATA_DIR, KeyframeSkill, load_keyframe_skill  # noqa: E402
from robocup3d_tools.getup_search import keyframe_space  # noqa: E402
from robocup3d_tools.optimize_config import load_optimize_config  # noqa: E402

RES = Path(rcsssmj.__file__).resolve().parent / 'resources'
UPRIGHT_Z = {'T1': 0.55, 'K1': 0.46}
LYING_Z = {'T1': 0.25, 'K1': 0.2}
HOLD = 0.5
#: the lay-down's pitch and roll (rad) per way of lying: on its face, its back, its left or its right side
LAID = {
    'front': (math.pi / 2, 0.0),
    'back': (-math.pi / 2, 0.0),
    'left': (0.0, -math.pi / 2),
    'right': (0.0, math.pi / 2),
}
BENCH_HOLD = 1.0  # s: bench_getup's upright, held this long whether or not the get-up still plays
D2R = math.pi / 180
PREFIX = 'p_'


def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def _qaxis(axis: tuple[float, float, float], angle: float) -> np.ndarray:
    s = math.sin(angle / 2)
    return np.array([math.cos(angle / 2), axis[0] * s, axis[1] * s, axis[2] * s])


class Sim:
    """One robot in RCSSServerMJ's soccer world, driven by the real motion core."""

    def __init__(self, robot: str = 'T1') -> None:
        self.robot = robot
        self.spec = mujoco_robot(robot)
        world = mujoco.MjSpec.from_file(str(RES / 'environments' / 'soccer' / 'world.xml'))
        rspec = mujoco.MjSpec.from_file(str(RES / 'robots' / robot / 'robot.xml'))
        world.worldbody.add_frame().attach_body(rspec.body('torso'), PREFIX, '')
        self.model = m = world.compile()
        self.data = mujoco.MjData(m)
        self.cfg = yaml.safe_load((REPO / 'config' / 'robots.yaml').read_text(encoding='utf-8'))

        def idx(kind: mujoco.mjtObj, name: str) -> int:
            return mujoco.mj_name2id(m, kind, PREFIX + name)

        self.acts = {
            j.name: tuple(idx(mujoco.mjtObj.mjOBJ_ACTUATOR, j.effector + s) for s in ('_pos', '_vel', '_tau'))
            for j in self.spec.joints
        }
        jid = {j.name: idx(mujoco.mjtObj.mjOBJ_JOINT, j.description) for j in self.spec.joints}
        self.qadr = {n: int(m.jnt_qposadr[i]) for n, i in jid.items()}
        torso = idx(mujoco.mjtObj.mjOBJ_BODY, 'torso')
        self.free_q = int(m.jnt_qposadr[m.body_jntadr[torso]])
        self.s_gyro = int(m.sensor_adr[idx(mujoco.mjtObj.mjOBJ_SENSOR, 'torso_gyro')])
        self.s_acc = int(m.sensor_adr[idx(mujoco.mjtObj.mjOBJ_SENSOR, 'torso_acc')])
        self.torso = torso
        self.feet = [idx(mujoco.mjtObj.mjOBJ_BODY, n) for n in ('left_foot_link', 'right_foot_link')]

    def apply(self, targets: dict[str, float], kp: dict[str, float], kd: dict[str, float]) -> None:
        m, d = self.model, self.data
        for name, (ip, iv, it) in self.acts.items():
            p, v = kp.get(name, 0.0), kd.get(name, 0.0)
            d.ctrl[ip], d.ctrl[iv], d.ctrl[it] = targets.get(name, 0.0), 0.0, 0.0
            m.actuator_gainprm[ip, 0], m.actuator_biasprm[ip, 1] = p, -p
            m.actuator_gainprm[iv, 0], m.actuator_biasprm[iv, 2] = v, -v

    def measured(self) -> dict[str, float]:
        return {n: float(self.data.qpos[a]) for n, a in self.qadr.items()}

    def torso_state(self) -> tuple[float, float, float]:
        """Torso height, z of its z axis (up), z of its x axis (chest)."""
        d = self.data
        z = float(d.xpos[self.torso][2])
        r = d.xmat[self.torso]
        return z, float(r[8]), float(r[6])

    def extra(self) -> str:
        """The left hip, knee, ankle and shoulder (deg), the CoM's height, how far it is ahead of the feet (m, towards
        the head at the lay-down), the z of the left sole's normal and the feet's height."""
        d, q = self.data, self.measured()
        legs = ' '.join(f'{q[j] / D2R:4.0f}' for j in ('llj1', 'llj4', 'llj5', 'laj1'))
        com = d.subtree_com[self.torso]
        feet = [
            mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, PREFIX + n)
            for n in ('left_foot_link', 'right_foot_link')
        ]
        fx = 0.5 * (d.xpos[feet[0]] + d.xpos[feet[1]])
        ahead = float(np.dot(com[:2] - fx[:2], self.heading))
        fup = float(d.xmat[feet[0]][8])
        return (
            f' | hip/knee/ankle/arm {legs} com z {com[2]:.2f} ahead {ahead:+.2f} foot up {fup:+.2f} foot z {fx[2]:.2f}'
        )

    def _update_pitch(self, first: bool = False) -> None:
        """``self.pitch``: the torso's pitch forward about its lateral axis at the lay-down (deg, unwrapped): 90
        prone, 180 head down, 270 on the back after a roll forward; unwrapped only while the torso's up axis lies
        near the plane of the lay-down's heading."""
        r = self.data.xmat[self.torso]
        up_h = r[2] * self.heading[0] + r[5] * self.heading[1]
        a = math.degrees(math.atan2(up_h, r[8]))
        if first:
            self.pitch = a
        elif math.hypot(up_h, r[8]) > 0.5:
            self.pitch = a + 360.0 * round((self.pitch - a) / 360.0)

    def com_off(self) -> float:
        """The CoM's horizontal distance from the middle of the feet (m)."""
        d = self.data
        feet = 0.5 * (d.xpos[self.feet[0]] + d.xpos[self.feet[1]])
        return float(np.linalg.norm(d.subtree_com[self.torso][:2] - feet[:2]))

    def upright(self) -> bool:
        z, up, _ = self.torso_state()
        return z > UPRIGHT_Z[self.robot] and up > 0.9

    def trial(
        self,
        skills: dict[str, KeyframeSkill],
        direction: str = 'front',
        seed: int = 0,
        noise: float = 1.0,
        timeout: float = 10.0,
        trace: bool = False,
        until: str = 'stand',
        direct: bool = False,
    ) -> float | None:
        """Seconds from the fall report to 0.5 s upright with the get-up over (``until='stand'``), or to 1 s
        upright as ``bench_getup`` counts it, the get-up still playing or not (``until='upright'``); None if never."""
        rng = random.Random(seed)
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        core = MotionCore(self.spec, self.cfg)
        core.skills.update(skills)
        hold = core.settings.hold_pose
        for i in range(50):  # the controller has stood still before the lay-down
            t = -1.0 + i * 0.02
            core.on_imu(t, (0.0, 0.0, 0.0), (0.0, 0.0, 9.81), t)
            core.step(t, dict(hold), t)
        for n, a in self.qadr.items():
            d.qpos[a] = hold.get(n, 0.0) + noise * rng.uniform(-3, 3) * D2R
        pitch, roll = LAID[direction]
        pitch += noise * rng.uniform(-4, 4) * D2R
        roll += noise * rng.uniform(-4, 4) * D2R
        q = _qmul(
            _qaxis((0, 0, 1), rng.uniform(-math.pi, math.pi)),
            _qmul(_qaxis((1, 0, 0), roll), _qaxis((0, 1, 0), pitch)),
        )
        d.qpos[self.free_q : self.free_q + 3] = (
            -3 + rng.uniform(-0.2, 0.2),
            rng.uniform(-0.2, 0.2),
            LYING_Z[self.robot],
        )
        d.qpos[self.free_q + 2] += noise * rng.uniform(-0.03, 0.03)
        d.qpos[self.free_q + 3 : self.free_q + 7] = q
        mujoco.mj_forward(m, d)
        spine = d.xmat[self.torso].reshape(3, 3)[:, 2]
        self.heading = np.array([spine[0], spine[1]]) / max(1e-6, math.hypot(spine[0], spine[1]))
        cmd, (kp, kd) = dict(hold), core.gains()
        self._update_pitch(first=True)
        self.best_up = 0.0
        fell_at: float | None = None
        up_since: float | None = None
        t = 0.0
        for n in range(int((timeout + 3.0) / 0.02)):
            self.apply(cmd, kp, kd)
            mujoco.mj_step(m, d, 4)
            t += 0.02
            gyro = tuple(float(x) for x in d.sensordata[self.s_gyro : self.s_gyro + 3])
            acc = tuple(float(x) for x in d.sensordata[self.s_acc : self.s_acc + 3])
            core.on_imu(t, gyro, acc, t)
            self._update_pitch()
            new = core.step(t, self.measured(), t)
            if not (noise and rng.random() < 0.1 * noise):
                cmd = new
            kp, kd = core.gains()
            if direct and core.skill == 'GETUP_BACK':  # --direct: a roll onto the back fails the trial
                return None
            if fell_at is None:
                if core.state.fallen:
                    fell_at = t
                elif t > 4.0:
                    return None
                continue
            z, up, _ = self.torso_state()
            if up > 0.0:  # how far up, the more the nearer the CoM is to above the feet
                over = math.exp(-self.com_off() / 0.1)
                self.best_up = max(self.best_up, min(1.0, z / UPRIGHT_Z[self.robot]) * up * (0.5 + 0.5 * over))
            if trace and n % 5 == 0:
                z, up, chest = self.torso_state()
                tilt = math.degrees(math.acos(max(-1.0, min(1.0, up))))
                extra = self.extra()
                print(
                    f'  {t - fell_at:5.2f} z {z:5.2f} tilt {tilt:4.0f} pitch {self.pitch:4.0f} chest {chest:+5.2f} '
                    f'{core.skill}{extra}'
                )
            bench = until == 'upright'
            if self.upright() and (bench or not (core.state.fallen or core.is_getup)):
                up_since = t if up_since is None else up_since
                if t - up_since >= (BENCH_HOLD if bench else HOLD):
                    return up_since - fell_at
            else:
                up_since = None
            if t - fell_at > timeout or not np.all(np.isfinite(d.qpos)):
                return None
        return None


FAIL_S = 12.0
STEP_DEG = 15.0  # a joint within this of the file's value (--step)
SHAPED_S = 4.0  # s: --shaped adds this times (1 - how far up a failure got) to FAIL_S
T_SCALE = (0.3, 1.5)  # a duration within these times the file's
FRONT_HOLD = (0.02, 0.8)  # s: the hold after the front roll (3.t)


def search(
    sim: Sim,
    path: Path,
    direction: str,
    names: list[str],
    generations: int,
    trials: int,
    sigma: float,
    out: Path,
    noise: float = 1.0,
    until: str = 'stand',
    step: float = STEP_DEG,
    shaped: bool = False,
    timeout: float = 10.0,
    direct: bool = False,
) -> None:
    """CMA-ES over ``names`` of the skill file ``path`` (see the module doc); its mean to ``out``.yaml.

    The space is ``robocup3d optimize``'s (:func:`~robocup3d_tools.getup_search.keyframe_space`, its twins from
    config/optimize.yaml), with this search's own steps."""
    import cma  # noqa: PLC0415 - only for a search

    mirror = load_optimize_config('optimize.yaml').getup[sim.robot].model_dump().get('mirror') or {}
    config = {'step': {'default': step}, 't_scale': T_SCALE, 'mirror': mirror}
    space = keyframe_space(sim.robot, direction, path, names, config)
    if direction == 'front' and '3.t' in names:
        i = names.index('3.t')
        lo, hi = list(space.lo), list(space.hi)
        lo[i], hi[i] = FRONT_HOLD
        space = replace(space, lo=tuple(lo), hi=tuple(hi))
    tmp = out.with_suffix('.candidate.yaml')

    def score(x: list[float], seeds: list[int]) -> tuple[float, int]:
        skill = load_keyframe_skill(space.write(x, tmp), sim.spec)
        times, fails = [], 0.0
        for s in seeds:
            times.append(sim.trial({skill.name: skill}, direction, s, noise, timeout, until=until, direct=direct))
            fails += FAIL_S + (SHAPED_S * (1.0 - sim.best_up) if shaped else 0.0) if times[-1] is None else 0.0
        return (sum(t for t in times if t is not None) + fails) / len(times), sum(
            t is not None and t < 5.0 for t in times
        )

    best_ever = (math.inf, None)
    es = cma.CMAEvolutionStrategy(space.x0(), sigma, {'bounds': [0, 1], 'popsize': 10, 'seed': 3, 'verbose': -9})
    for g in range(generations):
        seeds = [5000 + 100 * g + k for k in range(trials)]
        xs = es.ask()
        res = [score(x, seeds) for x in xs]
        es.tell(xs, [r[0] for r in res])
        best = min(res)
        i = min(range(len(res)), key=lambda k: res[k][0])
        if res[i][0] < best_ever[0]:  # the best candidate so far (scored on its generation's trials only)
            best_ever = (res[i][0], xs[i])
            space.write(xs[i], out.with_suffix('.best.yaml'), f'generation {g}: {res[i][0]:.2f} ({res[i][1]} clean)')
        mean = score(es.mean, seeds)
        print(
            f'gen {g} best {best[0]:.2f} ({best[1]}/{trials} clean) mean {mean[0]:.2f} ({mean[1]}/{trials})', flush=True
        )
        space.write(es.mean, out.with_suffix('.yaml'))
        out.with_suffix('.json').write_text(json.dumps({'names': names, 'x': list(map(float, es.mean))}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--robot', default='T1')
    ap.add_argument('--direction', default='front', choices=tuple(LAID))
    ap.add_argument('--trials', type=int, default=20)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--noise', type=float, default=1.0)
    ap.add_argument('--skill', nargs='*', default=[], metavar='FILE')
    ap.add_argument(
        '--until',
        default='stand',
        choices=('stand', 'upright'),
        help='stand: 0.5 s upright with the get-up over; upright: 1 s upright as bench_getup counts it',
    )
    ap.add_argument('--trace', action='store_true', help='print the torso and the legs every 0.1 s')
    ap.add_argument('--search', nargs='*', default=[], metavar='FRAME.KEY', help='CMA-ES over these values')
    ap.add_argument('--generations', type=int, default=40)
    ap.add_argument('--sigma', type=float, default=0.08)
    ap.add_argument('--out', type=Path, default=Path('getup_candidate'))
    ap.add_argument('--step', type=float, default=STEP_DEG, help='--search: a joint within this (deg) of the file')
    ap.add_argument(
        '--shaped',
        action='store_true',
        help='--search: a failure scores more the less far up it got (the best torso height x uprightness)',
    )
    ap.add_argument('--direct', action='store_true', help='a trial that plays GETUP_BACK fails (front: no roll)')
    ap.add_argument('--timeout', type=float, default=10.0, help='s from the fall report to give up a trial')
    args = ap.parse_args()
    sim = Sim(args.robot)
    if args.search:
        path = Path(args.skill[0]) if args.skill else DATA_DIR / args.robot / f'getup_{args.direction}.yaml'
        search(
            sim,
            path,
            args.direction,
            args.search,
            args.generations,
            args.trials,
            args.sigma,
            args.out,
            args.noise,
            args.until,
            args.step,
            args.shaped,
            args.timeout,
            args.direct,
        )
        return 0
    skills = {s.name: s for s in (load_keyframe_skill(f, sim.spec) for f in args.skill)}
    times = []
    for s in range(args.seed, args.seed + args.trials):
        took = sim.trial(
            skills, args.direction, s, args.noise, args.timeout, trace=args.trace, until=args.until, direct=args.direct
        )
        times.append(took)
        if args.trace:
            print(f'trial {s}: {took}')
    ok = [x for x in times if x is not None]
    med = statistics.median(ok) if ok else None
    print(f'{len(ok)}/{len(times)} up, median {med}, times {[None if x is None else round(x, 2) for x in times]}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
