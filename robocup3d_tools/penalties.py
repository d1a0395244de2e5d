"""``robocup3d penalties``: a penalty shoot-out between two teams, on RCSSServerMJ or rcssserver3d.

Starts the server headless on loopback, one player of each of our teams (number 1: the T1 or K1 on
RCSSServerMJ, a Nao of ``--type`` on rcssserver3d), and acts as the referee of a shoot-out, as the
league's rules describe one (neither server has a shoot-out procedure; RCSSServerMJ 0.2.1 ignores
a trainer's play mode): kicks in turns, left team first, ``--kicks`` each, then sudden death (at
most ``--sudden-death`` rounds). On rcssserver3d the right team may be any other team, started by
its own command (``--opponent-cmd``, as ``robocup3d match`` takes it): its player
``--opponent-kicker`` kicks and ``--opponent-keeper`` keeps, and the referee holds its other players
off the field beside the halfway line while a kick is taken.

For each kick the trainer drops the ball on the penalty mark in front of the defending team's goal
(play on; rcssserver3d's field has none: where FIFA's would be on a field of its length), puts the
kicker ``--run-up`` m behind it facing the goal and the keeper on its goal line, and ``/penalty``
(latched JSON, see :mod:`robocup3d_strategy.strategy_node`) tells our players who kicks and who
keeps. The kick scores when the server gives the goal within ``--time`` s of game time; it misses
when the ball leaves the field, or the time runs out. It prints each kick and the result.
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
from robocup3d_tools.opponent import OpponentError, OpponentTeam, opponent_team
from robocup3d_tools.ros_env import ros_environment
from robocup3d_tools.servers import (
    END_WITH_PARENT,
    connect_trainer,
    free_port,
    start_mujoco_server,
    start_simspark_server,
    stop_process,
)
from robocup3d_tools.team_config import PlayerConfig, TeamConfig
from robocup3d_tools.team_runner import TeamRunner

__all__ = ['Kick', 'Pitch', 'Shootout', 'main', 'penalties_parser', 'pitch_for', 'run_shootout', 'shootout_over']

KEEPER_OFF_LINE = 0.4  # m in front of its goal line the keeper starts
ROBOT_Z = {'T1': 0.7, 'K1': 0.55, 'nao': 0.36}  # m: where the trainer puts a torso (the robot drops onto its feet)
SETTLE = 1.0  # wall s after placing the robots before the ball is played
FIFA_MARK = 11.0 / 52.5  # the penalty mark's distance from the goal line, of half the field's length
PARK_EVERY = 1.0  # wall s between putting an opponent's idle players back beside the halfway line


@dataclass(frozen=True)
class Pitch:
    """Where a shoot-out is played: the server's field, ball and robot sizes."""

    server: str
    half_length: float  # m: the goal lines at x = +-half_length
    half_width: float
    mark: float  # m: |x| of the penalty marks
    ball_r: float
    robot_z: float
    #: deg to add to a heading for the trainer (rcssserver3d puts an agent facing theta + 90)
    turn: float = 0.0


def pitch_for(server: str, robot: str) -> Pitch:
    """The pitch of ``server`` (``mujoco``: its field's penalty marks; ``simspark``: FIFA's mark scaled)."""
    f = field_for(server)
    if server == 'mujoco':
        mark = float(f.landmarks['p_rpm'][0])
        return Pitch(server, f.half_length, f.half_width, mark, 0.11, ROBOT_Z.get(robot, 0.7))
    mark = f.half_length * (1.0 - FIFA_MARK)
    return Pitch(server, f.half_length, f.half_width, mark, 0.042, ROBOT_Z['nao'], turn=-90.0)


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
    p.add_argument('--server', choices=('mujoco', 'simspark'), default='mujoco')
    p.add_argument('--teams', nargs=2, default=('Robo3dA', 'Robo3dB'), metavar=('LEFT', 'RIGHT'))
    p.add_argument('--robot', choices=('T1', 'K1'), default='T1', help='RCSSServerMJ: our robot')
    p.add_argument('--type', dest='robot_type', type=int, choices=range(5), default=0, help='rcssserver3d: our Nao')
    p.add_argument('--kicks', type=int, default=5, help='kicks per team before sudden death (default 5)')
    p.add_argument('--sudden-death', type=int, default=5, help='rounds of sudden death at most (default 5)')
    p.add_argument('--time', type=float, default=30.0, help='s of game time a kick may take (default 30)')
    p.add_argument('--run-up', type=float, default=1.0, help='m behind the ball the kicker starts (default 1)')
    p.add_argument('--sync', action='store_true', help='the server waits for every player each cycle')
    p.add_argument('--run-dir', default='runs/penalties', help='server and player logs go here')
    p.add_argument(
        '--opponent-cmd',
        default=None,
        help='rcssserver3d: start the right team with this command ({host} {port} {monitor_port} {team})',
    )
    p.add_argument('--opponent-kicker', type=int, default=1, help='--opponent-cmd: the number of its kicker')
    p.add_argument('--opponent-keeper', type=int, default=1, help='--opponent-cmd: the number of its keeper')
    p.add_argument('--opponent-timeout', type=float, default=60.0, help='--opponent-cmd: s to wait for its players')
    return p


def _publish(pub: object, msg_type: type, penalty: dict) -> None:
    pub.publish(msg_type(data=json.dumps(penalty)))


def _take_kick(
    trainer: TrainerClient,
    watcher: _DiagnosticsWatcher,
    args: argparse.Namespace,
    pitch: Pitch,
    kicking: int,
    post: callable,
    park: callable = lambda: None,
) -> Kick:
    """One penalty by team ``kicking`` (0: left, attacking +x; 1: right, attacking -x); ``park`` puts the players
    who take no part where they wait, now and every :data:`PARK_EVERY` s."""
    sign = 1.0 if kicking == 0 else -1.0  # towards the goal attacked
    spot = sign * pitch.mark  # the penalty mark in front of that goal
    kicker_side, keeper_side = ('Left', 'Right') if kicking == 0 else ('Right', 'Left')
    kicker, keeper = _numbers(args, kicking)
    z = pitch.robot_z
    while trainer.state.play_mode.lower().startswith('goal_'):  # the last goal's pause: no play on yet
        _wait(trainer, watcher, 0.2)
    if pitch.server == 'simspark':
        trainer.set_time(0.0)  # every kick well clear of the half's end
    trainer.move_ball(spot, 0.0, pitch.ball_r)
    trainer.drop_ball()  # play on, the ball on the spot
    ahead, back = (0.0, 180.0) if kicking == 0 else (180.0, 0.0)
    trainer.move_agent(kicker, kicker_side, spot - sign * args.run_up, 0.0, z, ahead + pitch.turn)
    trainer.move_agent(keeper, keeper_side, sign * (pitch.half_length - KEEPER_OFF_LINE), 0.0, z, back + pitch.turn)
    park()
    post(kicking)
    _wait(trainer, watcher, SETTLE)
    trainer.move_ball(spot, 0.0, pitch.ball_r)  # where it belongs, whatever the robots' landing did to it
    start = trainer.state.game_time
    score = (trainer.state.score_left, trainer.state.score_right)
    parked = time.monotonic()
    while True:
        _wait(trainer, watcher, 0.2)
        if time.monotonic() - parked > PARK_EVERY:
            park()
            parked = time.monotonic()
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


def _numbers(args: argparse.Namespace, kicking: int) -> tuple[int, int]:
    """(kicker, keeper) numbers of a kick by team ``kicking``: our teams' player 1, the opponent's as asked."""
    if args.opponent_cmd is None:
        return 1, 1
    return (1, args.opponent_keeper) if kicking == 0 else (args.opponent_kicker, 1)


def _park(trainer: TrainerClient, pitch: Pitch, args: argparse.Namespace, kicking: int) -> callable:
    """Puts the opponent's players that take no part in a kick by team ``kicking`` beside the halfway line, off the
    field (nobody without an opponent: our teams field one player each)."""
    if args.opponent_cmd is None:
        return lambda: None
    active = args.opponent_keeper if kicking == 0 else args.opponent_kicker
    idle = [u for u in range(1, 12) if u != active]

    def park() -> None:
        for i, unum in enumerate(idle):
            trainer.move_agent(unum, 'Right', -5.0 + i, -(pitch.half_width + 1.0), pitch.robot_z, 90.0 + pitch.turn)

    return park


def _start_server(args: argparse.Namespace, run_dir: Path, aport: int, mport: int, env: dict):
    """The server of ``args.server`` with the game clock set for a shoot-out."""
    if args.server == 'simspark':  # the referee resets its game time before every kick
        server_env = {**env, **({'SIMSPARK_SYNC': '1', 'SIMSPARK_REALTIME': '0'} if args.sync else {})}
        return start_simspark_server(run_dir, aport, mport, env=server_env, soccer={'SingleHalfTime': 'true'})
    extra = ['--sync', '--no-realtime'] if args.sync else []
    # the game clock runs in play on and ends the first half after 300 s: a shoot-out plays in the second extra
    # half from 0 s (ssim: 960 s of play), time enough for 20 kicks of 30 s and the pauses after goals
    extra += ['--phase', '3', '--time', '0']
    return start_mujoco_server(run_dir, aport, mport, extra, env=env)


def _our_team(args: argparse.Namespace, name: str, port: int) -> TeamConfig:
    if args.server == 'simspark':
        return TeamConfig('simspark', name, '127.0.0.1', port, (PlayerConfig(1, 'nao', args.robot_type),))
    return _team(name, port, 1, args.robot)


def run_shootout(args: argparse.Namespace, log: callable = print) -> Shootout:
    """Play one shoot-out; always cleans up what it started."""
    if args.opponent_cmd is not None and args.server != 'simspark':
        raise OpponentError('--opponent-cmd needs --server simspark (RCSSServerMJ: two of our teams)')
    env = {**ros_environment(), END_WITH_PARENT: '1'}  # server and players end with the shoot-out, however it ends
    run_dir = Path(args.run_dir)
    aport, mport = free_port(), free_port()
    pitch = pitch_for(args.server, args.robot)
    server = _start_server(args, run_dir, aport, mport, env)
    runners: list[TeamRunner] = []
    watcher = opponent = None
    teams = list(args.teams)
    result = Shootout(tuple(teams))
    try:
        trainer = connect_trainer(mport, Dialect.SIMSPARK if args.server == 'simspark' else Dialect.MUJOCO)
        watcher = _DiagnosticsWatcher(env)
        from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: PLC0415 - rclpy after the domain is set
        from std_msgs.msg import String  # noqa: PLC0415

        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        pub = watcher.node.create_publisher(String, '/penalty', latched)
        ours = teams if args.opponent_cmd is None else teams[:1]
        for name in ours:
            runner = TeamRunner(_our_team(args, name, aport), run_dir, env=env, extra_args=['--no-raw'])
            runner.start(stagger=0.3)
            runners.append(runner)
            _wait(trainer, watcher, 4.0)
        _wait_players(trainer, watcher, len(ours), timeout=60.0, log=log)
        if args.opponent_cmd is not None:
            opponent = _start_opponent(trainer, watcher, args, aport, mport, env, run_dir, log)
            teams[1] = trainer.state.team_right or teams[1]
            result.teams = tuple(teams)

        def post(kicking: int) -> None:
            kicker, keeper = _numbers(args, kicking)
            who = {
                'kicker': {'team': teams[kicking], 'unum': kicker},
                'keeper': {'team': teams[1 - kicking], 'unum': keeper},
            }
            _publish(pub, String, who)

        log(f'shoot-out: {teams[0]} (left) v {teams[1]} (right), {args.kicks} kicks each')
        rounds = args.kicks + args.sudden_death
        for n in range(2 * rounds):
            kicking = n % 2
            try:
                kick = _take_kick(trainer, watcher, args, pitch, kicking, post, _park(trainer, pitch, args, kicking))
            except ClockOver as exc:
                log(f'warning: {exc}')
                break
            kick.team = teams[kicking]
            result.kicks.append(kick)
            a, b = (result.goals(t) for t in teams)
            log(f'  kick {n // 2 + 1} {kick.team}: {kick.why} after {kick.seconds:.1f} s   {a}:{b}')
            for r in runners:
                for line in r.poll():
                    log(f'  {line}')
            if opponent is not None:
                opponent.track()
            if shootout_over(result.kicks, tuple(teams), args.kicks):
                break
        _publish(pub, String, {})
        watcher.spin_for(0.5)
        trainer.close()
    finally:
        if opponent is not None:
            opponent.stop()
        for r in runners:
            r.stop()
        stop_process(server, timeout=0 if args.server == 'simspark' else 10.0)  # rcssserver3d ignores SIGTERM
        close_watcher(watcher, log)
    return result


def _start_opponent(
    trainer: TrainerClient,
    watcher: _DiagnosticsWatcher,
    args: argparse.Namespace,
    aport: int,
    mport: int,
    env: dict,
    run_dir: Path,
    log: callable,
) -> OpponentTeam:
    """Start the right team's command and wait for its kicker and keeper (OpponentError if they do not come)."""
    from robocup3d_tools.simspark_match import _wait_opponent  # noqa: PLC0415 - the match's own wait

    opponent = opponent_team(args.opponent_cmd, '127.0.0.1', aport, mport, args.teams[1], run_dir / 'opponent.log', env)
    log(f'starting the opponent: {opponent.command}')
    opponent.start()
    wanted = argparse.Namespace(
        opponent_players=max(args.opponent_kicker, args.opponent_keeper), opponent_timeout=args.opponent_timeout
    )
    try:
        _wait_opponent(trainer, watcher, opponent, wanted, log)
    except OpponentError:
        opponent.stop()
        raise
    return opponent


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
    if not (1 <= args.opponent_kicker <= 11 and 1 <= args.opponent_keeper <= 11):
        print('robocup3d penalties: --opponent-kicker and --opponent-keeper are player numbers, 1-11', file=sys.stderr)
        return 2
    t0 = time.monotonic()
    try:
        result = run_shootout(args)
    except OpponentError as exc:
        print(f'robocup3d penalties: {exc}', file=sys.stderr)
        return 2
    print(format_shootout(result))
    print(f'wall time {time.monotonic() - t0:.0f} s')
    return 0
