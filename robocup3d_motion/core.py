"""The motion core: everything the motion node does but ROS (pure Python, server seconds).

:class:`MotionCore` takes the IMU, the joint states, the world model's pose and ball, and the requests, and
returns each cycle's joint targets: get-ups after falls, requested skills and ball-skill tasks, the walk, and
the balanced stand, in that order of priority (:mod:`robocup3d_motion.motion_node` has the whole story and the
topics). Tests and offline benches drive it directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from robocup3d_bridge.config_files import ConfigError
from robocup3d_description.robots import RobotSpec
from robocup3d_motion.balance import BalanceController, balance_settings
from robocup3d_motion.ball_skills import (
    Action,
    DribbleTask,
    GoToTask,
    KickTask,
    Task,
    View,
    ball_sigma_limit,
    to_robot,
)
from robocup3d_motion.cycle_clock import CycleClock
from robocup3d_motion.fall import FallDetector, FallState, all_finite, fall_direction
from robocup3d_motion.gear import GearShift, walk_gear
from robocup3d_motion.getup import (
    GETUP_SKILLS,
    KeyframePlayer,
    blend_skills,
    check_blend,
    getup_skill_for,
    load_keyframe_dir,
    load_keyframe_skills,
)
from robocup3d_motion.head import HeadControl
from robocup3d_motion.joint_control import JointController, control_settings
from robocup3d_motion.kick_config import BallSkills, check_skills
from robocup3d_motion.landing import LandingRule, LandingWatch
from robocup3d_motion.nao_fall import NaoFallDetector
from robocup3d_motion.requests import Dribble, GoTo, Kick, RequestError, SkillRequest, parse_request
from robocup3d_motion.walk import KickSwing, WalkEngine, walk_sets
from robocup3d_motion.walk_control import WalkCommander

__all__ = ['CONTACT_N', 'MotionCore']

STAND = 'stand'
WALK = 'walk'
CONTACT_N = 5.0  # N of foot pressure that counts as touching the ground
ESTIMATE_AGE = 0.5  # s: an older pose or ball estimate is not used by a task
SAME_TARGET = 0.2  # m (and rad): a request this near the running task's asks for the same task
# rad: a kick whose target is this little further round the ball asks for the same kick (a pass's target follows
# its receiver; each new task forgot its foot and its hold, and a Nao passing to a walking teammate started over
# every second for 8 s against UT Austin Villa, session 39)
SAME_AIM = math.radians(5.0)
# a kick's phases that keep the target they began with: a robot stopped for the kick judges its alignment at the end
# of its rest, and a target that followed a walking receiver meanwhile turned the kick's heading past the tolerance
# (a T1 stopped, stood, walked on to line up again and stopped again 5 times in 35 s, 7 v 7 v formation, session 40)
AIM_HELD = frozenset({'settling', 'kicking'})
HEAD_JOINTS = frozenset({'hj1', 'hj2'})
LOOK_AGE = 1.0  # s: the head keeps looking where the ball was this long, then sweeps to find it
#: s after a beam in which no get-up starts: the robot lands at its place (RCSSServerMJ drops it upright in its
#: initial joint pose) and the landing's jolt is no fall (a 7 v 7 half, session 42: after each goal every walking
#: player was beamed, the jolt read as a fall, and the get-up played on an upright robot threw it down)
BEAM_SETTLE = 1.0
#: After a get-up the robot stands STEADY_MIN s, then walks off once it stands steady: tilt below STEADY_TILT (rad)
#: and a gyro below STEADY_RATE (rad/s), or STEADY_MAX s after the get-up's end at the latest. In a 7 v 7 half
#: (session 42) a T1 that walked off at once, still leaning 19-29 degrees, turning at full rate or on its sprint, fell
#: again within 0.2-0.9 s (5 of 35 falls outside the goals' seconds). Steady by the IMU is not enough: laid on its
#: back with a go-to task running, a T1 that walked off as soon as it read steady fell again within 3 s in 7 of 22
#: trials; standing 1 s first, in 0 of 16 (session 44, docs/getup.md)
STEADY_TILT = math.radians(10.0)
STEADY_RATE = 0.5
STEADY_MIN = 1.0
STEADY_MAX = 1.5


def _keyframe_overrides(robot: RobotSpec, files: tuple[str, ...]) -> dict[str, object]:
    """YAML keyframe skills (``skill_params`` on RCSSServerMJ) that replace the shipped skill of their name."""
    out: dict[str, object] = {}
    for f in files:
        if not f.endswith(('.yaml', '.yml')):
            raise ConfigError(
                f"{f}: {robot.name} skills are YAML keyframe files (.yaml); .txt parameters are the Nao's"
            )
        for skill in load_keyframe_skills(Path(f), robot):  # with its mirror image, when it names one
            out[skill.name] = skill
    return out


def _same_task(a: GoTo | Kick | Dribble, b: GoTo | Kick | Dribble, ball: tuple[float, float] | None = None) -> bool:
    """Whether two requests ask for the same task: the same kind and kick, targets within :data:`SAME_TARGET`, or
    for a kick, seen from the ``ball``, within :data:`SAME_AIM` of each other."""
    if a.kind != b.kind or getattr(a, 'kick', None) != getattr(b, 'kick', None):
        return False
    if isinstance(a, GoTo) and isinstance(b, GoTo):
        turn = abs(math.remainder(a.theta - b.theta, math.tau))
        return math.hypot(a.x - b.x, a.y - b.y) <= SAME_TARGET and turn <= SAME_TARGET
    if math.dist(a.target, b.target) <= SAME_TARGET:
        return True
    if not isinstance(a, Kick) or ball is None or min(math.dist(ball, a.target), math.dist(ball, b.target)) < 0.5:
        return False
    aim_a = math.atan2(a.target[1] - ball[1], a.target[0] - ball[0])
    aim_b = math.atan2(b.target[1] - ball[1], b.target[0] - ball[0])
    return abs(math.remainder(aim_a - aim_b, math.tau)) <= SAME_AIM


class MotionCore:
    """Everything but ROS: skill selection, fall handling, balance. Times in server seconds."""

    def __init__(
        self,
        robot: object,
        robots_cfg: dict,
        imu_timeout: float = 0.3,
        getup_pause: float = 0.3,
        walk_cfg: dict | None = None,
        cmd_timeout: float = 0.5,
        skill_params: tuple[str, ...] = (),
        ball_skills: BallSkills | None = None,
    ) -> None:
        self.robot = robot
        self.settings = control_settings(robot, robots_cfg)
        self.controller = JointController(robot, self.settings)
        key = 'nao' if robot.server == 'simspark' else robot.name
        section = robots_cfg.get(key, {}) or {}
        self.balance = BalanceController(balance_settings(section.get('balance'), robot.joint_names))
        fall_cfg = section.get('fall', {}) or {}
        # the Nao's foot pressure sensors veto "upright" while it sits (NaoFallDetector)
        self.fall = (NaoFallDetector if robot.server == 'simspark' else FallDetector)(
            fallen_deg=float(fall_cfg.get('fallen_deg', 55.0)),
            upright_deg=float(fall_cfg.get('upright_deg', 30.0)),
            confirm_cycles=int(fall_cfg.get('confirm_cycles', 3)),
        )
        # After a fall to the side (or to any of ``calm_for``) a get-up starts once the body lies still (|gyro| <
        # calm_rate for calm_s), or calm_max s after the fall at the latest: the robot rolls on for a while.
        self.calm_rate = float(fall_cfg.get('calm_rate', math.inf))
        self.calm_s = float(fall_cfg.get('calm_s', 0.0))
        self.calm_max = float(fall_cfg.get('calm_max', 0.0))
        self.calm_for = frozenset(fall_cfg.get('calm_for', ('left', 'right')))
        self._calm_since: float | None = None
        self._fallen_since: float | None = None
        self._fell_to = 'none'  # the direction the fall was first reported in
        self.skills: dict[str, object] = {}
        if robot.server == 'mujoco':
            self.skills.update(load_keyframe_dir(robot))
            self.skills.update(_keyframe_overrides(robot, skill_params))
        else:
            from robocup3d_motion.skills.engine import load_nao_registry  # noqa: PLC0415

            try:
                self._skl = load_nao_registry(robot.robot_type, skill_params)
            except (OSError, ValueError) as exc:  # a missing/bad parameter file, an unknown $name
                raise ConfigError(f'Nao skills: {exc}') from None
            self.skills.update({name: None for name in self._skl})
            if not self._skl.param('getup_side', 1.0):  # a type that plays the back get-up after a side fall
                self.skills.pop('GETUP_SIDE', None)
        #: get-ups that start once the body has landed (``$<skill>_land_*``), by fall direction
        self.landing = self._landing_rules()
        self._land: LandingWatch | None = None  # the running fall's, if its get-up waits for the landing
        self.imu_timeout = imu_timeout
        self.getup_pause = getup_pause
        self.targets: dict[str, float] = {}  # external stand targets (joint_targets)
        self.skill = STAND
        self.player: object | None = None
        #: a Nao skill's own P gain (1/s, its ``$<skill>_kp`` parameter; 0: the robot's gains)
        self._skill_kp = 0.0
        self._reset = False
        self.is_getup = False
        self.state = FallState(False, 'none', 0.0, 0.0, 0.0, (0.0, 0.0, 1.0))
        self.gyro: tuple[float, float, float] | None = None
        self.last_imu_wall: float | None = None
        self.imu_ok = False
        self.last_cmd: dict[str, float] = dict(self.settings.hold_pose)
        self._level_head = {j: v for j, v in self.settings.hold_pose.items() if j in HEAD_JOINTS}  # a skill's neck
        self.error = ''
        self.getups = 0
        self._pause_until = -math.inf
        self._imu_clock = CycleClock()
        self._clock = CycleClock()
        self.now = 0.0  # server time of the last cycle
        # the walk: parameter sets from config/walk.yaml (none: the robot does not walk)
        walk_key = f'nao{robot.robot_type}' if robot.server == 'simspark' else robot.name
        self.walk_sets, self.walk_set = walk_sets(walk_cfg or {}, walk_key)
        self.walk: WalkEngine | None = None
        from robocup3d_description.body import body_for  # noqa: PLC0415

        body = body_for('nao' if robot.server == 'simspark' else robot.name, robot.robot_type)
        if self.walk_sets:
            self.walk = WalkEngine(body, self.walk_sets[self.walk_set], self.settings.hold_pose)
        gear = walk_gear(walk_cfg or {}, walk_key) if self.walk_sets else None
        #: a faster set for long straight walks to a target (None: the walk keeps its set)
        self.gear = GearShift(gear) if gear is not None and gear.fast in self.walk_sets else None
        self.head = HeadControl(body, robot)  # looks at the ball while a task runs
        self.commander = WalkCommander(cmd_timeout)
        self._caps: tuple[float, dict[str, float]] = (0.0, {})  # speed_caps: the leg_speed they were made for
        self.contacts: dict[str, bool] | None = None
        self._stand_from: tuple[dict[str, float], float] | None = None
        self.stand_ramp = 0.5  # s from the walk stance to the hold pose
        # A walk that has come to rest waits this long in its stance before easing into the
        # stand: a command in that time walks on from there. Leaving and re-entering the walk
        # stance at once (commands with gaps near cmd_timeout) rocks the robot over.
        self.walk_linger = 1.0
        self._rest_since: float | None = None
        self._stand_asked = False  # a stand request: no lingering
        self._still_until = -math.inf  # no walk before this (a kick's ``recover``: the body still sways)
        self._steady_until = -math.inf  # after a get-up: no walk before this unless the robot stands steady
        self._stand_until = -math.inf  # after a get-up: no walk before this at all
        # tasks (go to, kick, dribble) and what they read of the world model
        self.ball_skills = ball_skills or BallSkills()
        self._check_kicks()
        self.task: Task | None = None
        self._task_request: GoTo | Kick | Dribble | None = None  # the request the running task came from
        self._pose: tuple[float, float, float, float] | None = None  # x, y, yaw, server time
        self._ball: tuple[float, float, float] | None = None  # x, y, server time
        self._seen_ball: tuple[float, float, float] | None = None  # the last good estimate (x, y, t)

    # -- inputs
    def on_imu(
        self,
        t: float,
        gyro: tuple[float, float, float],
        accel: tuple[float, float, float],
        wall: float,
        forces: dict | None = None,
    ) -> None:
        dt = self._imu_clock.step(t)
        if not all_finite((*gyro, *accel)):
            self.error = 'imu: non-finite reading ignored'
            return
        self.gyro = gyro
        if isinstance(self.fall, NaoFallDetector):
            self.state = self.fall.update(gyro, accel, dt, forces)
        else:
            self.state = self.fall.update(gyro, accel, dt)
        self.last_imu_wall = wall
        still = gyro[0] * gyro[0] + gyro[1] * gyro[1] + gyro[2] * gyro[2] < self.calm_rate * self.calm_rate
        self._calm_since = (t if self._calm_since is None else self._calm_since) if still else None
        if not self.state.fallen:
            self._fallen_since, self._land = None, None
        elif self._fallen_since is None:
            self._fallen_since, self._fell_to = t, self.state.direction
            rule = self.landing.get(self._fell_to)
            self._land = LandingWatch(rule, t) if rule is not None else None
        if self._land is not None:
            self._land.update(t, gyro, accel)

    def _landing_rules(self) -> dict[str, LandingRule]:
        """The landing rules of the Nao's get-ups per fall direction (:mod:`robocup3d_motion.landing`): only a fall
        first reported to the front or back, whose get-up is the first thing played."""
        if self.robot.server != 'simspark':
            return {}
        rules = {}
        for direction in ('front', 'back'):
            name = GETUP_SKILLS[direction]
            if name in self.skills:
                rule = LandingRule.from_params(self._skl.param, self._skl.played(name).lower())
                if rule.active:
                    rules[direction] = rule
        return rules

    def _landed(self, name: str, t: float) -> bool:
        """Whether get-up ``name`` may start: it waits for the landing of the fall it follows, if it has a rule."""
        land = self._land
        return land is None or name != GETUP_SKILLS.get(self._fell_to) or land.ready(t)

    def _reanchors(self, skill: str) -> bool:
        """Whether the fall detector starts afresh when get-up ``skill`` ends (``$<skill>_reanchor`` 1).

        A get-up at a high gain turns the torso faster than the complementary filter follows: after a fast
        Nao back get-up the estimate was off by 20-35 deg with the robot standing (session 37), so the
        stand's balance pushed it over, or the detector kept it fallen and played the get-up again.
        """
        if self.robot.server != 'simspark':
            return False
        return self._skl.param(f'{self._variant(skill).lower()}_reanchor', 0.0) > 0.0

    def _variant(self, name: str) -> str:
        """The Nao skill played for ``name``: the type's variant of it (:meth:`SkillRegistry.played`), but ``name``
        itself for a get-up after a fall first reported to a side where the variant sets ``$<variant>_after_side 0``.

        Type 3's fast back get-up needs the swing of the back's impact: from lying still, after a side fall, it
        fell back (8 of 40 up), where GETUP_BACK gets it up (session 38).
        """
        played = self._skl.played(name)
        if (
            played != name
            and self.is_getup
            and self._fell_to in ('left', 'right')
            and self._skl.param(f'{played.lower()}_after_side', 1.0) <= 0.0
        ):
            return name
        return played

    def _landing_awaited(self) -> bool:
        """Whether a get-up waits for the body to land (a fall is watched and has not landed)."""
        return self._land is not None and self._land.landed_at is None

    def _lies_still(self, t: float) -> bool:
        """Whether a get-up may start: after a fall in a direction not in ``calm_for`` at once (the Nao's front and
        back get-ups are tuned for that), also after one to the side if the robot has a side get-up (it holds the
        landing itself); else once the body has come to rest, or ``calm_max`` s after the fall."""
        if self._fallen_since is None or self._fell_to not in self.calm_for:
            return True
        if self._fell_to in ('left', 'right') and GETUP_SKILLS[self._fell_to] in self.skills:
            return True
        if self._calm_since is not None and t - self._calm_since >= self.calm_s:
            return True
        return t - self._fallen_since >= self.calm_max

    def request(self, text: str) -> str:
        """Handle a request (a skill name or a JSON task); returns '' or the reason it was refused."""
        try:
            req = parse_request(text)
        except RequestError as exc:
            self.error = f'request refused: {exc}'
            return self.error
        if not isinstance(req, SkillRequest):
            return self._start_task(req)
        why = self._skill_request(req.name)
        if not why and self.task is not None and not self.task.over:
            self.task.end('cancelled', f'request {req.name!r}')
        return why

    def _check_kicks(self) -> None:
        """Every kick names skills the robot has, and every kick of chosen length fits it: YAML skills that
        blend, or a Nao skill parameter. Raises :class:`ConfigError` otherwise."""
        check_skills(self.ball_skills, set(self.skills), self.robot.name)
        nao = self.robot.server == 'simspark'
        for name, spec in self.ball_skills.kicks.items():
            strength = spec.strength
            if strength is None:
                continue
            if nao != bool(strength.param):
                need = 'a skill parameter (param)' if nao else 'gentle YAML skills (right, left)'
                where = f'kicks.yaml: kick {name!r}: a kick of chosen length on {self.robot.name}'
                raise ConfigError(f'{where} needs {need}')
            if nao:
                continue
            for foot in ('right', 'left'):
                soft, hard = self.skills.get(strength.skill(foot)), self.skills.get(spec.skill(foot))
                if soft is not None and hard is not None:
                    try:
                        check_blend(soft, hard)
                    except ValueError as exc:
                        raise ConfigError(f'kicks.yaml: kick {name!r}: {exc}') from None

    def _start_task(self, req: GoTo | Kick | Dribble) -> str:
        """A task from a typed request, replacing the running one; '' or why it was refused.

        The same request again (a strategy refreshing it, or a kick's target a little further round the ball)
        keeps the running task and its progress; the task takes the new request's ``id`` (and a kick its target).
        """
        running = self.task is not None and not self.task.over
        ball = None if self._ball is None else self._ball[:2]
        if running and self._task_request is not None and _same_task(req, self._task_request, ball):
            self.task.id, self.task.avoid, self._task_request = req.id, req.avoid, req
            if isinstance(req, Kick) and isinstance(self.task, KickTask) and self.task.phase not in AIM_HELD:
                self.task.distance = req.distance  # a pass's length follows its receiver
                self.task.target, self.task.slack = req.target, req.slack
            return ''
        if self.walk is None:
            self.error = f'{req.kind} refused: {self.robot.name} has no walk in walk.yaml'
            return self.error
        bs, t = self.ball_skills, self.now
        if isinstance(req, Kick):
            spec = bs.kicks.get(req.kick)
            if spec is None:
                self.error = f'kick refused: no kick {req.kick!r} for {self.robot.name}; known: {sorted(bs.kicks)}'
                return self.error
            gentle = (spec.strength.right, spec.strength.left) if spec.strength and not spec.strength.param else ()
            missing = [s for s in (spec.right, spec.left, *gentle) if s not in self.skills]
            if missing and spec.walk is None:
                self.error = f'kick refused: {self.robot.name} has no skill {missing[0]!r} for kick {req.kick!r}'
                return self.error
            task: Task = KickTask(req.id, t, bs.approach, spec, req.kick, req.target, req.slack, req.distance)
        elif isinstance(req, Dribble):
            task = DribbleTask(req.id, t, bs.approach, bs.dribble, req.target, req.slack)
        else:
            task = GoToTask(req.id, t, bs.approach, (req.x, req.y, req.theta))
        if self.task is not None and not self.task.over:
            self.task.end('cancelled', f'replaced by {req.kind} {req.id}')
        task.avoid = req.avoid
        self.task, self._task_request = task, req
        self._stand_asked = False
        return ''

    def on_pose(self, t: float, x: float, y: float, yaw: float) -> None:
        """The world model's pose (field frame) at server time ``t``."""
        if all_finite((t, x, y, yaw)):
            self._pose = (x, y, yaw, t)

    def on_ball(self, t: float, x: float, y: float, sigma: float) -> None:
        """The world model's ball (field frame); a vaguer estimate than ``lost_sigma`` (more, far away: see
        :func:`~robocup3d_motion.ball_skills.ball_sigma_limit`) counts as none."""
        if all_finite((t, x, y, sigma)):
            dist = math.hypot(x - self._pose[0], y - self._pose[1]) if self._pose is not None else 0.0
            self._ball = (x, y, t) if sigma <= ball_sigma_limit(self.ball_skills.approach.lost_sigma, dist) else None
            if self._ball is not None:
                self._seen_ball = self._ball

    def _view(self, t: float) -> View:
        pose = self._pose
        ball = self._ball
        return View(
            t=t,
            pose=pose[:3] if pose is not None and abs(t - pose[3]) <= ESTIMATE_AGE else None,
            ball=ball[:2] if ball is not None and abs(t - ball[2]) <= ESTIMATE_AGE else None,
            fallen=self.state.fallen or self.is_getup,
            skill=self.skill if self.player is not None and not self.is_getup else None,
            # the walk, or the ease from its stance into the stand: a kick that stops first waits for both
            walking=self.skill == WALK or self._stand_from is not None,
            speed=self.walk.odometry[0] if self.walk is not None and self.skill == WALK else 0.0,
            walk_kick=self.walk.kick_state if self.walk is not None else '',
        )

    def _run_task(self, t: float) -> None:
        """Step the task and carry out its action."""
        task = self.task
        assert task is not None
        act: Action = task.step(self._view(t))
        if act.walk_kick is not None and self.walk is not None and isinstance(task, KickTask) and task.spec.walk:
            w = task.spec.walk
            swing = KickSwing(**w.model_dump(exclude={'speed', 'window'}))
            foot, ball_x = act.walk_kick
            window = w.window or (-math.inf, math.inf)
            self.walk.kick('r' if foot == 'right' else 'l', swing, ball_x, window)
        if act.skill is not None:
            self.commander.stop()
            self._start(act.skill, overrides=act.overrides, strength=act.strength)
        elif act.walk_target is not None:
            self.commander.set_target(*act.walk_target, t, turn_round=act.turn_round)
        elif act.velocity is not None:
            self.commander.set_velocity(*act.velocity, t)
        elif act.stop:
            self.commander.stop()
            self._stand_asked = True  # into the stand at once, no lingering in the walk's stance
        if task.over and task.phase == 'failed':
            self.error = f'{task.kind} {task.id} failed: {task.reason}'

    def _skill_request(self, name: str) -> str:
        if name.lower() in (STAND, 'hold'):
            self.commander.stop()
            self._stand_asked = True
            if not self.is_getup and self.skill != WALK:
                self._start(STAND)
            return ''
        if name.startswith('walk_set'):
            wanted = name[len('walk_set') :].strip()
            if wanted not in self.walk_sets:
                self.error = f'request refused: unknown walk set {wanted!r}; known: {sorted(self.walk_sets)}'
                return self.error
            self.walk_set = wanted
            assert self.walk is not None
            self.walk.set_params(self.walk_sets[wanted])
            return ''
        name, *extra = name.split() or ['']
        if not name or name not in self.skills:
            self.error = f'request refused: unknown skill {name!r}; known: {sorted(self.skills)}'
            return self.error
        overrides: dict[str, float] = {}
        for item in extra:  # NAME key=value ...: $parameter overrides for this start only
            key, _, value = item.partition('=')
            try:
                overrides[key] = float(value)
            except ValueError:
                self.error = f'request {name} refused: bad parameter override {item!r} (want name=number)'
                return self.error
        if self.is_getup:
            self.error = f'request {name} refused: getting up'
            return self.error
        if overrides and self.robot.server != 'simspark':
            self.error = f'request {name} refused: parameter overrides need a .skl skill (rcssserver3d)'
            return self.error
        if self.robot.server == 'simspark':
            try:
                player = self._skl.player(name, self.robot, overrides=overrides)
            except ValueError as exc:
                self.error = f'request {name} refused: {exc}'
                return self.error
            if not player.is_ready():
                self.error = f'request {name} refused: needs inverse kinematics'
                return self.error
        self._start(name, overrides=overrides)
        return ''

    def set_velocity(self, vx: float, vy: float, wz: float, now: float | None = None) -> str:
        """A ``cmd_vel`` command (m/s, m/s, rad/s); returns '' or why it was refused.

        ``now``: server time it counts from (default: the last cycle's). Timeouts run in
        server time, so a server in sync mode behaves the same however loaded the machine is.

        A zero velocity while the walk is not running means "stand still": the robot stays in (or goes on
        to) the stand rather than crouching into the walk's stance to step nowhere. A stream of zeros with
        gaps longer than ``cmd_timeout`` otherwise rocked a T1 between the two stances every few seconds:
        it crept forwards about 0.1 m a time and fell on its face within 30 s (docs/walk.md).
        """
        standing_still = vx == 0.0 and vy == 0.0 and wz == 0.0 and self.skill != WALK
        apply = (lambda *_: self.commander.stop()) if standing_still else self.commander.set_velocity
        return self._walk_command('cmd_vel', (vx, vy, wz), apply, now)

    def set_walk_target(self, x: float, y: float, yaw: float, now: float | None = None) -> str:
        """Walk to a pose relative to the robot (m, m, rad); returns '' or why it was refused."""
        return self._walk_command('walk_target', (x, y, yaw), self.commander.set_target, now)

    def _walk_command(
        self, what: str, values: tuple[float, float, float], apply: Callable[..., None], now: float | None
    ) -> str:
        """Hand the walk a command (``apply(*values, now)``) in place of any task; '' or why it was refused."""
        why = self._walk_refusal(what, values)
        if not why:
            self._cancel_task(what)
            apply(*values, self.now if now is None else now)
            self._stand_asked = False
        return why

    def on_beam(self) -> None:
        """The robot was beamed: it lands at its kick-off place, upright (on RCSSServerMJ in the server's initial
        joint pose), whatever it was doing. Everything under way stops (the task ends ``cancelled``, ``beamed``; a
        skill, a get-up or the walk), it stands, and the fall detector starts afresh (upright on RCSSServerMJ, else
        from a calm reading), with no get-up for :data:`BEAM_SETTLE` s."""
        self._cancel_task('beamed')
        self._task_request = None
        self.commander.stop()
        self._start(STAND)
        self._stand_from = None
        if self.walk is not None:
            self.walk.reset()
        # RCSSServerMJ drops a beamed robot upright: the estimate starts there. (From the first calm reading, as before
        # session 44, it stayed unset while the robot walked off and then started from a reading 20-52 deg off: a
        # T1 read as fallen played its back get-up standing, 3 of 11 back get-ups in a 7 v 7 half.) rcssserver3d
        # moves a beamed Nao as it stands or lies.
        self.fall.reset(up=(0.0, 0.0, 1.0) if self.robot.server == 'mujoco' else None)
        self.state = FallState(False, 'none', 0.0, 0.0, 0.0, (0.0, 0.0, 1.0))
        self._fallen_since, self._land = None, None
        self._pause_until = self.now + BEAM_SETTLE

    def _cancel_task(self, why: str) -> None:
        if self.task is not None and not self.task.over:
            self.task.end('cancelled', why)

    def _walk_refusal(self, what: str, values: tuple[float, ...]) -> str:
        if self.walk is None:
            self.error = f'{what} ignored: no walk parameters for {self.robot.name} in walk.yaml'
        elif not all(math.isfinite(v) for v in values):
            self.error = f'{what} refused: non-finite value in {values}'
        else:
            return ''
        return self.error

    def _start(
        self,
        name: str,
        getup: bool = False,
        overrides: dict[str, float] | None = None,
        strength: tuple[str, float] | None = None,
    ) -> None:
        """Play skill ``name`` (``overrides``: a Nao skill's ``$parameters``; ``strength``: a keyframe kick blended
        from its gentle skill, 0-1 of the way to ``name``)."""
        self.skill, self.is_getup, self._reset = name, getup, True
        self._skill_kp = 0.0
        self._rest_since, self._stand_asked = None, False
        if name != WALK and self.gear is not None and self.gear.up:
            self.gear.reset()
            self._use_set(self.walk_set)
        if name in (STAND, WALK):
            self.player = None
            if name == WALK and self.walk is not None:
                self.walk.reset()
        elif self.robot.server == 'simspark':
            played = self._variant(name)  # a type's variant of it, if it plays one
            self.player = self._skl.player(played, self.robot, overrides=overrides)
            self._skill_kp = self._skl.param(f'{played.lower()}_kp', 0.0)
        elif strength is not None:
            soft, power = strength
            self.player = KeyframePlayer(blend_skills(self.skills[soft], self.skills[name], power, name), self.robot)
        else:
            self.player = KeyframePlayer(self.skills[name], self.robot)

    # -- one cycle
    def step(self, t: float, measured: dict[str, float], wall: float) -> dict[str, float]:
        """Target angles (rad) for this cycle."""
        dt = self._clock.step(t)
        self.now = t
        self.imu_ok = self.last_imu_wall is not None and wall - self.last_imu_wall <= self.imu_timeout
        if not self.imu_ok:
            # No IMU: no balance, no fall handling; keep playing a running skill, else hold still.
            if self.player is None:
                return dict(self.last_cmd)
        elif self.state.fallen and not self.is_getup and t >= self._pause_until and self._lies_still(t):
            name = getup_skill_for(fall_direction(self.state.up), self.skills)  # the side it lies on now
            if name is not None and self._landed(name, t):
                self.getups += 1
                self._start(name, getup=True)
            elif self.skill != STAND:  # no get-up, or not yet (the body lands first): no kick or walk plays on
                self._start(STAND)
        if self.task is not None and not self.task.over and self.imu_ok:
            self._run_task(t)
        kicking = self.task is not None and self.task.phase == 'kicking'
        if self.walk is not None and not kicking and self.walk.kick_state in ('asked', 'missed'):
            self.walk.cancel_kick()  # its task is over, or fell: no stale kick in a later step
        if self.player is not None:
            # a skill other than a get-up plays with the neck at the hold pose where it does not move it, not
            # pitched down at the ball where a task's look left it (a T1 long kick so played missed the ball)
            level = {} if self.is_getup else self._level_head
            if isinstance(self.player, KeyframePlayer):
                out, done = self.player.execute(self._reset, t, measured, start={**self.last_cmd, **level})
            else:
                out, done = self.player.execute(self._reset, t, measured)
            self._reset = False
            cmd = {**self.last_cmd, **level}
            cmd.update(out)
            if isinstance(self.player, KeyframePlayer) and self.player.skill.balance is not None:
                cmd = self._skill_balance(self.player, t, cmd)
            if done:
                was_getup = self.is_getup
                self._still_until = t + self._recover_after(self.skill)
                if was_getup and self._reanchors(self.skill):
                    self.fall.reset()  # the tilt estimate afresh from the accelerometer (see _reanchors)
                self._start(STAND)
                if was_getup:
                    self._pause_until = t + self.getup_pause  # let the detector see the result first
                    self._steady_until = t + STEADY_MAX
                    self._stand_until = t + STEADY_MIN
        elif self.walk is not None and self._walk_wanted(t):
            if self.skill != WALK:
                self._start(WALK)
            ovx, ovy, owz = self.walk.odometry
            if self.imu_ok and self.gyro is not None:
                owz = self.gyro[2]  # the turn as the gyro measures it: the commanded one slips
            if self.gear is not None:
                self._shift_gear()
            vx, vy, wz = self.commander.velocity(t, self.walk.params, (ovx, ovy, owz), dt)
            if self.gear is not None:
                vx, wz = self.gear.cap(vx, wz)
            self.walk.set_command(vx, vy, wz)
            pitch = self.state.pitch if self.imu_ok else 0.0
            gyro = self.gyro if self.imu_ok else None
            cmd = self.walk.step(dt, gyro, pitch, self.contacts, start_pose=self.last_cmd)
            if self.walk.moving or self.commander.active(t):
                self._rest_since = None
            elif self._rest_since is None:
                self._rest_since = t
            elif self._stand_asked or t - self._rest_since >= self.walk_linger:
                self._start(STAND)
                self._stand_from = (dict(cmd), t)
        else:
            base = dict(self.settings.hold_pose)
            if not self._landing_awaited():  # the body lands in the hold pose, not in a pose someone asked for
                base.update(self.targets)
            cmd = base
            if self.imu_ok and not self.state.fallen:
                cmd = self.balance.apply(base, self.state.pitch, self.state.roll, self.gyro)
            if self._stand_from is not None:  # ease from the walk stance into the hold pose
                start, t0 = self._stand_from
                b = (t - t0) / self.stand_ramp
                if b >= 1.0 or b < 0.0:
                    self._stand_from = None
                else:
                    cmd = {n: start.get(n, v) + (v - start.get(n, v)) * b for n, v in cmd.items()}
        if self.task is not None and not self.task.over and self.skill in (STAND, WALK):
            look = self._look(t)
            if look:
                cmd = {**cmd, **look}
        self.last_cmd = cmd
        return cmd

    def _shift_gear(self) -> None:
        """The walk's set for this cycle: the gear's fast one on a long straight walk to a target, else its own."""
        assert self.gear is not None and self.walk is not None
        target = self.commander.target
        fast = self.gear.update(None if target is None else (target[0], target[1]), self.walk.odometry[0])
        self._use_set(self.gear.gear.fast if fast else self.walk_set)

    def _use_set(self, name: str) -> None:
        if self.walk is not None and self.walk.params is not self.walk_sets[name]:
            self.walk.set_params(self.walk_sets[name])

    def _skill_balance(self, player: KeyframePlayer, t: float, cmd: dict[str, float]) -> dict[str, float]:
        """``cmd`` with the running skill's IMU feedback (:class:`~robocup3d_motion.getup.SkillBalance`) added."""
        balance = player.skill.balance
        if balance is None or not self.imu_ok or self.state.fallen or self.gyro is None:
            return cmd
        gx, gy = self.gyro[0], self.gyro[1]
        offsets = balance.offsets(player.elapsed(t), self.state.pitch, self.state.roll, gy, -gx)
        out = dict(cmd)
        for j, d in offsets.items():
            if j in out:
                v = out[j] + d
                spec = self.robot.by_name.get(j)
                out[j] = min(max(v, spec.lower), spec.upper) if spec is not None else v
        return out

    def _recover_after(self, skill: str) -> float:
        """Seconds to stand after ``skill`` before walking: its kick's ``recover``, else 0."""
        for spec in self.ball_skills.kicks.values():
            if skill in (spec.right, spec.left):
                return spec.recover
        return 0.0

    def _look(self, t: float) -> dict[str, float]:
        """Neck targets towards the last good ball estimate (up to ``LOOK_AGE`` s old), else a sweep to find it.

        A vaguer estimate is where the ball was, not where it is: the head stops staring at it.
        """
        pose, ball = self._pose, self._seen_ball
        if pose is None or ball is None or t - ball[2] > LOOK_AGE:
            return self.head.scan(t)
        return self.head.look_at(*to_robot(pose[:3], ball[0], ball[1]))

    def _walk_wanted(self, t: float) -> bool:
        """Walk while commanded, or until a running walk has rested ``walk_linger`` s; never while fallen."""
        if (self.state.fallen and self.imu_ok) or t < self._still_until or t < self._stand_until:
            return False
        if t < self._steady_until:
            if not self._steady():
                return False
            self._steady_until = -math.inf
        return self.commander.active(t) or (self.skill == WALK and self.walk is not None)

    def _steady(self) -> bool:
        """Whether the robot stands steady: upright within :data:`STEADY_TILT`, turning slower than
        :data:`STEADY_RATE` (without an IMU it cannot tell: steady)."""
        if not self.imu_ok or self.gyro is None:
            return True
        gx, gy, gz = self.gyro
        return self.state.tilt < STEADY_TILT and gx * gx + gy * gy + gz * gz < STEADY_RATE * STEADY_RATE

    def gains(self) -> tuple[dict[str, float], dict[str, float]]:
        """The PD gains in force: the robot's, with the running skill's overrides."""
        kp, kd = dict(self.settings.kp), dict(self.settings.kd)
        if isinstance(self.player, KeyframePlayer):
            kp.update(self.player.kp)
            kd.update(self.player.skill.kd)
        elif self._skill_kp > 0.0 and self.player is not None:  # every joint, e.g. a get-up at full joint speed
            kp = dict.fromkeys(kp, self._skill_kp)
        elif self.skill == WALK and self.walk is not None:
            p = self.walk.gait
            # stiffen along with the blend into the walk stance (gain_ramp 1; a jump jolts the T1)
            b = 1.0 if p.gain_ramp <= 0.0 else min(1.0, self.walk.blend / p.gain_ramp)
            for name in self.walk.leg_joints:  # stiff enough not to sag under the body (raised, never lowered)
                up_p, up_d = p.kp_legs - kp[name], p.kd_legs - kd[name]
                # max(0.0, up) written out (NaN gives 0.0, as there): 24 builtin calls a cycle cost more than the rest
                kp[name] += b * (up_p if up_p > 0.0 else 0.0)
                kd[name] += b * (up_d if up_d > 0.0 else 0.0)
        return kp, kd

    def speed_caps(self) -> dict[str, float] | None:
        """rcssserver3d velocity limits (rad/s) in force below the joints' own: the walk set's ``leg_speed``."""
        if self.skill != WALK or self.walk is None or self.walk.params.leg_speed <= 0.0:
            return None
        cap = self.walk.params.leg_speed
        if self._caps[0] != cap:
            self._caps = (cap, dict.fromkeys(self.walk.leg_joints, cap))
        return self._caps[1]

    def state_dict(self) -> dict:
        s = self.state
        return {
            'skill': self.skill,
            'getup': self.is_getup,
            'fallen': s.fallen,
            'direction': s.direction,
            'tilt_deg': round(math.degrees(s.tilt), 1),
            'imu_ok': self.imu_ok,
            'getups': self.getups,
            'landing': self._landing_state(),
            'error': self.error,
            'walk': self._walk_state(),
            'task': self.task.state() if self.task is not None else None,
        }

    def _landing_state(self) -> str:
        """How and when (s after the fall report) the running fall's landing was seen; '' if it is not watched."""
        land = self._land
        if land is None or land.landed_at is None:
            return 'waiting' if self._landing_awaited() else ''
        return f'{land.how} {land.landed_at - land.t0:.2f}'

    def _walk_state(self) -> dict:
        if self.walk is None:
            return {}
        w = self.walk
        return {
            'set': self.walk_set,
            'geared': self.gear is not None and self.gear.up,  # walking with the gear's fast set
            'shifting': self.gear is not None and self.gear.slowing,  # slowing in it to shift down
            'moving': w.moving,
            'command': [round(v, 3) for v in w.command],
            'speed': [round(v, 3) for v in w.speed],
            'steps': w.steps,
            'kick': w.kick_state,
            'kicks': w.kicks,
            'kick_x': round(w.kick_x, 3) if math.isfinite(w.kick_x) else None,
            'target': self.commander.target_state(),
        }
