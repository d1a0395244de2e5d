"""Schema and loader of ``config/kicks.yaml``: each robot's kicks, dribble and approach.

For every kick: the skills that play it with the right and the left foot (or, for an in-walk kick,
``walk``: the swing the walk puts into one step, :class:`WalkKick`), where the ball
lies (in the robot's ground frame, x forward, y left) when the right-foot kick starts
(the left one mirrors it), how close to that the approach must come, whether the walk
stops first, and the **kick model**: the distance (mean, sd, m) and direction spread (deg)
measured by ``bench/bench_kick.py``, from which strategy predicts where the ball goes
(:meth:`KickSpec.predict`). Keys: ``T1``, ``K1``, ``nao`` and ``nao<N>`` (a Nao type's own
values, read over ``nao``'s).
"""

from __future__ import annotations

import math
from functools import cache
from itertools import pairwise
from pathlib import Path

from pydantic import Field, model_validator

from robocup3d_bridge.config_files import ConfigError, config_path, load_config
from robocup3d_bridge.config_schema import Finite, NonNegative, Positive, Section, Text, validate

__all__ = [
    'ApproachSpec',
    'BallSkills',
    'DribbleSpec',
    'KickSpec',
    'Strength',
    'WalkKick',
    'ball_skills_for',
    'load_kicks_config',
]


class Tolerance(Section):
    """How far from the kick spot the kick may still start (m, m, deg)."""

    x: Finite = 0.04
    y: Finite = 0.03
    yaw_deg: Finite = 8.0


class Model(Section):
    """Where the kick sends the ball, as measured."""

    mean: NonNegative
    sd: NonNegative = 0.0


class WalkKick(Section):
    """An in-walk kick: the kicking foot's step (:class:`robocup3d_motion.walk.KickSwing`, whose fields these are
    but ``speed``: ``slow`` times as long, ``sway`` m more over the support foot, the foot drawn ``back``, thrust
    ``reach`` m ahead at ``at`` of its swing (0.1-0.95), landing ``land`` m further, ``lift`` m higher); the robot
    walks on at ``speed`` m/s while the step comes, which begins with the ball ``window`` m ahead (none: the
    foot's next step)."""

    reach: Finite = 0.12
    back: NonNegative = 0.04
    at: Finite = 0.7
    lift: Finite = 0.0
    slow: Positive = 1.0
    land: Finite = 0.0
    sway: Finite = 0.0
    speed: NonNegative = 0.15
    window: tuple[Finite, Finite] | None = None

    @model_validator(mode='after')
    def _at_in_swing(self) -> WalkKick:
        if not 0.1 <= self.at <= 0.95:
            raise ValueError(f'walk.at must lie within 0.1-0.95 of the swing, got {self.at!r}')
        if self.window is not None and self.window[0] >= self.window[1]:
            raise ValueError(f'walk.window must be [near, far] with near < far, got {list(self.window)}')
        return self


class Strength(Section):
    """A kick of chosen length. T1/K1: ``right``/``left`` are its gentle skills (strength 0), blended towards the
    kick's own (strength 1, :func:`robocup3d_motion.getup.blend_skills`); the Nao: ``param`` is the ``$parameter``
    of the kick's ``.skl`` skills that sets its strength (``kick_var.skl``'s ``kick_strength``). ``curve`` is the
    measured model, ``[strength, mean m, sd m]`` rows in ascending order of both strength and mean, from which the
    kick's strength for a distance is read (:meth:`for_distance`) and its distance for a strength (:meth:`at`)."""

    right: Text = ''
    left: Text = ''
    param: Text = ''
    curve: list[tuple[Finite, NonNegative, NonNegative]] = Field(min_length=2)

    @model_validator(mode='after')
    def _ascending(self) -> Strength:
        rows = self.curve
        rising = all(a[0] < b[0] and a[1] < b[1] for a, b in pairwise(rows))
        if not (rising and 0.0 <= rows[0][0] and rows[-1][0] <= 1.0):
            raise ValueError('strength.curve must rise in strength (within 0-1) and in mean distance, row by row')
        if bool(self.param) == bool(self.right and self.left) or bool(self.right) != bool(self.left):
            raise ValueError('strength needs its gentle skills (right and left) or a skill parameter (param), not both')
        return self

    def skill(self, foot: str) -> str:
        return self.right if foot == 'right' else self.left

    def at(self, strength: float) -> tuple[float, float]:
        """The distance (mean, sd; m) of a kick of ``strength``, interpolated in the curve."""
        rows = self.curve
        s = min(max(strength, rows[0][0]), rows[-1][0])
        for (s0, m0, d0), (s1, m1, d1) in pairwise(rows):
            if s <= s1:
                f = (s - s0) / (s1 - s0)
                return m0 + f * (m1 - m0), d0 + f * (d1 - d0)
        return rows[-1][1], rows[-1][2]

    def for_distance(self, d: float) -> float:
        """The strength whose mean distance is ``d`` m (the curve's ends beyond its range)."""
        rows = self.curve
        if d <= rows[0][1]:
            return rows[0][0]
        for (s0, m0, _), (s1, m1, _) in pairwise(rows):
            if d <= m1:
                return s0 + (d - m0) / (m1 - m0) * (s1 - s0)
        return rows[-1][0]

    @property
    def shortest(self) -> float:
        """m: the gentlest kick's mean distance."""
        return self.curve[0][1]


class KickSpec(Section):
    """One kick of one robot: skills (``right``, ``left``) or an in-walk swing (``walk``)."""

    right: Text = ''
    left: Text = ''
    walk: WalkKick | None = None
    strength: Strength | None = None  # a kick of chosen length: its gentle skills and its distance model
    ball: tuple[Finite, Finite]
    tolerance: Tolerance = Tolerance()
    stop: bool = True
    rest: NonNegative = 0.0  # s the robot stands still, its walk stopped, before the kick starts
    hold: float = Field(1.5, ge=1.0)  # the tolerance, times this, judged once the robot stopped and stood its rest
    recover: NonNegative = 0.0  # s it stands after the kick's motion before it may walk again
    duration: Positive = 1.0
    distance: Model
    angle_deg: Finite = 0.0  # where the ball goes off the robot's heading (right foot; the left mirrors it)
    direction_sd_deg: NonNegative = 5.0
    fall_rate: NonNegative = 0.0  # share of these kicks the robot falls after, as measured
    measured: Text = ''

    @model_validator(mode='after')
    def _skills_or_walk(self) -> KickSpec:
        if self.walk is None and not (self.right and self.left):
            raise ValueError('a kick needs its skills (right and left) or an in-walk swing (walk)')
        if self.strength is not None and self.walk is not None:
            raise ValueError('an in-walk kick has no strength to choose')
        return self

    def spot(self, foot: str) -> tuple[float, float]:
        """The ball in the robot's ground frame when ``foot``'s kick starts."""
        x, y = self.ball
        return (x, y) if foot == 'right' else (x, -y)

    def skill(self, foot: str) -> str:
        return self.right if foot == 'right' else self.left

    def angle(self, foot: str) -> float:
        """Where ``foot``'s kick sends the ball off the robot's heading (rad)."""
        a = math.radians(self.angle_deg)
        return a if foot == 'right' else -a


class DribbleSpec(Section):
    """Walking the ball: where it sits in front of the feet, how fast, how far it may stray."""

    ball: tuple[Finite, Finite] = (0.2, 0.0)
    speed: Positive = 0.4
    lateral: Positive = 0.12  # m off the centre line before it re-aligns
    ahead: Positive = 0.6  # m ahead before it catches up


class ApproachSpec(Section):
    """Walking to the ball: how wide to go round it, when to give up."""

    clear: Positive = 0.35  # m kept from the ball while going round it
    lost_sigma: Positive = 1.0  # m: a ball estimate vaguer than this is lost
    lost_s: Positive = 3.0  # s without a good ball estimate: give up
    timeout: Positive = 40.0  # s for a whole task
    settle: NonNegative = 2.5  # s at most waiting for the walk to stop and the stand to settle before a kick
    foot_margin: NonNegative = 0.15  # m of cost the other foot must save to switch
    line_up: NonNegative = 0.15  # m behind the kick pose the walk lines up before stepping in
    stop_drift: NonNegative = 0.6  # s: a walk told to stop goes on about this long at its speed (T1: 2-18 cm)
    # The last steps onto a kick spot: forward no faster than ``arrive_speed`` (m/s) there, and the stop for a kick
    # that stops only once the walk steps forward at ``stop_speed`` m/s or slower (inf: at any speed)
    arrive_speed: Positive = 0.2
    stop_speed: Positive = math.inf
    # Each hold of a kick that ended with the robot off the spot widens the next hold's judgement by this (added to
    # the kick's ``hold`` factor), up to ``patience_max`` times the tolerance: a kick a little off beats standing,
    # stepping and standing again (a T1 did so for 50 s at one ball in a match, session 48). 0: never
    patience: NonNegative = 0.0
    patience_max: float = Field(3.0, ge=1.0)


class BallSkills(Section):
    """A robot's kicks (by name), dribble and approach."""

    kicks: dict[str, KickSpec] = Field(default_factory=dict)
    dribble: DribbleSpec = DribbleSpec()
    approach: ApproachSpec = ApproachSpec()


class KicksFile(Section):
    robots: dict[str, BallSkills]


@cache
def _load(name_or_path: str) -> KicksFile:
    path = config_path(name_or_path)
    return validate(KicksFile, load_config(path), str(path))


def load_kicks_config(name_or_path: str | Path = 'kicks.yaml') -> dict[str, BallSkills]:
    """The checked file, by robot key; a bad file raises :class:`ConfigError`."""
    return dict(_load(str(name_or_path)).robots)


def ball_skills_for(
    robots: dict[str, BallSkills], robot: str, robot_type: int = 0, server: str = 'mujoco'
) -> BallSkills:
    """The ball skills of one robot (a Nao type's kicks over the plain Nao's); empty when none."""
    if server != 'simspark':
        return robots.get(robot, BallSkills())
    base, own = robots.get('nao', BallSkills()), robots.get(f'nao{robot_type}')
    if own is None:
        return base
    given = own.model_fields_set
    return BallSkills(
        kicks={**base.kicks, **own.kicks},
        dribble=own.dribble if 'dribble' in given else base.dribble,
        approach=own.approach if 'approach' in given else base.approach,
    )


def check_skills(skills: BallSkills, known: set[str], where: str) -> None:
    """Every kick names skills the robot has; raises :class:`ConfigError` otherwise."""
    for name, k in skills.kicks.items():
        gentle = (k.strength.right, k.strength.left) if k.strength is not None and not k.strength.param else ()
        for s in () if k.walk is not None else (k.right, k.left, *gentle):
            if s not in known:
                raise ConfigError(f'kicks.yaml: {where}.kicks.{name}: no skill {s!r}; known: {sorted(known)}')
