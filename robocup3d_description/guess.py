"""Which robot a player is, from what a recording or a percept shows of it.

One guess for the recorder's link TF (a player's ``joint_states`` and ``robot_description``), the
world-model rerun (its recorded percepts and description) and the recorder's percept rebuild (one
percept). In order:

* a URDF (a player's latched ``robot_description``) whose ``<robot name>`` is a robot we model names it,
  a Nao's type too;
* else the joint names: of the robots of the server the joint velocities tell (RCSSServerMJ sends them,
  rcssserver3d does not), the one with the fewest joints that has every name. The Nao types share
  joint names, but type 4 has toes: a Nao without toes is built as type 0, whose joints and feet it has
  (its type, 0-3, is not known). K1 and a type 0 Nao have the same joint names: without knowing the
  velocities, the K1 is guessed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from robocup3d_description.robots import MUJOCO_ROBOTS, NAO_TYPES, RobotSpec, mujoco_robot, nao
from robocup3d_description.urdf import robot_name

__all__ = ['RobotGuess', 'guess_robot', 'spec_for']

#: the candidates from joint names, by whether the percept has joint velocities (RCSSServerMJ's), in the
#: order a tie of joint counts is broken in
_BY_VELOCITIES = {True: ('T1', 'K1'), False: ('nao0', 'nao4')}


@dataclass(frozen=True)
class RobotGuess:
    """A guessed robot: ``name`` is a model ``body_for`` and :func:`spec_for` take (``T1``, ``K1``,
    ``nao0``..``nao4``); ``nao_type`` the Nao's type where known (None: a T1 or K1, or a Nao without
    toes and description, built as ``nao0``); ``described``: named by a URDF, not guessed from joints."""

    name: str
    nao_type: int | None = None
    described: bool = False

    @property
    def is_nao(self) -> bool:
        """Whether the robot is a Nao (rcssserver3d's)."""
        return self.name.startswith('nao')


def _named(name: str) -> RobotGuess | None:
    """The robot a model name means (``T1``, ``K1``, ``nao``, ``nao0``..``nao4``, as ``body_for`` takes them)."""
    if name in MUJOCO_ROBOTS:
        return RobotGuess(name, described=True)
    low = name.lower()
    if low == 'nao':
        return RobotGuess('nao0', described=True)
    if low.startswith('nao') and low[3:].isdigit() and int(low[3:]) in NAO_TYPES:
        return RobotGuess(f'nao{int(low[3:])}', int(low[3:]), described=True)
    return None


def spec_for(name: str) -> RobotSpec:
    """The joint table of a model name (``T1``, ``K1``, ``nao``, ``nao0``..``nao4``), as ``body_for`` the body."""
    low = name.lower()
    if low.startswith('nao'):
        return nao(int(low[3:] or 0))
    return mujoco_robot(name)


def _joint_names(name: str) -> frozenset[str] | None:
    try:
        return frozenset(spec_for(name).joint_names)
    except (RuntimeError, ValueError, OSError):  # T1/K1 without the rcsssmj package
        return None


def guess_robot(
    joints: Iterable[str] = (), *, velocities: bool | None = None, urdf: str | None = None
) -> RobotGuess | None:
    """The robot of a player from its ``urdf`` (a ``robot_description``) or else its ``joints`` (names).

    ``velocities``: whether its percepts carry joint velocities (RCSSServerMJ's T1 and K1 do, rcssserver3d's
    Nao does not); None: not known, every robot is a candidate. None back: a URDF naming no robot we model
    and no joints, or joints no candidate has all of.
    """
    if urdf is not None:
        named = robot_name(urdf)
        guess = _named(named) if named else None
        if guess is not None:
            return guess
    have = set(joints)
    if not have:
        return None
    names = _BY_VELOCITIES[velocities] if velocities is not None else (*_BY_VELOCITIES[True], *_BY_VELOCITIES[False])
    fits = [(len(js), name) for name in names if (js := _joint_names(name)) is not None and have <= js]
    if not fits:
        return None
    name = min(fits, key=lambda f: f[0])[1]  # the first of the fewest joints
    return RobotGuess(name, 4 if name == 'nao4' else None)
