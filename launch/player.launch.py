"""One player's nodes in namespace /<team>/p<unum> (same parameters as ``robocup3d player``).

    ros2 launch robocup3d player.launch.py server:=mujoco team:=A unum:=1 robot:=T1
    ros2 launch robocup3d player.launch.py server:=simspark port:=3100 robot:=nao type:=4 composed:=false

``composed:=true`` (default) runs bridge, motion and strategy in one process on one
executor (fastest); ``false`` runs each node in a process of its own.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

ARGS = {
    'server': ('mujoco', 'mujoco (RCSSServerMJ) or simspark (rcssserver3d)'),
    'host': ('127.0.0.1', 'server address'),
    'port': ('0', 'agent port; 0: 60000 for mujoco, 3100 for simspark'),
    'team': ('robocup3d', 'team name'),
    'unum': ('1', 'player number'),
    'robot': ('', 'T1 or K1 on mujoco, nao on simspark (empty: the default)'),
    'type': ('0', 'Nao heterogeneous type 0-4'),
    'publish_clock': ('false', 'publish /clock from server time (one player per server)'),
    'publish_raw': ('true', 'publish raw/percept and raw/action'),
    'composed': ('true', 'all nodes of the player in one process'),
    'world_model': ('true', 'run the world model node (localization, tracking); the strategy plays only with it'),
}


def _player(context, *_):
    v = {k: LaunchConfiguration(k).perform(context) for k in ARGS}
    server = v['server']
    robot = v['robot'] or ('T1' if server == 'mujoco' else 'nao')
    port = int(v['port']) or (60000 if server == 'mujoco' else 3100)
    ns = f'/{v["team"]}/p{v["unum"]}'
    truthy = ('1', 'true', 'True', 'yes')
    if v['composed'] in truthy:
        args = [
            '--server',
            server,
            '--host',
            v['host'],
            '--port',
            str(port),
            '--team',
            v['team'],
            '--unum',
            v['unum'],
            '--robot',
            robot,
            '--type',
            v['type'],
        ]
        if v['publish_clock'] in truthy:
            args.append('--publish-clock')
        if v['publish_raw'] not in truthy:
            args.append('--no-raw')
        if v['world_model'] not in truthy:
            args.append('--no-world-model')
        return [Node(package='robocup3d', executable='player', name='player', arguments=args, output='screen')]
    common = {'server': server, 'robot': robot, 'robot_type': int(v['type']), 'unum': int(v['unum'])}
    bridge = {
        **common,
        'host': v['host'],
        'port': port,
        'team': v['team'],
        'publish_clock': v['publish_clock'] in truthy,
        'publish_raw': v['publish_raw'] in truthy,
    }

    def node(executable: str, name: str, parameters: dict) -> Node:
        where = {'package': 'robocup3d', 'namespace': ns, 'output': 'screen'}
        return Node(executable=executable, name=name, parameters=[parameters], **where)

    nodes = [
        node('bridge_node', 'bridge', bridge),
        node('motion_node', 'motion', common),
        node('strategy_node', 'strategy', common),
    ]
    if v['world_model'] in truthy:
        nodes.append(node('world_model_node', 'world_model', {**common, 'team': v['team']}))
    return nodes


def generate_launch_description():
    return LaunchDescription(
        [DeclareLaunchArgument(k, default_value=d, description=h) for k, (d, h) in ARGS.items()]
        + [OpaqueFunction(function=_player)]
    )
