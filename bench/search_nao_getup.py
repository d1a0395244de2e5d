"""CMA-ES search of per-type Nao get-up parameters on rcssserver3d.

Tunes a few ``$parameters`` of ``getup_front.skl`` or ``getup_back.skl`` for one heterogeneous
type. Each candidate is written as a parameter file, loaded after ``defaultParams.txt``,
``defaultParams_t<N>.txt`` and the ``--init`` files as the motion node loads them, and scored on
``--trials`` knock-downs:

* default: bench_nao_getup's own loop (one server for the whole search, the motion node's
  JointController and get-up logic; ~1 s wall per trial). Fast, but it does not always carry over
  to the player process (a type 3 front candidate: 8/12 here, 0/10 through the player process);
* ``--graph``: through the player process (a server and a player with ``--skill-params`` per
  candidate, ~8-10 s wall per candidate of 3 trials). What the acceptance bench measures.

Only the first get-up after the knock-down counts (``--full``, own loop only: bench_nao_getup's
whole trial, with retries). Score of a trial: 1.5 if it stood after the first get-up, less 0.03 a
second from the fall; a failure scores at most 0.5, for how upright (and, through the player
process, how high) the torso got. The best candidate (highest mean score; with few trials a lucky
one, so confirm it) is written to ``--out`` after every generation, as override lines of the tuned
names plus the ``--init`` values, so the file stands alone.

    PYTHONPATH=. ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=63 \\
        python bench/search_nao_getup.py --type 3 --direction front --graph --trials 3 --evals 80 \\
        --out /tmp/t3_front.txt [--names getup_front_1_leg3 ...] [--init FILE ...] [--sigma 0.6]

Confirm the result through the player process with more trials:

    PYTHONPATH=. python bench/bench_nao_getup.py --fast --trials 20 --types 3 --directions front \\
        --params /tmp/t3_front.txt
"""

from __future__ import annotations

import argparse
import math
import random
import re
import signal
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import bench_nao_getup as bng  # noqa: E402

from robocup3d_bridge.link import LinkDown  # noqa: E402
from robocup3d_motion.skills.params import load_params, load_type_params  # noqa: E402

DATA = bng.REPO / 'robocup3d_motion' / 'skills' / 'data' / 'nao'

#: The parameters tuned by default: the states that decide whether the feet come under the body.
DEFAULT_NAMES = {
    'front': [
        'getup_front_1_arm1',
        'getup_front_1_leg3',
        'getup_front_1_leg4',
        'getup_front_1_wait',
        'getup_front_2_leg1',
        'getup_front_2_leg5',
        'getup_front_2_arm1',
        'getup_front_2_wait',
        'getup_front_3_leg1',
        'getup_front_3_leg3',
        'getup_front_3_leg4',
        'getup_front_3_leg5',
        'getup_front_3_wait',
    ],
    'back': [
        'getup_back_4_leg3',
        'getup_back_4_leg4',
        'getup_back_5_leg1',
        'getup_back_5_leg4',
        'getup_back_5_leg5',
        'getup_back_5_wait',
        'getup_back_6_leg1',
        'getup_back_6_leg3',
        'getup_back_6_leg4',
        'getup_back_6_leg5',
        'getup_back_6_wait',
        'getup_back_7_leg3',
        'getup_back_7_leg4',
        'getup_back_7_leg5',
        'getup_back_7_wait',
        'getup_back_8_leg3',
        'getup_back_8_leg5',
        'getup_back_8_wait',
    ],
}

#: Bounds by the name's last part (deg; waits in s), from the Nao joint limits.
BOUNDS = {
    'leg1': (-90.0, 1.0),
    'leg2': (-25.0, 45.0),
    'leg3': (-25.0, 100.0),
    'leg4': (-130.0, 1.0),
    'leg5': (-45.0, 75.0),
    'leg6': (-45.0, 25.0),
    'arm1': (-120.0, 120.0),
    'arm2': (-1.0, 95.0),
    'arm3': (-120.0, 120.0),
    'arm4': (-90.0, 1.0),
    'wait': (0.02, 1.5),
}
#: One unit of the search's normalised step (deg; s for waits).
SCALE = {'wait': 0.15}
DEG_SCALE = 12.0

_SAMPLE = re.compile(r'^\s*([\d.]+)s z=([-\d.]+) up=([-+\d.]+)')


def kind(name: str) -> str:
    return name.rsplit('_', 1)[1]


def scale(name: str) -> float:
    return SCALE.get(kind(name), DEG_SCALE)


def clip(name: str, value: float) -> float:
    lo, hi = BOUNDS.get(kind(name), (-math.inf, math.inf))
    v = min(max(value, lo), hi)
    return float(round(v, 2) if kind(name) == 'wait' else round(v, 1))


def trial_score(tr: bng.Trial) -> float:
    if tr.success and tr.time_to_upright is not None:
        return 1.0 + 0.5 * (tr.attempts == 1) - 0.03 * tr.time_to_upright
    best = 0.0
    for line in tr.trace:
        m = _SAMPLE.match(line)
        if m and float(m.group(1)) >= 1.5:
            z, up = float(m.group(2)), float(m.group(3))
            best = max(best, min(z / bng.UPRIGHT_Z, 1.0) * max(up, 0.0))
    return 0.5 * best


def first_attempt(sim: bng.Sim, ctrl: bng.Controller, direction: str, rng: random.Random) -> tuple[bool, float]:
    """Knock the robot over ``direction`` and play only the first get-up; then 1.5 s of the stand pose.

    Returns (stood, score). ``stood``: the torso upright (ground truth) at the end and the detector not
    fallen. Score: 1.5 - 0.03 * (s from the fall to the end of the skill) if it stood; else at most 0.5
    for how upright the torso (IMU tilt) got from 1 s into the skill on, and was at the end. A knock-down that lands the
    robot on the other side (another skill would be played) is repeated, up to 3 times.
    """
    agent = ctrl.agent
    want = bng.getup_skill_for(direction, ctrl.skills)
    for _ in range(3):
        bng.place(ctrl, rng.uniform(-8, -2), rng.uniform(-5, 5), rng.uniform(-180, 180))
        knock = {k: v * bng._D2R for k, v in bng.KNOCK_DEG[direction].items()}
        t0 = agent.t
        while not ctrl.detector.fallen and agent.t - t0 < 4.0:
            ctrl.cycle(override=knock)
        if not ctrl.detector.fallen:
            continue
        t_fall = agent.t
        tracker = bng.TruthTracker(sim, agent.unum, period=0.05)
        ctrl.on_cycle = tracker
        try:
            while ctrl.player is None and agent.t - t_fall < 2.0:
                ctrl.cycle()
            if ctrl.player is None or ctrl.player.skill.name != want:
                continue
            ups = []  # cos(tilt) of the IMU each cycle: how upright the torso is
            while ctrl.player is not None and agent.t - t_fall < 10.0:
                ctrl.cycle()
                ups.append(math.cos(ctrl.state.tilt))
            t_end = agent.t
            ctrl.pause_until = math.inf  # no second attempt: watch the stand pose
            while agent.t - t_end < 1.5 or tracker.last_t < t_end + 1.5:
                ctrl.cycle()
                ups.append(math.cos(ctrl.state.tilt))
                if agent.t - t_end > 5.0:
                    break
        finally:
            ctrl.on_cycle = None
            ctrl.pause_until = -math.inf
        last = tracker.last
        if last is not None and tracker.last_t >= t_end + 1.5 and last.upright and not ctrl.state.fallen:
            return True, 1.5 - 0.03 * (t_end - t_fall)
        # Partial credit: the IMU's best uprightness from 1 s into the skill, and the final one.
        best = max(ups[50:], default=0.0)
        return False, 0.25 * max(best, 0.0) + 0.25 * max(ups[-1], 0.0)
    return False, 0.0


def graph_first_attempt(rig: bng.GraphRig, direction: str, rng: random.Random) -> tuple[bool, bool, float]:
    """As :func:`first_attempt`, through the player process (``--graph``); (stood, first try, score).

    The motion node retries by itself; a trial counts as stood at the first try if the torso is
    upright (ground truth) 1.5 s after the first get-up ended and no second one started. Failures
    score at most 0.5 for how high and upright the torso got (truth samples from 1 s after the fall).
    """
    if not rig.place(rng.uniform(-8, -2), rng.uniform(-5, 5), rng.uniform(-180, 180)):
        return False, False, 0.0
    getups0 = rig.state.get('getups', 0)
    rig.falls.clear()
    rig.set_targets(bng.KNOCK_DEG[direction])
    t0 = rig.now
    try:
        if not rig.spin_until(lambda: bool(rig.falls) or rig.now - t0 > 4.0, 60.0) or not rig.falls:
            return False, False, 0.0
    finally:
        rig.set_targets({})
    t_fall = rig.falls[0][0]
    best = 0.0
    t_end: float | None = None
    while rig.now - t_fall < bng.TIMEOUT:
        tor = rig.truth()
        st = rig.state
        if tor is not None and rig.now - t_fall >= 1.0:
            best = max(best, min(tor.pos[2] / bng.UPRIGHT_Z, 1.0) * max(tor.up[2], 0.0))
        if t_end is None and st.get('getups', 0) > getups0 and not st.get('getup'):
            t_end = rig.now
        if t_end is not None and rig.now - t_end >= 1.5:
            first = st.get('getups', 0) - getups0 == 1
            if tor is not None and tor.upright and not st.get('fallen') and not st.get('getup'):
                return True, first, (1.5 if first else 1.0) - 0.03 * (t_end - t_fall)
            break
        rig.run_for(0.1)
    return False, False, 0.5 * best


def write_params(path: Path, values: dict[str, float], header: str = '') -> None:
    lines = [f'# {line}' for line in header.splitlines()] if header else []
    lines += [f'{k}\t{v:g}' for k, v in values.items()]
    path.write_text('\n'.join(lines) + '\n', encoding='utf-8')


class Rig:
    """One server and one own-loop agent for the whole search (restarted if the link drops)."""

    def __init__(self, robot_type: int) -> None:
        self.robot_type = robot_type
        self._cm = None
        self.ctrl: bng.Controller | None = None

    def start(self) -> None:
        self._cm = bng.simspark(fast=True)
        sim = self._cm.__enter__()
        agent = bng.NaoAgent(sim, self.robot_type)
        agent.connect()
        self.sim = sim
        self.ctrl = bng.Controller(agent, bng.registry(self.robot_type))
        bng.settle_stand(self.ctrl, 0.5)

    def stop(self) -> None:
        if self.ctrl is not None:
            self.ctrl.agent.close()
            self.ctrl = None
        if self._cm is not None:
            self._cm.__exit__(None, None, None)
            self._cm = None

    def run(self, params_file: Path, direction: str, trials: int, rng: random.Random, full: bool) -> list:
        out = []
        for _ in range(trials):
            for attempt in range(2):
                try:
                    if self.ctrl is None:
                        self.start()
                    self.ctrl.skills = bng.registry(self.robot_type, (str(params_file),))
                    if full:
                        tr = bng.run_trial(self.sim, self.ctrl, direction, rng)
                        out.append((tr.success, tr.success and tr.attempts == 1, trial_score(tr)))
                    else:
                        ok, score = first_attempt(self.sim, self.ctrl, direction, rng)
                        out.append((ok, ok, score))
                    break
                except (LinkDown, OSError, RuntimeError) as exc:
                    print(f'  rig error ({exc}); restarting the server', flush=True)
                    self.stop()
                    if attempt:
                        raise
        return out


def main(argv: list[str] | None = None) -> int:
    import cma  # noqa: PLC0415

    def _stop(signum, frame):
        raise KeyboardInterrupt  # SIGTERM: still stop the server (it ignores SIGTERM itself)

    signal.signal(signal.SIGTERM, _stop)

    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--type', type=int, required=True)
    ap.add_argument('--direction', choices=['front', 'back'], required=True)
    ap.add_argument('--names', nargs='+', help='parameters to tune (default: the fold/pike/squat states)')
    ap.add_argument('--init', nargs='*', default=[], metavar='FILE', help='parameter files for the start point')
    ap.add_argument('--trials', type=int, default=4, help='own-loop trials per candidate')
    ap.add_argument('--evals', type=int, default=200, help='candidates to evaluate')
    ap.add_argument('--popsize', type=int, default=0, help='CMA-ES population (0: its default)')
    ap.add_argument('--sigma', type=float, default=1.0, help='initial step, in units of 12 deg / 0.15 s')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument(
        '--graph',
        action='store_true',
        help='score through the player process (a server and player per candidate; slower, what counts)',
    )
    ap.add_argument(
        '--full',
        action='store_true',
        help="score bench_nao_getup's full trials (retries, 10 s) instead of the first get-up",
    )
    ap.add_argument('--out', type=Path, required=True, help='parameter file written with the best candidate')
    args = ap.parse_args(argv)

    names = args.names or DEFAULT_NAMES[args.direction]
    base = load_type_params(DATA, args.type, args.init)
    missing = [n for n in names if n not in base]
    if missing:
        ap.error(f'unknown parameters: {missing}')
    init_over = load_params(args.init) if args.init else {}
    x0 = [base[n] / scale(n) for n in names]
    opts = {'seed': args.seed, 'verbose': -9}
    if args.popsize:
        opts['popsize'] = args.popsize
    es = cma.CMAEvolutionStrategy(x0, args.sigma, opts)
    tmp = Path(tempfile.mkdtemp(prefix='search_nao_getup_'))
    rig = Rig(args.type)
    best: tuple[float, dict[str, float], str] | None = None
    evals, gen, t_start = 0, 0, time.monotonic()
    try:
        while evals < args.evals and not es.stop():
            xs = es.ask()
            fits = []
            for x in xs:
                values = {n: clip(n, v * scale(n)) for n, v in zip(names, x, strict=True)}
                cand = tmp / f'cand_{evals}.txt'
                write_params(cand, {**init_over, **values})
                rng = random.Random(args.seed * 100003 + evals)
                if args.graph:
                    with bng.graph(args.type, True, skill_params=(str(cand),)) as grig:
                        trs = [graph_first_attempt(grig, args.direction, rng) for _ in range(args.trials)]
                else:
                    trs = rig.run(cand, args.direction, args.trials, rng, args.full)
                score = sum(t[2] for t in trs) / len(trs)
                ok = sum(t[0] for t in trs)
                first = sum(t[1] for t in trs)
                summary = f'{ok}/{len(trs)} ok, {first} first-try, score {score:.3f}'
                fits.append(-score)
                evals += 1
                if best is None or score > best[0]:
                    best = (score, values, summary)
                    print(f'[{evals}] new best: {summary}: {values}', flush=True)
            es.tell(xs, fits)
            gen += 1
            print(
                f'gen {gen}: {evals} evals, {time.monotonic() - t_start:.0f} s wall, gen best {-min(fits):.3f}, '
                f'best {best[0]:.3f} ({best[2]})',
                flush=True,
            )
            header = (
                f'search_nao_getup.py --type {args.type} --direction {args.direction} --trials {args.trials} '
                f'({"player process" if args.graph else "own loop"}), best after {evals} evals: {best[2]}'
            )
            write_params(args.out, {**init_over, **best[1]}, header)
    finally:
        rig.stop()
    print(f'wrote {args.out}: {best[2] if best else "-"}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
