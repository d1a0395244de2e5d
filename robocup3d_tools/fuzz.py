"""A fake server that feeds a real player process mutated real captures, and what it measured.

The server listens on 127.0.0.1, speaks the length-prefixed framing of both servers, and sends
the lines of real captures (``shared/captures``) in lockstep, as rcssserver3d does in sync mode:
one message, then it waits for the player's reply. About half the messages are mutated
(:data:`MUTATIONS`): byte flips, truncations, unbalanced parentheses, NaN/inf/1e308, renamed
perceptors and joints, lying length prefixes, huge and empty messages, time going back.

A cycle counts as answered when the reply arrives before the next message goes out and is the
one the server needs: one ``(syn)``, leading it, on rcssserver3d; on RCSSServerMJ, a command for every
joint of the robot (its gains reset on every join, so a full command each cycle is what keeps
the robot under control). Messages whose frame a lying prefix broke (and the one after it,
which the broken frame swallows in part) are counted apart. Every reply is checked for
non-finite or huge numbers.
"""

from __future__ import annotations

import os
import random
import re
import select
import socket
import struct
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from robocup3d_bridge.framing import frame
from robocup3d_bridge.protocol import WIRE_MAX
from robocup3d_description.robots import robot_spec
from robocup3d_tools.servers import END_WITH_PARENT, stop_process

__all__ = ['CAPTURE_SETS', 'MUTATIONS', 'FakeServer', 'FuzzFigures', 'Mutator', 'load_lines', 'rss_mb', 'start_player']

_LEN = struct.Struct('>I')
_NOW = re.compile(rb'\(now ([^)\s]*)\)')
_NUMBER = re.compile(rb'(?<=[\s(])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?=[\s)])')
_HEAD = re.compile(rb'\(([A-Za-z]+) ')
_JOINT_NAME = re.compile(rb'\(n (q_)?([a-z]+\d*)\)')
_WIRE_NUMBER = re.compile(r'[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf', re.IGNORECASE)
_SAY = re.compile(r'\((?:say|SPK)[^)]*\)')

#: Capture files per dialect, for a T1 (RCSSServerMJ) and a Nao type 0 (rcssserver3d).
CAPTURE_SETS = {
    'mujoco': ('rcssservermj/capture_T1.txt', 'rcssservermj/capture_T1_pd.txt'),
    'simspark': (
        'simspark/type0_single_agent.txt',
        'simspark/match_A1_Alpha1_type0.txt',
        'simspark/say_edgecases_A1_Alpha1_speaker.txt',
    ),
}
MUTATIONS = (
    'byte_flip',
    'truncate',
    'paren',
    'non_finite',
    'rename_perceptor',
    'rename_joint',
    'lying_prefix',
    'huge',
    'empty',
    'time_back',
)
_BAD_NUMBERS = (b'nan', b'NaN', b'inf', b'-inf', b'1e308', b'-1e308', b'1e999', b'4e9')


def load_lines(captures: Path, dialect: str) -> list[bytes]:
    """The agent messages of a dialect's capture files, in order."""
    out: list[bytes] = []
    for name in CAPTURE_SETS[dialect]:
        out += [line for line in (captures / name).read_bytes().split(b'\n') if line]
    return out


@dataclass
class Mutator:
    """Turns a capture line into the bytes to send (length prefix included), mutated at ``rate``."""

    rng: random.Random
    rate: float = 0.5
    max_huge: int = 1 << 20

    def wire(self, payload: bytes) -> tuple[bytes, str]:
        """``(framed bytes, mutation name or '')``."""
        if self.rng.random() >= self.rate:
            return frame(payload), ''
        kind = self.rng.choice(MUTATIONS)
        if kind == 'lying_prefix':
            return self._lie(payload), kind
        return frame(getattr(self, '_' + kind)(payload)), kind

    def _lie(self, p: bytes) -> bytes:
        r = self.rng
        how = r.randrange(3)
        if how == 0 and len(p) > 1:
            size = r.randrange(1, len(p))  # too short: the rest of the message looks like the next frame
        elif how == 1:
            size = len(p) + r.randrange(1, 200)  # too long: swallows the head of the next message
        else:
            size = r.randrange(1 << 24, 1 << 32)  # impossible
        return _LEN.pack(size) + p

    def _byte_flip(self, p: bytes) -> bytes:
        b = bytearray(p)
        for _ in range(self.rng.randint(1, 3)):
            i = self.rng.randrange(len(b))
            b[i] ^= self.rng.randrange(1, 256)
        return bytes(b)

    def _truncate(self, p: bytes) -> bytes:
        return p[: self.rng.randrange(len(p))]

    def _paren(self, p: bytes) -> bytes:
        i = self.rng.randrange(len(p) + 1)
        if self.rng.random() < 0.5:
            return p[:i] + self.rng.choice((b'(', b')')) + p[i:]
        spots = [j for j in range(len(p)) if p[j] in b'()']
        j = self.rng.choice(spots)
        return p[:j] + p[j + 1 :]

    def _non_finite(self, p: bytes) -> bytes:
        spans = [m.span() for m in _NUMBER.finditer(p)]
        if not spans:
            return p
        a, b = self.rng.choice(spans)
        return p[:a] + self.rng.choice(_BAD_NUMBERS) + p[b:]

    def _rename_perceptor(self, p: bytes) -> bytes:
        spans = [m.span(1) for m in _HEAD.finditer(p)]
        a, b = self.rng.choice(spans)
        i = self.rng.randrange(a, b)
        return p[:i] + bytes([self.rng.choice(b'XYZxyz_9')]) + p[i + 1 :]

    def _rename_joint(self, p: bytes) -> bytes:
        spans = [m.span(2) for m in _JOINT_NAME.finditer(p)]
        if not spans:
            return self._rename_perceptor(p)
        a, b = self.rng.choice(spans)
        i = self.rng.randrange(a, b)
        return p[:i] + bytes([self.rng.choice(b'XYZxyz0')]) + p[i + 1 :]

    def _huge(self, p: bytes) -> bytes:
        size = self.rng.randint(self.max_huge // 4, self.max_huge)
        filler = b'(HJ (n hj1) (ax 0.00))'
        return p + filler * (size // len(filler))

    def _empty(self, p: bytes) -> bytes:
        return b''

    def _time_back(self, p: bytes) -> bytes:
        m = _NOW.search(p)
        if m is None:
            return p
        t = float(m.group(1)) - self.rng.choice((0.02, 1.0, 100.0, 1e6))
        return p[: m.start(1)] + f'{t:.2f}'.encode() + p[m.end(1) :]


@dataclass
class FuzzFigures:
    """What one run measured."""

    dialect: str
    messages: int = 0
    mutated: Counter = field(default_factory=Counter)
    broken_frames: int = 0  # messages a lying prefix broke, and the one after each
    answered: int = 0  # of the other messages: a reply as the server needs it, in time
    replies: int = 0
    any_reply: int = 0  # of the other messages: any reply in time
    bad_values_sent: int = 0  # replies holding a non-finite or huge number
    connections: int = 0
    gave_up_at: int | None = None  # message index after which the player never came back
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)

    @property
    def checked(self) -> int:
        """Messages whose framing the server left intact."""
        return self.messages - self.broken_frames

    @property
    def answered_ratio(self) -> float:
        return self.answered / self.checked if self.checked else 0.0

    @property
    def link_deaths(self) -> int:
        """Connections after the first: each one means the link went down."""
        return max(0, self.connections - 1)


class FakeServer:
    """A lockstep server on 127.0.0.1 for one player; see the module docstring."""

    def __init__(
        self, dialect: str, lines: Sequence[bytes], mutator: Mutator, reply_wait: float = 1.0, robot: str = ''
    ) -> None:
        self.dialect = dialect
        self.lines = lines
        self.mutator = mutator
        self.reply_wait = reply_wait
        spec = robot_spec(dialect, robot or ('T1' if dialect == 'mujoco' else 'nao'), 0)
        self._effectors = {j.effector for j in spec.joints}
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self._conn: socket.socket | None = None
        self._buf = bytearray()
        self._closed = True

    def close(self) -> None:
        """Close the listening socket and the player's connection."""
        if self._conn is not None:
            self._conn.close()
        self.sock.close()

    def run(
        self,
        messages: int,
        figures: FuzzFigures,
        connect_timeout: float = 60.0,
        rejoin_timeout: float = 15.0,
        on_message: Callable[[int], None] | None = None,
    ) -> FuzzFigures:
        """Send ``messages`` messages (the captures again and again, time kept moving) and count replies.

        A player that drops the link gets ``rejoin_timeout`` to connect again; if it does not,
        the run stops and the messages left count as sent and unanswered.
        """
        start = time.monotonic()
        self._accept(figures, connect_timeout)
        t = 0.0
        broken_next = False
        for i in range(messages):
            line = self.lines[i % len(self.lines)]
            t += 0.02
            line = _NOW.sub(f'(now {t:.2f})'.encode(), line, count=1)
            data, kind = self.mutator.wire(line)
            broken = kind == 'lying_prefix'
            if kind:
                figures.mutated[kind] += 1
            figures.messages += 1
            if not self._send(data, figures, rejoin_timeout):
                figures.gave_up_at = i
                figures.messages = messages
                break
            replies = self._replies(0.03 if broken else self.reply_wait, settle=broken or broken_next)
            figures.replies += len(replies)
            for r in replies:
                self._check_values(r, figures)
            if broken or broken_next:
                figures.broken_frames += 1
            else:
                figures.any_reply += bool(replies)
                figures.answered += any(self._is_answer(r) for r in replies)
            broken_next = broken
            if on_message is not None:
                on_message(i)
        figures.seconds += time.monotonic() - start
        return figures

    # -- the connection ------------------------------------------------------------------

    def _accept(self, figures: FuzzFigures, timeout: float) -> None:
        self.sock.settimeout(timeout)
        conn, _ = self.sock.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._conn is not None:
            self._conn.close()
        self._conn, self._buf, self._closed = conn, bytearray(), False
        figures.connections += 1
        hello = self._replies(timeout, settle=False)  # MJ: (init ...); SimSpark: (scene ...)
        if not hello:
            raise TimeoutError('the player connected but sent no hello')

    def _send(self, data: bytes, figures: FuzzFigures, timeout: float) -> bool:
        """Send, waiting for the player to connect again if it dropped the link; ``False`` if it never does."""
        for _ in range(2):
            if not self._closed:
                try:
                    self._conn.sendall(data)
                    return True
                except OSError:
                    self._closed = True
            try:
                self._accept(figures, timeout)
            except (TimeoutError, OSError):
                return False
        return False

    def _replies(self, wait: float, settle: bool) -> list[str]:
        """The first reply within ``wait`` and whatever is there with it (all within 20 ms of it if ``settle``)."""
        out: list[str] = []
        deadline = time.monotonic() + wait
        settling = False
        while True:
            out += self._frames()
            if out and not settle:
                return out
            if out and not settling:
                settling = True
                deadline = time.monotonic() + 0.02
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return out
            ready, _, _ = select.select([self._conn], [], [], remaining)
            if not ready:
                continue
            try:
                data = self._conn.recv(1 << 16)
            except OSError:
                data = b''
            if not data:
                self._closed = True
                return out
            self._buf += data

    def _frames(self) -> list[str]:
        out = []
        buf = self._buf
        while len(buf) >= 4:
            (n,) = _LEN.unpack_from(buf)
            if len(buf) < 4 + n:
                break
            out.append(bytes(buf[4 : 4 + n]).decode('ascii', 'replace'))
            del buf[: 4 + n]
        return out

    # -- checks --------------------------------------------------------------------------

    def _is_answer(self, reply: str) -> bool:
        if self.dialect != 'mujoco':
            return reply.startswith('(syn)') and reply.count('(syn)') == 1
        if not reply.endswith('(syn)'):
            return False
        named = set(re.findall(r'\((\w+) [-\d.e+]+ [-\d.e+]+ [-\d.e+]+ [-\d.e+]+ [-\d.e+]+\)', reply))
        return self._effectors <= named

    def _check_values(self, reply: str, figures: FuzzFigures) -> None:
        for tok in _WIRE_NUMBER.findall(_SAY.sub('', reply)):
            v = float(tok)
            if not -WIRE_MAX <= v <= WIRE_MAX:
                figures.bad_values_sent += 1
                if len(figures.examples) < 5:
                    figures.examples.append(reply[:200])
                return


def start_player(dialect: str, port: int, log: Path, extra: Sequence[str] = (), cwd: Path | None = None):
    """Start ``python -m robocup3d_tools.player`` against ``port`` (its output goes to ``log``)."""
    cmd = [sys.executable, '-m', 'robocup3d_tools.player', '--server', dialect, '--port', str(port)]
    cmd += ['--team', 'Fuzz', '--unum', '1', *extra]
    env = dict(os.environ, **{END_WITH_PARENT: '1'})  # the player ends with this process, however it ends
    with open(log, 'ab') as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env, start_new_session=True)


def rss_mb(pid: int) -> float:
    """Resident memory of a process (MB), NaN when it is gone."""
    try:
        for line in Path(f'/proc/{pid}/status').read_text().splitlines():
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float('nan')


def stop_player(proc: subprocess.Popen) -> int:
    """Stop the player (SIGINT, then SIGKILL); return its exit status."""
    stop_process(proc, timeout=10.0)
    return proc.returncode


class TopicWatch:
    """Subscribes to a player's numeric topics in this process and counts non-finite values published."""

    def __init__(self, namespace: str) -> None:
        import threading  # noqa: PLC0415 - only the watch needs a thread

        import rclpy  # noqa: PLC0415 - the fuzz figures without topics need no ROS
        from sensor_msgs.msg import Imu, JointState  # noqa: PLC0415
        from std_msgs.msg import String  # noqa: PLC0415

        self._rclpy = rclpy
        self._context = rclpy.Context()
        rclpy.init(args=[], context=self._context)
        self.node = rclpy.create_node('fuzz_watch', context=self._context)
        self.messages = Counter()
        self.non_finite = Counter()
        self.node.create_subscription(JointState, f'{namespace}/joint_states', self._joints, 50)
        self.node.create_subscription(Imu, f'{namespace}/imu', self._imu, 50)
        self.node.create_subscription(String, f'{namespace}/game_state', self._game, 10)
        self._executor = rclpy.executors.SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self.node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while not self._stop.is_set() and self._context.ok():
            self._executor.spin_once(timeout_sec=0.1)

    def _count(self, topic: str, values: Sequence[float]) -> None:
        self.messages[topic] += 1
        if not all(-1e300 < v < 1e300 for v in values):
            self.non_finite[topic] += 1

    def _joints(self, msg: object) -> None:
        self._count('joint_states', [*msg.position, *msg.velocity, *msg.effort])

    def _imu(self, msg: object) -> None:
        a, w = msg.linear_acceleration, msg.angular_velocity
        self._count('imu', [a.x, a.y, a.z, w.x, w.y, w.z])

    def _game(self, msg: object) -> None:
        import json  # noqa: PLC0415

        d = json.loads(msg.data)  # json.loads accepts NaN/Infinity: they are counted below
        self._count('game_state', [v for v in d.values() if isinstance(v, (int, float)) and not isinstance(v, bool)])

    def close(self) -> None:
        """Stop spinning and shut this watch's context down."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        self.node.destroy_node()
        self._context.try_shutdown()
