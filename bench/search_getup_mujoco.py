"""Direct-MuJoCo get-up simulator and keyframe search for the Booster T1 / K1.

Fast offline stand-in for ``bench/bench_getup.py`` (no server, no ROS). How it mirrors
RCSSServerMJ (rcsssmj 0.x, ``sim/simulation.py`` + ``games/soccer/sim/soccer_sim.py``):

* the world is ``resources/environments/soccer/world.xml`` (timestep 5 ms) and the robot
  ``resources/robots/<R>/robot.xml`` attached to the world body with a frame, as
  ``BaseSimulation._attach_agent`` does (``frame.attach_body(robot.body('torso'), prefix)``);
* one agent cycle = ``mj_step(model, data, 4)`` (``n_substeps=4``), i.e. 20 ms;
* motor commands are applied exactly like ``BaseSimulation.ctrl_motor``: ``<eff>_pos``
  ctrl=q with gainprm[0]=kp, biasprm[1]=-kp; ``<eff>_vel`` ctrl=dq(=0) with gainprm[0]=kd,
  biasprm[2]=-kd; ``<eff>_tau`` ctrl=0. The three actuators share the joint, whose
  ``actuatorfrcrange`` clips their sum: tau = clip(kp(q-q_cur) + kd(0-dq_cur), +-limit);
* the controller is the real :class:`robocup3d_motion.motion_node.MotionCore` (fall
  detector from gyro+accelerometer, KeyframePlayer, stand + balance afterwards, gains from
  ``config/robots.yaml`` with the skill's overrides), fed the torso gyro/accelerometer and
  joint sensors; its command takes effect one cycle later (the agent answers the
  perception of cycle n, the server applies it in cycle n+1);
* the trial is bench_getup's: the standing robot is moved to lie at torso height 0.25 m
  (T1; 0.2 K1) pitched +-90 deg with a random yaw, and counts as up when the torso is above
  0.85 * stand height and its z axis has z > 0.9 continuously for 1 s (50 cycles); timeout 12 s;
* the controller has stood for 1 s before the beam (:func:`stand_before`): the beam is a
  teleport the gyro never sees, so the fall filter needs ~0.7 s of accelerometer to notice it
  and the get-up starts from a robot at rest (as on the server; a fresh controller would
  start it at once, while the robot still drops — which made early sim results meaningless
  on the server).

Not modelled: sensor noise, the real graph's latency jitter, the trainer's beam details;
``Sim.trial(noise=...)`` perturbs joints, drop height, beam tilt and delays commands by a
cycle at random to stand in for them. A 12 s trial takes ~0.4 s of CPU here.

Usage::

    # bench_getup-style trials of the YAML skills in skills/data/<R>/ (or --skill FILE ...)
    PYTHONPATH=. /opt/r3d/bin/python bench/search_getup_mujoco.py eval --robot T1 [--skill FILE]
    PYTHONPATH=. /opt/r3d/bin/python bench/search_getup_mujoco.py trace --robot T1 --dir back --trials 1
    # CMA-ES (pip install cma) over symmetric frames [t, hip, knee, ankle, hip roll, hip yaw,
    # arm pitch, arm roll, elbow] + the fixed squat/rise tail; best (repr) to --out, the CMA
    # mean to --out.mean; --noisy N scores each candidate by N perturbed trials
    PYTHONPATH=. /opt/r3d/bin/python bench/search_getup_mujoco.py cma --robot T1 --dir back \
        --init FILE.yaml|REPR --gens 200 [--noisy 5 --noise 1.0] [--split-last] [--workers 2]
    # only the landing and the squat (rows after the first 5; --free-tail: the squat is a
    # candidate row too, not the fixed SQUAT), from the YAML skill:
    PYTHONPATH=. /opt/r3d/bin/python bench/search_getup_mujoco.py cma --robot K1 --dir back \
        --init robocup3d_motion/skills/data/K1/getup_back.yaml --free-tail --freeze 5 --t-last 1.0 \
        --noisy 6 --noise 1.0 --sigma 0.15 --workers 2 --seed 3 --gens 45
    # many perturbed trials of the skills (success rate, mean time, failed seeds):
    PYTHONPATH=. /opt/r3d/bin/python bench/search_getup_mujoco.py eval --robot K1 --trials 100 \
        --noise 1.0 --quiet [--seed0 100] [--skill FILE ...]
    # the front roll: bench/search_getup_roll.py; then write both YAML skills:
    PYTHONPATH=. /opt/r3d/bin/python bench/search_getup_mujoco.py cma --robot T1 --init BACK_REPR \
        --export ROLL_REPR robocup3d_motion/skills/data/T1
    # (older) hill climbing over frames without hip yaw: mode ``search``

Findings (2026-11):

* T1: a deep squat with flat feet, hip -100..-103, knee 130, ankle -40, arms forward, rises to
  the hold pose when the rise takes >= 1.5 s (``squat`` mode); K1: hip -100, knee 125, ankle -35
  (static scan; the K1 skill now squats at hip -74, knee 127, ankle -48, see below).
* The T1's hip flexion stops at -103 deg, so it cannot fold over its feet: no *quasi-static*
  symmetric path from sitting or kneeling puts the CoM over the feet (hill climbing: 0%).
  The arms (0.3 m) are too short to prop the torso.
* What works (CMA-ES, scored by success + rise + a shaping term "both soles flat with the CoM
  over them"): from the back, legs flung up and down sit the robot up (torso upright, 0.18 m,
  CoM 0.42 m behind the feet) in ~1.5 s; then hip *extension* with knees fully bent and arms
  swung forward throws it backwards onto the shoulders and, rebounding, onto its feet with
  the CoM over them (~0.4 s); the squat + 1.6 s rise follow. Up after ~4.2 s (T1), ~3.4 s
  (K1, the same structure re-searched from the T1 frames). This landing is the fragile part.
* From the front: an asymmetric roll onto the back (search_getup_roll.py: one arm and leg
  kick, ~0.3 s of commands) then the back get-up, all in GETUP_FRONT. (Written when the fall
  detector kept the direction it saw first until upright; the motion node now picks the skill
  from the side the robot lies on when it starts one, so a roll-only GETUP_FRONT followed by
  GETUP_BACK works too, but was no better for the K1, see below.)
* Sim vs. server: single attempts with ``noise=0.6`` succeed ~60-80% here; on the server the
  robot gets ~2 attempts in bench_getup's 12 s. bench_getup (20 trials, --fast): T1 front
  95%, back 100%; K1 (old frames) front 75-95% (two runs), back 90%. The CMA *mean*
  (``.mean``) was more robust than the best-scored candidate (which is selected for lucky noise).
* Did not help: longer/shorter squat hold or rise for the K1 (0.2-0.45 s / 0.8-1.3 s), a
  longer still-lying pause after the roll (K1 front, 1.0 s: 75% on the server too), a
  roll-only GETUP_FRONT (the motion node then starts GETUP_BACK from the side it lies on;
  direct sim 81/100 vs 84/100, noise 1.0, with the old back frames).
* K1, 2026-11: with the old frames most failures in ``eval --noise 1.0`` (front 84/100, back
  85/100) were not the throw but the rise: the robot landed on both feet, rose to 0.54 m and
  then toppled (forwards or backwards, tilt 15-18 deg at the end of the rise, the CoM drifting
  off the feet), or landed on one foot and fell back during the rise. Re-searching the two
  landing frames and the squat (``cma --free-tail --freeze 5 --noisy 6 --noise 1.0``, 45
  generations, the CMA mean) gave a deeper squat with the torso more upright (hip -74, knee
  127 = the limit, ankle -48): direct sim 99/100 back, 98/100 front (noise 1.0, seeds 0-99);
  bench_getup --fast (20 trials): 20/20 front and back in each of four runs (seeds 1, 1, 2, 3),
  all but three at the first attempt (front ~5.1 s, back ~3.6-4.0 s mean). The 80-generation
  mean was no better (direct sim, of 100 at noise 1.0 / 1.5, seeds 100-199 / 0-99: back 95 / 98,
  front 97 / 92; the 45-generation one: back 97 / 93, front 97 / 91). What still fails in the direct sim (~3% at
  noise 1.0, ~8% at 1.5): two landings in a row missed, the second ending face down, so the
  third attempt starts too late for the 12 s.
* Sitting (torso upright, legs folded or stretched forward) is not a resting state for the
  K1 or the T1: the stand controller's hold pose tips the robot onto its back or front within
  ~1 s, the fall detector reports it, and the get-up starts (direct sim, 5 sitting poses
  each; all up within 8 s but one T1 pose, still in its second attempt). The IMU-only fall
  detector could not tell sitting from standing anyway (that would need joint angles or the
  torso height from the motion node).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import random
import sys
from pathlib import Path

import mujoco
import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import rcsssmj  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_getup import qaxis, qmul  # noqa: E402  (one copy of the quaternion helpers)

from robocup3d_description.robots import mujoco_robot  # noqa: E402
from robocup3d_motion.getup import Keyframe, KeyframeSkill, load_keyframe_skill  # noqa: E402
from robocup3d_motion.motion_node import MotionCore  # noqa: E402

RES = Path(rcsssmj.__file__).resolve().parent / 'resources'
STAND_Z = {'T1': 0.65, 'K1': 0.54}
LYING_Z = {'T1': 0.25, 'K1': 0.2}
UPRIGHT_Z, UPRIGHT_UP = 0.85, 0.9
D2R = math.pi / 180
PREFIX = 'p_'


def build(robot: str):
    world = mujoco.MjSpec.from_file(str(RES / 'environments' / 'soccer' / 'world.xml'))
    rspec = mujoco.MjSpec.from_file(str(RES / 'robots' / robot / 'robot.xml'))
    frame = world.worldbody.add_frame()
    frame.attach_body(rspec.body('torso'), PREFIX, '')
    model = world.compile()
    return model, mujoco.MjData(model)


def stand_before(core, seconds: float = 1.0) -> None:
    """Feed the controller ``seconds`` of standing still (times < 0): on the server the robot
    stands before the trainer beams it down, and the beam (a teleport) is invisible to the gyro,
    so the fall filter needs ~0.7 s of accelerometer to notice it."""
    for i in range(int(seconds / 0.02)):
        t = -seconds + i * 0.02
        core.on_imu(t, (0.0, 0.0, 0.0), (0.0, 0.0, 9.81), t)
        core.step(t, dict(core.settings.hold_pose), t)


class Sim:
    def __init__(self, robot: str) -> None:
        self.robot_name = robot
        self.spec = mujoco_robot(robot)
        self.model, self.data = build(robot)
        m = self.model
        self.cfg = yaml.safe_load((REPO / 'config' / 'robots.yaml').read_text())
        self.acts = {}
        for j in self.spec.joints:
            self.acts[j.name] = tuple(
                mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, PREFIX + j.effector + s)
                for s in ('_pos', '_vel', '_tau')
            )
        self.qadr = {
            j.name: m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, PREFIX + j.description)]
            for j in self.spec.joints
        }
        self.vadr = {
            j.name: m.jnt_dofadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, PREFIX + j.description)]
            for j in self.spec.joints
        }
        self.free_q = m.jnt_qposadr[m.body_jntadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, PREFIX + 'torso')]]
        self.free_v = m.jnt_dofadr[m.body_jntadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, PREFIX + 'torso')]]
        self.s_pos = m.sensor_adr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, PREFIX + 'torso_pos')]
        self.s_quat = m.sensor_adr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, PREFIX + 'torso_quat')]
        self.s_gyro = m.sensor_adr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, PREFIX + 'torso_gyro')]
        self.s_acc = m.sensor_adr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, PREFIX + 'torso_acc')]
        self.torso = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, PREFIX + 'torso')
        self.feet = [
            mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, PREFIX + n) for n in ('left_foot_link', 'right_foot_link')
        ]
        self.heading = np.array([1.0, 0.0])

    def com_state(self):
        """(CoM ahead of the feet along the heading (m), CoM height, number of feet flat on the ground)."""
        d = self.data
        com = d.subtree_com[self.torso]
        fx = 0.5 * (d.xpos[self.feet[0]] + d.xpos[self.feet[1]])
        flat = 0
        for f in self.feet:
            if d.xmat[f][8] > 0.9 and d.xpos[f][2] < 0.06:
                flat += 1
        return float(np.dot(com[:2] - fx[:2], self.heading)), float(com[2]), flat

    def apply(self, targets, kp, kd):
        m, d = self.model, self.data
        for name, (ip, iv, it) in self.acts.items():
            p = kp.get(name, 0.0)
            v = kd.get(name, 0.0)
            d.ctrl[ip] = targets.get(name, 0.0)
            d.ctrl[iv] = 0.0
            d.ctrl[it] = 0.0
            m.actuator_gainprm[ip, 0] = p
            m.actuator_biasprm[ip, 1] = -p
            m.actuator_gainprm[iv, 0] = v
            m.actuator_biasprm[iv, 2] = -v

    def measured(self):
        return {n: float(self.data.qpos[a]) for n, a in self.qadr.items()}

    def pose(self):
        d = self.data
        return d.sensordata[self.s_pos : self.s_pos + 3].copy(), d.sensordata[self.s_quat : self.s_quat + 4].copy()

    def upright(self):
        pos, q = self.pose()
        up = 1.0 - 2.0 * (q[1] ** 2 + q[2] ** 2)
        return pos[2] > UPRIGHT_Z * STAND_Z[self.robot_name] and up > UPRIGHT_UP

    def trial(
        self,
        skills: dict,
        direction: str,
        seed: int = 0,
        timeout: float = 12.0,
        trace: bool = False,
        trace_every: int = 5,
        noise: float = 0.0,
    ):
        """bench_getup's trial: returns (seconds until upright for 1 s or None, stats).

        ``noise`` (0..1) perturbs it like the real graph may: joint angles at the beam
        (+-3 deg * noise), drop height (+-3 cm), a tilted beam (+-4 deg), and a command
        that arrives one cycle late (probability 0.1 * noise per cycle)."""
        rng = random.Random(seed)
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        core = MotionCore(self.spec, self.cfg)
        core.skills.update(skills)
        hold = core.settings.hold_pose
        stand_before(core)
        for n, a in self.qadr.items():
            d.qpos[a] = hold.get(n, 0.0) + noise * rng.uniform(-3, 3) * D2R
        yaw = rng.uniform(-math.pi, math.pi)
        pitch = math.pi / 2 if direction == 'front' else -math.pi / 2
        pitch += noise * rng.uniform(-4, 4) * D2R
        q = qmul(
            qaxis((0, 0, 1), yaw), qmul(qaxis((1, 0, 0), noise * rng.uniform(-4, 4) * D2R), qaxis((0, 1, 0), pitch))
        )
        self.heading = np.array([math.cos(yaw), math.sin(yaw)])
        d.qpos[self.free_q : self.free_q + 3] = (
            -3 + rng.uniform(-0.2, 0.2),
            rng.uniform(-0.2, 0.2),
            LYING_Z[self.robot_name] + noise * rng.uniform(-0.03, 0.03),
        )
        d.qpos[self.free_q + 3 : self.free_q + 7] = q
        d.qvel[:] = 0
        mujoco.mj_forward(m, d)
        cmd, (kp, kd) = dict(hold), core.gains()
        t, up_since, n, best_z = 0.0, None, 0, 0.0
        steps = int(timeout / 0.02)
        log = []
        for n in range(steps):
            self.apply(cmd, kp, kd)
            mujoco.mj_step(m, d, 4)
            t += 0.02
            gyro = tuple(float(x) for x in d.sensordata[self.s_gyro : self.s_gyro + 3])
            acc = tuple(float(x) for x in d.sensordata[self.s_acc : self.s_acc + 3])
            core.on_imu(t, gyro, acc, t)
            new = core.step(t, self.measured(), t)
            if not (noise and rng.random() < 0.1 * noise):
                cmd = new  # else: this cycle's answer is late, the server keeps the last one
            kp, kd = core.gains()
            pos, quat = self.pose()
            best_z = max(best_z, pos[2])
            if trace and n % trace_every == 0:
                up = 1.0 - 2.0 * (quat[1] ** 2 + quat[2] ** 2)
                log.append(
                    (
                        round(t, 2),
                        round(float(pos[2]), 3),
                        round(math.degrees(math.acos(max(-1, min(1, up)))), 1),
                        core.skill,
                        core.player.keyframe if core.player is not None and hasattr(core.player, 'keyframe') else -1,
                        *(round(v, 3) for v in self.com_state()),
                    )
                )
            if n >= 3 and self.upright():
                up_since = n if up_since is None else up_since
                if n - up_since >= 50:
                    return (up_since + 1) * 0.02, {'getups': core.getups, 'log': log}
            else:
                up_since = None
            if not np.all(np.isfinite(d.qpos)):
                break
        pos, _ = self.pose()
        return None, {'getups': core.getups, 'best_z': best_z, 'end_z': float(pos[2]), 'log': log}


# ---------------------------------------------------------------- parametrised skills


def skill_from_frames(name, frames, kp=None, kd=None):
    return KeyframeSkill(
        name, tuple(Keyframe(t, {k: v * D2R for k, v in q.items()}) for t, q in frames), kp or {}, kd or {}
    )


def legs(hip, knee, ankle, roll=0.0):
    return {
        'llj1': hip,
        'rlj1': hip,
        'llj4': knee,
        'rlj4': knee,
        'llj5': ankle,
        'rlj5': ankle,
        'llj2': roll,
        'rlj2': -roll,
    }


def arms(pitch, roll, elbow=0.0):
    return {'laj1': pitch, 'raj1': pitch, 'laj2': roll, 'raj2': -roll, 'laj3': elbow, 'raj3': elbow}


def clamp_frames(spec, frames):
    # whole degrees inside the limits (the YAML stores whole degrees)
    lim = {j.name: (math.ceil(j.lower / D2R), math.floor(j.upper / D2R)) for j in spec.joints}
    out = []
    for t, q in frames:
        out.append((max(0.02, t), {k: min(max(v, lim[k][0]), lim[k][1]) for k, v in q.items() if k in lim}))
    return out


def write_yaml(path, name, frames, comment, kp=None):
    lines = [f'# {c}' for c in comment.splitlines()]
    lines.append(f'name: {name}')
    if kp:
        lines.append('kp: {' + ', '.join(f'{k}: {v:g}' for k, v in kp.items()) + '}')
    lines.append('frames:')
    for t, q in frames:
        lines.append(f'  - {{t: {t:.2f}, q: {{' + ', '.join(f'{k}: {v:.0f}' for k, v in q.items()) + '}}')
    Path(path).write_text('\n'.join(lines) + '\n')


def squat_scan(robot, hips=(-90, -100, -103), ankles=(-35, -40, -45), rises=(1.0, 1.5, 2.0), arm=-90, knee=130):
    """Static check of the last phase: start in a squat with flat feet (torso pitched so that
    the soles are level), hold it 0.5 s, rise to the hold pose in ``rise`` s; upright 1.5 s later?"""
    sim = Sim(robot)
    m, d = sim.model, sim.data
    feet = [
        i for i in range(m.ngeom) if 'foot' in (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.geom_bodyid[i]) or '')
    ]
    for hip in hips:
        for ankle in ankles:
            for rise in rises:
                mujoco.mj_resetData(m, d)
                core = MotionCore(sim.spec, sim.cfg)
                q = legs(hip, knee, ankle)
                q.update(arms(arm, -75))
                for n, a in sim.qadr.items():
                    d.qpos[a] = q[n] * D2R if n in q else core.settings.hold_pose.get(n, 0.0)
                d.qpos[sim.free_q : sim.free_q + 3] = (0, 0, 1.0)
                d.qpos[sim.free_q + 3 : sim.free_q + 7] = qaxis((0, 1, 0), -(hip + knee + ankle) * D2R)
                mujoco.mj_forward(m, d)
                d.qpos[sim.free_q + 2] -= min(d.geom_xpos[g][2] - m.geom_rbound[g] for g in feet)
                mujoco.mj_forward(m, d)
                hold = sim.cfg[robot]['hold_pose']
                sk = skill_from_frames('GETUP_BACK', [(0.5, q), (rise, dict(hold))])
                core.skills['GETUP_BACK'] = sk
                core._start('GETUP_BACK', getup=True)
                kp, kd = core.gains()
                cmd = {k: v * D2R for k, v in q.items()}
                t = 0.0
                for _ in range(int((sk.duration + 1.5) / 0.02)):
                    sim.apply(cmd, kp, kd)
                    mujoco.mj_step(m, d, 4)
                    t += 0.02
                    core.on_imu(
                        t,
                        tuple(d.sensordata[sim.s_gyro : sim.s_gyro + 3]),
                        tuple(d.sensordata[sim.s_acc : sim.s_acc + 3]),
                        t,
                    )
                    cmd = core.step(t, sim.measured(), t)
                    kp, kd = core.gains()
                print(
                    f'hip {hip} knee {knee} ankle {ankle} rise {rise}s: '
                    f'upright={bool(sim.upright())} z={sim.pose()[0][2]:.3f}'
                )


def evaluate(robot, skills, direction, seeds):
    sim = Sim(robot)
    res = [sim.trial(skills, direction, seed=s)[0] for s in seeds]
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('mode', choices=['eval', 'trace', 'squat'])
    ap.add_argument('--robot', default='T1')
    ap.add_argument('--dir', default='both')
    ap.add_argument('--trials', type=int, default=5)
    ap.add_argument('--skill', nargs='*', default=[])
    ap.add_argument('--noise', type=float, default=0.0, help='Sim.trial noise (0..1)')
    ap.add_argument('--seed0', type=int, default=0, help='first trial seed')
    ap.add_argument('--quiet', action='store_true', help='only the summary per direction')
    a = ap.parse_args()
    if a.mode == 'squat':
        squat_scan(a.robot)
        return
    sim = Sim(a.robot)
    skills = {}
    for f in a.skill:
        s = load_keyframe_skill(f, sim.spec)
        skills[s.name] = s
    dirs = ['back', 'front'] if a.dir == 'both' else [a.dir]
    for d in dirs:
        ok, fails = [], []
        for s in range(a.seed0, a.seed0 + a.trials):
            r, st = sim.trial(skills, d, seed=s, trace=a.mode == 'trace', noise=a.noise)
            (ok.append(r) if r is not None else fails.append(s))
            if not a.quiet or r is None:
                print(d, s, r, {k: v for k, v in st.items() if k != 'log'}, flush=True)
            if a.mode == 'trace':
                for row in st['log']:
                    print('   ', row)
        mean = f'{sum(ok) / len(ok):.2f} s' if ok else 'n/a'
        print(f'{a.robot} {d}: {len(ok)}/{a.trials} up (noise {a.noise:g}), mean {mean}, failed seeds {fails}')


if __name__ == '__main__' and sys.argv[1:2] not in (['search'], ['cma']):
    main()


# ---------------------------------------------------------------- search
# A candidate: list of frames [t, hip, knee, ankle, hip_roll, arm_pitch, arm_roll, elbow]
# (symmetric left/right; degrees), followed by a fixed last frame to the hold pose.
FREE_SQUAT = False  # True: the squat is the candidate's own last row
KEYS = ('t', 'hip', 'knee', 'ankle', 'hroll', 'ap', 'ar', 'el')
STEP = (0.08, 12, 12, 6, 4, 20, 12, 15)


def frames_of(robot, vec, t_last):
    cfg = yaml.safe_load((REPO / 'config' / 'robots.yaml').read_text())
    hold = cfg[robot]['hold_pose']
    frames = []
    for row in vec:
        t, hip, knee, ankle, hroll, ap, ar, el = row
        q = legs(hip, knee, ankle, hroll)
        q.update(arms(ap, ar, el))
        frames.append((t, q))
    # Fixed tail (found by the static scan squat_scan, mode 'squat'): a deep squat with the feet flat
    # (hip -101, knee 130, ankle -40, arms forward) rises to the hold pose in t_last >= 1.5 s.
    if not FREE_SQUAT:
        squat = legs(-101, 130, -40, 0)
        squat.update(arms(-90, -75, 0))
        frames.append((0.3, squat))
    last = {k: v for k, v in hold.items()}
    last.update({'llj2': 0, 'rlj2': 0, 'laj3': 0, 'raj3': 0})
    frames.append((t_last, last))
    return frames


_SIM = {}


def score(args):
    robot, direction, vec, t_last, seed = args
    sim = _SIM.get(robot) or _SIM.setdefault(robot, Sim(robot))
    frames = clamp_frames(sim.spec, frames_of(robot, vec, t_last))
    name = 'GETUP_FRONT' if direction == 'front' else 'GETUP_BACK'
    skill = skill_from_frames(name, frames)
    dur = skill.duration
    r, st = sim.trial({name: skill}, direction, seed=seed, timeout=dur + 2.5, trace=True)
    # continuous: last rows of log (every 0.1 s): height and tilt
    tail = [row for row in st['log'] if row[0] > dur + 1.2]
    if not tail:
        return -1.0, r
    hz = STAND_Z[robot]
    s = sum(min(z / hz, 1.0) + max(0.0, math.cos(math.radians(tilt))) for _, z, tilt, *_ in tail) / len(tail)
    # shaping: the best height + uprightness reached at any time (rewards partial rises)
    s += 0.5 * max(min(z / hz, 1.0) + max(0.0, math.cos(math.radians(tilt))) for _, z, tilt, *_ in st['log'])
    if r is not None:
        s += 3.0 - 0.1 * r
    return s, r


def search(robot, direction, seed_vec, t_last, iters, out, rng_seed=1, freeze=0):
    rng = np.random.default_rng(rng_seed)
    best = [list(r) for r in seed_vec]
    pool = mp.Pool(2)
    bs, br = score((robot, direction, best, t_last, 0))
    print('seed', bs, br, flush=True)
    sigma = 1.0
    for it in range(iters):
        cands = []
        for _ in range(8):
            c = [list(r) for r in best]
            for _ in range(int(rng.integers(1, 5))):  # a few keys per candidate
                row = c[int(rng.integers(freeze, len(c)))]
                k = int(rng.integers(0, len(KEYS)))
                row[k] += rng.normal() * STEP[k] * sigma * 1.5
            for row in c:
                row[0] = min(max(row[0], 0.05), 1.5)
            cands.append(c)
        res = pool.map(score, [(robot, direction, c, t_last, it) for c in cands])
        i = int(np.argmax([s for s, _ in res]))
        if res[i][0] > bs:
            # confirm on another seed
            s2, r2 = score((robot, direction, cands[i], t_last, 1000 + it))
            s_avg = 0.5 * (res[i][0] + s2)
            if s_avg > bs:
                best, bs, br = cands[i], s_avg, (res[i][1], r2)
                print(it, 'best', round(bs, 3), br, flush=True)
                Path(out).write_text(repr((best, t_last)))
    pool.close()
    return best, bs


SEEDS = {
    'back': [
        [0.4, -100, 0, 0, 0, 0, -80, 0],
        [0.3, -100, 134, -45, 0, 60, -80, 0],
        [0.2, -90, 134, -45, 0, -120, -80, 0],
        [0.4, -100, 130, -40, 0, -120, -80, 0],
    ],
    'front': [
        [0.3, 0, 0, 0, 0, 0, 0, 0],
        [0.3, 0, 0, 0, 0, -90, 0, 0],
        [0.5, 0, 0, 0, 0, -90, -85, 0],
        [0.5, -100, 128, -45, 0, -90, -85, 0],
        [0.6, -100, 128, -45, 0, -150, -85, 0],
        [0.4, -100, 130, -40, 0, -90, -75, 0],
    ],
}


def frame_search_args(init_help: str = '') -> argparse.ArgumentParser:
    """The arguments the frame searches (``search``, ``cma``) share."""
    p = argparse.ArgumentParser()
    p.add_argument('mode')
    p.add_argument('--robot', default='T1')
    p.add_argument('--dir', default='back')
    p.add_argument('--t-last', type=float, default=1.6)
    p.add_argument('--init', default='', help=init_help)
    p.add_argument('--out', default='')
    return p


if __name__ == '__main__' and len(sys.argv) > 1 and sys.argv[1] == 'search':
    p = frame_search_args()
    p.add_argument('--iters', type=int, default=100)
    p.add_argument('--rng', type=int, default=1)
    p.add_argument('--free-squat', action='store_true', help='search the squat frame too (append it to --init)')
    p.add_argument('--freeze', type=int, default=0, help='keep the first N frames')
    a = p.parse_args()
    init = eval(Path(a.init).read_text())[0] if a.init else SEEDS[a.dir]
    if a.free_squat:
        FREE_SQUAT = True
        if len(init[-1]) == len(KEYS) and init[-1][1:4] != [-101, 130, -40]:
            init = [*init, [0.3, -101, 130, -40, 0, -90, -75, 0]]
    search(a.robot, a.dir, init, a.t_last, a.iters, a.out or f'/tmp/getup_{a.robot}_{a.dir}.txt', a.rng, a.freeze)


# ---------------------------------------------------------------- CMA-ES over free frames
# A candidate: frames [t, hip, knee, ankle, hip roll, hip yaw, arm pitch, arm roll, elbow] (symmetric,
# degrees) followed by the fixed squat + rise tail of frames_of(). Scored by success, the rise
# (height + uprightness) and, as shaping, the best "squat key state" reached: both soles flat on the
# ground with the CoM over them (the state from which the tail is known to rise).
#: The squat (hip, knee, ankle) each robot rises from: T1 -101/130/-40 (squat_scan); K1 -74/127/-48
#: (cma --free-tail, 2026-11; the squat_scan one was -100/125/-35).
SQUAT = {'T1': (-101, 130, -40), 'K1': (-74, 127, -48)}
CKEYS = ('t', 'hip', 'knee', 'ankle', 'hroll', 'hyaw', 'ap', 'ar', 'el')
CSCALE = np.array([0.15, 25, 25, 10, 8, 8, 30, 20, 25])


#: True: the candidate's rows include the squat and the rise's intermediate frames (``--free-tail``)
FREE_TAIL = False


def cframes(robot, rows, t_last, squat=None):
    squat = not FREE_TAIL if squat is None else squat
    frames = []
    for t, hip, knee, ankle, hroll, hyaw, ap, ar, el in rows:
        q = legs(hip, knee, ankle, hroll)
        q.update({'llj3': hyaw, 'rlj3': -hyaw})
        q.update(arms(ap, ar, el))
        frames.append((max(0.05, min(t, 1.5)), q))
    cfg = yaml.safe_load((REPO / 'config' / 'robots.yaml').read_text())
    if squat:
        sq = legs(*SQUAT[robot], 0)
        sq.update({'llj3': 0, 'rlj3': 0})
        sq.update(arms(-90, -75, 0))
        frames.append((0.3, sq))
    last = dict(cfg[robot]['hold_pose'])
    last.update({'llj2': 0, 'rlj2': 0, 'llj3': 0, 'rlj3': 0, 'laj3': 0, 'raj3': 0})
    frames.append((t_last, last))
    return frames


def cscore(args):
    """Score of one candidate; with NOISY_TRIALS > 0 the mean over that many perturbed trials."""
    if NOISY_TRIALS:
        robot, direction, rows, t_last, seed = args
        res = [cscore1((robot, direction, rows, t_last, seed * 100 + k), NOISE) for k in range(NOISY_TRIALS)]
        return (
            sum(r[0] for r in res) / len(res),
            sum(r[1] is not None for r in res) / len(res),
            sum(r[2] for r in res) / len(res),
        )
    return cscore1(args)


NOISY_TRIALS = 0
NOISE = 1.0


def cscore1(args, noise=0.0):
    robot, direction, rows, t_last, seed = args
    sim = _SIM.get(robot) or _SIM.setdefault(robot, Sim(robot))
    frames = clamp_frames(sim.spec, cframes(robot, rows, t_last))
    name = 'GETUP_FRONT' if direction == 'front' else 'GETUP_BACK'
    skill = skill_from_frames(name, frames)
    dur = skill.duration
    r, st = sim.trial({name: skill}, direction, seed=seed, timeout=dur + 2.0, trace=True, trace_every=1, noise=noise)
    log = st['log']
    hz = STAND_Z[robot]
    first = [row for row in log if row[3] == name and row[0] <= dur + 0.1]  # the first attempt only
    key = max(
        (
            row[7] / 2 / (1 + (row[5] / 0.06) ** 2) * min(row[6] / 0.3, 1.0) * max(0.0, math.cos(math.radians(row[2])))
            for row in first
        ),
        default=0,
    )
    tail = [row for row in log if row[0] > dur + 1.0]
    s = 3.0 * key
    if tail:
        s += sum(min(z / hz, 1.0) + max(0.0, math.cos(math.radians(tilt))) for _, z, tilt, *_ in tail) / len(tail)
    if r is not None:
        s += 5.0 - 0.2 * r
    return s, r, key


def cma_search(robot, direction, init, t_last, gens, out, sigma=0.3, popsize=12, workers=1, seed=1, freeze=0):
    """CMA-ES over the rows after the first ``freeze`` (those are kept as they are)."""
    import cma  # noqa: PLC0415 - optional, search only

    frozen = [list(r) for r in init[:freeze]]
    init = np.array(init[freeze:], dtype=float)
    shape = init.shape
    x0 = (init / CSCALE).ravel()
    es = cma.CMAEvolutionStrategy(x0, sigma, {'popsize': popsize, 'seed': seed, 'verbose': -9})
    pool = mp.Pool(workers) if workers > 1 else None
    best = (-1e9, None)
    for g in range(gens):
        xs = es.ask()
        rows = [frozen + (np.array(x).reshape(shape) * CSCALE).tolist() for x in xs]
        jobs = [(robot, direction, r, t_last, g) for r in rows]
        res = pool.map(cscore, jobs) if pool else [cscore(j) for j in jobs]
        es.tell(xs, [-s for s, _, _ in res])
        i = int(np.argmax([s for s, _, _ in res]))
        if res[i][0] > best[0]:
            best = (res[i][0], rows[i])
            Path(out).write_text(repr((rows[i], t_last)))
            print(g, 'best', round(res[i][0], 3), res[i][1], round(res[i][2], 3), flush=True)
        elif g % 10 == 0:
            print(g, 'gen best', round(res[i][0], 3), 'key', round(max(k for _, _, k in res), 3), flush=True)
        if g % 5 == 4:  # the distribution mean: the robust candidate under noise
            Path(out + '.mean').write_text(
                repr((frozen + (np.array(es.result.xfavorite).reshape(shape) * CSCALE).tolist(), t_last))
            )
    return best


def rows_from_yaml(path, robot):
    """Free-frame rows (CKEYS) from a YAML get-up skill, without its last (rise) frame."""
    sim_spec = mujoco_robot(robot)
    sk = load_keyframe_skill(path, sim_spec)
    cur = {k: 0.0 for k in ('llj1', 'llj4', 'llj5', 'llj2', 'llj3', 'laj1', 'laj2', 'laj3')}
    rows = []
    for f in sk.frames[:-1]:
        cur.update({k: v / D2R for k, v in f.targets.items() if k in cur})
        rows.append(
            [
                f.duration,
                cur['llj1'],
                cur['llj4'],
                cur['llj5'],
                cur['llj2'],
                cur['llj3'],
                cur['laj1'],
                cur['laj2'],
                cur['laj3'],
            ]
        )
    return rows


def export(robot, back_file, roll_file, out_dir, t_last=None, settle=0.6):
    """Write GETUP_BACK (the CMA back rows + squat + rise) and GETUP_FRONT (the roll of
    search_getup_roll.py, ``settle`` s in the hold pose on the back, then the same frames)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from search_getup_roll import roll_frames  # noqa: PLC0415

    spec = mujoco_robot(robot)
    rows, tl = eval(Path(back_file).read_text())
    back = clamp_frames(spec, cframes(robot, rows, t_last or tl))
    cfg = yaml.safe_load((REPO / 'config' / 'robots.yaml').read_text())
    hold = {j.name: 0.0 for j in spec.joints if j.name[1:3] in ('aj', 'lj')}
    hold.update(cfg[robot]['hold_pose'])
    roll = clamp_frames(spec, [*roll_frames(eval(Path(roll_file).read_text())), (settle, hold)])
    out = Path(out_dir)
    write_yaml(
        out / 'getup_back.yaml',
        'GETUP_BACK',
        back,
        f'Get up from the back ({robot}). Found by bench/search_getup_mujoco.py (cma, direct MuJoCo);\n'
        'see its docstring for what the frames do. The last two frames: squat, rise to the hold pose.',
    )
    write_yaml(
        out / 'getup_front.yaml',
        'GETUP_FRONT',
        roll + back,
        f'Get up from the front ({robot}): roll onto the back (bench/search_getup_roll.py), lie still\n'
        f'{settle} s, then the frames of getup_back.yaml. One skill, because the fall detector keeps the\n'
        'direction it saw first until the robot is upright again.',
    )


if __name__ == '__main__' and len(sys.argv) > 1 and sys.argv[1] == 'cma':
    p = frame_search_args('a YAML skill or a repr file written by this search')
    p.add_argument('--gens', type=int, default=100)
    p.add_argument('--sigma', type=float, default=0.3)
    p.add_argument('--popsize', type=int, default=12)
    p.add_argument('--workers', type=int, default=1)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--noisy', type=int, default=0, help='score by the mean of N perturbed trials')
    p.add_argument('--noise', type=float, default=1.0, help='their noise level (Sim.trial)')
    p.add_argument('--split-last', action='store_true', help='split the last free frame in two')
    p.add_argument('--freeze', type=int, default=0, help='keep the first N rows as they are')
    p.add_argument('--free-tail', action='store_true', help='the squat is a candidate row too (not SQUAT)')
    p.add_argument('--mid-rise', action='store_true', help='with --free-tail: add a row half way up the rise')
    p.add_argument('--export', nargs=2, metavar=('ROLL_FILE', 'OUT_DIR'), help='write the YAML skills and exit')
    a = p.parse_args()
    FREE_TAIL = a.free_tail
    if a.export:
        export(a.robot, a.init, a.export[0], a.export[1])
        raise SystemExit(0)
    if a.init.endswith('.yaml'):
        init = rows_from_yaml(a.init, a.robot)
        is_squat = bool(init) and tuple(round(v) for v in init[-1][1:4]) == SQUAT[a.robot]
        if is_squat and not a.free_tail:
            init = init[:-1]
        if is_squat and a.free_tail and a.mid_rise:
            # half way up: the mean of the squat and the hold pose, the rise split in two
            hold = yaml.safe_load((REPO / 'config' / 'robots.yaml').read_text())[a.robot]['hold_pose']
            sq = init[-1]
            mid = [a.t_last / 2, (sq[1] + hold['llj1']) / 2, (sq[2] + hold['llj4']) / 2, (sq[3] + hold['llj5']) / 2]
            mid += [0, 0, (sq[6] + hold['laj1']) / 2, (sq[7] + hold['laj2']) / 2, 0]
            init = [*init, mid]
            a.t_last /= 2
    else:
        init = eval(Path(a.init).read_text())[0]
    NOISY_TRIALS, NOISE = a.noisy, a.noise
    if a.split_last:
        last = list(init[-1])
        last[0] /= 2
        init = [*init[:-1], last, list(last)]
    cma_search(
        a.robot,
        a.dir,
        init,
        a.t_last,
        a.gens,
        a.out or f'/tmp/getup_cma_{a.robot}_{a.dir}.txt',
        a.sigma,
        a.popsize,
        a.workers,
        a.seed,
        a.freeze,
    )
