"""CMA-ES search for an asymmetric roll from the front onto the back (Booster T1 / K1).

The front get-up can then be "roll over, then play the back get-up": when the front skill
ends with the robot on its back, the fall detector reports ``back`` and the motion node
starts ``GETUP_BACK``. A candidate is a few frames of per-side joint targets (degrees)::

    [t, l_hip, l_hroll, l_knee, r_hip, r_hroll, r_knee, l_ap, l_ar, l_el, r_ap, r_ar, r_el]

(arm roll mirrored: ``r_ar`` -85 is the right arm down like ``l_ar`` -85). Scored, in the
direct-MuJoCo model of ``search_getup_mujoco.py`` (server control loop, one cycle of
latency), by how much the torso's x axis points up at the end (+1: lying on the back) and
how still it lies.

    PYTHONPATH=. /opt/r3d/bin/python bench/search_getup_roll.py --robot T1 --gens 60
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

import mujoco
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import search_getup_mujoco as S

from robocup3d_motion.motion_node import MotionCore

RKEYS = ('t', 'lhip', 'lroll', 'lknee', 'rhip', 'rroll', 'rknee', 'lap', 'lar', 'lel', 'rap', 'rar', 'rel')
RSCALE = np.array([0.15, 30, 20, 30, 30, 20, 30, 40, 30, 40, 40, 30, 40])
INIT = [
    [0.3, 0, 0, 0, 0, 30, 0, -90, -85, 0, 0, -85, 0],
    [0.3, -60, 0, 60, 0, 30, 0, -150, -60, 0, 0, -85, 0],
    [0.4, 0, 0, 0, 0, 0, 0, 0, -85, 0, 0, -85, 0],
]


def roll_frames(rows: list) -> list:
    frames = []
    for t, lh, lr, lk, rh, rr, rk, lap, lar, lel, rap, rar, rel in rows:
        q = {'llj1': lh, 'llj2': lr, 'llj4': lk, 'rlj1': rh, 'rlj2': -rr, 'rlj4': rk}
        q.update({'laj1': lap, 'laj2': lar, 'laj3': lel, 'raj1': rap, 'raj2': -rar, 'raj3': rel})
        frames.append((max(0.05, min(t, 1.5)), q))
    return frames


_SIMS: dict = {}


def roll_trial(robot: str, rows: list, seed: int = 0, settle: float = 1.0, log: bool = False) -> tuple[float, float]:
    """Play the roll from the front; (mean torso-x-up over the last 0.4 s, mean |gyro|)."""
    sim = _SIMS.get(robot) or _SIMS.setdefault(robot, S.Sim(robot))
    m, d = sim.model, sim.data
    frames = S.clamp_frames(sim.spec, roll_frames(rows))
    skill = S.skill_from_frames('ROLL', frames)
    core = MotionCore(sim.spec, sim.cfg)
    core.skills = {'GETUP_FRONT': skill}
    S.stand_before(core)
    rng = random.Random(seed)
    mujoco.mj_resetData(m, d)
    hold = core.settings.hold_pose
    for n, a in sim.qadr.items():
        d.qpos[a] = hold.get(n, 0.0)
    yaw = rng.uniform(-math.pi, math.pi)
    d.qpos[sim.free_q : sim.free_q + 3] = (-3, 0, S.LYING_Z[robot])
    d.qpos[sim.free_q + 3 : sim.free_q + 7] = S.qmul(S.qaxis((0, 0, 1), yaw), S.qaxis((0, 1, 0), math.pi / 2))
    mujoco.mj_forward(m, d)
    kp, kd = core.gains()
    cmd, t, xs, gs, t_end = dict(hold), 0.0, [], [], None
    for n in range(int(6.0 / 0.02)):
        sim.apply(cmd, kp, kd)
        mujoco.mj_step(m, d, 4)
        t += 0.02
        core.on_imu(
            t, tuple(d.sensordata[sim.s_gyro : sim.s_gyro + 3]), tuple(d.sensordata[sim.s_acc : sim.s_acc + 3]), t
        )
        cmd = core.step(t, sim.measured(), t)
        kp, kd = core.gains()
        if t_end is None and core.getups and core.skill == 'stand':
            t_end = t + settle
        if t_end is not None and t > t_end - 0.4:
            xs.append(float(d.xmat[sim.torso][6]))
            gs.append(float(np.linalg.norm(d.sensordata[sim.s_gyro : sim.s_gyro + 3])))
        if log and n % 5 == 0:
            R = d.xmat[sim.torso].reshape(3, 3)
            print(
                round(t, 2),
                'x_up',
                round(float(R[2, 0]), 2),
                'y_up',
                round(float(R[2, 1]), 2),
                'z',
                round(float(d.xpos[sim.torso][2]), 3),
                core.skill,
            )
        if t_end is not None and t >= t_end:
            break
    if not xs:
        return -1.0, 10.0
    return float(np.mean(xs)), float(np.mean(gs))


def rscore(args: tuple) -> float:
    robot, rows, seed = args
    x, g = roll_trial(robot, rows, seed)
    dur = sum(max(0.05, min(r[0], 1.5)) for r in rows)
    return x - 0.05 * min(g, 10.0) - 0.1 * dur


def main() -> None:
    import multiprocessing as mp  # noqa: PLC0415

    import cma  # noqa: PLC0415

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--robot', default='T1')
    ap.add_argument('--gens', type=int, default=60)
    ap.add_argument('--init', default='')
    ap.add_argument('--out', default='')
    ap.add_argument('--sigma', type=float, default=0.4)
    ap.add_argument('--workers', type=int, default=1)
    ap.add_argument('--show', action='store_true', help='print a trace of --init and exit')
    a = ap.parse_args()
    init = eval(Path(a.init).read_text()) if a.init else INIT
    if a.show:
        print(roll_trial(a.robot, init, log=True))
        return
    out = Path(a.out or f'/tmp/getup_roll_{a.robot}.txt')
    shape = np.array(init).shape
    es = cma.CMAEvolutionStrategy((np.array(init) / RSCALE).ravel(), a.sigma, {'popsize': 12, 'seed': 1, 'verbose': -9})
    pool = mp.Pool(a.workers) if a.workers > 1 else None
    best = -1e9
    for g in range(a.gens):
        xs = es.ask()
        rows = [(np.array(x).reshape(shape) * RSCALE).tolist() for x in xs]
        jobs = [(a.robot, r, g) for r in rows]
        res = pool.map(rscore, jobs) if pool else [rscore(j) for j in jobs]
        es.tell(xs, [-s for s in res])
        i = int(np.argmax(res))
        if res[i] > best:
            best = res[i]
            out.write_text(repr(rows[i]))
            print(g, 'best', round(best, 3), flush=True)


if __name__ == '__main__':
    main()
