"""Where a walking player's CPU goes: py-spy samples the real player process, grouped by stage.

A session (server in sync mode, the composed player process, this process steering with commands on change
and every 0.5 s, and not subscribed to the player's state, as in a match) walks a seeded random course while
``py-spy record --format raw`` samples the player; every sampled stack is put in
one stage (bridge socket I/O, parsing, message building and publishing, motion's gait and leg IK,
the world model, strategy, the rclpy executor) and the table prints each stage's share.

    pip install py-spy
    python bench/bench_profile.py [--server simspark --type 0] [--robot T1] [--seconds 30] [--world-model]
"""

from __future__ import annotations

import argparse
import collections
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robocup3d_tools.sim_session import SimSession

_PUBLISH = ('Publisher.publish', 'sendTransform')


def stage(frames: list[str]) -> str:
    """The stage a sampled stack (outermost frame first) belongs to."""
    s = ';'.join(frames)
    published = any(p in s for p in _PUBLISH)
    if 'AgentLoop.run' in s:
        if 'MotionNode.step_percept' in s:
            if published:
                return 'motion: publishing'
            if 'robocup3d_description/kinematics.py' in s:
                return 'motion: leg IK'
            if 'robocup3d_motion/walk.py' in s:
                return 'motion: gait'
            return 'motion: other (skills, joint control, balance)'
        if 'WorldModelNode.step_percept' in s:
            return _world_model_stage(s, published)
        if 'BridgeNode._on_percept' in s:
            if 'hear_msgs' in s or 'team_talk' in s:
                return "team talk: the bridge's heard messages"
            if published:
                return 'bridge: publishing'
            if 'conversions.py' in s or 'msg/_' in s:
                return 'bridge: building messages'
            return 'bridge: other per-cycle'
        if 'ServerLink.receive' in s or 'ServerLink.send' in s or 'link.py' in frames[-1]:
            return 'bridge: socket I/O'
        if re.search(r'(sexp|percept|perception|protocol)\.py', s):
            return 'bridge: parsing and encoding'
        return 'bridge: agent loop, other'
    if 'spin_until_shutdown' not in s and any(f.startswith('spin_nodes ') for f in frames):
        return 'start-up (building the nodes)'
    ours = [f for f in frames if 'robocup3d_' in f and 'node_main.py' not in f]  # callbacks, not the spin loop
    innermost = ours[-1] if ours else ''
    if '_on_hear' in s or 'hearing.py' in s:
        return 'team talk: hearing (world model)'
    if '_on_say' in s:
        return 'team talk: saying (bridge)'
    for package, name in (
        ('robocup3d_strategy', 'strategy (executor callbacks)'),
        ('robocup3d_perception', 'world model (executor callbacks)'),
        ('robocup3d_motion', 'motion (executor callbacks)'),
        ('robocup3d_bridge', 'bridge (executor callbacks, diagnostics)'),
    ):
        if package in innermost:
            return name
    return 'rclpy executor (spin, waits, message init)'


_WORLD_MODEL_MODULES = (
    ('particle_filter.py', 'self-localization'),
    ('player_tracker.py', 'player tracking'),
    ('ball_tracker.py', 'ball tracking'),
    ('orientation.py', 'orientation'),
    ('vision_geometry.py', 'camera geometry'),
    ('team_view.py', 'team view'),
)


def _world_model_stage(s: str, published: bool) -> str:
    """A stack in the world model's cycle: the modules' update, its messages, or the in-process listeners
    (motion and strategy take each update there)."""
    if 'StrategyNode' in s:
        if 'team_talk' in s:
            return 'team talk: saying (strategy)'
        if published:
            return 'strategy: publishing'
        return 'strategy: decisions'
    if 'MotionNode.take_world' in s:
        return "motion: taking the world model's view"
    if published or 'robocup3d_perception/conversions.py' in s:
        return 'world model: messages and publishing'
    for module, name in _WORLD_MODEL_MODULES:
        if module in s:
            return f'world model: {name}'
    return 'world model: other'


def breakdown(raw: Path) -> tuple[int, collections.Counter]:
    """Samples per stage in a py-spy raw (collapsed stacks) file."""
    shares: collections.Counter = collections.Counter()
    total = 0
    for line in raw.read_text(encoding='utf-8').splitlines():
        stack, _, count = line.rpartition(' ')
        if not count.isdigit():
            continue
        total += int(count)
        shares[stage(stack.split(';'))] += int(count)
    return total, shares


def leaves(raw: Path) -> collections.Counter:
    """Samples per innermost function (its name and file) in a py-spy raw file."""
    own: collections.Counter = collections.Counter()
    for line in raw.read_text(encoding='utf-8').splitlines():
        stack, _, count = line.rpartition(' ')
        if count.isdigit() and stack:
            leaf = stack.split(';')[-1]
            name, _, where = leaf.partition(' (')
            own[f'{name} ({where.split(":")[0].rsplit("/", 1)[-1]})'] += int(count)
    return own


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--server', choices=('mujoco', 'simspark'), default='mujoco')
    ap.add_argument('--robot', default='T1')
    ap.add_argument('--type', dest='robot_type', type=int, default=0)
    ap.add_argument('--seconds', type=float, default=30.0, help='seconds of wall time sampled')
    ap.add_argument('--world-model', action='store_true', help='run the world model in the player too')
    ap.add_argument('--stand', action='store_true', help='the player stands (default: walks a random course)')
    ap.add_argument(
        '--gil',
        action='store_true',
        help="sample only the thread holding the GIL (py-spy --gil): a thread's waits are not counted as its work",
    )
    ap.add_argument('--top', type=int, default=0, help='also print the N functions with the most samples of their own')
    args = ap.parse_args()
    spy = shutil.which('py-spy') or str(Path(sys.executable).parent / 'py-spy')
    if not Path(spy).exists():
        ap.error('py-spy is not installed: pip install py-spy')
    extra = ('--world-model',) if args.world_model else ()
    raw = Path(tempfile.mkdtemp(prefix='r3d_profile_')) / 'player.raw'
    truth = 'monitor'  # the player sends nothing per cycle for this observer, as in a match
    with SimSession(
        args.robot, server=args.server, robot_type=args.robot_type, player_args=extra, truth=truth
    ) as session:
        session.place(-6.0, 0.0, 0.0)
        cmd = [spy, 'record', '--format', 'raw', '-r', '200', '--nonblocking', '-d', str(int(args.seconds))]
        cmd += ['-o', str(raw), '--pid', str(session.player.pid), *(['--gil'] if args.gil else [])]
        sampler = threading.Thread(target=subprocess.run, args=(cmd,), kwargs={'capture_output': True})
        sampler.start()
        rng = random.Random(1)
        while sampler.is_alive():
            fell = False
            with session.unwatched():  # as in a match, nobody subscribes to the player's state
                while args.stand and sampler.is_alive():
                    session.wait_cycles(25)
                while sampler.is_alive() and not fell:  # a random course while the sampler runs
                    command = (rng.uniform(-0.3, 1.0), rng.uniform(-0.3, 0.3), rng.uniform(-1.0, 1.0))
                    session.drive(rng.uniform(1.0, 3.0), lambda t, c=command: c, keep_alive=0.5)
                    fell = session.pose is not None and session.pose.up < 0.5
            if fell:
                session.place(-6.0, 0.0, 0.0)
        sampler.join()
    total, shares = breakdown(raw)
    what = f'Nao type {args.robot_type}' if args.server == 'simspark' else args.robot
    doing = 'standing' if args.stand else 'walking a random course'
    print(f'{what} {doing}, {total} samples of the player process (py-spy, 200/s)')
    for name, n in shares.most_common():
        print(f'{100.0 * n / max(total, 1):5.1f} %  {name}')
    if args.top:
        print('\nfunctions by their own samples (and their file):')
        for name, n in leaves(raw).most_common(args.top):
            print(f'{100.0 * n / max(total, 1):5.1f} %  {name}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
