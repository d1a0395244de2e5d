"""The one guess of a player's robot (recorder, rerun, percept rebuild), on real server captures
(``../shared/captures``, robots from their READMEs) and on our own URDFs."""

from __future__ import annotations

from pathlib import Path

import pytest

from robocup3d_bridge.perception import PerceptParseError, parse_percept
from robocup3d_description.body import body_for
from robocup3d_description.guess import RobotGuess, guess_robot, spec_for
from robocup3d_description.urdf import urdf_string

#: capture -> (robot its joints tell, the Nao's type they tell): a type 1-3 Nao has type 0's joints
CAPTURES = {
    'rcssservermj/capture_T1.txt': ('T1', None),
    'rcssservermj/capture_T1_pd.txt': ('T1', None),
    'rcssservermj/capture_K1.txt': ('K1', None),
    'rcssservermj/cap_A1.txt': ('K1', None),
    'simspark/type0_single_agent.txt': ('nao0', None),
    'simspark/type1_single_agent.txt': ('nao0', None),
    'simspark/type2_single_agent.txt': ('nao0', None),
    'simspark/type3_single_agent.txt': ('nao0', None),
    'simspark/type4_single_agent.txt': ('nao4', 4),
    'simspark/match_A2_Alpha2_type4.txt': ('nao4', 4),
    'simspark/say_edgecases_B1_Beta1_listener.txt': ('nao0', None),
}


def _percepts_with_joints(path: Path, n: int = 50) -> list:
    out = []
    for line in path.read_text(encoding='ascii').splitlines():
        if not line.startswith('('):
            continue
        try:
            p = parse_percept(line)
        except PerceptParseError:
            continue
        if p.joint_positions:
            out.append(p)
            if len(out) == n:
                break
    return out


@pytest.mark.parametrize(('capture', 'expected'), sorted(CAPTURES.items()))
def test_the_joints_of_a_real_percept_tell_the_robot(shared_dir: Path, capture: str, expected: tuple) -> None:
    percepts = _percepts_with_joints(shared_dir / 'captures' / capture)
    assert percepts, capture
    name, nao_type = expected
    first = percepts[0]
    velocities = bool(first.joint_velocities)
    assert velocities == capture.startswith('rcssservermj/')  # RCSSServerMJ sends joint velocities
    assert guess_robot(first.joint_positions, velocities=velocities) == RobotGuess(name, nao_type)
    # the rerun's way: the joints of the first 50 percepts
    union = set().union(*(p.joint_positions for p in percepts))
    assert guess_robot(union, velocities=velocities) == RobotGuess(name, nao_type)
    # the recorder's: a joint_states message names every joint of the robot's table, in its order
    assert guess_robot(spec_for(name).joint_names, velocities=velocities).name == name


@pytest.mark.parametrize('name', ['T1', 'K1', 'nao0', 'nao1', 'nao2', 'nao3', 'nao4'])
def test_a_robot_description_names_the_robot_and_a_naos_type(name: str) -> None:
    urdf = urdf_string(body_for(name))
    nao_type = int(name[3:]) if name.startswith('nao') else None
    assert guess_robot(urdf=urdf) == RobotGuess(name, nao_type, described=True)
    # the description wins over joints that would say otherwise
    assert guess_robot(spec_for('nao4').joint_names, velocities=False, urdf=urdf).name == name


def test_a_description_of_no_robot_we_model_leaves_the_joints_to_tell() -> None:
    joints = spec_for('nao4').joint_names
    assert guess_robot(joints, velocities=False, urdf='<robot name="pr2"></robot>') == RobotGuess('nao4', 4)
    assert guess_robot(joints, urdf='<robot/>') == RobotGuess('nao4', 4)
    assert guess_robot(urdf='<robot name="pr2"></robot>') is None
    assert guess_robot(urdf='<robot name="nao">') == RobotGuess('nao0', None, described=True)


def test_without_velocities_k1_and_nao0_share_joint_names_and_the_k1_is_guessed() -> None:
    assert set(spec_for('K1').joint_names) == set(spec_for('nao0').joint_names)
    joints = spec_for('nao0').joint_names
    assert guess_robot(joints).name == 'K1'
    assert guess_robot(joints, velocities=False).name == 'nao0'
    assert guess_robot(spec_for('T1').joint_names) == RobotGuess('T1')
    assert guess_robot(spec_for('nao4').joint_names) == RobotGuess('nao4', 4)


def test_no_guess_without_joints_or_from_joints_no_robot_has() -> None:
    assert guess_robot([]) is None
    assert guess_robot(['hj1', 'tail1']) is None
    assert guess_robot(spec_for('T1').joint_names, velocities=False) is None  # the Nao has no waist (tj1)
    assert guess_robot(['llj7'], velocities=True) is None  # nor the T1 and K1 toes
    assert guess_robot(['hj1', 'hj2'], velocities=True) == RobotGuess('K1')  # the fewest joints that have them
