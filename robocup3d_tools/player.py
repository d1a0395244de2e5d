"""One player in one process: bridge, motion and strategy nodes on one executor.

``robocup3d player --server mujoco --team A --unum 1`` (or ``--separate`` to
start only the bridge, when the other nodes run in processes of their own).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path

from rclpy.node import Node
from rclpy.parameter import Parameter

from robocup3d_bridge.bridge_node import DEFAULT_PORTS, BridgeNode
from robocup3d_bridge.config_files import ConfigError
from robocup3d_bridge.node_main import spin_nodes
from robocup3d_motion.kick_config import load_kicks_config
from robocup3d_motion.motion_config import load_robots_config, load_walk_config
from robocup3d_motion.motion_node import MotionNode
from robocup3d_perception.world_model_node import WorldModelNode
from robocup3d_strategy.formation import load_formations
from robocup3d_strategy.strategy_node import StrategyNode
from robocup3d_tools.servers import end_with_parent

__all__ = ['main', 'player_namespace', 'player_parser']


def player_namespace(team: str, unum: int) -> str:
    """The ROS namespace of a player: ``/<team>/p<unum>``."""
    return f'/{team}/p{unum}'


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'not a number: {text!r}') from None
    if not (math.isfinite(value) and value > 0.0):
        raise argparse.ArgumentTypeError(f'must be a positive number of seconds, got {text!r}')
    return value


def player_parser() -> argparse.ArgumentParser:
    """Arguments shared by ``robocup3d player`` and the team runner."""
    p = argparse.ArgumentParser(prog='robocup3d player', description='Run one player (all its nodes, one process).')
    p.add_argument('--server', choices=('mujoco', 'simspark'), default='mujoco')
    p.add_argument('--host', default='127.0.0.1')
    p.add_argument('--port', type=int, default=0, help='agent port (default: 60000 mujoco, 3100 simspark)')
    p.add_argument('--team', default='robocup3d')
    p.add_argument('--unum', type=int, default=1)
    p.add_argument('--robot', default='', help='T1 or K1 on mujoco; nao on simspark')
    p.add_argument('--type', dest='robot_type', type=int, default=0, help='Nao heterogeneous type 0-4')
    p.add_argument('--rules', default='ssim', help='RCSSServerMJ rule book (field): ssim, ssim26, fifa')
    p.add_argument('--publish-clock', action='store_true', help='publish /clock from server time')
    p.add_argument('--no-raw', action='store_true', help='do not publish raw/percept and raw/action')
    p.add_argument('--bridge-only', action='store_true', help='run only the bridge node')
    p.add_argument(
        '--via-dds',
        action='store_true',
        help='bridge and motion talk over DDS topics even in one process (slower; for comparison)',
    )
    p.add_argument(
        '--world-model',
        action=argparse.BooleanOptionalAction,
        default=True,
        help='run the world model (localization, tracking) in this process (default); the strategy plays only with it',
    )
    p.add_argument(
        '--no-play',
        action='store_true',
        help='the strategy only beams and talks, it sends motion no tasks (for tools that drive the robot themselves)',
    )
    p.add_argument('--walk-config', default='walk.yaml', help='walk parameter file (name in config/ or a path)')
    p.add_argument(
        '--kicks-config', default='kicks.yaml', help='kicks, dribble and approach (name in config/ or a path)'
    )
    p.add_argument(
        '--cmd-timeout',
        type=_seconds,
        default=0.5,
        metavar='S',
        help='server seconds a cmd_vel stays in force (longer for harnesses that lag a server in sync mode)',
    )
    p.add_argument(
        '--server-silence',
        type=_seconds,
        default=10.0,
        metavar='S',
        help='reconnect when the server has sent nothing for this many seconds (default 10)',
    )
    p.add_argument(
        '--join-timeout',
        type=_seconds,
        default=120.0,
        metavar='S',
        help='reconnect when a new connection has had no message for this many seconds (default 120)',
    )
    p.add_argument(
        '--skill-params',
        nargs='+',
        default=[],
        metavar='FILE',
        help=(
            'Nao: skill parameter files (.txt) read after the shipped defaultParams(_t<type>).txt; '
            'T1/K1: YAML keyframe skills that replace the shipped skill of the same name'
        ),
    )
    return p


def check_config_files(args: argparse.Namespace) -> str:
    """The error of the first bad configuration file a player would read, or ''."""
    try:  # a bad file stops the player before anything starts (the nodes check them again as they load)
        load_robots_config('robots.yaml')
        load_walk_config(args.walk_config)
        load_kicks_config(args.kicks_config)
        load_formations('formations.yaml')
    except ConfigError as exc:
        return str(exc)
    return ''


def player_factories(args: argparse.Namespace) -> list[Callable[..., Node]]:
    """The node factories of one player (``spin_nodes`` builds them in order, in one process)."""
    robot = args.robot or ('T1' if args.server == 'mujoco' else 'nao')
    common = [
        Parameter('server', value=args.server),
        Parameter('robot', value=robot),
        Parameter('robot_type', value=args.robot_type),
        Parameter('unum', value=args.unum),
    ]
    kicks = [Parameter('kicks_config', value=args.kicks_config)]  # motion and strategy read the same file
    bridge_params = [
        *common,
        Parameter('host', value=args.host),
        Parameter('port', value=args.port or DEFAULT_PORTS[args.server]),
        Parameter('team', value=args.team),
        Parameter('publish_clock', value=args.publish_clock),
        Parameter('publish_raw', value=not args.no_raw),
        Parameter('server_silence_timeout', value=args.server_silence),
        Parameter('server_join_timeout', value=args.join_timeout),
    ]
    ns = player_namespace(args.team, args.unum)

    local = not args.bridge_only and not args.via_dds
    made: dict[str, Node] = {}

    def bridge(**kw: object) -> BridgeNode:
        made['bridge'] = BridgeNode(
            namespace=ns, parameter_overrides=[*bridge_params, Parameter('local_motion', value=local)]
        )
        return made['bridge']

    def motion(**kw: object) -> MotionNode:
        extra = [
            Parameter('local', value=local),
            Parameter('walk_config', value=args.walk_config),
            *kicks,
            Parameter('cmd_timeout', value=args.cmd_timeout),
            Parameter('skill_params', value=os.pathsep.join(str(Path(f).resolve()) for f in args.skill_params)),
        ]
        node = MotionNode(namespace=ns, parameter_overrides=[*common, *extra])
        made['motion'] = node
        wm = made.get('world_model')
        if local and wm is not None:  # the world model reads the walk's velocity straight from it
            walk = node.core.walk
            wm.walk_velocity = (lambda: walk.odometry) if walk is not None else None
        if local:  # bridge and motion share this process: hand each cycle over directly
            made['bridge'].attach_motion(node.step_percept)
            node.attach_record(made['bridge'].record)
            if wm is not None:  # and the world model's estimates, without DDS
                node.attach_world_model(wm)
        return node

    def strategy(**kw: object) -> StrategyNode:
        node = StrategyNode(
            namespace=ns, parameter_overrides=[*common, *kicks, Parameter('play', value=not args.no_play)]
        )
        if local and made.get('world_model') is not None:
            node.attach_world_model(made['world_model'])
        if local:  # say and motion requests straight to the bridge and motion, and motion's state back, without DDS
            node.attach_local(made['bridge'].say, made['motion'].request)
            node.attach_record(made['bridge'].record)
            node.attach_motion(made['motion'].attach_state_listener)
        return node

    def world_model(**kw: object) -> WorldModelNode:
        extra = [
            Parameter('team', value=args.team),
            Parameter('rules', value=args.rules),
            Parameter('local', value=local),
        ]
        node = WorldModelNode(namespace=ns, parameter_overrides=[*common, *extra])
        if local:  # every cycle straight from the bridge, in order (topics can lag or drop under load)
            made['bridge'].attach_listener(node.step_percept)
            node.attach_record(made['bridge'].record)
        made['world_model'] = node
        return node

    if args.bridge_only:
        return [bridge]
    return [bridge, world_model, motion, strategy] if args.world_model else [bridge, motion, strategy]


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d player``."""
    end_with_parent(only_if_asked=True)  # a sim session's player ends with the session
    args, ros_args = player_parser().parse_known_args(argv)
    error = check_config_files(args)
    if error:
        print(f'robocup3d player: {error}', file=sys.stderr)
        return 2
    return spin_nodes(player_factories(args), [sys.argv[0], *ros_args])


if __name__ == '__main__':
    raise SystemExit(main())
