"""One player's per-cycle stages offline, on captured server messages: CPU per stage and digests of what came out.

Feeds a capture (one server message a line, as in ``../shared/captures``) through what the composed player does
with each message, without ROS: the parser, the sanitizer and the protocol's side (the bridge), the world model as
its node feeds it (``robocup3d_tools.rerun``'s player) and its team view, and the motion core's step, the joint
controller, the joint command and the action's encoding (``MotionNode.step_percept`` and ``AgentLoop._reply``). It
prints the CPU (thread time, best of ``--repeat``) per cycle of each stage, a digest of every world state and a
digest of every encoded action: the same digests from two trees mean the same estimates and the same commands.
The motion core only stands here (nobody asks it to walk): ``--closed-loop`` also runs the motion core in
RCSSServerMJ's own simulation (``bench/mj_offline.py``) standing, then walking three commands, and prints a digest
of every action it sent and where the robot ended (a changed command changes the robot, and so all that follows).

    PYTHONPATH=. python bench/bench_cycle_offline.py CAPTURE --robot T1 [--team TeamA --unum 2 --repeat 5]
    PYTHONPATH=. python bench/bench_cycle_offline.py --closed-loop --robot K1
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

STAGES = ('parse', 'sanitize', 'world model', 'team view', 'motion core', 'joint control', 'encode')


def _spec(robot: str) -> tuple[object, str, int]:
    from robocup3d_description.robots import robot_spec  # noqa: PLC0415

    if robot.startswith('nao'):
        return robot_spec('simspark', 'nao', int(robot[3:])), 'simspark', int(robot[3:])
    return robot_spec('mujoco', robot), 'mujoco', 0


def run(lines: list[str], robot: str, team: str, unum: int) -> tuple[dict[str, float], int, str, str]:
    """CPU seconds by stage, cycles, the world model's digest and the actions' digest."""
    from robocup3d_bridge.config_files import load_config  # noqa: PLC0415
    from robocup3d_bridge.perception import PerceptParseError, parse_percept  # noqa: PLC0415
    from robocup3d_bridge.protocol import Action, JointCommand  # noqa: PLC0415
    from robocup3d_motion.core import CONTACT_N, MotionCore  # noqa: PLC0415
    from robocup3d_motion.kick_config import ball_skills_for, load_kicks_config  # noqa: PLC0415
    from robocup3d_motion.motion_config import load_walk_config  # noqa: PLC0415
    from robocup3d_perception.team_view import team_view  # noqa: PLC0415
    from robocup3d_tools.rerun import _Player  # noqa: PLC0415

    spec, server, robot_type = _spec(robot)
    player = _Player(team, unum, robot, server, 'ssim', '')
    family = 'nao' if robot.startswith('nao') else robot
    kicks = ball_skills_for(load_kicks_config('kicks.yaml'), family, robot_type, server)
    core = MotionCore(
        spec,
        load_config('robots.yaml'),
        0.3,
        walk_cfg=load_walk_config('walk.yaml'),
        cmd_timeout=2.0,
        ball_skills=kicks,
    )
    cpu = dict.fromkeys(STAGES, 0.0)
    wm_digest, act_digest = hashlib.sha256(), hashlib.sha256()
    from bench_world_strategy import _state_bytes  # noqa: PLC0415

    clock = time.thread_time
    cycles, wall = 0, 0.0
    feed, protocol = player.feed, player.protocol
    for line in lines:
        t0 = clock()
        try:
            p = parse_percept(line, player.dialect)
        except PerceptParseError:
            continue
        t1 = clock()
        player.sanitizer.clean(p)
        protocol.observe(p)
        t2 = clock()
        state = None
        if p.time is not None:
            state, _ = feed.update(feed.percept_input(p))
        if p.game is not None:
            feed.on_game({'side': protocol.side.value, 'team': feed.team, 'play_mode': p.game.play_mode})
        t3 = clock()
        if state is not None:
            team_view(state, with_players=p.vision is not None)
        t4 = clock()
        text = ''
        t5 = t6 = t4
        if p.joint_positions:  # MotionNode.step_percept's work, and the reply's encoding
            wall += 0.02
            t = p.time if p.time is not None else 0.0
            if p.gyro is not None and p.accel is not None:
                core.on_imu(t, p.gyro, p.accel, wall, p.forces or None)
            if p.forces:
                core.contacts = {
                    side: (f := p.forces.get(f'{side}f')) is not None and f.f[2] > CONTACT_N for side in 'lr'
                }
            targets = core.step(t, p.joint_positions, wall)
            kp, kd = core.gains()
            caps = core.speed_caps()
            t5 = clock()
            out = core.controller.command(targets, p.joint_positions, kp, caps)
            if out.position:
                cmd = JointCommand(
                    position=dict(zip(out.names, out.position, strict=True)),
                    velocity=dict(zip(out.names, out.velocity, strict=True)),
                    kp=kp,
                    kd=kd,
                )
            else:
                cmd = JointCommand(velocity=dict(zip(out.names, out.velocity, strict=True)))
            t6 = clock()
            text = protocol.encode(Action(joints=cmd)).text
        t7 = clock()
        for name, dt in zip(STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t7 - t6), strict=True):
            cpu[name] += dt
        cycles += 1
        if state is not None:
            wm_digest.update(_state_bytes(state, p.vision is not None))
        act_digest.update(text.encode() + b'\n')
    return cpu, cycles, wm_digest.hexdigest()[:16], act_digest.hexdigest()[:16]


def closed_loop(robot: str) -> str:
    """Stand, walk three commands and stop in RCSSServerMJ's simulation: the actions' digest and the end pose."""
    from mj_offline import stand  # noqa: PLC0415

    o = stand(robot=robot, settle=1.0)
    digest, sent = hashlib.sha256(), [0]
    encode = o.protocol.encode

    def record(action: object) -> object:
        out = encode(action)
        digest.update(out.text.encode() + b'\n')
        sent[0] += 1
        return out

    o.protocol.encode = record
    o.run(2.0)
    for command, seconds in (((0.6, 0.0, 0.3), 4.0), ((0.2, 0.2, -0.5), 3.0), ((0.0, 0.0, 0.0), 2.0)):
        o.core.set_velocity(*command, o.wall)
        o.run(seconds)
    torso = ' '.join(f'{v:.9f}' for v in o.sim.mj_data.xpos[o.torso])
    return f'{robot}: {sent[0]} actions, digest {digest.hexdigest()[:16]}; torso at {torso}, up {o.up():.9f}'


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('capture', type=Path, nargs='?')
    ap.add_argument('--robot', default='T1', help='T1 or K1 (RCSSServerMJ), nao0 ... nao4 (rcssserver3d)')
    ap.add_argument('--team', default='TeamA', help="the player's team (a capture's own: its side and decisions)")
    ap.add_argument('--unum', type=int, default=2)
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--closed-loop', action='store_true', help="the motion core in RCSSServerMJ's own simulation")
    args = ap.parse_args()
    if args.closed_loop:
        print(closed_loop(args.robot))
        if args.capture is None:
            return 0
    if args.capture is None:
        ap.error('a capture, or --closed-loop')
    lines = [ln for ln in args.capture.read_text(encoding='ascii', errors='replace').splitlines() if ln.strip()]
    best: dict[str, float] = {}
    digests = set()
    for _ in range(args.repeat):
        cpu, cycles, wm, acts = run(lines, args.robot, args.team, args.unum)
        digests.add((wm, acts))
        for k, v in cpu.items():
            best[k] = min(best.get(k, float('inf')), v)
    print(f'{cycles} cycles of {args.robot} ({args.capture}); best of {args.repeat}, us of CPU per cycle:')
    for k, v in best.items():
        print(f'{1e6 * v / max(cycles, 1):8.1f}  {k}')
    print(f'{1e6 * sum(best.values()) / max(cycles, 1):8.1f}  together')
    for wm, acts in sorted(digests):
        print(f'digest: world model {wm}, actions {acts}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
