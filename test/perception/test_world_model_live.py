"""Live on RCSSServerMJ: a T1 player plus its world model node, moved by the trainer,
walking a course on its own, and getting up after a fall (``SimSession``: server, player
process, and this process as observer).

The world model never sees ground truth; this test compares its ``pose`` with the
bridge's ``ground_truth/pose`` (the server's torso pos/quat) and its ``ball`` with
where the trainer put the ball. Bounds (from the issue): median position error
< 0.15 m, median heading error < 5 deg (scored while the torso is upright: lying on
its back the heading is not defined), ball error < 0.2 m while the ball is seen,
recovery within 3 s after a trainer move (kidnap).
"""

from __future__ import annotations

import itertools
import math
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import PointStamped, PoseStamped, PoseWithCovarianceStamped
from nav_msgs.msg import Odometry

from robocup3d_tools.sim_session import SimSession

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(
        shutil.which('rcssservermj') is None and not (Path(sys.executable).parent / 'rcssservermj').exists(),
        reason='RCSSServerMJ is not installed (pip install rcsssmj)',
    ),
]

BALL_RADIUS = 0.11  # m, RCSSServerMJ's ball


def _yaw(q: object) -> float:
    return math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))


def _upright(q: object) -> float:
    return 1 - 2 * (q.x * q.x + q.y * q.y)


@pytest.fixture
def session(tmp_path):
    """A real-time RCSSServerMJ with one T1 player running its world model (``--world-model``)."""
    with SimSession('T1', fast=False, log_dir=tmp_path, player_args=('--world-model',)) as s:
        yield s


class _Pairs:
    """Our pose next to the ground truth of the same server time; our ball while it is seen."""

    def __init__(self) -> None:
        self.truth: dict[float, tuple[float, float, float, float]] = {}
        self.rows: list[tuple[float, float, float | None, float, float]] = []  # t, pos err, heading err (deg), true x y
        self.ball_seen_at: float = -1.0
        self.ball_rows: list[tuple[float, float]] = []  # t, ball error (m) while seen
        self.ball_truth: tuple[float, float] | None = None
        self.last_ball: tuple[float, float] | None = None

    def on_truth(self, msg: PoseStamped) -> None:
        t = round(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, 2)
        p, q = msg.pose.position, msg.pose.orientation
        self.truth[t] = (p.x, p.y, _yaw(q), _upright(q))
        if len(self.truth) > 500:
            del self.truth[min(self.truth)]

    def on_pose(self, msg: PoseWithCovarianceStamped) -> None:
        t = round(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, 2)
        gt = self.truth.get(t)
        if gt is None:
            return
        p = msg.pose.pose
        err = math.hypot(p.position.x - gt[0], p.position.y - gt[1])
        yaw_err = None
        if gt[3] > 0.7:
            yaw_err = abs(math.degrees((_yaw(p.orientation) - gt[2] + math.pi) % (2 * math.pi) - math.pi))
        self.rows.append((t, err, yaw_err, gt[0], gt[1]))

    def on_seen(self, msg: PointStamped) -> None:
        self.ball_seen_at = round(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, 2)

    def on_ball(self, msg: Odometry) -> None:
        t = round(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, 2)
        if self.ball_truth is not None and abs(t - self.ball_seen_at) < 0.05:
            p = msg.pose.pose.position
            self.ball_rows.append((t, math.hypot(p.x - self.ball_truth[0], p.y - self.ball_truth[1])))


def test_pose_and_ball_follow_trainer_moves(session) -> None:
    s = session
    trainer = s.trainer
    ns = f'/{s.team}/p{s.unum}'
    pairs = _Pairs()
    node = s.node
    node.create_subscription(PoseStamped, f'{ns}/ground_truth/pose', pairs.on_truth, 50)
    node.create_subscription(PoseWithCovarianceStamped, f'{ns}/pose', pairs.on_pose, 50)
    node.create_subscription(PointStamped, f'{ns}/vision/ball', pairs.on_seen, 50)
    node.create_subscription(Odometry, f'{ns}/ball', pairs.on_ball, 50)
    assert s.spin_until(lambda: len(pairs.rows) > 20, 40), 'no pose next to ground truth'
    # The session has kicked off (out of BeforeKickOff, or the strategy node would beam the
    # robot back to its kick-off place).
    trainer.wait_for(lambda st: st.play_mode == 'KickOff_Left', 10.0)

    def phase(
        x: float, y: float, theta: float, seconds: float, ball: tuple[float, float] | None
    ) -> tuple[list[tuple[float, float, float | None]], list[float]]:
        """Move the robot (the ball too, if given); pose rows and ball errors from the arrival on."""
        start, ball_start = len(pairs.rows), len(pairs.ball_rows)
        pairs.ball_truth = None
        trainer.move_agent(s.unum, s.team, x, y, 0.7, theta)
        if ball is not None:
            trainer.move_ball(ball[0], ball[1], BALL_RADIUS)
        t_move = time.monotonic()
        # Ball errors count from the first pose sample at the new place on.
        s.spin_until(lambda: any(math.hypot(r[3] - x, r[4] - y) < 0.5 for r in pairs.rows[start:]), 5)
        pairs.ball_truth = ball or pairs.last_ball
        pairs.last_ball = pairs.ball_truth
        s.spin_until(lambda: time.monotonic() - t_move > seconds, seconds + 1)
        rows = pairs.rows[start:]
        # The phase starts when the server has moved the robot (ground truth at the new place).
        first = next((i for i, r in enumerate(rows) if math.hypot(r[3] - x, r[4] - y) < 0.5), len(rows))
        return [r[:3] for r in rows[first:]], [e for _, e in pairs.ball_rows[ball_start:]]

    # The kick-off puts the ball on the centre spot: straight ahead of the first place, at rest.
    pairs.last_ball = (0.0, 0.0)
    phases = {
        'first': phase(-4.0, 0.0, 0.0, 5.0, None),  # 22 m forward from the kick-off place
        'second': phase(-10.0, -6.0, 90.0, 5.0, None),  # kidnap: 8.5 m and 90 degrees away (own half)
        'third': phase(-3.0, 8.0, -120.0, 5.0, (-6.0, 5.0)),  # robot and ball moved together
    }
    report = {}
    for name, (rows, ball) in phases.items():
        assert rows, f'no samples in phase {name}'
        t0 = rows[0][0]
        recovered = next((t - t0 for t, e, h in rows if e < 0.3 and (h is None or h < 10)), None)
        settled = [r for r in rows if recovered is not None and r[0] - t0 >= recovered + 0.5]
        pe = [e for _, e, _ in settled]
        he = [h for _, _, h in settled if h is not None]
        report[name] = {
            'recovered_s': recovered,
            'pos_median': float(np.median(pe)) if pe else None,
            'heading_median': float(np.median(he)) if he else None,
            'samples': len(settled),
            'heading_samples': len(he),
            'ball_median': float(np.median(ball)) if ball else None,
            'ball_samples': len(ball),
        }
    print(report)
    for name, r in report.items():
        assert r['recovered_s'] is not None and r['recovered_s'] < 3.0, (name, report)
        assert r['pos_median'] is not None and r['pos_median'] < 0.15, (name, report)
        if r['heading_samples'] >= 10:
            assert r['heading_median'] < 5.0, (name, report)
    # The ball is in view in the first phase (centre spot, 4 m ahead) and the third (3.6 m ahead-left).
    for name in ('first', 'third'):
        r = report[name]
        assert r['ball_samples'] >= 20 and r['ball_median'] < 0.2, (name, report)


def _walk_course(t: float) -> tuple[float, float, float]:
    """``cmd_vel`` of the walking course at ``t`` s: straight on, a left curve, a sidestep, stop."""
    if t < 5.0:
        return 0.4, 0.0, 0.0
    if t < 10.0:
        return 0.3, 0.0, 0.35
    if t < 13.0:
        return 0.0, 0.2, 0.0
    return 0.0, 0.0, 0.0


def test_pose_follows_a_walking_robot(tmp_path) -> None:
    """A T1 walking a course on its own (``cmd_vel`` to its motion node), in sync mode.

    The world model gets the walk's odometry, the gyro and the vision; the estimate is
    compared with the server's torso pose every cycle from the first step to the stop,
    and its ball with the centre spot (where the trainer puts it) while the ball is seen.
    """
    pairs = _Pairs()
    with SimSession('T1', log_dir=tmp_path, player_args=('--world-model',)) as s:
        ns = f'/{s.team}/p{s.unum}'
        s.node.create_subscription(PoseStamped, f'{ns}/ground_truth/pose', pairs.on_truth, 50)
        s.node.create_subscription(PoseWithCovarianceStamped, f'{ns}/pose', pairs.on_pose, 50)
        s.node.create_subscription(PointStamped, f'{ns}/vision/ball', pairs.on_seen, 50)
        s.node.create_subscription(Odometry, f'{ns}/ball', pairs.on_ball, 50)
        s.place(-8.0, 1.0, 0.0)  # it puts the ball aside: back to the centre spot, ahead of the course
        s.trainer.move_ball(0.0, 0.0, BALL_RADIUS)
        pairs.ball_truth = (0.0, 0.0)
        s.wait_cycles(50)
        start = len(pairs.rows)
        course = s.drive(15.0, _walk_course)
    walked = sum(math.hypot(b.x - a.x, b.y - a.y) for a, b in itertools.pairwise(course[::25]))  # 0.5 s apart: no sway
    rows = pairs.rows[start:]
    ball = [e for t, e in pairs.ball_rows if t >= rows[0][0]]
    pe = [e for _, e, _, _, _ in rows]
    he = [h for _, _, h, _, _ in rows if h is not None]
    report = {
        'walked_m': round(walked, 2),
        'turned_deg': round(math.degrees(course[-1].yaw - course[0].yaw), 1),
        'samples': len(rows),
        'pos_median': float(np.median(pe)),
        'pos_p95': float(np.percentile(pe, 95)),
        'heading_median': float(np.median(he)),
        'ball_median': float(np.median(ball)) if ball else None,
        'ball_samples': len(ball),
    }
    print(report)
    assert course[-1].up > 0.7, ('the robot fell', report)
    assert walked > 2.0 and report['turned_deg'] > 45, ('it did not walk the course', report)
    assert len(rows) > 0.8 * len(course), report
    assert report['pos_median'] < 0.15, report
    assert report['heading_median'] < 5.0, report
    assert report['ball_samples'] >= 50 and report['ball_median'] < 0.2, report  # seen 6-10 m ahead


def test_pose_recovers_after_a_fall_and_get_up(tmp_path) -> None:
    """A T1 put down on its back (trainer), turned 60 degrees: it gets up and knows where it is.

    The fall comes with a turn the gyro never sees (the trainer's move is a teleport),
    so the locator must find the heading again from vision once the robot is up.
    """
    pairs = _Pairs()
    with SimSession('T1', log_dir=tmp_path, player_args=('--world-model',)) as s:
        ns = f'/{s.team}/p{s.unum}'
        s.node.create_subscription(PoseStamped, f'{ns}/ground_truth/pose', pairs.on_truth, 50)
        s.node.create_subscription(PoseWithCovarianceStamped, f'{ns}/pose', pairs.on_pose, 50)
        s.place(-6.0, 2.0, 0.0)
        s.wait_cycles(50)
        yaw, pitch = math.radians(60.0), -math.pi / 2  # on its back; q = q_z(yaw) q_y(pitch)
        # (the get-up turns it as well: from 40 degrees it ended 18-52 degrees off, from 60 degrees 44-76)
        cy, sy, cp, sp = math.cos(yaw / 2), math.sin(yaw / 2), math.cos(pitch / 2), math.sin(pitch / 2)
        w, x, y, z = cy * cp, -sy * sp, cy * sp, sy * cp
        move = f'(move3d -6.0 2.0 0.25 {w:.6f} {x:.6f} {y:.6f} {z:.6f})'
        s.trainer.send(f'(agent (unum {s.unum}) (team {s.team}) {move})')
        s.spin_until(lambda: s.state.get('fallen') or s.state.get('getup'), 10.0, 'the fall was not detected')
        s.spin_until(
            lambda: s.state.get('skill') == 'stand' and not s.state.get('fallen') and s.pose.up > 0.9,
            60.0,
            'the robot did not get up',
        )
        up_at = len(pairs.rows)
        s.wait_cycles(200)  # 4 s standing
        true_yaw = math.degrees(s.pose.yaw)
    rows = pairs.rows[up_at:]
    t0 = rows[0][0]
    recovered = next((t - t0 for t, e, h, _, _ in rows if e < 0.15 and h is not None and h < 5.0), None)
    settled = [r for r in rows if recovered is not None and r[0] >= t0 + recovered + 0.5]
    report = {
        'recovered_s': recovered,
        'pos_median': float(np.median([r[1] for r in settled])) if settled else None,
        'heading_median': float(np.median([r[2] for r in settled if r[2] is not None])) if settled else None,
        'true_yaw_deg': round(true_yaw, 1),
    }
    print(report)
    assert abs(true_yaw) > 20.0, ('the fall did not turn the robot', report)
    assert recovered is not None and recovered < 3.0, report
    assert report['pos_median'] < 0.15 and report['heading_median'] < 5.0, report
