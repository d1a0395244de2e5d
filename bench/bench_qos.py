"""What a subscriber in another process costs a publisher per message: none, reliable, best effort.

A publisher sends ``--count`` messages, 1 ms apart, of a 1.4 kB std_msgs/String (a ``raw/percept``)
and of a geometry_msgs/PoseWithCovarianceStamped (a ``pose``), first with no subscriber, then with a
subscriber in another process (raw, as the recorder's) that is reliable, then best effort; prints the
publisher's CPU per message (µs, the sleep loop included, the same in each). Why the recorder
subscribes best effort where it can (``recorder.RELIABLE_TOPICS``). Run from the repo root with the venv
active:

    python bench/bench_qos.py [--count 3000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

KINDS = ('string', 'pose')
MODES = ('none', 'reliable', 'best_effort')


def _cls(kind: str) -> type:
    from geometry_msgs.msg import PoseWithCovarianceStamped  # noqa: PLC0415 - in the child processes only
    from std_msgs.msg import String  # noqa: PLC0415

    return String if kind == 'string' else PoseWithCovarianceStamped


def subscriber(kind: str, mode: str) -> None:
    import rclpy  # noqa: PLC0415
    from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: PLC0415

    rclpy.init()
    node = rclpy.create_node('bench_qos_sub')
    rel = ReliabilityPolicy.BEST_EFFORT if mode == 'best_effort' else ReliabilityPolicy.RELIABLE
    node.create_subscription(_cls(kind), '/bench_qos', lambda _: None, QoSProfile(depth=200, reliability=rel), raw=True)
    while True:
        rclpy.spin_once(node, timeout_sec=0.1)


def publisher(kind: str, mode: str, count: int) -> None:
    import rclpy  # noqa: PLC0415

    rclpy.init()
    node = rclpy.create_node('bench_qos_pub')
    cls = _cls(kind)
    pub = node.create_publisher(cls, '/bench_qos', 50)
    child = None
    if mode != 'none':
        child = subprocess.Popen([sys.executable, __file__, '--role', 'sub', kind, mode])
        t = time.monotonic()
        while pub.get_subscription_count() == 0 and time.monotonic() - t < 10:
            time.sleep(0.05)
        time.sleep(1.0)
    text = 'x' * 1400
    try:
        c0 = time.process_time()
        for _ in range(count):
            pub.publish(cls(data=text) if kind == 'string' else cls())
            time.sleep(0.001)
        print(f'{kind:<8}{mode:<13}{(time.process_time() - c0) / count * 1e6:>8.1f}', flush=True)
    finally:
        if child is not None:
            child.kill()
            child.wait()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--count', type=int, default=3000)
    p.add_argument('--repeat', type=int, default=2)
    p.add_argument('--role', default='main', help=argparse.SUPPRESS)
    p.add_argument('rest', nargs='*', help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.role == 'sub':
        subscriber(*args.rest)
        return
    if args.role == 'pub':
        publisher(args.rest[0], args.rest[1], args.count)
        return
    from robocup3d_tools.ros_env import ros_environment  # noqa: PLC0415 - the children need no more

    os.environ.update(ros_environment())  # loopback only, a ROS domain of our own; the children inherit it
    print(f'{"message":<8}{"subscriber":<13}{"µs/msg":>8}')
    for _ in range(args.repeat):
        for kind in KINDS:
            for mode in MODES:
                cmd = [sys.executable, __file__, '--role', 'pub', '--count', str(args.count), kind, mode]
                subprocess.run(cmd, check=True)


if __name__ == '__main__':
    main()
