from glob import glob

from setuptools import find_packages, setup

package_name = 'robocup3d'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*', 'bench']),
    package_data={
        'robocup3d_motion.skills': ['data/*.skl', 'data/*.md', 'data/*/*.skl', 'data/*/*.yaml', 'data/*/*.txt']
    },
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
        ('share/' + package_name + '/config', glob('config/*.yaml') + glob('config/*.rviz')),
        ('share/' + package_name + '/scripts', ['scripts/start.sh', 'scripts/kill.sh']),
        # `ros2 run` and launch_ros look in lib/<package>; pip users get the console scripts in bin.
        ('lib/' + package_name, glob('scripts/ros/*')),
    ],
    install_requires=['setuptools', 'numpy', 'scipy', 'PyYAML', 'cma', 'pydantic>=2'],
    extras_require={
        'ros': [
            'ros-rclpy[fastrtps]',
            'ros-std-msgs',
            'ros-sensor-msgs',
            'ros-geometry-msgs',
            'ros-visualization-msgs',
            'ros-nav-msgs',
            'ros-rosgraph-msgs',
            'ros-diagnostic-msgs',
            'rosbags',  # robocup3d record / replay / bag-info: rosbag2 bags (MCAP) with the Kilted types, tf2_msgs too
        ],
        'mujoco': ['rcsssmj'],
        'ray': ['ray'],  # robocup3d optimize runs its evaluations on Ray
        # robocup3d report (plotly, its plotly.js goes inline) and robocup3d view (Foxglove WebSocket server)
        'viz': ['plotly', 'foxglove-sdk'],
        'test': [
            'pytest',
            'pytest-rerunfailures',  # one more run of a failed live-server test (test/conftest.py)
            'hypothesis',
            'ruff',
            'import-linter',
            'ray',
            'yourdfpy',
            'mcap-ros2-support',
            'plotly',
            'foxglove-sdk',
            'websockets',  # a Foxglove-protocol client in the view test
            'protobuf',  # decodes the view's foxglove messages with the schemas it advertises
            'pillow',  # reads the report's Chromium screenshot
        ],
    },
    zip_safe=True,
    maintainer='robocup3d developers',
    maintainer_email='robocup3d@example.org',
    description='A RoboCup 3D Soccer Simulation team as a ROS 2 node graph (rcssserver3d and RCSSServerMJ).',
    license='Apache-2.0',
    python_requires='>=3.10',
    entry_points={
        'console_scripts': [
            'robocup3d = robocup3d_tools.cli:main',
            'bridge_node = robocup3d_bridge.bridge_node:main',
            'motion_node = robocup3d_motion.motion_node:main',
            'strategy_node = robocup3d_strategy.strategy_node:main',
            'player = robocup3d_tools.player:main',
            'world_model_node = robocup3d_perception.world_model_node:main',
        ],
    },
)
