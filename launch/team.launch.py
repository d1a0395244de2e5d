"""A whole team from a team config file (same files and rules as ``robocup3d team``).

    ros2 launch robocup3d team.launch.py server:=simspark
    ros2 launch robocup3d team.launch.py config:=/path/to/my_team.yaml team:=Other
    ros2 launch robocup3d team.launch.py tf:=true          # and the team's TF live on /tf

Each player runs composed in one process (``player`` executable), in namespace
/<team>/p<unum>; player 1 publishes /clock.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from robocup3d_bridge.config_files import config_path, load_config
from robocup3d_tools.team_config import parse_team_config, player_args

ARGS = {
    'server': ('mujoco', 'mujoco (RCSSServerMJ) or simspark (rcssserver3d)'),
    'config': ('', 'team YAML; empty: team_<server>.yaml from the package config'),
    'host': ('', 'override the config host'),
    'port': ('0', 'override the config port (0: keep)'),
    'team': ('', 'override the team name'),
    'publish_raw': ('false', 'players publish raw/percept and raw/action'),
    'tf': ('false', 'publish the team on /tf live: world -> odom -> base_link -> links (robocup3d tf)'),
    'monitor_port': ('0', 'the server monitor port for tf (0: agent port + 1 on mujoco, 3200 on simspark)'),
}


def _team(context, *_):
    v = {k: LaunchConfiguration(k).perform(context) for k in ARGS}
    path = config_path(v['config'] or f'team_{v["server"]}.yaml')
    data = dict(load_config(path))
    data['server'] = v['server']
    if v['host']:
        data['host'] = v['host']
    if int(v['port']):
        data['port'] = int(v['port'])
    if v['team']:
        data['team'] = v['team']
    cfg = parse_team_config(data, source=str(path))  # raises with one clear message on a bad file
    nodes = []
    for p in cfg.players:
        args = player_args(cfg, p, publish_clock=p.unum == cfg.players[0].unum)
        if v['publish_raw'] not in ('1', 'true', 'True'):
            args.append('--no-raw')
        nodes.append(
            Node(
                package='robocup3d',
                executable='player',
                name=f'player{p.unum}',
                arguments=args,
                output='screen',
                additional_env={'ROBOCUP3D_TEAM_SECRET': cfg.secret} if cfg.secret else None,
                respawn=True,
                respawn_delay=1.0,
            )
        )
    if v['tf'] in ('1', 'true', 'True'):
        mport = int(v['monitor_port']) or (cfg.port + 1 if cfg.server == 'mujoco' else 3200)
        tf_args = ['tf', '--teams', cfg.team, '--host', cfg.host, '--monitor-port', str(mport)]
        nodes.append(Node(package='robocup3d', executable='robocup3d', name='tf', arguments=tf_args, output='screen'))
    return nodes


def generate_launch_description():
    return LaunchDescription(
        [DeclareLaunchArgument(k, default_value=d, description=h) for k, (d, h) in ARGS.items()]
        + [OpaqueFunction(function=_team)]
    )
