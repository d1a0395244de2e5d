"""Omnidirectional walk: a linear-inverted-pendulum gait on the analytic leg IK.

The engine turns a velocity command (vx, vy m/s; wz rad/s; robot frame, REP-103)
into leg joint targets, one call per 20 ms cycle. Pure Python, no ROS.

Gait model. One *step* lasts ``period`` seconds; the support leg alternates. In a
frame on the ground under the torso (x forward, the torso's heading):

* the body moves (vx, vy, wz) * period per step: the support foot slides back by that
  much, the swing foot travels from where it was to half a step ahead, lifted by
  ``step_height`` (a sin^2 profile) and placed with a smooth (cosine) profile;
* the torso sways over the support foot along the periodic solution of the linear
  inverted pendulum (height ``com_height``, Tc = sqrt(h/g)) with the ZMP on the
  support foot: y(t) = A (1 - cosh((t - T/2)/Tc) / cosh(T/2Tc)); ``sway`` sets A;
* forward, the body passes over the support foot on the same pendulum
  (x(t) ~ sinh((t - T/2)/Tc)), blended with a constant speed by ``lipm_x``.

Turning, a foot keeps its yaw while it is on the ground (``yaw_margin``): the swing foot turns with the
support foot near either end of its swing and makes its own turn in the air, so that two planted soles never
twist against each other (RCSSServerMJ's T1 feet creep under any yaw torque); ``spin_speed`` makes that a gait
of turns in place, with their own limit ``spin_wz``.

Commands are limited per step in size and change (``max_*``, ``accel_*``), so starts,
stops and direction changes are smooth; a stop finishes the step with the feet side by
side. Feedback: the torso's pitch and roll rates (gyro) and tilt shift the ankles and
hips; with foot-contact sensors (SimSpark FRP) a step ends early when the swing foot
lands. Parameters per robot and named sets (``positioning``, ``sprint``) live in
``config/walk.yaml``. Speed scheduling: a set may carry a ``fast`` part, gait values that
each step blends towards as its forward speed rises (``boost_from``..``boost_to``) while it
goes straight, so a gait tuned for speed never has to turn or sidestep; the fast part's
``max_vx`` is the top speed straight ahead (the set's own applies as it turns or sidesteps).

In-walk kick (:meth:`WalkEngine.kick`): the next step of the chosen foot swings it through the
ball: drawn back, thrust ``reach`` m beyond the step's own placement at ``at`` of the swing, and
back onto the step's landing spot, the gait around it unchanged (:class:`KickSwing`). The walk's
own balance carries the robot through it: no stop, no stand, nothing to fall from but the step.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

import numpy as np

from robocup3d_bridge.config_files import ConfigError
from robocup3d_description.body import Body
from robocup3d_description.kinematics import UnreachableError, legs_ik

__all__ = [
    'ANGLE_PARAMS',
    'KickSwing',
    'WalkEngine',
    'WalkParams',
    'in_place',
    'step_within_combo',
    'stop_speed',
    'top_vx',
    'top_wz',
    'walk_params',
    'walk_sets',
]

G = 9.81
START_RATE = 0.3  # rad/s: a walk starts from rest only when the torso's roll and pitch rates are below this

Vec3 = tuple[float, float, float]
Mat3 = tuple[Vec3, Vec3, Vec3]


def _vec3(v: object) -> Vec3:
    """Three plain floats of a sequence or array."""
    x, y, z = (float(c) for c in v)
    return (x, y, z)


def _mat_vec(m: Mat3, v: Vec3) -> Vec3:
    """``m @ v`` on plain floats (a step's foot poses are a few 3-vectors: numpy's per-call cost was most of it)."""
    x, y, z = v
    r0, r1, r2 = m
    return (r0[0] * x + r0[1] * y + r0[2] * z, r1[0] * x + r1[1] * y + r1[2] * z, r2[0] * x + r2[1] * y + r2[2] * z)


def _mat_mul(a: Mat3, b: Mat3) -> Mat3:
    """``a @ b`` on plain floats."""
    cols = tuple(zip(*b, strict=True))
    return (_mat_vec(cols, a[0]), _mat_vec(cols, a[1]), _mat_vec(cols, a[2]))  # row i of a @ b: b.T @ a[i]


def _pose_rows(rot: Mat3, pos: Vec3, sole: Vec3) -> tuple[tuple[float, ...], ...]:
    """The 4x4 foot-link pose (rows, as ``legs_ik`` takes it) whose sole centre, ``sole`` in the link's frame,
    lies at ``pos`` with the link turned by ``rot``."""
    off = _mat_vec(rot, sole)
    return (
        (*rot[0], pos[0] - off[0]),
        (*rot[1], pos[1] - off[1]),
        (*rot[2], pos[2] - off[2]),
        (0.0, 0.0, 0.0, 1.0),
    )


@dataclass(frozen=True, slots=True)
class WalkParams:
    """One walk parameter set. Lengths in m, times in s, angles in rad (degrees in YAML)."""

    period: float = 0.3  # one step
    com_height: float = 0.5  # pendulum height for the sway and forward profiles
    sole_z: float = -0.58  # sole height below the torso frame origin
    sole_x: float = 0.0  # sole centre forward of the torso origin (moves the CoM over the feet)
    foot_y: float = 0.1  # sole centre to the side of the torso's midline
    step_height: float = 0.04
    sway: float = 0.03  # lateral sway amplitude (peak, mid step)
    lipm_x: float = 1.0  # 1: pendulum profile forward; 0: constant speed
    double_support: float = 0.1  # fraction of the step with both feet down
    torso_pitch: float = 0.05  # forward lean of the torso (rad)
    max_vx: float = 0.6  # m/s forward
    min_vx: float = -0.3  # m/s backward
    max_vy: float = 0.25
    max_wz: float = 1.0  # rad/s
    accel_x: float = 0.15  # max change of vx per step (m/s)
    launch_x: float = 0.0  # max gain of forward speed per step in a launch: from rest, straight ahead (0: accel_x)
    accel_y: float = 0.1
    accel_w: float = 0.5
    arm_swing: float = 2.0  # shoulder pitch rad per m of the opposite foot's x (sign from the joint axis)
    gyro_pitch: float = 0.05  # ankle pitch rad per rad/s of pitch rate (about +y; sign from the joint axis)
    gyro_roll: float = 0.05  # hip roll rad per rad/s of roll rate (about +x; sign from the joint axis)
    tilt_pitch: float = 0.0  # sole x shift m per rad of torso pitch error
    swing_x_lead: float = 0.0  # extra placement of the swing foot (m per m/s of vx)
    # Toe push-off (a robot with toe joints, Nao type 4): late in the support the foot rolls over its toe
    # joint, heel up, to ``toe_push`` rad by the step's end (from ``toe_from`` of the step on), the toe flat
    # on the ground; the swing foot comes back flat over the first half of its swing.
    toe_push: float = 0.0
    toe_from: float = 0.5
    # s to blend into the walk stance before the first step (too fast a crouch tips it over). Each cycle
    # blends from the one before, so the blend compounds: the pose is about 80 % of the way there after
    # 0.35 ramp. Every set was tuned so; a fixed start pose eased over the whole ramp made the K1 fall more:
    # with its stand's IMU trim off, 5 of 12 starts (0 of 12 as it is); with it on, 11 of 12 (7 of 15).
    ramp: float = 0.6
    # Part of the ramp after which a launch (from rest, straight ahead) takes its first step, still
    # crouching (other starts wait for the whole ramp; see config/walk.yaml for what it gained).
    launch_blend: float = 1.0
    turn_scale: float = 1.0  # foot yaw per commanded turn (the soles twist and slip: > 1 makes up for it)
    # Part of the swing at each end (0..0.45) in which the swing foot's yaw stays put on the ground (it turns
    # with the support foot, relative to the body); its own turn comes in the swing's middle, in the air.
    # -1: the yaw of before (the swing foot's yaw from start to target over the whole swing, twisting the
    # soles against each other while both are down).
    yaw_margin: float = -1.0
    # Turns in place: a step (or command) is one as far as its translation speed is below ``spin_speed`` (m/s;
    # fully at 0, not at all from spin_speed on). Its swing foot's yaw follows ``yaw_margin`` as far as it is
    # one, else the yaw of before (0: yaw_margin for every step); its turn limit goes from ``max_wz`` to
    # ``spin_wz`` (rad/s; 0: max_wz).
    spin_speed: float = 0.0
    spin_wz: float = 0.0
    sole_x_back: float = 0.0  # m the feet move forward per m/s of backward speed (CoM behind them)
    sole_x_fwd: float = 0.0  # m the feet move back per m/s of forward speed (CoM ahead of them)
    heading_gain: float = 0.0  # rad/s of turn per rad of heading drift (gyro) while not told to turn
    odom_scale: float = 1.0  # how far the robot really gets per commanded metre/radian (measured; for odometry)
    odom_scale_back: float = 0.0  # the same for backward steps (0: as odom_scale)
    kp_legs: float = 0.0  # least leg gain while walking (RCSSServerMJ PD, N m/rad; rcssserver3d P, 1/s; 0: robot's)
    kd_legs: float = 0.0
    # rcssserver3d: cap (rad/s) on the leg joints' velocity commands while walking, below each joint's own
    # (0: none). A set's value: a gait tuned on joints of 6.14 rad/s walks so on a quicker ankle (type 2).
    leg_speed: float = 0.0
    combo_limit: float = 0.0  # > 0: scale a command down to this norm of (vx, vy, wz), each over its limit
    combo_power: float = 2.0  # the norm's exponent: 2 an ellipsoid; lower cuts blends harder (1: a diamond)
    # 1: each step's own speed (after the per-step ramps, with the heading hold's turn) keeps within combo_limit
    # too, the motions that grow in this step giving way (the command alone is limited otherwise: a turn ramping
    # up while the forward speed ramps down, or the heading hold at full speed, went past it); 0: off.
    combo_step: float = 0.0
    gain_ramp: float = 0.0  # 1: the leg gains rise to kp_legs/kd_legs along the blend into the stance; 0: at once
    # Speed scheduling: a second set of gait values (``fast``, over this one) for fast straight walking.
    # Each step blends towards it by its forward speed, from 0 at ``boost_from`` to 1 at ``boost_to``,
    # less while turning (none at ``boost_turn`` rad/s) or sidestepping (none at ``boost_side`` m/s).
    boost_from: float = 0.0
    boost_to: float = 0.0
    boost_turn: float = 0.3
    boost_side: float = 0.05
    # How much of the turn that only holds the heading (heading_gain) counts as a turn for the blend
    # (1: all of it; 0: none, so short steps do not waver between the gaits; see config/walk.yaml).
    boost_hold: float = 1.0
    # A fast part's brake (m/s², 0: none): while a step is under way in the fast gait (blended towards it at
    # all), the forward speed falls no faster than this per second. A fast part's accel_x, searched on
    # launches from standstill, applies per step of its much shorter steps: from the Nao sprints a stop at it
    # fell every time (see config/walk.yaml). Read from the fast part only (not blended).
    brake: float = 0.0
    fast: WalkParams | None = None


ANGLE_PARAMS = {'torso_pitch', 'max_wz', 'accel_w', 'spin_wz'}


@dataclass(frozen=True, slots=True)
class KickSwing:
    """The swing of an in-walk kick, over the step's own: the step lasts ``slow`` times the gait's period, the
    body swaying ``sway`` m further over the support foot; the foot is drawn ``back`` m by half way to ``at`` (the
    part of the swing at which it is furthest forward), thrust to ``reach`` m ahead of its path there, and
    lands ``land`` m ahead of the step's own placement, ``lift`` m higher over the swing."""

    reach: float = 0.12
    back: float = 0.04
    at: float = 0.7
    lift: float = 0.0
    slow: float = 1.0
    land: float = 0.0
    sway: float = 0.0

    def offset(self, u: float) -> tuple[float, float]:
        """The foot's extra (forward, up) at ``u`` (0..1) of the swing, over the path to its landing."""
        if u <= 0.0 or u >= 1.0:
            return 0.0, 0.0
        at = min(max(self.at, 0.1), 0.95)
        half = 0.5 * at
        if u < half:
            x = -self.back * _smooth(u / half)
        elif u < at:
            x = -self.back + (self.reach + self.back) * _smooth((u - half) / (at - half))
        else:
            x = self.reach * (1.0 - _smooth((u - at) / (1.0 - at)))
        return x, self.lift * math.sin(math.pi * u) ** 2


def walk_params(section: Mapping | None, base: WalkParams | None = None, fast_part: bool = False) -> WalkParams:
    """A parameter set from a YAML mapping (angles in degrees) over ``base`` (``fast_part``: a set's ``fast``)."""
    base = base or WalkParams()
    if not section:
        return base
    if not isinstance(section, Mapping):
        raise ConfigError('a walk parameter set must be a mapping of name: value')
    if 'brake' in section and not fast_part:
        raise ConfigError('brake is a fast part value: give it in "fast"')
    known = {f.name for f in fields(WalkParams)}
    unknown = sorted(set(section) - known)
    if unknown:
        raise ConfigError(f'unknown walk parameters {unknown}; known: {sorted(known)}')
    values = {}
    for key, value in section.items():
        if key == 'fast':
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ConfigError(f'walk parameter {key} must be a finite number, got {value!r}')
        values[key] = math.radians(value) if key in ANGLE_PARAMS else float(value)
    params = replace(base, **values)
    if params.period <= 0.04 or params.com_height <= 0.0 or not 0.0 <= params.double_support < 0.8:
        raise ConfigError('walk: period > 0.04 s, com_height > 0 and 0 <= double_support < 0.8 are required')
    if params.combo_power <= 0.0:
        raise ConfigError('walk: combo_power must be > 0')
    if params.brake < 0.0:
        raise ConfigError('walk: brake must be >= 0 (m/s², 0: none)')
    fast = section.get('fast')
    if fast is not None:
        if isinstance(fast, Mapping) and 'leg_speed' in fast:
            raise ConfigError('leg_speed is a set value: give it beside "fast", not in it')
        if params.boost_to <= params.boost_from:
            raise ConfigError('walk: a set with a "fast" part needs boost_to > boost_from (m/s)')
        try:
            params = replace(params, fast=walk_params(fast, replace(params, fast=None), fast_part=True))
        except ConfigError as exc:
            raise ConfigError(f'fast: {exc}') from None
    return params


def blend_params(a: WalkParams, b: WalkParams, w: float) -> WalkParams:
    """The set ``(1 - w) a + w b``, value by value (``a``'s ``fast`` kept)."""
    if w <= 0.0:
        return a
    w = min(w, 1.0)
    names = (f.name for f in fields(WalkParams) if f.name != 'fast')
    values = {n: (1.0 - w) * getattr(a, n) + w * getattr(b, n) for n in names}
    return replace(a, **values)


def boost_weight(p: WalkParams, speed: tuple[float, float, float]) -> float:
    """How far a step at ``speed`` (vx, vy, wz) goes towards ``p.fast`` (0..1)."""
    if p.fast is None or p.boost_to <= p.boost_from:
        return 0.0
    vx, vy, wz = speed
    w = _limit((vx - p.boost_from) / (p.boost_to - p.boost_from), 0.0, 1.0)
    return w * _straight(p, vy, wz) if w > 0.0 else 0.0


def top_vx(p: WalkParams, vy: float = 0.0, wz: float = 0.0) -> float:
    """The forward speed limit at a sideways ``vy`` and turn ``wz``: the fast part's ``max_vx``
    straight ahead, falling to the set's own as the motion turns or sidesteps (as the boost does)."""
    if p.fast is None or p.fast.max_vx == p.max_vx:
        return p.max_vx
    return p.max_vx + _straight(p, vy, wz) * (p.fast.max_vx - p.max_vx)


def in_place(p: WalkParams, vx: float, vy: float) -> float:
    """How far a motion at (``vx``, ``vy``) m/s is a turn in place (0..1; 0 without ``spin_speed``)."""
    if p.spin_speed <= 0.0:
        return 0.0
    return _limit(1.0 - math.hypot(vx, vy) / p.spin_speed, 0.0, 1.0)


def top_wz(p: WalkParams, vx: float, vy: float) -> float:
    """The turn limit (rad/s) at a translation (``vx``, ``vy``): ``spin_wz`` in place, ``max_wz`` on the move."""
    if p.spin_wz <= 0.0:
        return p.max_wz
    return p.max_wz + in_place(p, vx, vy) * (p.spin_wz - p.max_wz)


def stop_speed(p: WalkParams, dist: float) -> float:
    """The highest forward speed (m/s) from which the walk stops within ``dist`` m: at the set's ``accel_x``
    per step, and above ``boost_from`` (in the fast gait) at its fast part's ``brake`` when that is gentler."""
    dist = max(0.0, dist)
    slow = p.accel_x / max(p.period, 1e-3)  # m/s²
    brake = p.fast.brake if p.fast is not None and p.fast.brake > 0.0 else slow
    if brake >= slow:
        return math.sqrt(2.0 * slow * dist)
    v0 = max(0.0, p.boost_from)  # below it the steps are the set's own
    d0 = v0 * v0 / (2.0 * slow)
    if dist <= d0:
        return math.sqrt(2.0 * slow * dist)
    return math.sqrt(v0 * v0 + 2.0 * brake * (dist - d0))


def combo_norm(p: WalkParams, speed: tuple[float, float, float]) -> float:
    """The norm (``combo_power``) of ``speed`` (vx, vy, wz), each over its limit at that motion."""
    vx, vy, wz = speed
    wz_max = top_wz(p, vx, vy)
    vx_max = top_vx(p, vy, wz) if vx >= 0.0 else -p.min_vx
    e = p.combo_power
    parts = ((vx, vx_max), (vy, p.max_vy), (wz, wz_max))
    return sum(abs(v / m) ** e for v, m in parts if m > 0.0) ** (1.0 / e)


def step_within_combo(
    p: WalkParams, before: tuple[float, float, float], after: tuple[float, float, float]
) -> tuple[float, float, float]:
    """A step's speed ``after`` (from the step's ``before``) within ``combo_limit``: the motions growing in size give
    up as much of their growth as needed (none shrinks faster than its ramp); unchanged if it is within already,
    or if even without growth it is not (then the shrinking motions bring it back, step by step)."""
    if combo_norm(p, after) <= p.combo_limit + 1e-9:
        return after
    grow = [abs(a) > abs(b) for a, b in zip(after, before, strict=True)]
    if not any(grow):
        return after

    def at(f: float) -> tuple[float, float, float]:
        out = tuple(b + f * (a - b) if g else a for a, b, g in zip(after, before, grow, strict=True))
        return out[0], out[1], out[2]

    if combo_norm(p, at(0.0)) > p.combo_limit:
        return at(0.0)
    lo, hi = 0.0, 1.0
    for _ in range(12):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if combo_norm(p, at(mid)) <= p.combo_limit else (lo, mid)
    return at(lo)


def _straight(p: WalkParams, vy: float, wz: float) -> float:
    """1 going straight, falling to 0 at ``boost_turn`` rad/s of turn or ``boost_side`` m/s sideways."""
    turn = _limit(1.0 - abs(wz) / max(p.boost_turn, 1e-6), 0.0, 1.0)
    return turn * _limit(1.0 - abs(vy) / max(p.boost_side, 1e-6), 0.0, 1.0)


def _smooth(s: float) -> float:
    s = s if s > 0.0 else 0.0  # min(1.0, max(0.0, s)) written out (NaN gives 0.0 as there): a third of its cost
    return 0.5 - 0.5 * math.cos(math.pi * (s if s < 1.0 else 1.0))


def _limit(value: float, lo: float, hi: float) -> float:
    return lo if value < lo else hi if value > hi else value


@dataclass(slots=True)
class _Foot:
    x: float = 0.0  # offsets from the neutral stance, ground frame under the torso
    y: float = 0.0
    yaw: float = 0.0
    z: float = 0.0  # lift
    pitch: float = 0.0  # heel up about the toe joint (rad; toe push-off)


class WalkEngine:
    """Velocity command in, leg and arm joint targets out; one :meth:`step` per cycle."""

    def __init__(self, body: Body, params: WalkParams, hold_pose: Mapping[str, float] | None = None) -> None:
        self.body = body
        self.hold = dict(hold_pose or {})
        self.sole = {s: _vec3(body.leg(s).sole) for s in 'lr'}  # plain floats: _targets' math is on floats
        #: the leg joints, whose gains the walk may raise (kp_legs, kd_legs)
        self.leg_joints = tuple(j for s in 'lr' for j in body.leg(s).joints)
        # Feedback and arm swing are written for joints turning about +y (pitch) and +x (roll),
        # as on the T1/K1; the Nao's pitch axes point along -y: take each joint's sign from its axis.
        axes = {lk.joint: lk.axis for lk in body.links if lk.joint}
        self._sign = {
            name: (1.0 if axes[name][k] >= 0.0 else -1.0)
            for name, k in (
                *((f'{s}lj5', 1) for s in 'lr'),
                *((f'{s}lj2', 0) for s in 'lr'),
                *((f'{s}aj1', 1) for s in 'lr'),
            )
            if name in axes
        }
        # Toe joints (Nao type 4): per side the joint, its sign (a positive angle lifts the toe against the
        # foot) and the pivot (the joint's anchor, on the sole plane) from the sole centre, in the foot frame.
        self._toes: dict[str, tuple[str, float, Vec3]] = {}
        for lk in body.links:
            if lk.joint[1:] == 'lj7' and lk.parent == body.leg(lk.joint[0]).foot:
                side = lk.joint[0]
                pivot = _vec3(np.asarray(lk.origin, dtype=float) - np.asarray(self.sole[side]))
                self._toes[side] = (lk.joint, -1.0 if lk.axis[1] > 0.0 else 1.0, pivot)
        self.set_params(params)
        self.command = (0.0, 0.0, 0.0)
        self._kick_asked: tuple[str, KickSwing] | None = None  # an in-walk kick waiting for its foot's step
        self._kick_ball: tuple[float, tuple[float, float]] | None = None  # the ball's x + travel then, window
        self._kick_missed = False
        self.kicks = 0  # in-walk kick steps begun
        self.travel = 0.0  # m walked forward (odometry), for the kick's ball
        self.kick_x = math.nan  # the ball's x (odometry) as the last kick step began
        self.reset()

    def set_params(self, params: WalkParams) -> None:
        """Switch parameter sets (the limits at the next step, the gait values at once)."""
        self.params = params
        self._blended: tuple[float, WalkParams] | None = None  # the last blend towards ``params.fast``
        self._use_gait(params)

    def _gait_for(self, w: float) -> WalkParams:
        """The set blended ``w`` of the way towards its fast part; made again only when ``w`` changes."""
        if w <= 0.0:
            return self.params
        if self._blended is None or self._blended[0] != w:
            self._blended = (w, blend_params(self.params, self.params.fast, w))
        return self._blended[1]

    def _use_gait(self, gait: WalkParams) -> None:
        """Take the gait values of the step under way: ``params``, or blended towards ``params.fast``."""
        self.gait = gait
        tc = math.sqrt(gait.com_height / G)
        self._tc = tc
        self._set_period(gait.period)

    def _set_period(self, period: float) -> None:
        """The step under way lasts ``period`` s (the gait's, or a kick step's own)."""
        self._period = period
        self._half = period / (2.0 * self._tc)

    def reset(self) -> None:
        """Stand still in the walk stance, both feet down; the next step starts afresh."""
        self.feet = {'l': _Foot(), 'r': _Foot()}
        self.speed = (0.0, 0.0, 0.0)  # per-second velocity of the current step
        self.support = 'r'  # the side carrying the robot in this step
        self.walking = False
        self.t_in_step = 0.0
        self._start = {s: (0.0, 0.0, 0.0) for s in 'lr'}
        self._target = {s: (0.0, 0.0, 0.0) for s in 'lr'}
        self.blend = 0.0
        self.steps = 0
        self.last: dict[str, float] = {}
        self.heading_error = 0.0  # rad turned (gyro) since the command last asked for a turn
        self._launch = False  # speeding up from rest, straight ahead (launch_x)
        self._lift_pitch = 0.0  # the swing foot's heel-up (toe push-off) as it lifted
        self.feet_pitch: dict[str, float] = {}  # each foot's heel-up in the last targets
        self._kick: KickSwing | None = None  # the swing of the step under way, when it kicks
        self._set_period(self.gait.period)

    # -- in-walk kick
    def kick(
        self,
        side: str,
        swing: KickSwing,
        ball_x: float | None = None,
        window: tuple[float, float] = (-math.inf, math.inf),
    ) -> None:
        """Kick with foot ``side`` (``l``/``r``) in its next step (from rest: the first step).

        ``ball_x``: the ball ahead of the robot now (m); the kick waits for a step of that foot that begins with
        the ball, brought nearer by the walk's own odometry, within ``window`` (m), and is missed (given up,
        :attr:`kick_state` ``missed``) if the ball comes nearer than that first.
        """
        if side not in ('l', 'r'):
            raise ValueError(f'kick: side must be "l" or "r", not {side!r}')
        self._kick_asked = (side, swing)
        self._kick_ball = None if ball_x is None else (ball_x + self.travel, window)
        self._kick_missed = False

    def cancel_kick(self) -> None:
        """Forget a kick not begun yet (the step under way, if it kicks, swings on)."""
        self._kick_asked, self._kick_missed = None, False

    @property
    def kick_state(self) -> str:
        """``asked`` (waiting for the foot's step), ``swinging`` (that step under way), ``missed`` (the ball came
        too near before the foot's step) or ``''``."""
        if self._kick_asked is not None:
            return 'asked'
        if self._kick_missed:
            return 'missed'
        return 'swinging' if self._kick is not None and self.walking else ''

    def _kick_now(self, swing: str) -> bool:
        """Whether the step of ``swing`` now beginning is the kick asked for (or the kick is missed)."""
        asked = self._kick_asked
        if asked is None or asked[0] != swing:
            return False
        self.kick_x = math.nan
        if self._kick_ball is not None:
            x0, (lo, hi) = self._kick_ball
            x = self.kick_x = x0 - self.travel
            if x > hi:
                return False  # the ball still too far: the foot's next step
            if x < lo:
                self._kick_asked, self._kick_missed = None, True
                return False
        return True

    # -- command
    def set_command(self, vx: float, vy: float, wz: float) -> None:
        """Desired velocity (m/s, m/s, rad/s), clipped to the parameter set's limits."""
        p = self.params
        vals = [v if math.isfinite(v) else 0.0 for v in (vx, vy, wz)]
        vy = _limit(vals[1], -p.max_vy, p.max_vy)
        wz_max = top_wz(p, _limit(vals[0], p.min_vx, p.max_vx), vy)
        wz = _limit(vals[2], -wz_max, wz_max)
        top = top_vx(p, vy, wz)
        vx = _limit(vals[0], p.min_vx, top)
        if p.combo_limit > 0.0:  # a blend of motions, each near its limit, within an ellipsoid (or diamond)
            vx_max = top if vx >= 0.0 else -p.min_vx
            e = p.combo_power
            parts = ((vx, vx_max), (vy, p.max_vy), (wz, wz_max))
            norm = sum(abs(v / m) ** e for v, m in parts if m > 0.0) ** (1.0 / e)
            if norm > p.combo_limit:
                k = p.combo_limit / norm
                vx, vy, wz = vx * k, vy * k, wz * k
        self.command = (vx, vy, wz)

    @property
    def odometry(self) -> tuple[float, float, float]:
        """Velocity (m/s, m/s, rad/s) the robot is estimated to move at: the step speed times ``odom_scale``
        (``odom_scale_back`` for backward steps, when set)."""
        if not self.walking:
            return (0.0, 0.0, 0.0)
        p = self.params
        k = p.odom_scale
        kx = p.odom_scale_back if self.speed[0] < 0.0 and p.odom_scale_back > 0.0 else k
        return (kx * self.speed[0], k * self.speed[1], k * self.speed[2])

    @property
    def moving(self) -> bool:
        """True while a step is under way or the command asks for motion."""
        return self.walking or any(abs(c) > 1e-6 for c in self.command)

    def _next_step(self) -> None:
        """Choose the next step at a step boundary (support swaps)."""
        p = self.params
        cx, cy, cw = self.command
        hold = 0.0  # the turn that only holds the heading (boost_hold: how much it counts for the scheduling)
        if cw == 0.0 and (cx or cy) and self.walking:  # hold the heading: steer against the gyro's drift
            cw = hold = _limit(-p.heading_gain * self.heading_error, -p.max_wz, p.max_wz)
        sx, sy, sw = self.speed
        a = self.gait  # the step under way limits the change: a fast part may accelerate on more gently
        ax = a.accel_x
        # A launch, from rest straight ahead, gains speed at launch_x; it ends for good when the
        # command turns, sidesteps or stops asking for more (it made random courses fall).
        self._launch = (self._launch or not self.walking) and cx > sx and cy == 0.0 and self.command[2] == 0.0
        if self._launch and a.launch_x > ax:
            ax = a.launch_x
        fast = p.fast
        if fast is not None and fast.brake > 0.0 and a is not p and cx < sx and sx > 0.0:
            ax = min(ax, fast.brake * a.period)  # slowing down in the fast gait: at its brake
        before = (sx, sy, sw)
        sx += _limit(cx - sx, -ax, ax)
        sy += _limit(cy - sy, -a.accel_y, a.accel_y)
        sw += _limit(cw - sw, -a.accel_w, a.accel_w)
        if p.combo_step > 0.0 and p.combo_limit > 0.0:
            sx, sy, sw = step_within_combo(p, before, (sx, sy, sw))
        self.speed = (sx, sy, sw)
        w = boost_weight(p, (sx, sy, sw - (1.0 - p.boost_hold) * hold))
        gait = self._gait_for(w)
        if gait is not self.gait:
            self._use_gait(gait)
        p = self.gait
        resting = all(abs(f.x) < 1e-4 and abs(f.y) < 1e-4 and abs(f.yaw) < 1e-3 for f in self.feet.values())
        if all(abs(v) < 1e-6 for v in self.speed) and resting and all(abs(c) < 1e-6 for c in self.command):
            self.walking = False
            return
        if not self.walking:
            # Start with the foot on the side we move to (sideways / turning), else the left; a kick's foot first.
            self.support = 'l' if (cy < 0.0 or (cy == 0.0 and cw < 0.0)) else 'r'
            if self._kick_asked is not None:
                self.support = 'l' if self._kick_asked[0] == 'r' else 'r'
            self.walking = True
        else:
            self.support = 'l' if self.support == 'r' else 'r'
        swing = 'l' if self.support == 'r' else 'r'
        self._kick = None
        if self._kick_now(swing):
            assert self._kick_asked is not None
            self._kick, self._kick_asked = self._kick_asked[1], None
            self.kicks += 1
        self._set_period(p.period * (self._kick.slow if self._kick is not None else 1.0))
        self._lift_pitch = self.feet_pitch.get(swing, 0.0)
        t = self._period
        for s in 'lr':
            f = self.feet[s]
            self._start[s] = (f.x, f.y, f.yaw)
        # Support slides back by the step; swing goes half a step ahead of neutral.
        f = self.feet[self.support]
        turn = sw * p.turn_scale
        self._target[self.support] = (f.x - sx * t, f.y - sy * t, f.yaw - turn * t)
        lead = p.swing_x_lead * sx
        land = self._kick.land if self._kick is not None else 0.0
        self._target[swing] = (0.5 * sx * t + lead + land, 0.5 * sy * t, 0.5 * turn * t)
        # Sideways, feet never cross: the inner foot stays on its side.
        if (swing == 'l' and sy < 0.0) or (swing == 'r' and sy > 0.0):
            self._target[swing] = (self._target[swing][0], 0.0, self._target[swing][2])
        self.t_in_step = 0.0
        self.steps += 1

    # -- one cycle
    def step(
        self,
        dt: float,
        gyro: tuple[float, float, float] | None = None,
        pitch: float = 0.0,
        contact: Mapping[str, bool] | None = None,
        start_pose: Mapping[str, float] | None = None,
    ) -> dict[str, float]:
        """Advance ``dt`` seconds and return joint targets (rad) for legs and arms.

        ``gyro``: torso rates (rad/s, REP-103); ``pitch``: torso forward tilt (rad);
        ``contact``: foot touches the ground, per side (ends a late step early);
        ``start_pose``: the pose the blend into the walk stance starts from (the first cycle after
        :meth:`reset`; later cycles blend from the one before, see ``ramp``).
        """
        p = self.params
        if self.blend < 1.0:
            self.blend = min(1.0, self.blend + dt / max(p.ramp, 1e-6))
        if gyro is not None and self.walking and self.command[2] == 0.0:
            self.heading_error += gyro[2] * dt
        elif self.command[2] != 0.0 or not self.walking:
            self.heading_error = 0.0
        if self.walking:
            self.t_in_step += dt
            self.travel += self.params.odom_scale * self.speed[0] * dt
            swing = 'l' if self.support == 'r' else 'r'
            period = self._period
            late = contact is not None and contact.get(swing) and self.t_in_step > 0.75 * period
            if self.t_in_step >= period - 1e-9 or late:
                self._land()
                self._next_step()
        elif self.blend >= self._start_blend() and (gyro is None or max(abs(gyro[0]), abs(gyro[1])) < START_RATE):
            self._next_step()  # from rest: once the body has stopped rocking
        out = self._targets(gyro, pitch)
        start = self.last or start_pose
        if self.blend < 1.0 and start:
            b = _smooth(self.blend)
            out = {n: b * v + (1.0 - b) * start.get(n, v) for n, v in out.items()}
        self.last = out
        return out

    def _start_blend(self) -> float:
        """How far the blend into the stance goes before the first step: ``launch_blend`` straight ahead."""
        cx, cy, cw = self.command
        return self.params.launch_blend if cx > 0.0 and cy == 0.0 and cw == 0.0 else 1.0

    def _land(self) -> None:
        for s in 'lr':
            x, y, yaw = self._target[s]
            f = self.feet[s]
            f.x, f.y, f.yaw, f.z = x, y, yaw, 0.0

    def _feet_now(self) -> tuple[dict[str, _Foot], float]:
        """Foot offsets at this instant, and the sideways sway of the body."""
        p = self.gait
        if not self.walking:
            return self.feet, 0.0
        t, per = self.t_in_step, self._period
        phase = t / per
        phase = phase if phase < 1.0 else 1.0  # min(1.0, phase) without the builtin's cost
        # Turning, the double support goes: with both feet planted while their yaw targets
        # change, the soles twist against each other and the robot hardly turns (T1 in place:
        # 4 deg/s with it, 12 deg/s without).
        ds = p.double_support * max(0.0, 1.0 - abs(self.speed[2]) / max(p.max_wz, 1e-6))
        swing_s = _limit((phase - ds / 2.0) / max(1e-6, 1.0 - ds), 0.0, 1.0)
        swing = 'l' if self.support == 'r' else 'r'
        feet = {}
        # support: pendulum profile (blended with linear) from start to target
        u = (t - per / 2.0) / self._tc
        lipm = 0.5 + 0.5 * math.sinh(u) / math.sinh(self._half)
        frac = p.lipm_x * lipm + (1.0 - p.lipm_x) * phase
        (x0, y0, w0), (x1, y1, w1) = self._start[self.support], self._target[self.support]
        roll = _smooth((phase - p.toe_from) / max(1e-6, 1.0 - p.toe_from)) if p.toe_push else 0.0
        feet[self.support] = _Foot(
            x0 + (x1 - x0) * frac, y0 + (y1 - y0) * phase, w0 + (w1 - w0) * phase, 0.0, p.toe_push * roll
        )
        turned = feet[self.support].yaw - self._start[self.support][2]  # the support foot's turn so far
        (x0, y0, w0), (x1, y1, w1) = self._start[swing], self._target[swing]
        s = _smooth(swing_s)
        lift = math.sin(math.pi * swing_s) ** 2
        back = self._lift_pitch * (1.0 - _smooth(2.0 * swing_s))  # from the push-off, flat again half way
        kx, kz = self._kick.offset(swing_s) if self._kick is not None else (0.0, 0.0)
        feet[swing] = _Foot(
            x0 + (x1 - x0) * s + kx,
            y0 + (y1 - y0) * s,
            self._swing_yaw(w0, w1, turned, swing_s),
            p.step_height * lift + kz,
            back,
        )
        shape = (1.0 - math.cosh(u) / math.cosh(self._half)) / (1.0 - 1.0 / math.cosh(self._half))
        amp = p.sway + (self._kick.sway if self._kick is not None else 0.0)
        sway = (1.0 if self.support == 'l' else -1.0) * amp * shape
        return feet, sway

    def _swing_yaw(self, w0: float, w1: float, turned: float, swing_s: float) -> float:
        """The swing foot's yaw (relative to the body) at ``swing_s`` of its swing, from ``w0`` to ``w1``.

        With ``yaw_margin`` >= 0 the foot turns with the support foot (``turned`` so far, relative to the body)
        while it is near the ground, so that two planted soles never twist against each other, and makes its
        own turn in the air: at the step's end it is at ``w1`` whatever the support foot did. With
        ``spin_speed`` that holds for a step in place, fading into the yaw of before as the step moves.
        """
        p = self.gait
        before = w0 + (w1 - w0) * _smooth(swing_s)
        if p.yaw_margin < 0.0:
            return before
        m = min(p.yaw_margin, 0.45)
        support = self._target[self.support][2] - self._start[self.support][2]  # its whole turn in this step
        air = _smooth((swing_s - m) / (1.0 - 2.0 * m))
        planted = w0 + turned + (w1 - w0 - support) * air
        if p.spin_speed <= 0.0:
            return planted
        return before + in_place(p, self.speed[0], self.speed[1]) * (planted - before)

    def _targets(self, gyro: tuple[float, float, float] | None, pitch: float) -> dict[str, float]:
        p = self.gait
        feet, sway = self._feet_now()
        lean = p.torso_pitch
        shift_x = p.tilt_pitch * (pitch - lean) if math.isfinite(pitch) else 0.0
        vx = self.speed[0]  # the CoM goes ahead of the feet forward, behind them backward
        sole_x = p.sole_x - p.sole_x_back * min(vx, 0.0) - p.sole_x_fwd * max(vx, 0.0)
        c, s = math.cos(lean), math.sin(lean)
        poses, toes = {}, {}
        self.feet_pitch = {side: f.pitch for side, f in feet.items()}
        for side, sign in (('l', 1.0), ('r', -1.0)):
            f = feet[side]
            # sole centre in the ground frame under the torso, then into the (leaning) torso frame
            # a turned foot also moves on the circle round the torso (else turning twists the soles)
            gx = sole_x + f.x - shift_x - sign * p.foot_y * math.sin(f.yaw)
            gy = sign * p.foot_y * math.cos(f.yaw) + f.y - sway
            gz = p.sole_z + f.z
            cy, sy = math.cos(f.yaw), math.sin(f.yaw)
            rot = ((c * cy, -c * sy, -s), (sy, cy, 0.0), (s * cy, -s * sy, c))  # Ry(-lean) Rz(yaw)
            if f.pitch and side in self._toes:  # heel up, rolled over the toe joint: the sole centre rises
                joint, toe_sign, pivot = self._toes[side]
                cp, sp = math.cos(f.pitch), math.sin(f.pitch)
                ry = ((cp, 0.0, sp), (0.0, 1.0, 0.0), (-sp, 0.0, cp))
                turned = _mat_vec(ry, pivot)
                d = [a - b for a, b in zip(pivot, turned, strict=True)]  # sole centre's move in the foot's frame
                gx, gy, gz = gx + cy * d[0] - sy * d[1], gy + sy * d[0] + cy * d[1], gz + d[2]
                rot = _mat_mul(rot, ry)
                toes[joint] = toe_sign * f.pitch  # the toe stays flat on the ground
            poses[side] = _pose_rows(rot, (c * gx - s * gz, gy, s * gx + c * gz), self.sole[side])
        try:
            q = legs_ik(self.body, poses['l'], poses['r'], check_limits=False)
        except UnreachableError:
            q = {n: v for n, v in self.last.items() if n[1:3] == 'lj'}
        out = dict(self.hold)
        out.update(q)
        out.update(toes)
        if gyro is not None:
            gx_rate, gy_rate = gyro[0], gyro[1]
            sign = self._sign
            for side in 'lr':
                ankle, hip = f'{side}lj5', f'{side}lj2'
                out[ankle] = out.get(ankle, 0.0) + sign.get(ankle, 1.0) * p.gyro_pitch * gy_rate
                out[hip] = out.get(hip, 0.0) + sign.get(hip, 1.0) * p.gyro_roll * gx_rate
        if p.arm_swing:
            for side, other in (('l', 'r'), ('r', 'l')):
                name = f'{side}aj1'
                if name in out:  # the arm swings forward with the opposite foot
                    out[name] = out[name] - self._sign.get(name, 1.0) * p.arm_swing * feet[other].x
        return out


def walk_sets(walk_cfg: Mapping, key: str) -> tuple[dict[str, WalkParams], str]:
    """Named parameter sets of one robot from ``config/walk.yaml`` and the default set's name.

    ``key`` is the robot's section (``T1``, ``K1``, ``nao0``..``nao4``; a Nao type without
    its own section falls back to ``nao``). Each set is applied over the section's ``base``.
    """
    section = walk_cfg.get(key)
    if section is None and key.startswith('nao'):
        section = walk_cfg.get('nao')
    if section is None:
        return {}, ''
    if not isinstance(section, Mapping) or not isinstance(section.get('sets'), Mapping) or not section['sets']:
        raise ConfigError(f'walk.yaml: {key} needs a non-empty "sets" mapping')
    try:
        base = walk_params(section.get('base'))
    except ConfigError as exc:
        raise ConfigError(f'walk.yaml: {key}.base: {exc}') from None
    sets = {}
    for name, values in section['sets'].items():
        try:
            sets[str(name)] = walk_params(values, base)
        except ConfigError as exc:
            raise ConfigError(f'walk.yaml: {key}.sets.{name}: {exc}') from None
    default = str(section.get('default', next(iter(sets))))
    if default not in sets:
        raise ConfigError(f'walk.yaml: {key}.default names unknown set {default!r}; sets: {sorted(sets)}')
    return sets, default
