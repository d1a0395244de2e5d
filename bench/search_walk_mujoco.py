"""Direct-MuJoCo walk simulator and CMA-ES search for the Booster T1 / K1 walk parameters.

The fast offline stand-in for ``robocup3d optimize`` (which runs every candidate on a real
RCSSServerMJ): the world, the robot and the motor model are ``bench/search_getup_mujoco.py``'s
:class:`Sim` (a copy of RCSSServerMJ's control loop: 4 MuJoCo steps of 5 ms per 20 ms cycle,
kp/kd position actuators), driven by the real :class:`~robocup3d_motion.motion_node.MotionCore`
(walk engine, commander, fall detector, get-up). The controller's command takes effect
``delay`` cycles after the perception it answers (1 on the server; 2 for margin). A 10 s
trial costs about 1.3 s of CPU.

A candidate is scored on a forward walk from standstill at ``--speed`` (distance, with falls
weighing most) under both delays, and on three seeded 20 s random-command courses drawn as
the walk benchmark draws them (:func:`random_course`) where only falls count. Parameters are searched as
offsets from the robot's shipped ``positioning`` set, scaled per parameter.

Usage::

    PYTHONPATH=. python bench/search_walk_mujoco.py eval --robot T1 --speed 0.7 [--walk-config F]
    PYTHONPATH=. python bench/search_walk_mujoco.py cma --robot T1 --speed 0.75 --gens 30 \
        [--sigma 0.1] [--workers 2] [--init RESULT.json] --out RESULT.json
    PYTHONPATH=. python bench/search_walk_mujoco.py courses --robot T1 --set sprint --seeds 1 30 \
        [--set-param combo_limit=0 accel_w=20]             # falls on seeded random courses
    PYTHONPATH=. python bench/search_walk_mujoco.py export RESULT.json --robot T1 --set sprint \
        --max-vx 0.7 [--mean] > walk_T1.yaml     # the walk file, ready for --walk-config

Results (2026-11, T1, from the shipped set with the turning fix): see ``config/walk.yaml``.
Direct-sim results carry over to the server only roughly: check every candidate on the real
server (``python -m robocup3d_tools.walk_tasks --robot T1 --task forward|random``) first.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import random
import sys
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

import mujoco
import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_getup_mujoco import Sim  # noqa: E402

from robocup3d_bridge.config_files import load_config  # noqa: E402
from robocup3d_motion.motion_node import MotionCore  # noqa: E402
from robocup3d_motion.walk import ANGLE_PARAMS, WalkParams, walk_params, walk_sets  # noqa: E402

NAMES = (
    'period',
    'com_height',
    'sole_z',
    'sole_x',
    'foot_y',
    'step_height',
    'sway',
    'lipm_x',
    'double_support',
    'torso_pitch',
    'arm_swing',
    'gyro_pitch',
    'gyro_roll',
    'swing_x_lead',
    'kp_legs',
    'kd_legs',
)
FIXED_SCALE = {'torso_pitch': 0.035, 'arm_swing': 2.0, 'gyro_pitch': 0.03, 'gyro_roll': 0.03}  # rad, rad/m, s
Command = Callable[[float], tuple[float, float, float]]


def place_standing(sim: Sim, q: dict[str, float]) -> None:
    """Reset the world with the robot in pose ``q``, upright, its lowest point on the ground."""
    m, d = sim.model, sim.data
    mujoco.mj_resetData(m, d)
    for n, a in sim.qadr.items():
        d.qpos[a] = q.get(n, 0.0)
    d.qpos[sim.free_q : sim.free_q + 3] = (0.0, 0.0, 1.0)
    d.qpos[sim.free_q + 3 : sim.free_q + 7] = (1.0, 0.0, 0.0, 0.0)
    mujoco.mj_forward(m, d)
    low = math.inf
    for g in range(m.ngeom):
        if not (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.geom_bodyid[g]) or '').startswith('p_'):
            continue
        rot = d.geom_xmat[g].reshape(3, 3)
        centre = d.geom_xpos[g] + rot @ m.geom_aabb[g][:3]
        low = min(low, float(centre[2] - (np.abs(rot) @ m.geom_aabb[g][3:])[2]))
    d.qpos[sim.free_q + 2] -= low
    mujoco.mj_forward(m, d)


def _yaw(quat: np.ndarray) -> float:
    w, x, y, z = (float(v) for v in quat)
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def trial(
    robot: str, params: WalkParams, command: Command, seconds: float, delay: int = 1, settle: float = 1.5
) -> dict:
    """Stand ``settle`` s, then walk by ``command(t)`` for ``seconds``.

    Returns the distance forward/sideways in the start frame (m), the turn (rad) and when
    the torso tipped over (s after the start, or None).
    """
    sim = Sim(robot)
    core = MotionCore(sim.spec, sim.cfg, walk_cfg=load_config('walk.yaml'))
    core.walk_sets[core.walk_set] = params
    core.walk.set_params(params)
    hold = dict(core.settings.hold_pose)
    place_standing(sim, hold)
    m, d = sim.model, sim.data
    cmd_now, (kp, kd) = dict(hold), core.gains()
    queue = [(dict(cmd_now), kp, kd)] * delay  # what the server applies lags what we answered
    start, fell, turned, prev_yaw, t = None, None, 0.0, 0.0, 0.0
    for _ in range(int((settle + seconds) / 0.02)):
        queue.append((cmd_now, kp, kd))
        sim.apply(*queue.pop(0))
        mujoco.mj_step(m, d, 4)
        t += 0.02
        gyro = tuple(float(x) for x in d.sensordata[sim.s_gyro : sim.s_gyro + 3])
        acc = tuple(float(x) for x in d.sensordata[sim.s_acc : sim.s_acc + 3])
        core.on_imu(t, gyro, acc, t)
        pos, quat = sim.pose()
        yaw = _yaw(quat)
        if start is not None:
            turned += (yaw - prev_yaw + math.pi) % (2 * math.pi) - math.pi
        prev_yaw = yaw
        if t >= settle:
            if start is None:
                start = (pos.copy(), yaw)
            core.set_velocity(*command(t - settle), t)
        measured = sim.measured()
        out = core.controller.command(core.step(t, measured, t), measured)
        cmd_now = dict(zip(out.names, out.position, strict=True))
        kp, kd = core.gains()
        if start is not None and 1.0 - 2.0 * (quat[1] ** 2 + quat[2] ** 2) < 0.5:
            fell = t - settle
            break
    assert start is not None
    dp, yaw0 = pos - start[0], start[1]
    return {
        'fell': fell,
        'forward': float(dp[0] * math.cos(yaw0) + dp[1] * math.sin(yaw0)),
        'sideways': float(-dp[0] * math.sin(yaw0) + dp[1] * math.cos(yaw0)),
        'turned': turned,
    }


# -- scoring and search -----------------------------------------------------------------------------------------------


def shipped(robot: str, walk_config: str = 'walk.yaml', name: str = 'positioning') -> WalkParams:
    """A named parameter set of ``robot`` from a walk file."""
    sets, _ = walk_sets(load_config(walk_config), robot)
    return sets[name]


def random_course(seed: int, speed: float, p: WalkParams) -> Command:
    """Seeded commands as the walk benchmark's random course draws them (``walk_tasks``: vx in
    [-0.3, 1], vy in [-0.3, 0.3], wz in [-1, 1], each held 1-3 s), clipped to the set's limits
    and to ``speed``; a course drawn within the limits instead is too easy (it rarely stands
    still to turn or sidestep) and let through candidates that fell on the server."""
    rng = random.Random(seed)
    seq: list[tuple[float, tuple[float, float, float]]] = []
    t = 0.0
    while t < 30.0:
        vx, vy, wz = rng.uniform(-0.3, 1.0), rng.uniform(-0.3, 0.3), rng.uniform(-1.0, 1.0)
        cmd = (
            min(max(vx, p.min_vx), speed, p.max_vx),
            min(max(vy, -p.max_vy), p.max_vy),
            min(max(wz, -p.max_wz), p.max_wz),
        )
        seq.append((t, cmd))
        t += rng.uniform(1.0, 3.0)

    def command(now: float) -> tuple[float, float, float]:
        return next(c for t0, c in reversed(seq) if now >= t0)

    return command


def score(robot: str, p: WalkParams, speed: float) -> tuple[float, dict]:
    """Lower is better: minus the forward speed (m/s) under delays 1 and 2, plus fall penalties."""
    f, parts = 0.0, {}
    for delay in (1, 2):
        r = trial(robot, p, lambda t: (speed, 0.0, 0.0), 9.0, delay)
        parts[f'forward_delay{delay}'] = r
        f += 0.5 * (-r['forward'] / 9.0 + 0.3 * abs(r['sideways']) / 9.0)
        if r['fell'] is not None:
            f += 1.0 + (9.0 - r['fell']) / 9.0
    for seed, delay in ((1, 1), (2, 2), (3, 2)):
        r = trial(robot, p, random_course(seed, speed, p), 20.0, delay)
        parts[f'course{seed}'] = r
        if r['fell'] is not None:
            f += 0.5 + 0.5 * (20.0 - r['fell']) / 20.0
    return f, parts


class Space:
    """Candidate vectors as scaled offsets from a base set."""

    def __init__(self, base: WalkParams) -> None:
        self.base = base
        self.scale = {n: FIXED_SCALE.get(n, max(abs(getattr(base, n)) * 0.15, 0.005)) for n in NAMES}

    def decode(self, x: list[float]) -> WalkParams:
        return replace(
            self.base, **{n: getattr(self.base, n) + self.scale[n] * v for n, v in zip(NAMES, x, strict=True)}
        )

    def encode(self, p: WalkParams) -> list[float]:
        return [(getattr(p, n) - getattr(self.base, n)) / self.scale[n] for n in NAMES]


def _evaluate(args: tuple[str, WalkParams, float]) -> float:
    robot, p, speed = args
    try:
        return score(robot, p, speed)[0]
    except Exception:  # noqa: BLE001 - an unreachable gait is just a bad candidate
        return 10.0


def cma_search(robot: str, speed: float, gens: int, out: Path, sigma: float, workers: int, init: Path | None) -> None:
    """CMA-ES from the shipped set (or a previous result); writes the best and the mean after every generation."""
    import cma  # noqa: PLC0415 - only for the search

    space = Space(replace(shipped(robot), max_vx=speed))
    x0 = [0.0] * len(NAMES)
    if init is not None:
        x0 = space.encode(replace(space.base, **_angles_in(json.loads(init.read_text())['params'])))
    es = cma.CMAEvolutionStrategy(x0, sigma, {'popsize': 10, 'seed': 3, 'verbose': -9})
    best: tuple[float, list[float]] = (math.inf, x0)
    with mp.Pool(workers) as pool:
        print('start', round(_evaluate((robot, space.decode(x0), speed)), 3), flush=True)
        for g in range(gens):
            xs = es.ask()
            fs = pool.map(_evaluate, [(robot, space.decode(x), speed) for x in xs])
            es.tell(xs, fs)
            i = min(range(len(fs)), key=fs.__getitem__)
            if fs[i] < best[0]:
                best = (fs[i], list(xs[i]))
            result = {
                'robot': robot,
                'speed': speed,
                'f': best[0],
                'params': asdict(space.decode(best[1])),
                'mean_params': asdict(space.decode(list(es.mean))),
            }
            out.write_text(json.dumps(result, indent=1))
            print(g, round(min(fs), 3), round(best[0], 3), flush=True)


def _angles_in(params: dict) -> dict:
    """A result's parameters as WalkParams takes them (they are stored in radians already)."""
    return {k: v for k, v in params.items() if k in WalkParams.__dataclass_fields__}


def export(result: dict, robot: str, set_name: str, max_vx: float, use_mean: bool) -> str:
    """The shipped walk file with ``robot``'s base replaced by a search result (angles in degrees)."""
    cfg = yaml.safe_load((REPO / 'config' / 'walk.yaml').read_text())
    params = result['mean_params' if use_mean else 'params']
    base = cfg[robot]['base']
    for n in NAMES:
        v = params[n]
        base[n] = round(math.degrees(v) if n in ANGLE_PARAMS else v, 4)
    cfg[robot]['sets'][set_name] = {'max_vx': max_vx}
    return yaml.safe_dump(cfg, sort_keys=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='mode', required=True)
    ev = sub.add_parser('eval', help="score a walk file's set: forward and the random courses")
    ev.add_argument('--robot', default='T1')
    ev.add_argument('--speed', type=float, default=0.6)
    ev.add_argument('--walk-config', default='walk.yaml')
    ev.add_argument('--set', default='positioning')
    co = sub.add_parser('courses', help="falls of a walk file's set on seeded 20 s random courses")
    co.add_argument('--robot', default='T1')
    co.add_argument('--walk-config', default='walk.yaml')
    co.add_argument('--set', default='positioning')
    co.add_argument('--seeds', type=int, nargs=2, default=(1, 30), metavar=('FIRST', 'LAST'))
    co.add_argument('--set-param', nargs='*', default=[], metavar='NAME=VALUE', help='override (YAML units)')
    cm = sub.add_parser('cma', help='CMA-ES over the walk parameters')
    cm.add_argument('--robot', default='T1')
    cm.add_argument('--speed', type=float, default=0.75)
    cm.add_argument('--gens', type=int, default=30)
    cm.add_argument('--sigma', type=float, default=0.1)
    cm.add_argument('--workers', type=int, default=1)
    cm.add_argument('--init', type=Path)
    cm.add_argument('--out', type=Path, required=True)
    ex = sub.add_parser('export', help='a walk file from a search result')
    ex.add_argument('result', type=Path)
    ex.add_argument('--robot', default='T1')
    ex.add_argument('--set', default='sprint')
    ex.add_argument('--max-vx', type=float, required=True)
    ex.add_argument('--mean', action='store_true', help='the CMA mean instead of the best candidate')
    a = ap.parse_args()
    if a.mode == 'eval':
        p = replace(shipped(a.robot, a.walk_config, a.set), max_vx=a.speed)
        f, parts = score(a.robot, p, a.speed)
        for name, r in parts.items():
            print(
                f'{name:16s} forward {r["forward"]:5.2f} m  sideways {r["sideways"]:5.2f} m  '
                f'turned {math.degrees(r["turned"]):6.1f} deg  fell {r["fell"]}'
            )
        print(f'score {f:.3f}')
    elif a.mode == 'courses':
        p = shipped(a.robot, a.walk_config, a.set)
        override = dict(kv.split('=', 1) for kv in a.set_param)
        p = walk_params({k: float(v) for k, v in override.items()}, p)
        seeds = range(a.seeds[0], a.seeds[1] + 1)
        fell = [s for s in seeds if trial(a.robot, p, random_course(s, 0.7, p), 20.0)['fell'] is not None]
        n = len(seeds)
        print(f'{a.robot} {a.set} {override or ""}: {len(fell)} of {n} courses fell (seeds {fell})')
    elif a.mode == 'cma':
        cma_search(a.robot, a.speed, a.gens, a.out, a.sigma, a.workers, a.init)
    else:
        print(export(json.loads(a.result.read_text()), a.robot, a.set, a.max_vx, a.mean), end='')


if __name__ == '__main__':
    main()
