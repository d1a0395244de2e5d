"""The match report on a recorded two-team RCSSServerMJ scene with a real kick: who kicked, how fast, and
possession passing from the kicker's team to the other's as the ball rolls past an opponent.

One T1 a side on a sync-mode server, neither playing (``--no-play``): the trainer puts Kicker's player
behind the ball at its long kick's spot and Other's player beside the kick's path; the test asks for the
long kick on ``motion_request`` as strategy would, and ``robocup3d record`` records it all.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from bag_support import recorded_session, robocup3d

REPO = Path(__file__).resolve().parents[2]
KICKER, OTHER = f'Kick{os.getpid() % 10000}', f'Oth{os.getpid() % 10000}'
#: where the kicker stands (world frame, facing +x); the right-foot long kick sends the ball about 10 m,
#: 27.5 deg to the right of the robot's heading (config/kicks.yaml)
KICKER_AT = (-6.0, 2.0)
ANGLE = math.radians(-27.5)
#: the other team's player: 6 m down the kick's path and 1.3 m to its left, within the report's 2 m reach
OTHER_AT = (
    KICKER_AT[0] + 6.0 * math.cos(ANGLE) - 1.3 * math.sin(ANGLE),
    KICKER_AT[1] + 6.0 * math.sin(ANGLE) + 1.3 * math.cos(ANGLE),
)


def _place(trainer: object, team: str, x: float, y: float, yaw: float = 0.0) -> None:
    from robocup3d_tools.sim_session import PLACE_Z  # noqa: PLC0415

    w, qz = math.cos(yaw / 2.0), math.sin(yaw / 2.0)
    trainer.send(f'(agent (unum 1) (team {team}) (move3d {x:.4f} {y:.4f} {PLACE_Z["T1"]:.4f} {w:.6f} 0 0 {qz:.6f}))')


@pytest.fixture(scope='module')
def kick_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp('report_kick')
    with recorded_session(run, {'bag': {}}, [KICKER, OTHER]) as session:
        import rclpy  # noqa: PLC0415 - after the session's skip
        from std_msgs.msg import String  # noqa: PLC0415

        from robocup3d_tools.kick_tasks import kick_setup  # noqa: PLC0415

        trainer = session.trainer
        saved = {k: os.environ.get(k) for k in ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_DOMAIN_ID')}
        os.environ.update({k: session.env[k] for k in saved})  # this process's rclpy joins the players' domain
        node = None
        started = False
        try:
            for i, team in enumerate((KICKER, OTHER)):
                session.add_team(team, run / team, extra_args=['--no-raw', '--no-play'], clock_player=1 - i)
            started = not rclpy.ok()  # other tests of this process may have a context already
            if started:
                rclpy.init(args=[])
            node = rclpy.create_node('report_kick_test')
            request = node.create_publisher(String, f'/{KICKER}/p1/motion_request', 10)
            session.let_recorders_subscribe()
            trainer.kick_off('Left')
            session.play(0.5)
            trainer.drop_ball()  # play on: the referee leaves players where the trainer puts them
            _place(trainer, KICKER, *KICKER_AT)
            _place(trainer, OTHER, *OTHER_AT, yaw=math.pi)
            trainer.move_ball(0.0, -8.0, 0.11)  # out of the way while they settle
            session.play(3.0)
            (sx, sy), _ = kick_setup('T1', 'long')
            trainer.move_ball(KICKER_AT[0] + sx, KICKER_AT[1] + sy, 0.11)
            session.play(0.5)
            request.publish(String(data='KICK_LONG_RIGHT'))  # a skill by name, as strategy may ask for one
            session.play(8.0)
        finally:
            if node is not None:
                node.destroy_node()
                if started:
                    rclpy.try_shutdown()
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    return run / 'bag'


def test_the_report_finds_the_kick_and_possession_changing_sides(kick_bag: Path, tmp_path: Path) -> None:
    from robocup3d_tools.match_analysis import analyze  # noqa: PLC0415
    from robocup3d_tools.match_data import load_match  # noqa: PLC0415

    data = load_match(kick_bag)
    ball = data.ball
    start = (float(ball.v[0, 0]), float(ball.v[0, 1]))
    a = analyze(data)
    kicks = [k for k in a.kicks if k.kicker is not None]
    assert kicks, (a.kicks, start)
    kick = kicks[0]
    # the kick where the trainer put the ball, by the kicker, on the left (the kicker's team kicked off)
    assert kick.kicker == f'{KICKER}/p1' and kick.team == 'left', kick
    # the kick's speed is the first monitor sample after the jump (1.2-1.9 m/s in runs of this test); the ball
    # then ran at over 3 m/s (3.6 m/s)
    from robocup3d_tools.match_analysis import speeds  # noqa: PLC0415

    v = speeds(ball.t, ball.v)  # between consecutive samples
    assert v[ball.t[1:] > kick.t].max() > 3.0, kick
    end = (float(ball.v[-1, 0]), float(ball.v[-1, 1]))
    travelled = math.hypot(end[0] - kick.x, end[1] - kick.y)
    assert travelled > 4.0, (kick, end)  # it rolled past the other player (measured: 8.7 m)
    # possession: the kicker's team while the ball lay at its feet, the other team's as it rolled past
    assert a.possession_share['left'] > 0.1 and a.possession_share['right'] > 0.0, a.possession_share
    before = a.possession_side[(a.possession_t > kick.t - 0.5) & (a.possession_t < kick.t)]
    after = a.possession_side[a.possession_t > kick.t]
    assert set(before) == {'left'} and 'right' in set(after), (set(before), set(after))
    # and the report says so
    out = robocup3d('report', str(kick_bag), '-o', str(tmp_path / 'r.html'))
    assert out.returncode == 0, out.stderr
    assert f'{KICKER} (left) vs {OTHER} (right)' in out.stdout, out.stdout
    assert f'kicks:      {len(a.kicks)}' in out.stdout and 'possession: left' in out.stdout, out.stdout
    row = f'<td>{KICKER}/p1</td><td>left</td><td>{kick.speed:.1f}</td>'  # the page's table of kicks
    assert row in (tmp_path / 'r.html').read_text()
