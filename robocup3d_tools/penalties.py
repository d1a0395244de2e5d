"""``robocup3d penalties``: a penalty shoot-out between two of our teams on RCSSServerMJ.

Starts the server headless on loopback, one player of each team (number 1, the T1 or K1), and
acts as the referee of a shoot-out, as the league's rules describe one (RCSSServerMJ 0.2.1 has
penalty play modes but no shoot-out procedure, and ignores a trainer's play mode): kicks in
turns, left team first, ``--kicks`` each, then sudden death (at most ``--sudden-death`` rounds).

For each kick the trainer drops the ball on the penalty spot in front of the defending team's goal
(play on), puts the kicker ``--run-up`` m behind it facing the goal and the keeper on its goal
line, and ``/penalty`` (latched JSON, see :mod:`robocup3d_strategy.strategy_node`) tells the
players who kicks and who keeps. The kick scores when the server gives the goal within ``--time``
s of game time; it misses when the ball leaves the field, or the time runs out. It prints each
kick and the result.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from robocup3d_bridge.percept import Dialect
from robocup3d_bridge.trainer import TrainerClient
from robocup3d_perception.field import field_for
from robocup3d_tools.match import _DiagnosticsWatcher, _team, _wait, _wait_players, close_watcher
from robocup3d_tools.ros_env import ros_environment
from robocup3d_tools.servers import END_WITH_PARENT, connect_trainer, free_port, start_mujoco_server, stop_process
from robocup3d_tools.team_runner import TeamRunner

__all__ = ['Kick', 'Shootout', 'main', 'penalties_parser', 'run_shootout', 'shootout_over']

BALL_R = 0.11  # m: RCSSServerMJ's ball radius
KEEPER_OFF_LINE = 0.4  # m in front of its goal line the keeper starts
ROBOT_Z = {'T1': 0.7, 'K1': 0.55}  # m: where the trainer puts a torso (the robot drops onto its feet)
SETTLE = 1.0  # wall s after placing the robots before the ball is played


class ClockOver(RuntimeError):
    """The server's game clock ended the game (no more kicks can be played)."""


@dataclass
class Kick:
    """One penalty: who kicked, whether it went in, how long it took (s of game time)."""

    team: str
    goal: bool
    seconds: float
    why: str  # goal, out (the ball left the field), time


@dataclass
class Shootout:
    """A shoot-out's kicks and its result."""

    teams: tuple[str, str]
    kicks: list[Kick] = field(default_factory=list)

    def goals(self, team: str) -> int:
        return sum(k.goal for k in self.kicks if k.team == team)

    @property
    def winner(self) -> str | None:
        a, b = (self.goals(t) for t in self.teams)
        return None if a == b else self.teams[0] if a > b else self.teams[1]


def shootout_over(kicks: list[Kick], teams: tuple[str, str], regular: int) -> bool:
    """Whether the shoot-out is decided: one team cannot catch up in the ``regular`` kicks each, or, after them,
    a round of sudden death (one kick each) ended with different scores."""
    taken = {t: sum(k.team == t for k in kicks) for t in teams}
    goals = {t: sum(k.goal for k in kicks if k.team == t) for t in teams}
    a, b = teams
    if taken[a] <= regular and taken[b] <= regular:
        left = {t: regular - taken[t] for t in teams}
        return goals[a] + left[a] < goals[b] or goals[b] + left[b] < goals[a]
    return taken[a] == taken[b] and goals[a] != goals[b]


def penalties_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog='robocup3d penalties', description=__doc__.splitlines()[0])
    p.add_argument('--teams', nargs=2, default=('Robo3dA', 'Robo3dB'), metavar=('LEFT', 'RIGHT'))
    p.add_argument('--robot', choices=('T1', 'K1'), default='T1')
    p.add_argument('--kicks', type=int, default=5, help='kicks per team before sudden death (default 5)')
    p.add_argument('--sudden-death', type=int, default=5, help='rounds of sudden death at most (default 5)')
    p.add_argument('--time', type=float, default=30.0, help='s of game time a kick may take (default 30)')
    p.add_argument('--run-up', type=float, default=1.0, help='m behind the ball the kicker starts (default 1)')
    p.add_argument('--sync', action='store_true', help='the server waits for every player each cycle')
    p.add_argument('--run-dir', default='runs/penalties', help='server and player logs go here')
    return p


def _publish(pub: object, msg_type: type, penalty: dict) -> None:
    pub.publish(msg_type(data=json.dumps(penalty)))


def _take_kick(
    trainer: TrainerClient,
    watcher: _DiagnosticsWatcher,
    args: argparse.Namespace,
    kicking: int,
    post: callable,
) -> Kick:
    """One penalty by team ``kicking`` (0: left, attacking +x; 1: right, attacking -x)."""
    f = field_for('mujoco')
    half = f.half_length
    sign = 1.0 if kicking == 0 else -1.0  # towards the goal attacked
    spot = float(f.landmarks['p_rpm' if kicking == 0 else 'p_lpm'][0])  # the penalty mark in front of that goal
    kicker_side, keeper_side = ('Left', 'Right') if kicking == 0 else ('Right', 'Left')
    z = ROBOT_Z.get(args.robot, 0.7)
    while trainer.state.play_mode.lower().startswith('goal_'):  # the last goal's pause: no play on yet
        _wait(trainer, watcher, 0.2)
    trainer.move_ball(spot, 0.0, BALL_R)
    trainer.drop_ball()  # play on, the ball on the spot
    trainer.move_agent(1, kicker_side, spot - sign * args.run_up, 0.0, z, 0.0 if kicking == 0 else 180.0)
    trainer.move_agent(1, keeper_side, sign * (half - KEEPER_OFF_LINE), 0.0, z, 180.0 if kicking == 0 else 0.0)
    post(kicking)
    _wait(trainer, watcher, SETTLE)
    trainer.move_ball(spot, 0.0, BALL_R)  # where it belongs, whatever the robots' landing did to it
    start = trainer.state.game_time
    score = (trainer.state.score_left, trainer.state.score_right)
    while True:
        _wait(trainer, watcher, 0.2)
        s = trainer.state
        took = s.game_time - start
        if (s.score_left, s.score_right)[kicking] > score[kicking]:
            return Kick('', True, took, 'goal')
        if s.play_mode == 'GameOver':
            raise ClockOver(f'the game clock ran out at {s.game_time:.0f} s of play: no more kicks')
        if s.play_mode != 'PlayOn' and not s.play_mode.lower().startswith('goal_'):
            return Kick('', False, took, f'out ({s.play_mode})')
        if took > args.time:
            return Kick('', False, took, 'time')


def run_shootout(args: argparse.Namespace, log: callable = print) -> Shootout:
    """Play one shoot-out; always cleans up what it started."""
    env = {**ros_environment(), END_WITH_PARENT: '1'}  # server and players end with the shoot-out, however it ends
    run_dir = Path(args.run_dir)
    aport, mport = free_port(), free_port()
    extra = ['--sync', '--no-realtime'] if args.sync else []
    # the game clock runs in play on and ends the first half after 300 s: a shoot-out plays in the second extra
    # half from 0 s (ssim: 960 s of play), time enough for 20 kicks of 30 s and the pauses after goals
    extra += ['--phase', '3', '--time', '0']
    server = start_mujoco_server(run_dir, aport, mport, extra, env=env)
    runners: list[TeamRunner] = []
    watcher = None
    result = Shootout(tuple(args.teams))
    try:
        trainer = connect_trainer(mport, Dialect.MUJOCO)
        watcher = _DiagnosticsWatcher(env)
        from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: PLC0415 - rclpy after the domain is set
        from std_msgs.msg import String  # noqa: PLC0415

        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        pub = watcher.node.create_publisher(String, '/penalty', latched)
        for name in args.teams:
            runner = TeamRunner(_team(name, aport, 1, args.robot), run_dir, env=env, extra_args=['--no-raw'])
            runner.start(stagger=0.3)
            runners.append(runner)
            _wait(trainer, watcher, 4.0)
        _wait_players(trainer, watcher, 2, timeout=60.0, log=log)

        def post(kicking: int) -> None:
            teams = args.teams
            who = {'kicker': {'team': teams[kicking], 'unum': 1}, 'keeper': {'team': teams[1 - kicking], 'unum': 1}}
            _publish(pub, String, who)

        log(f'shoot-out: {args.teams[0]} (left) v {args.teams[1]} (right), {args.kicks} kicks each')
        rounds = args.kicks + args.sudden_death
        for n in range(2 * rounds):
            kicking = n % 2
            try:
                kick = _take_kick(trainer, watcher, args, kicking, post)
            except ClockOver as exc:
                log(f'warning: {exc}')
                break
            kick.team = args.teams[kicking]
            result.kicks.append(kick)
            a, b = (result.goals(t) for t in args.teams)
            log(f'  kick {n // 2 + 1} {kick.team}: {kick.why} after {kick.seconds:.1f} s   {a}:{b}')
            for r in runners:
                for line in r.poll():
                    log(f'  {line}')
            if shootout_over(result.kicks, tuple(args.teams), args.kicks):
                break
        _publish(pub, String, {})
        watcher.spin_for(0.5)
        trainer.close()
    finally:
        for r in runners:
            r.stop()
        stop_process(server)
        close_watcher(watcher, log)
    return result


def format_shootout(r: Shootout) -> str:
    a, b = r.teams
    lines = [f'penalties: {a} {r.goals(a)} : {r.goals(b)} {b}']
    for t in r.teams:
        marks = ' '.join('o' if k.goal else 'x' for k in r.kicks if k.team == t)
        lines.append(f'  {t:<10} {marks}')
    lines.append(f'winner: {r.winner or "none (level after sudden death)"}')
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    args = penalties_parser().parse_args(argv)
    if args.kicks < 1 or args.time <= 0.0 or args.sudden_death < 0:
        print('robocup3d penalties: --kicks >= 1, --time > 0, --sudden-death >= 0', file=sys.stderr)
        return 2
    t0 = time.monotonic()
    result = run_shootout(args)
    print(format_shootout(result))
    print(f'wall time {time.monotonic() - t0:.0f} s')
    return 0
