"""The strategy node: what the player does.

It beams the player to its formation place whenever the rules allow a beam, and, once the
world model gives it a pose, plays: every :data:`DECIDE_PERIOD` s of server time it takes a
role and asks motion for a task (:mod:`robocup3d_strategy.decision`) on ``motion_request``.
``strategy_state`` (latched JSON) says what it is up to when that changes: phase, role, the
reason of the last request (``shoot``, ``pass 4``, ``dribble``, ``support``, ...), who is on
the ball, the set play's taker and whether the ball is known.
It also speaks for the player: in its slot (``team_talk.is_my_slot``) it says the
world model's pose and ball (``pose``, ``ball``, the last ``vision/ball`` sighting),
whether it is down and what it is doing (on the ball, our set play's taker) as one
``team_talk`` message on ``say``, while the pose is certain enough. Teammates that say
they are down get no role until they say otherwise.

In a penalty shoot-out (``robocup3d penalties``) it reads ``/penalty`` (latched JSON, global:
``{"kicker": {"team": T, "unum": N}, "keeper": {"team": T, "unum": N}}``, ``{}`` when none): the
player named kicker takes the penalty, the one named keeper keeps goal, any other stands.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable

from geometry_msgs.msg import PointStamped, Pose2D, PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from std_msgs.msg import String

from robocup3d_bridge import cycle_record, team_talk
from robocup3d_bridge.audience import Audience
from robocup3d_bridge.conversions import seconds_from_stamp
from robocup3d_bridge.node_main import LATCHED, spin_nodes
from robocup3d_motion.ball_skills import ball_sigma_limit
from robocup3d_motion.kick_config import ball_skills_for, load_kicks_config
from robocup3d_perception.team_view import TeamView
from robocup3d_strategy.decision import FIELDS, MATE_AGE, Decider, Mate, Situation, phase_of, set_play_of
from robocup3d_strategy.formation import beam_pose, formation_pose, load_formations, should_beam
from robocup3d_strategy.on_ball import kick_reaches
from robocup3d_strategy.roles import load_roles

__all__ = ['StrategyNode', 'main']

TEAM_SIZE = {'mujoco': 7, 'simspark': 11}  # players per team: the say slots repeat with it
MAX_SAY_SIGMA = 0.5  # m; a less certain pose is not said
MAX_BALL_AGE = 1.4  # s; an older ball is not said
DECIDE_PERIOD = 0.2  # s of server time between decisions


class StrategyNode(Node):
    """Beams the player to its kick-off place whenever the rules allow a beam."""

    def __init__(self, **kwargs) -> None:
        super().__init__('strategy', **kwargs)
        server = self.declare_parameter('server', 'mujoco').value
        self.unum = int(self.declare_parameter('unum', 1).value)
        formations = load_formations(self.declare_parameter('formations_config', 'formations.yaml').value)
        robot = self.declare_parameter('robot', '').value or ('T1' if server == 'mujoco' else 'nao')
        self.home = formation_pose(formations, server, self.unum, robot)
        robot_type = int(self.declare_parameter('robot_type', 0).value)
        kicks = self.declare_parameter('kicks_config', 'kicks.yaml').value
        skills = ball_skills_for(load_kicks_config(kicks), robot, robot_type, server)
        self._lost_sigma = skills.approach.lost_sigma  # m: a vaguer ball near the robot is lost, as motion has it
        # the kicks and what the kick model says of them; one the robot falls after is only for shots and clears
        self.kicks = kick_reaches(skills.kicks)
        #: play (decide and send motion tasks) once the world model gives a pose
        self.play = bool(self.declare_parameter('play', True).value)
        self.field = FIELDS.get(server, FIELDS['simspark'])
        self.roles = load_roles(self.declare_parameter('roles_config', 'roles.yaml').value).get(server)
        self.decider = Decider()
        self._pose: tuple[float, float, float] | None = None
        self._mates: tuple[Mate, ...] = ()
        self._opponents: tuple[tuple[float, float], ...] = ()
        self._task: dict | None = None
        self._fallen = False
        self._decided_at = -1e9
        self.side: str | None = None
        self.audience = Audience(self)  # who listens, without asking the graph each cycle
        self.pub_request = self.audience.publisher(String, 'motion_request', 10)
        self.pub_state = self.create_publisher(String, 'strategy_state', LATCHED)
        self._state: tuple | None = None
        self._motion_sub = self.create_subscription(String, 'motion_state', self._on_motion_state, LATCHED)
        self.pub_beam = self.create_publisher(Pose2D, 'beam', 1)
        self.create_subscription(String, 'game_state', self._on_game_state, LATCHED)
        self.create_subscription(String, '/penalty', self._on_penalty, LATCHED)
        self._penalty: dict = {}
        self.play_mode: str | None = None
        self.team = ''
        self.say_period = int(self.declare_parameter('say_period', TEAM_SIZE.get(server, 11)).value)
        #: the team's secret that keys team talk (never sent; default: env ROBOCUP3D_TEAM_SECRET)
        self.secret = str(self.declare_parameter('team_secret', os.environ.get(team_talk.SECRET_ENV, '')).value)
        self.pub_say = self.audience.publisher(String, 'say', 1)
        self._local_say: Callable[[str], None] | None = None  # attach_local: straight to the bridge
        self._local_request: Callable[[str], None] | None = None  # and to motion
        self.record = cycle_record.CycleRecord()  # the bridge's in a composed player (attach_record)
        self._world_subs = [
            self.create_subscription(PoseWithCovarianceStamped, 'pose', self._on_pose, 1),
            self.create_subscription(Odometry, 'ball', self._on_ball, 1),
            self.create_subscription(PointStamped, 'vision/ball', self._on_ball_seen, 1),
            self.create_subscription(PointStamped, 'ball/stop', self._on_ball_stop, 1),
            self.create_subscription(String, 'players', self._on_players, 1),
        ]
        self._ball_stop: tuple[float, float] | None = None
        self._ball: tuple[float, float] | None = None
        self._ball_seen: float | None = None
        self._ball_sigma = math.inf
        self._said_cycle: int | None = None
        self.said = 0
        self._last_beam: float | None = None
        self.create_timer(0.25, self._tick)

    def _on_game_state(self, msg: String) -> None:
        try:
            state = json.loads(msg.data)
        except ValueError:
            self.get_logger().error('game_state is not JSON; ignored')
            return
        self.team = state.get('team') or self.team
        self.side = state.get('side') or self.side
        mode = state.get('play_mode')
        if mode != self.play_mode:
            self._last_beam = None
        self.play_mode = mode
        self._tick()

    def _on_penalty(self, msg: String) -> None:
        try:
            penalty = json.loads(msg.data)
            if not isinstance(penalty, dict):
                raise ValueError(penalty)
        except ValueError:
            self.get_logger().error('/penalty is not a JSON object; ignored')
            return
        self._penalty = penalty

    def penalty_role(self) -> str:
        """This player's part in a penalty shoot-out: ``kick``, ``keep``, ``out``, or ``''`` (none under way)."""
        if not self._penalty:
            return ''
        for part, key in (('kick', 'kicker'), ('keep', 'keeper')):
            who = self._penalty.get(key)
            if isinstance(who, dict) and who.get('team') == self.team and who.get('unum') == self.unum:
                return part
        return 'out'

    def _tick(self) -> None:
        now = time.monotonic()
        if self._penalty:  # a shoot-out's referee puts the players where they belong
            return
        if should_beam(self.play_mode, self._last_beam, now):
            x, y, th = beam_pose(self.home, self.play_mode, self.side, self.field.set_play_distance)
            self.pub_beam.publish(Pose2D(x=x, y=y, theta=th))
            self._last_beam = now

    def _on_players(self, msg: String) -> None:
        try:
            self._take_players(json.loads(msg.data).get('players', ()))
        except (ValueError, TypeError, KeyError, AttributeError):
            self.get_logger().error('players is not the JSON the world model sends; ignored', throttle_duration_sec=5.0)

    def _take_players(self, players: object) -> None:
        """Teammates and opponents from the world model's ``players`` list."""
        self._mates = tuple(
            Mate(int(p['unum']), float(p['x']), float(p['y']), float(p.get('age', 0.0)), p.get('fallen') is True)
            for p in players
            if p.get('teammate') and isinstance(p.get('unum'), int)
        )
        self._opponents = tuple(
            (float(p['x']), float(p['y']))
            for p in players
            if not p.get('teammate') and float(p.get('age', 0.0)) <= MATE_AGE
        )

    def _on_motion_state(self, msg: String) -> None:
        try:
            state = json.loads(msg.data)
        except ValueError:
            return
        if isinstance(state, dict):
            self.take_motion_state(state)

    def take_motion_state(self, state: dict) -> None:
        """Motion's state (as ``motion_state`` carries it): the task under way, and whether we are down."""
        self._task = state.get('task') if isinstance(state.get('task'), dict) else None
        self._fallen = bool(state.get('fallen') or state.get('getup'))

    def attach_motion(self, watch: Callable[[Callable[[dict], None]], None]) -> None:
        """Take motion's state straight from a motion node of this process (``watch(take)`` registers
        ``take``), not from the ``motion_state`` topic."""
        self.destroy_subscription(self._motion_sub)
        watch(self.take_motion_state)

    def _decide(self, now: float) -> None:
        """Take a role and send motion the task it asks for, if it is a new one."""
        self._decided_at = now
        situation = Situation(
            unum=self.unum,
            phase=phase_of(self.play_mode, self.side),
            pose=self._pose,
            ball=self._ball if self._ball_fresh(now) else None,
            ball_stop=self._ball_stop if self._ball_fresh(now) else None,
            last_ball=self._ball,
            home=self.home,
            field=self.field,
            mates=self._mates,
            opponents=tuple(o for o in self._opponents if math.isfinite(o[0]) and math.isfinite(o[1])),
            kicks=self.kicks,
            fallen=self._fallen,
            roles=self.roles,
            penalty=self.penalty_role(),
            set_play=set_play_of(self.play_mode),
            side=self.side or '',
        )
        d = self.decider
        req = d.decide(situation, now, self._task)
        if req is not None:
            self._send(self.pub_request, self._local_request, req.to_text(), 'motion_request')
        state = (situation.phase, d.role, d.reason, d.on_ball, d.taker, situation.ball is not None)
        if state != self._state:  # what the player is up to, for users and tests
            self._state = state
            keys = ('phase', 'role', 'reason', 'on_ball', 'taker', 'ball_known')
            self.pub_state.publish(String(data=json.dumps({'time': now, **dict(zip(keys, state, strict=True))})))

    def _ball_fresh(self, now: float) -> bool:
        """The world model's ball is good enough to play (seen by us or heard from a teammate): within the
        approach's ``lost_sigma``, more for a far ball (:func:`~robocup3d_motion.ball_skills.ball_sigma_limit`)."""
        if self._ball is None:
            return False
        dist = math.dist(self._ball, self._pose[:2]) if self._pose is not None else 0.0
        return self._ball_sigma <= ball_sigma_limit(self._lost_sigma, dist)

    def _on_ball(self, msg: Odometry) -> None:
        p = msg.pose.pose.position
        self._ball = (p.x, p.y)
        cov = msg.pose.covariance
        self._ball_sigma = math.sqrt(max(0.0, cov[0] + cov[7]))

    def _on_ball_stop(self, msg: PointStamped) -> None:
        p = msg.point
        self._ball_stop = (p.x, p.y) if math.isfinite(p.x) and math.isfinite(p.y) else None

    def _on_ball_seen(self, msg: PointStamped) -> None:
        self._ball_seen = seconds_from_stamp(msg.header.stamp)

    def _on_pose(self, msg: PoseWithCovarianceStamped) -> None:
        p, q, cov = msg.pose.pose.position, msg.pose.pose.orientation, msg.pose.covariance
        yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
        self._take_pose(seconds_from_stamp(msg.header.stamp), (p.x, p.y, yaw), math.sqrt(max(cov[0] + cov[7], 0.0)))

    def attach_local(self, say: Callable[[str], None], request: Callable[[str], None]) -> None:
        """Hand ``say`` texts to the bridge and motion requests to the motion node of this process directly.

        Through DDS each one cost a publish and the executor's delivery in the same process (a twelfth of
        a standing player's GIL samples, ``bench/bench_profile.py --gil``). The topics still carry them
        whenever anyone else listens (a recorder, a user): then our own node gets the text twice, which
        is harmless (the same say again, a task's refresh).
        """
        self._local_say, self._local_request = say, request

    def attach_record(self, record: cycle_record.CycleRecord) -> None:
        """Add ``motion_request`` and ``say`` to the bridge's ``record`` (this process's) while it is active."""
        self.record = record

    def _send(self, pub: object, local: Callable[[str], None] | None, text: str, topic: str) -> None:
        if local is None:
            pub.publish(String(data=text))
            return
        local(text)
        if self.audience.listened(pub, beyond=1):  # someone besides our own node (one subscription) listens
            pub.publish(String(data=text))
        if self.record.active:  # a recorder takes it in the bridge's record/cycle, not from the topic
            self.record.add_text(topic, text)

    def attach_world_model(self, world_model: object) -> None:
        """Take the estimates straight from a world model node of this process, not from its topics."""
        for sub in self._world_subs:
            self.destroy_subscription(sub)
        self._world_subs = []
        world_model.attach_listener(self.take_world)

    def take_world(self, view: TeamView) -> None:
        """One world-model update (team frame), as the topics would bring it."""
        if view.ball is not None:
            self._ball, self._ball_sigma = view.ball, view.ball_sigma
            self._ball_stop = view.ball_stop
        self._ball_seen = view.ball_seen
        if view.players is not None:
            try:
                self._take_players(view.players)
            except (ValueError, TypeError, KeyError, AttributeError):
                self.get_logger().error('malformed players from the world model; ignored', throttle_duration_sec=5.0)
        self._take_pose(view.time, view.pose, view.pose_sigma)

    def _take_pose(self, now: float, pose: tuple[float, float, float], sigma: float) -> None:
        """Decide, and say our pose and ball in our slot (the pose comes once or twice per server cycle)."""
        self._pose = pose
        if (self.play and now - self._decided_at >= DECIDE_PERIOD) or now < self._decided_at:
            self._decide(now)
        cycle = team_talk.server_cycle(now)
        if cycle == self._said_cycle or not self.team or not team_talk.is_my_slot(self.unum, cycle, self.say_period):
            return
        if sigma > MAX_SAY_SIGMA:
            return
        age = now - self._ball_seen if self._ball_seen is not None else math.inf
        ball_known = self._ball is not None and 0.0 <= age <= MAX_BALL_AGE
        text = team_talk.encode(
            team_talk.TeamMessage(
                unum=self.unum,
                stamp=cycle % 16,
                x=pose[0],
                y=pose[1],
                heading=pose[2],
                ball=self._ball if ball_known else None,
                ball_age=age if ball_known else 0.0,
                fallen=self._fallen,
                intent=self._intent(),
            ),
            self.team,
            self.secret,
        )
        self._send(self.pub_say, self._local_say, text, 'say')
        self._said_cycle = cycle
        self.said += 1

    def _intent(self) -> str:
        """What this player says it is doing (team_talk.INTENTS)."""
        if self.decider.taker == self.unum:
            return 'taker'
        return 'on_ball' if self.decider.role == 'striker' else 'none'


def main(args: list[str] | None = None) -> None:
    """Run the strategy node alone."""
    raise SystemExit(spin_nodes([StrategyNode], args))


if __name__ == '__main__':
    main()
