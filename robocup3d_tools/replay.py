"""``robocup3d replay BAG`` and ``robocup3d bag-info BAG``: play a recorded bag on sim time, or describe it.

Replay publishes ``/clock`` (rosgraph_msgs/Clock) at every recorded timestamp before the messages of
that time, and every recorded topic at its recorded time (bag timestamps are server time, see
:mod:`robocup3d_tools.recorder`), scaled by ``--rate`` and from ``--start`` s after the bag's start.
Messages go out serialized as recorded (no decoding); a topic's type must be installed as a ROS
message wheel (``tf2_msgs`` has none on PyPI: ``/tf`` and ``/tf_static`` are skipped with a warning).

A bag that cannot be read (missing, not a rosbag2 directory or MCAP file, truncated, corrupted) gets
one line naming the file and the problem, and exit status 1.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

__all__ = ['BagError', 'info_main', 'main', 'open_bag']


class BagError(Exception):
    """A bag that cannot be read; the message names the file and the problem."""


def _bag_path(path: Path) -> Path:
    """The rosbag2 directory of ``path`` (a bag directory, or a ``.mcap`` file in one)."""
    if not path.exists():
        raise BagError(f'{path}: no such file or directory')
    if path.is_file():
        if (path.parent / 'metadata.yaml').is_file():
            return path.parent
        raise BagError(f'{path}: not in a rosbag2 directory (no metadata.yaml beside it)')
    if not (path / 'metadata.yaml').is_file():
        raise BagError(f'{path}: not a rosbag2 bag (no metadata.yaml)')
    return path


def open_bag(path: Path) -> object:
    """An opened ``rosbags`` reader of the bag, its files checked; raises :class:`BagError`."""
    from rosbags.rosbag2 import Reader  # noqa: PLC0415

    bag = _bag_path(path)
    try:
        reader = Reader(bag)
    except Exception as exc:  # noqa: BLE001 - rosbags raises many kinds for a bad file; all get one line
        raise BagError(f'{bag / "metadata.yaml"}: {_why(exc)}') from None
    name = _data_name(bag)
    for f in bag_files(bag):
        if not f.is_file():
            raise BagError(f'{f}: missing (listed in {bag / "metadata.yaml"})')
    try:
        reader.open()
    except Exception as exc:  # noqa: BLE001
        raise BagError(f'{name}: cannot open, truncated or not MCAP ({_why(exc)})') from None
    reader.bag_name = name
    return reader


def bag_files(bag: Path) -> list[Path]:
    """The data files a bag's metadata lists."""
    import yaml  # noqa: PLC0415

    try:
        meta = yaml.safe_load((bag / 'metadata.yaml').read_text(encoding='utf-8'))
        return [bag / p for p in meta['rosbag2_bagfile_information']['relative_file_paths']]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise BagError(f'{bag / "metadata.yaml"}: not rosbag2 metadata: {_why(exc)}') from None


def _data_name(bag: Path) -> Path:
    files = bag_files(bag)
    return files[0] if len(files) == 1 else bag


def _why(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def scan(reader: object, bag: Path | None = None, decode: bool = False) -> tuple[dict[str, int], int, int]:
    """Read every message once: counts per topic, first and last timestamp (ns); raises :class:`BagError`.

    ``decode``: also deserialize each message (ROS 2 Kilted types): ``rosbags`` writes no checksums, so a
    corrupted payload inside a chunk shows only where it does not decode.
    """
    counts = {c.topic: 0 for c in reader.connections}
    first = last = None
    store = None
    if decode:
        from rosbags.typesys import Stores, get_typestore  # noqa: PLC0415

        store = get_typestore(Stores.ROS2_KILTED)
    where = getattr(reader, 'bag_name', bag)
    try:
        for conn, t, raw in reader.messages():
            if store is not None and conn.msgtype in store.fielddefs:
                try:
                    store.deserialize_cdr(raw, conn.msgtype)
                except Exception as exc:  # noqa: BLE001
                    raise BagError(
                        f'{where}: corrupted message {counts[conn.topic] + 1} of {conn.topic} at {t / 1e9:.3f} s '
                        f'({_why(exc)})'
                    ) from None
            counts[conn.topic] += 1
            first = t if first is None else min(first, t)
            last = t if last is None else max(last, t)
    except BagError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise BagError(
            f'{where}: corrupted or truncated data after {sum(counts.values())} messages ({_why(exc)})'
        ) from None
    return counts, first or 0, last or 0


def info_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog='robocup3d bag-info', description='topics, message counts and duration of a bag')
    p.add_argument('bag', type=Path, help='the bag directory (or its .mcap file)')
    p.add_argument('--quick', action='store_true', help='do not decode the messages (only read the file)')
    return p


def info_main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d bag-info``: every message is read, so a damaged bag is found."""
    args = info_parser().parse_args(argv)
    try:
        reader = open_bag(args.bag)
        try:
            counts, first, last = scan(reader, decode=not args.quick)
            types = {c.topic: c.msgtype for c in reader.connections}
            files = bag_files(_bag_path(args.bag))
        finally:
            reader.close()
    except BagError as exc:
        print(f'robocup3d bag-info: {exc}', file=sys.stderr)
        return 1
    size = sum(f.stat().st_size for f in files)
    print(f'bag:       {args.bag}')
    print(f'size:      {size / 1e6:.2f} MB')
    print(f'duration:  {(last - first) / 1e9:.2f} s (server time {first / 1e9:.2f} to {last / 1e9:.2f})')
    print(f'messages:  {sum(counts.values())}')
    width = max((len(t) for t in counts), default=0)
    for topic in sorted(counts):
        print(f'  {topic:<{width}}  {counts[topic]:>7}  {types[topic]}')
    return 0


def replay_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog='robocup3d replay', description=__doc__.splitlines()[0])
    p.add_argument('bag', type=Path, help='the bag directory (or its .mcap file)')
    p.add_argument('--rate', type=float, default=1.0, help='speed factor (2: twice as fast)')
    p.add_argument('--start', type=float, default=0.0, help="start this many seconds after the bag's start")
    p.add_argument('--wait', type=float, default=1.0, help='s to wait for subscribers before playing')
    p.add_argument(
        '--rerun',
        choices=('world-model',),
        default=None,
        help='publish nothing: run our world model on the recorded percepts (no ROS, as fast as it goes) and '
        'print its error against the recorded ground truth beside the recorded live estimates',
    )
    p.add_argument('--rules', default='ssim', help='--rerun: the RCSSServerMJ rule book (field) of the match')
    p.add_argument('--json', type=Path, default=None, metavar='FILE', help='--rerun: also write the figures here')
    return p


def _message_class(msgtype: str) -> type | None:
    try:
        pkg, _, name = msgtype.split('/')
        return getattr(importlib.import_module(f'{pkg}.msg'), name)
    except (ValueError, ImportError, AttributeError):
        return None


def replay(args: argparse.Namespace, log: callable = print) -> int:
    """Play the bag; returns the number of messages published (``/clock`` not counted)."""
    import rclpy  # noqa: PLC0415
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: PLC0415
    from rosgraph_msgs.msg import Clock  # noqa: PLC0415

    if args.rate <= 0:
        raise BagError(f'--rate must be > 0, got {args.rate}')
    reader = open_bag(args.bag)
    rclpy.init(args=[])
    node = rclpy.create_node('robocup3d_replay')
    try:
        latched = QoSProfile(
            depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
        )
        pubs: dict[int, object] = {}
        for conn in reader.connections:
            if conn.topic == '/clock':
                continue  # made from the bag's timestamps below
            cls = _message_class(conn.msgtype)
            if cls is None:
                log(f'replay: {conn.topic}: type {conn.msgtype} is not installed, skipped')
                continue
            keep = conn.topic in ('/tf_static',) or conn.topic.endswith(
                ('/game_state', '/motion_state', '/joint_gains')
            )
            pubs[conn.id] = node.create_publisher(cls, conn.topic, latched if keep else 100)
        clock_pub = node.create_publisher(Clock, '/clock', 100)
        clock = Clock()
        start_ns = reader.start_time + int(args.start * 1e9)
        if args.wait > 0:
            time.sleep(args.wait)  # let subscribers discover the publishers
        wall0 = None
        last_clock = -1
        sent = 0
        try:
            for conn, t, raw in reader.messages(start=start_ns):
                if wall0 is None:
                    wall0 = time.monotonic()
                    t0 = t
                delay = wall0 + (t - t0) / 1e9 / args.rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                if t != last_clock:
                    clock.clock.sec, clock.clock.nanosec = t // 1_000_000_000, t % 1_000_000_000
                    clock_pub.publish(clock)
                    last_clock = t
                pub = pubs.get(conn.id)
                if pub is not None:
                    pub.publish(bytes(raw))
                    sent += 1
        except Exception as exc:  # noqa: BLE001 - a damaged bag found while playing: one line
            raise BagError(
                f'{reader.bag_name}: corrupted or truncated data after {sent} messages ({_why(exc)})'
            ) from None
        return sent
    finally:
        reader.close()
        node.destroy_node()
        rclpy.try_shutdown()


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d replay``."""
    parser = replay_parser()
    args = parser.parse_args(argv)
    if args.rate <= 0 or args.start < 0:
        parser.error('--rate must be > 0 and --start >= 0')
    if args.rerun == 'world-model':
        from robocup3d_tools.rerun import rerun_main  # noqa: PLC0415

        return rerun_main(args.bag, args.rules, args.json)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    try:
        # the whole bag is checked first: a damaged one fails before anything is published
        reader = open_bag(args.bag)
        try:
            scan(reader)
        finally:
            reader.close()
        sent = replay(args, log=lambda m: print(m, file=sys.stderr, flush=True))
    except BagError as exc:
        print(f'robocup3d replay: {exc}', file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    print(f'robocup3d replay: {sent} messages published from {args.bag}', flush=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
