"""Robot descriptions as data: joints, their server names, limits and speeds.

One source of truth per robot, used by the bridge (name maps, validation) and by
motion. Canonical joint names are the servers' perceptor names without MJ's ``q_``
prefix (``hj1``, ``laj1`` ... ``rlj6``); each joint also knows its effector name
(``he1``, ``lae1`` ...).

* Nao types 0-4 (rcssserver3d): limits from the server's ``nao*.rsg`` files,
  per-type ankle speeds from the seeds (type 2), toes on type 4.
* Booster T1 and K1 (RCSSServerMJ): read from the ``robot.xml`` that the installed
  ``rcsssmj`` package ships, so they always match the server.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType

__all__ = ['MUJOCO_ROBOTS', 'NAO_TYPES', 'JointSpec', 'RobotSpec', 'mujoco_robot', 'nao', 'robot_spec']

NAO_TYPES = (0, 1, 2, 3, 4)
MUJOCO_ROBOTS = ('T1', 'K1')

_D2R = math.pi / 180.0
_NAO_MAX_SPEED = 351.77 * _D2R  # rad/s, every Nao hinge unless a type says otherwise


@dataclass(frozen=True, slots=True)
class JointSpec:
    """One actuated joint. Angles in rad, speed in rad/s, torque in N m (``inf``: not limited)."""

    name: str  # canonical (perceptor) name, e.g. "laj1"
    effector: str  # effector name the server takes, e.g. "lae1"
    lower: float
    upper: float
    max_speed: float = math.inf
    max_torque: float = math.inf
    description: str = ''


@dataclass(frozen=True, slots=True)
class RobotSpec:
    """A robot model as one server knows it."""

    name: str  # "nao0".."nao4", "T1", "K1"
    server: str  # "simspark" or "mujoco"
    model: str  # what init/scene names: "rsg/agent/nao/nao_hetero.rsg", "T1", ...
    robot_type: int  # Nao heterogeneous type; 0 for MJ robots
    joints: tuple[JointSpec, ...]
    feet: tuple[str, ...] = ()  # FRP perceptor names
    joint_names: tuple[str, ...] = field(init=False)  # canonical joint names in server order
    by_name: Mapping[str, JointSpec] = field(init=False, compare=False)  # joints keyed by canonical name

    def __post_init__(self) -> None:
        # Derived once: both are read every cycle.
        object.__setattr__(self, 'joint_names', tuple(j.name for j in self.joints))
        object.__setattr__(self, 'by_name', MappingProxyType({j.name: j for j in self.joints}))

    @property
    def by_effector(self) -> dict[str, JointSpec]:
        """Joints keyed by effector name."""
        return {j.effector: j for j in self.joints}


def _nao_joint(per: str, eff: str, lo: float, hi: float, desc: str, speed: float = _NAO_MAX_SPEED) -> JointSpec:
    return JointSpec(per, eff, lo * _D2R, hi * _D2R, speed, math.inf, desc)


@cache
def nao(robot_type: int = 0) -> RobotSpec:
    """The Nao of heterogeneous ``robot_type`` (0-4) on rcssserver3d."""
    if robot_type not in NAO_TYPES:
        raise ValueError(f'Nao robot type must be one of {NAO_TYPES}, got {robot_type!r}')
    ankle_pitch_speed = 504.59 * _D2R if robot_type == 2 else _NAO_MAX_SPEED
    ankle_roll_speed = 198.95 * _D2R if robot_type == 2 else _NAO_MAX_SPEED
    joints = [
        _nao_joint('hj1', 'he1', -120, 120, 'neck yaw'),
        _nao_joint('hj2', 'he2', -45, 45, 'neck pitch'),
        _nao_joint('laj1', 'lae1', -120, 120, 'left shoulder pitch'),
        _nao_joint('laj2', 'lae2', -1, 95, 'left shoulder yaw'),
        _nao_joint('laj3', 'lae3', -120, 120, 'left arm roll'),
        _nao_joint('laj4', 'lae4', -90, 1, 'left arm yaw'),
        _nao_joint('raj1', 'rae1', -120, 120, 'right shoulder pitch'),
        _nao_joint('raj2', 'rae2', -95, 1, 'right shoulder yaw'),
        _nao_joint('raj3', 'rae3', -120, 120, 'right arm roll'),
        _nao_joint('raj4', 'rae4', -1, 90, 'right arm yaw'),
    ]
    for side, roll2, roll6 in (('l', (-25, 45), (-45, 25)), ('r', (-45, 25), (-25, 45))):
        joints += [
            _nao_joint(f'{side}lj1', f'{side}le1', -90, 1, 'hip yaw-pitch'),
            _nao_joint(f'{side}lj2', f'{side}le2', *roll2, 'hip roll'),
            _nao_joint(f'{side}lj3', f'{side}le3', -25, 100, 'hip pitch'),
            _nao_joint(f'{side}lj4', f'{side}le4', -130, 1, 'knee pitch'),
            _nao_joint(f'{side}lj5', f'{side}le5', -45, 75, 'ankle pitch', ankle_pitch_speed),
            _nao_joint(f'{side}lj6', f'{side}le6', *roll6, 'ankle roll', ankle_roll_speed),
        ]
        if robot_type == 4:
            joints.append(_nao_joint(f'{side}lj7', f'{side}le7', -1, 70, 'toe pitch'))
    feet = ('lf', 'rf', 'lf1', 'rf1') if robot_type == 4 else ('lf', 'rf')
    return RobotSpec(f'nao{robot_type}', 'simspark', 'rsg/agent/nao/nao_hetero.rsg', robot_type, tuple(joints), feet)


def rcsssmj_robot_xml(name: str) -> Path:
    """Path of the installed RCSSServerMJ robot.xml for ``name``."""
    try:
        import rcsssmj.resources  # noqa: PLC0415 - optional: only MJ users need it
    except ImportError as exc:
        raise RuntimeError(f'robot {name} needs the RCSSServerMJ package: pip install rcsssmj') from exc
    path = Path(rcsssmj.resources.__file__).parent / 'robots' / name / 'robot.xml'
    if not path.is_file():
        raise ValueError(f'rcsssmj has no robot {name!r} (looked for {path})')
    return path


def _parse_mjcf(name: str, xml_path: Path) -> RobotSpec:
    root = ET.parse(xml_path).getroot()
    class_force: dict[str, float] = {}
    for default in root.iter('default'):
        cls = default.get('class')
        j = default.find('joint')
        if cls and j is not None and j.get('actuatorfrcrange'):
            class_force[cls] = max(abs(float(v)) for v in j.get('actuatorfrcrange', '0 0').split())
    joints: dict[str, tuple[float, float, float]] = {}
    for j in root.find('worldbody').iter('joint'):
        if j.get('name') and j.get('range'):
            lo, hi = (float(v) for v in j.get('range', '').split())
            joints[j.get('name', '')] = (lo, hi, class_force.get(j.get('class', ''), math.inf))
    effector_of = {
        m.get('joint'): m.get('name', '')[: -len('_tau')]
        for m in root.iter('motor')
        if m.get('name', '').endswith('_tau')
    }
    specs = []
    for s in root.iter('jointpos'):
        sensor, joint = s.get('name', ''), s.get('joint', '')
        if not sensor.startswith('q_') or joint not in joints or joint not in effector_of:
            continue
        lo, hi, tau = joints[joint]
        specs.append(JointSpec(sensor[2:], effector_of[joint], lo, hi, math.inf, tau, joint))
    if not specs:
        raise ValueError(f'no actuated joints found in {xml_path}')
    return RobotSpec(name, 'mujoco', name, 0, tuple(specs), ())


@cache
def mujoco_robot(name: str) -> RobotSpec:
    """Booster ``T1`` or ``K1`` as the installed RCSSServerMJ defines it."""
    if name not in MUJOCO_ROBOTS:
        raise ValueError(f'RCSSServerMJ robot must be one of {MUJOCO_ROBOTS}, got {name!r}')
    return _parse_mjcf(name, rcsssmj_robot_xml(name))


def robot_spec(server: str, robot: str = '', robot_type: int = 0) -> RobotSpec:
    """Look up a robot by server (``simspark``/``mujoco``), model name and Nao type."""
    if server == 'simspark':
        if robot not in ('', 'nao', 'Nao', 'NAO'):
            raise ValueError(f'rcssserver3d runs the Nao only, not {robot!r}')
        return nao(robot_type)
    if server == 'mujoco':
        return mujoco_robot(robot or 'T1')
    raise ValueError(f"server must be 'simspark' or 'mujoco', got {server!r}")
