"""A player's world model and strategy offline, on one player's captured server messages: CPU and a digest.

Feeds a capture (one server message a line: ``bench/bench_team.py --server simspark --profile 7
--capture FILE`` writes one of a full team playing) through the world model as the player's process
feeds it (``robocup3d_tools.rerun``'s player: the same :class:`~robocup3d_perception.feed.WorldModelFeed`),
hands each update to a real :class:`~robocup3d_strategy.strategy_node.StrategyNode` as the composed
player does (``take_world``), and prints the CPU per cycle of the world model's update, of the team view
and of the strategy, and a digest of everything they produced (every world state, every motion request
and team-talk message; the tracked robots in cycles with a ``See``, the only ones that read them): the same
digest from two trees means the same estimates and decisions.

    python bench/bench_world_strategy.py FILE [--team BenchS --unum 7 --robot nao0 --repeat 3]
    python bench/bench_world_strategy.py FILE --robot T1 --team TeamA --unum 2   (RCSSServerMJ: T1 or K1)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _state_bytes(state: object, seen: bool) -> bytes:
    """What the digest covers of one world state: pose and ball every cycle, the tracked robots in cycles with a
    ``See`` (the only ones that read them: ``team_view(..., with_players=seen)``, the ``players`` topic)."""
    p, b = state.pose, state.ball
    parts = [
        repr((state.time, p.x, p.y, p.z, p.yaw, p.roll, p.pitch, p.camera_yaw, p.confidence, p.fallen)),
        p.covariance.tobytes().hex(),
        repr((b.valid, b.last_seen)),
        b.position.tobytes().hex(),
        b.covariance.tobytes().hex(),
    ]
    for e in state.players if seen else ():
        parts.append(repr((e.team, e.unum, e.teammate, e.last_update, e.fallen, e.intent)))
        parts.append(e.position.tobytes().hex() + e.velocity.tobytes().hex() + e.covariance.tobytes().hex())
    return '|'.join(parts).encode()


def run(lines: list[str], team: str, unum: int, robot: str) -> tuple[dict[str, float], int, str, str]:
    """CPU seconds by stage, cycles, the world model's digest and the strategy's digest."""
    from rclpy.parameter import Parameter  # noqa: PLC0415

    from robocup3d_perception.team_view import team_view  # noqa: PLC0415
    from robocup3d_strategy.strategy_node import StrategyNode  # noqa: PLC0415
    from robocup3d_tools.rerun import _Player  # noqa: PLC0415

    nao = robot.startswith('nao')
    server = 'simspark' if nao else 'mujoco'  # the Nao types on rcssserver3d, the T1 and K1 on RCSSServerMJ
    player = _Player(team, unum, robot, server, 'ssim', '')
    node = StrategyNode(
        namespace=f'/offline{os.getpid()}/p{unum}',
        parameter_overrides=[
            Parameter('server', value=server),
            Parameter('unum', value=unum),
            Parameter('robot', value='nao' if nao else robot),
            Parameter('robot_type', value=int(robot[3:]) if nao else 0),
        ],
    )
    node.team = team
    said: list[str] = []
    node.pub_request.publish = lambda m: said.append('req ' + m.data)  # what goes out, for the digest
    node.pub_say.publish = lambda m: said.append('say ' + m.data)
    node.pub_state.publish = lambda m: said.append('state ' + m.data)
    wm_digest, st_digest = hashlib.sha256(), hashlib.sha256()
    cpu = {'parse and world model update': 0.0, 'team view': 0.0, 'strategy': 0.0}
    cycles = 0
    clock = time.thread_time
    try:
        for line in lines:
            seen = '(See ' in line
            t0 = clock()
            out = player.step(line, {})
            t1 = clock()
            if out is None:
                continue
            p, state = out
            node.side = player.protocol.side.value
            node.play_mode = p.game.play_mode if p.game is not None else node.play_mode
            view = team_view(state, with_players=seen)
            t2 = clock()
            node.take_world(view)
            t3 = clock()
            cpu['parse and world model update'] += t1 - t0
            cpu['team view'] += t2 - t1
            cpu['strategy'] += t3 - t2
            cycles += 1
            wm_digest.update(_state_bytes(state, seen))
            st_digest.update('\n'.join(said).encode())
            said.clear()
    finally:
        node.destroy_node()
    return cpu, cycles, wm_digest.hexdigest()[:16], st_digest.hexdigest()[:16]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('capture', type=Path)
    ap.add_argument('--team', default='BenchS')
    ap.add_argument('--unum', type=int, default=7)
    ap.add_argument(
        '--robot',
        default='nao3',
        help='nao0 ... nao4 (config/team_simspark.yaml: player 7 is type 3), or T1 / K1 (RCSSServerMJ)',
    )
    ap.add_argument('--repeat', type=int, default=3)
    args = ap.parse_args()
    import rclpy  # noqa: PLC0415

    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    lines = [ln for ln in args.capture.read_text(encoding='ascii', errors='replace').splitlines() if ln.strip()]
    rclpy.init(args=[])
    try:
        best: dict[str, float] = {}
        for _ in range(args.repeat):
            cpu, cycles, wm, st = run(lines, args.team, args.unum, args.robot)
            for k, v in cpu.items():
                best[k] = min(best.get(k, float('inf')), v)
    finally:
        rclpy.try_shutdown()
    print(f'{cycles} cycles of player {args.unum} ({args.capture}); best of {args.repeat}, ms of CPU per cycle:')
    for k, v in best.items():
        print(f'{1e3 * v / max(cycles, 1):7.3f}  {k}')
    print(f'{1e3 * sum(best.values()) / max(cycles, 1):7.3f}  together')
    print(f'digest: world model {wm}, strategy {st}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
