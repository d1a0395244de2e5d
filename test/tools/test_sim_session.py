"""SimSession against a monitor stream that lags its server (no server, no ROS)."""

from __future__ import annotations

import math
from collections import deque
from pathlib import Path
from types import SimpleNamespace

import pytest

from robocup3d_bridge.trainer import MonitorState
from robocup3d_tools.sim_session import CYCLE, Pose, SimSession


class LaggingStream:
    """An rcssserver3d monitor stream ``lag`` cycles behind its server: the server steps one cycle per
    ``receive`` and the reader gets the oldest message; a full scene asked for is made at the server's now."""

    def __init__(self, lag: int) -> None:
        self.state = MonitorState()
        self.server = 0
        self.queue: deque[bytes] = deque()
        for _ in range(lag):
            self._step()

    def _step(self) -> None:
        self.queue.append(f'((time {self.server * CYCLE:.2f}))(RDS 0 1)()'.encode())
        self.server += 1

    def receive(self, timeout: float) -> list[bytes]:
        self._step()
        return [self.queue.popleft()]

    def request_full_state(self) -> None:
        self.queue.append(f'((time {(self.server - 1) * CYCLE:.2f}))(RSG 0 1)()'.encode())


def _session(lag: int, log_dir: Path) -> tuple[SimSession, LaggingStream]:
    s = SimSession(server='simspark', log_dir=log_dir)
    stream = LaggingStream(lag)
    s.trainer = stream
    s._rclpy = SimpleNamespace(spin_once=lambda node, timeout_sec: None)
    return s, stream


@pytest.mark.parametrize('lag', [1, 40, 200])
def test_catch_up_brings_the_clock_to_the_servers_time_at_the_call(lag: int, tmp_path: Path) -> None:
    s, stream = _session(lag, tmp_path)
    s.wait_cycles(5)
    assert s._game_time is not None and stream.server * CYCLE - s._game_time > (lag - 2) * CYCLE  # it lags
    now = stream.server
    s.catch_up()
    assert s._game_time >= (now - 1) * CYCLE - 1e-9


def test_catch_up_is_a_no_op_on_rcssservermj(tmp_path: Path) -> None:
    SimSession(server='mujoco', log_dir=tmp_path).catch_up()  # no trainer, no stream: returns at once


@pytest.mark.parametrize(('axis', 'yaw'), [('y', 0.0), ('y', math.pi / 2), ('x', 0.0), ('x', -math.pi / 2)])
def test_the_ground_truth_pose_says_which_way_the_torso_leans(axis: str, yaw: float, tmp_path: Path) -> None:
    """A torso tipped 10 deg about its y axis leans forwards, about its x axis to the right, whichever way it faces."""
    tilt = math.radians(10.0)
    # the heading, then the tilt in the torso's own frame: q = q_yaw * q_tilt (w, x, y, z)
    cy, sy, ct, st = math.cos(yaw / 2), math.sin(yaw / 2), math.cos(tilt / 2), math.sin(tilt / 2)
    tx, ty = (st, 0.0) if axis == 'x' else (0.0, st)
    o = SimpleNamespace(w=cy * ct, x=cy * tx - sy * ty, y=cy * ty + sy * tx, z=sy * ct)
    s = SimSession(server='mujoco', log_dir=tmp_path)
    s._on_pose(SimpleNamespace(pose=SimpleNamespace(position=SimpleNamespace(x=1.0, y=2.0, z=0.6), orientation=o)))
    p = s.pose
    assert p is not None and p.yaw == pytest.approx(yaw) and p.up == pytest.approx(math.cos(tilt))
    forward, left = (math.sin(tilt), 0.0) if axis == 'y' else (0.0, -math.sin(tilt))
    assert (p.forward, p.left) == pytest.approx((forward, left), abs=1e-9)


@pytest.mark.server
def test_the_monitors_torso_truth_agrees_with_the_players_and_costs_the_player_no_message(tmp_path: Path) -> None:
    """``truth='monitor'`` (the per-cycle CPU benches): the T1's pose from RCSSServerMJ's monitor scene is the one
    the player's ``ground_truth/pose`` reports, and the session does not subscribe to that topic."""
    from geometry_msgs.msg import PoseStamped  # noqa: PLC0415 - a live test

    from robocup3d_tools.sim_session import yaw_of  # noqa: PLC0415

    with SimSession('T1', log_dir=tmp_path, truth='monitor') as s:
        topic = f'/{s.team}/p{s.unum}/ground_truth/pose'
        assert s.node.count_subscribers(topic) == 0
        s.place(-3.0, 1.0, math.pi / 2)
        c0 = s.cycles
        s.wait_cycles(50)
        assert s.cycles >= c0 + 50
        got: list = []
        s.node.create_subscription(PoseStamped, topic, got.append, 10)
        s.spin_until(lambda: bool(got), 30.0, 'no ground_truth/pose')
        s.wait_cycles(4)  # a scene after the player's pose
        m, p = got[-1].pose, s.pose
        o = m.orientation
    assert p is not None and p.up > 0.95
    assert (p.x, p.y, p.z) == pytest.approx((m.position.x, m.position.y, m.position.z), abs=0.01)
    assert abs(math.remainder(p.yaw - yaw_of(o.w, o.x, o.y, o.z), math.tau)) < math.radians(1.0)
    assert (p.x, p.y) == pytest.approx((-3.0, 1.0), abs=0.15)
    assert abs(math.remainder(p.yaw - math.pi / 2, math.tau)) < 0.2


class SlowMujoco:
    """A robot on a sync RCSSServerMJ that runs 0.1 wall s a cycle: it fell and gets up until cycle
    ``getup_until``; lifted upright by the trainer before then, its get-up throws it over again."""

    def __init__(self, session: SimSession, getup_until: int) -> None:
        self.s, self.getup_until = session, getup_until
        self.state = SimpleNamespace(play_mode='PlayOn', ball=None)
        self.moves: list[int] = []  # the cycle of each move3d
        self.wall = 0.0

    def spin_once(self, node: object, timeout_sec: float) -> None:
        s = self.s
        s.cycles += 1
        self.wall += 0.1
        thrown = any(m < self.getup_until for m in self.moves)
        up = bool(self.moves) and not thrown
        getting_up = s.cycles < self.getup_until or thrown
        s.state = {'skill': 'getup' if getting_up else 'stand', 'fallen': getting_up, 'getup': getting_up}
        s.pose = Pose(s.cycles * CYCLE, -6.0, 0.0, 0.6 if up else 0.2, 0.0, 0.99 if up else 0.1)

    def poll(self, timeout: float) -> bool:
        return False

    def send(self, text: str) -> None:
        assert 'move3d' in text
        self.moves.append(self.s.cycles)

    def move_ball(self, *ball: float) -> None:
        pass


def test_a_placement_waits_for_the_get_up_in_server_cycles_however_slow_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once it waited 5 wall s: on a loaded machine the trainer lifted a T1 mid get-up, and the next
    run (the next candidate of an optimize batch, a random course's next part) fell at once."""
    s = SimSession(server='mujoco', log_dir=tmp_path)
    fake = SlowMujoco(s, getup_until=400)  # an 8 s get-up: 40 wall s here
    s.trainer, s._rclpy, s.request = fake, fake, lambda text: None
    monkeypatch.setattr('robocup3d_tools.sim_session.time.monotonic', lambda: fake.wall)
    s.place(-6.0, 0.0)
    assert len(fake.moves) == 1 and fake.moves[0] >= 400
    assert s.pose is not None and s.pose.up > 0.9 and s.state['skill'] == 'stand'


def test_a_drive_with_keep_alives_sends_few_commands_and_the_walk_goes_on(tmp_path: Path) -> None:
    """``drive(..., keep_alive=0.5)`` (the CPU bench's way, as a strategy asks for a walk): the player gets a command
    when it changes and every 0.5 s of server time, not one a cycle, and walks on between them (its ``--cmd-timeout``
    is 2 s; counted in wall s, the keep-alives lapsed in sync mode, where the server runs several times real time)."""
    from geometry_msgs.msg import Twist  # noqa: PLC0415 - a live test

    with SimSession('T1', log_dir=tmp_path, truth='monitor') as s:
        s.place(-3.0, 0.0, 0.0)
        got: list = []
        s.node.create_subscription(Twist, f'/{s.team}/p{s.unum}/cmd_vel', got.append, 100)
        path = s.drive(4.0, lambda t: (0.4, 0.0, 0.0), keep_alive=0.5)
        s.spin_until(lambda: False, 0.2)  # the last sends arrive
    assert path and path[-1].up > 0.9, 'fell'
    late = [p for p in path if p.t - path[0].t >= 2.0]  # the second half: on keep-alives only, no fresh command
    assert late[-1].x - late[0].x > 0.15, f'walked {late[-1].x - late[0].x:.2f} m in the last 2 s'
    assert 4 <= len(got) <= 4.0 / 0.5 + 2, f'{len(got)} commands in 4 s of server time'
    assert all(m.linear.x == pytest.approx(0.4) for m in got)
