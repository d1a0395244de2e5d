"""Skill language: parameter files, .skl parser, reflection, expression evaluator, player.

The UT Austin Villa reference files are read from ``<repo>/../shared/reference``;
those tests skip when it is missing.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from robocup3d_description.robots import nao
from robocup3d_motion.skills import engine, params, skl
from robocup3d_motion.skills.engine import DATA_DIR, SkillPlayer, SkillRegistry, load_registry
from robocup3d_motion.skills.skl import (
    EFFECTOR_JOINTS,
    FLIPPED_JOINTS,
    MIRROR_JOINT,
    RESET_POSE,
    BodyPart,
    IncTarget,
    Reset,
    SetFoot,
    SetTarget,
    evaluate,
    parse_skl,
)

REPO = Path(__file__).resolve().parents[2]
UT = REPO.parent / 'shared' / 'reference' / 'utaustinvilla3d'
D2R = math.pi / 180.0
DT = 0.02


@pytest.fixture(scope='module')
def ut() -> Path:
    if not (UT / 'skills').is_dir() or not (UT / 'paramfiles').is_dir():
        pytest.skip(f'{UT} is missing: the UT Austin Villa reference files live in ../shared (repo_root/../shared)')
    return UT


def ut_skill_files(ut: Path) -> list[Path]:
    files = sorted((ut / 'skills').glob('*.skl'))
    assert files, 'no .skl files in the reference'
    return files


# --------------------------------------------------------------------------- parameter files


def test_every_reference_param_file_parses(ut: Path) -> None:
    files = sorted((ut / 'paramfiles').glob('*.txt'))
    assert len(files) == 7
    counts = {f.name: len(params.load_params([f])) for f in files}
    assert counts['defaultParams.txt'] == 227
    assert counts['defaultParams_gazebo.txt'] == 0  # comments only
    # t0-t4 each hide the same 3 walk blocks in /* */ comments
    assert all(counts[f'defaultParams_t{t}.txt'] > 100 for t in range(5))


@pytest.mark.parametrize('robot_type', range(5))
def test_type_params_override_defaults(ut: Path, robot_type: int) -> None:
    defaults = params.load_params([ut / 'paramfiles' / 'defaultParams.txt'])
    typed = params.load_params([ut / 'paramfiles' / f'defaultParams_t{robot_type}.txt'])
    merged = params.load_type_params(ut / 'paramfiles', robot_type)
    assert set(merged) == set(defaults) | set(typed)
    for name, value in typed.items():
        assert merged[name] == value
    assert merged['utwalk_max_step_size_angle'] != defaults['utwalk_max_step_size_angle']


def test_param_comments(tmp_path: Path) -> None:
    text = (
        '# hash comment\n'
        '// slash comment\n'
        'a\t1.5\n'
        'b 2 // trailing comment\n'
        'c\t\t3 # trailing hash\n'
        '/*\n'
        'hidden\t4\n'
        '*/\n'
        '/* one-line block */ d\t-4e-1\n'
        'e\t5 /* starts here\n'
        'still hidden\t6\n'
        '   ends here */ \n'
        '\n'
        'f\t  6   \n'
    )
    assert params.parse_params(text) == {'a': 1.5, 'b': 2.0, 'c': 3.0, 'd': -0.4, 'e': 5.0, 'f': 6.0}


def test_later_file_overrides(tmp_path: Path) -> None:
    (tmp_path / 'one.txt').write_text('x\t1\ny\t2\n')
    (tmp_path / 'two.txt').write_text('y\t20\nz\t30\n')
    assert params.load_params([tmp_path / 'one.txt', tmp_path / 'two.txt']) == {'x': 1.0, 'y': 20.0, 'z': 30.0}
    assert params.load_params([tmp_path / 'two.txt', tmp_path / 'one.txt'])['y'] == 2.0


@pytest.mark.parametrize(
    ('text', 'line', 'words'),
    [
        ('a\t1\nb\n', 2, 'expected'),
        ('a\t1\n\nb\t1\t2\n', 3, 'expected'),
        ('a\tone\n', 1, 'not a number'),
        ('a\tnan\n', 1, 'not finite'),
        ('a-b\t1\n', 1, 'bad parameter name'),
        ('a\t1\n/* never closed\nb\t2\n', 2, 'unterminated'),
    ],
)
def test_malformed_param_lines(text: str, line: int, words: str) -> None:
    with pytest.raises(ValueError, match=rf'^p\.txt:{line}: .*{words}'):
        params.parse_params(text, 'p.txt')


# --------------------------------------------------------------------------- expressions


@pytest.mark.parametrize(
    ('text', 'value'),
    [
        ('3', 3.0),
        ('.5', 0.5),
        ('1e2', 100.0),
        ('2.5E-1', 0.25),
        ('1 + 2 * 3', 7.0),
        ('(1 + 2) * 3', 9.0),
        ('10 - 4 - 3', 3.0),  # left associative
        ('8 / 4 / 2', 1.0),
        ('2 * 3 / 4', 1.5),
        ('-3', -3.0),
        ('- -3', 3.0),
        ('+3', 3.0),
        ('-2 * 3', -6.0),
        ('2 * -3', -6.0),
        ('-(2 + 3) * 2', -10.0),
        ('( 12 + $p )', 10.0),
        ('($p)', -2.0),
        ('$p * $p - $q', 1.0),
        ('( -12 + $q ) / 2', -4.5),
        ('((((1))))', 1.0),
        ('1 - -1', 2.0),
    ],
)
def test_expression_values(text: str, value: float) -> None:
    assert evaluate(text, {'p': -2.0, 'q': 3.0}) == pytest.approx(value)


@pytest.mark.parametrize('text', ['', '1 +', '(1 + 2', '1 2', '* 3', '1 + ()', '$', 'abc', '1 % 2', '__import__'])
def test_expression_syntax_errors(text: str) -> None:
    with pytest.raises(ValueError):
        evaluate(text)


def test_expression_division_by_zero_and_unknown_parameter() -> None:
    with pytest.raises(ValueError, match='division by zero'):
        evaluate('1 / (2 - 2)')
    with pytest.raises(ValueError, match='division by zero'):
        evaluate('1 / $z', {'z': 0.0})
    with pytest.raises(ValueError, match=r'unknown parameter \$nope'):
        evaluate('1 + $nope')


# --------------------------------------------------------------------------- .skl parsing


def test_every_reference_skill_file_parses(ut: Path) -> None:
    names = {}
    for path in ut_skill_files(ut):
        f = skl.load_skill_file(path)
        names[path.name] = ([s.name for s in f.skills], [(r.source, r.target) for r in f.reflections])
    assert names['stand.skl'] == (['SKILL_STAND'], [])
    assert names['kick.skl'] == (['SKILL_KICK_LEFT_LEG'], [('SKILL_KICK_LEFT_LEG', 'SKILL_KICK_RIGHT_LEG')])
    assert names['kick_ik_0.skl'][1] == [('SKILL_KICK_IK_0_LEFT_LEG', 'SKILL_KICK_IK_0_RIGHT_LEG')]


@pytest.mark.parametrize('robot_type', range(5))
def test_reference_skills_resolve_for_every_type(ut: Path, robot_type: int) -> None:
    p = params.load_type_params(ut / 'paramfiles', robot_type)
    files = [skl.load_skill_file(f) for f in ut_skill_files(ut)]
    for f in files:
        assert f.parameters() <= set(p), f'{f.path}: missing {sorted(f.parameters() - set(p))}'
    skills = skl.resolve_files(files, p)
    assert len(skills) == 5
    kick = skills['SKILL_KICK_LEFT_LEG']
    assert len(kick.states) == 17
    # State 9: settar EFF_LL2 ( 12 + $kick_p13 ) ...
    expected = (('llj2', (12 + p['kick_p13']) * D2R), ('llj6', (-12 + p['kick_p14']) * D2R))
    assert kick.states[9].commands[0] == SetTarget(64, expected)
    ik = skills['SKILL_KICK_IK_0_LEFT_LEG']
    assert ik.needs_ik
    assert ik.states[2].wait == pytest.approx(p['kick_ik_0_wait'])


def test_stand_skl_contents(ut: Path) -> None:
    stand = skl.load_skill_file(ut / 'skills' / 'stand.skl').resolve({})['SKILL_STAND']
    (state,) = stand.states  # the commented-out '#wait' lines are ignored
    assert state.wait == pytest.approx(0.04)
    reset, inc = state.commands
    assert reset == Reset(4, (BodyPart.ARM_LEFT, BodyPart.ARM_RIGHT, BodyPart.LEG_LEFT, BodyPart.LEG_RIGHT))
    assert isinstance(inc, IncTarget)
    assert dict(inc.increments)['llj4'] == pytest.approx(-40 * D2R)


def test_unknown_parameter_names_skill_line_and_parameter(ut: Path) -> None:
    f = skl.load_skill_file(ut / 'skills' / 'kick.skl')
    p = params.load_type_params(ut / 'paramfiles', 0)
    del p['kick_p13']
    expected = r'skill SKILL_KICK_LEFT_LEG in .*kick\.skl, line 64: unknown parameter \$kick_p13'
    with pytest.raises(ValueError, match=expected):
        f.resolve(p)


def test_effector_table() -> None:
    assert EFFECTOR_JOINTS['EFF_H1'] == 'hj1'
    assert EFFECTOR_JOINTS['EFF_RA4'] == 'raj4'
    assert EFFECTOR_JOINTS['EFF_LL7'] == 'llj7'
    assert len(EFFECTOR_JOINTS) == 2 + 8 + 14
    nao4 = set(nao(4).joint_names)
    assert set(EFFECTOR_JOINTS.values()) == nao4


SKILL = """
STARTSKILL S
STARTSTATE
settar EFF_LL1 1 end
wait 0.1 end
ENDSTATE
ENDSKILL
"""


@pytest.mark.parametrize(
    ('text', 'line', 'words'),
    [
        (SKILL.replace('settar EFF_LL1 1 end', 'jump EFF_LL1 1 end'), 4, "unknown command 'jump'"),
        (SKILL.replace('EFF_LL1', 'EFF_XX1'), 4, "unknown joint 'EFF_XX1'"),
        (SKILL.replace('EFF_LL1 1 end', 'EFF_LL1 end'), 4, 'expected a value for EFF_LL1'),
        (SKILL.replace('settar EFF_LL1 1 end', 'settar EFF_LL1 (1 end'), 4, 'expected'),
        (SKILL.replace('settar EFF_LL1 1 end', 'reset KNEE end'), 4, "unknown body part 'KNEE'"),
        (SKILL.replace('settar EFF_LL1 1 end', 'setfoot LEG_LEFT 1 2 3 end'), 4, 'expected a value'),
        (SKILL.replace('settar EFF_LL1 1 end', 'setfoot ARM_LEFT 1 2 3 4 5 6 end'), 4, 'LEG_LEFT or LEG_RIGHT'),
        (SKILL.replace('wait 0.1 end', 'wait 0.1 end\nwait 0.2 end'), 6, 'second wait'),
        (SKILL.replace('ENDSKILL', ''), 8, "expected 'ENDSKILL'"),
        (SKILL.replace('STARTSKILL S', 'STARTSKILL S\nsettar'), 3, 'needs at least one STARTSTATE'),
        (SKILL + 'REFLECTSKILL S\n', 9, 'reflected skill name'),
        (SKILL.replace('1 end', '1 @ end'), 4, "unexpected character '@'"),
    ],
)
def test_skl_errors_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ValueError, match=rf'^x\.skl:{line}: .*{words}'):
        parse_skl(text, 'x.skl')


def test_skl_resolve_errors() -> None:
    f = parse_skl(SKILL + 'REFLECTSKILL T U\n', 'x.skl')
    with pytest.raises(ValueError, match=r'x\.skl:8: REFLECTSKILL of unknown skill T'):
        f.resolve({})
    f = parse_skl(SKILL + SKILL, 'x.skl')
    with pytest.raises(ValueError, match='already defined'):
        f.resolve({})
    f = parse_skl(SKILL.replace('wait 0.1', 'wait (1 / ($a - $a))'), 'x.skl')
    with pytest.raises(ValueError, match=r'skill S in x\.skl, line 5: division by zero'):
        f.resolve({'a': 1.0})


def test_greedy_values_follow_ut() -> None:
    # As in UT's grammar, a value is the longest expression: "5 -3" is 5 - 3.
    f = parse_skl(SKILL.replace('EFF_LL1 1', 'EFF_LL1 5 -3 EFF_LL2 -1'))
    assert f.resolve({})['S'].states[0].commands[0] == SetTarget(4, (('llj1', 2 * D2R), ('llj2', -1 * D2R)))


# --------------------------------------------------------------------------- reflection


def test_flipped_joints_match_the_nao_limits() -> None:
    """Mirroring maps a joint's range onto its mirror's: same if kept, negated if flipped."""
    robot = nao(4).by_name
    for joint, spec in robot.items():
        mirror = robot[MIRROR_JOINT[joint]]
        if joint in FLIPPED_JOINTS:
            assert (mirror.lower, mirror.upper) == pytest.approx((-spec.upper, -spec.lower)), joint
        else:
            assert (mirror.lower, mirror.upper) == pytest.approx((spec.lower, spec.upper)), joint


def test_reset_poses_are_mirror_images() -> None:
    for left, right in ((BodyPart.ARM_LEFT, BodyPart.ARM_RIGHT), (BodyPart.LEG_LEFT, BodyPart.LEG_RIGHT)):
        reflected = Reset(1, (left,)).reflect()
        assert reflected.parts == (right,)
        mirrored = dict(SetTarget(1, RESET_POSE[left]).reflect().targets)
        assert mirrored == pytest.approx(dict(RESET_POSE[right]))


@pytest.mark.parametrize('robot_type', range(5))
def test_reflecting_twice_gives_the_original(ut: Path, robot_type: int) -> None:
    p = params.load_type_params(ut / 'paramfiles', robot_type)
    skills = skl.resolve_files([skl.load_skill_file(f) for f in ut_skill_files(ut)], p)
    for name, skill in skills.items():
        assert skill.reflect(name).reflect(name) == skill
        assert skill.reflect(name) != skill


def test_reflected_kick_moves_the_other_leg(ut: Path) -> None:
    p = params.load_type_params(ut / 'paramfiles', 0)
    skills = skl.load_skill_file(ut / 'skills' / 'kick.skl').resolve(p)
    left, right = skills['SKILL_KICK_LEFT_LEG'], skills['SKILL_KICK_RIGHT_LEG']
    assert right == left.reflect('SKILL_KICK_RIGHT_LEG')
    # State 1: settar EFF_LL2 -5 EFF_LL6 5 EFF_RL2 -5 EFF_RL6 5: rolls flip sign and side.
    assert dict(right.states[1].commands[0].targets) == pytest.approx(
        {'rlj2': 5 * D2R, 'rlj6': -5 * D2R, 'llj2': 5 * D2R, 'llj6': -5 * D2R}
    )
    # State 12 (file "State 13"): inctar EFF_LL3 20 EFF_LL4 -60 EFF_LL5 20: pitches keep their sign.
    assert dict(right.states[12].commands[0].increments) == pytest.approx(
        {'rlj3': 20 * D2R, 'rlj4': -60 * D2R, 'rlj5': 20 * D2R}
    )
    # State 4: settar EFF_RL1 -5.0: the hip yaw-pitch keeps its sign.
    assert dict(right.states[4].commands[1].targets) == pytest.approx({'llj1': -5 * D2R})
    # Scales move to the other side unchanged.
    assert right.states[14].commands[0].scales[0] == ('rlj3', left.states[14].commands[0].scales[0][1])
    assert right.states[16].commands[0].parts == (BodyPart.LEG_RIGHT, BodyPart.LEG_LEFT)


def test_reflected_foot_poses(ut: Path) -> None:
    p = params.load_type_params(ut / 'paramfiles', 0)
    skills = skl.load_skill_file(ut / 'skills' / 'kick_ik_0.skl').resolve(p)
    left, right = skills['SKILL_KICK_IK_0_LEFT_LEG'], skills['SKILL_KICK_IK_0_RIGHT_LEG']
    foot_l, foot_r = left.states[1].commands[1], right.states[1].commands[1]
    assert isinstance(foot_l, SetFoot)
    assert foot_l.leg is BodyPart.LEG_LEFT and foot_r.leg is BodyPart.LEG_RIGHT
    assert foot_l.pose.x == pytest.approx(p['kick_ik_0_x0'])
    assert foot_l.pose.roll == pytest.approx(p['kick_ik_0_a0'] * D2R)
    lp, rp = foot_l.pose, foot_r.pose
    assert (rp.x, rp.y, rp.z, rp.roll, rp.pitch, rp.yaw) == (lp.x, -lp.y, lp.z, -lp.roll, lp.pitch, -lp.yaw)
    curve_l, curve_r = left.states[2].commands[2], right.states[2].commands[2]
    assert len(curve_l.points) == 3  # one of the four control points is commented out
    assert curve_r.leg is BodyPart.LEG_RIGHT
    assert [q.y for q in curve_r.points] == [-q.y for q in curve_l.points]


# --------------------------------------------------------------------------- player

ONE = """
STARTSKILL ONE
STARTSTATE
settar EFF_LL3 40 EFF_LL4 -60 end
wait 0.4 end
ENDSTATE
STARTSTATE
inctar EFF_LL3 -20 end
setscale EFF_LL4 2 end
settar EFF_LL4 0 end
wait 0.2 end
ENDSTATE
STARTSTATE
reset LEG_LEFT end
ENDSTATE
ENDSKILL
"""


def one() -> skl.Skill[float]:
    return parse_skl(ONE, 'one.skl').resolve({})['ONE']


def run(player: SkillPlayer, joints: dict[str, float], t0: float = 0.0, limit: float = 10.0):
    """Play to the end with joints that follow their targets exactly; yields (t, targets)."""
    t, reset = t0, True
    while t < t0 + limit:
        targets, finished = player.execute(reset, t, joints)
        yield t, targets, finished
        if finished:
            return
        joints = {**joints, **targets}
        reset, t = False, round(t + DT, 9)
    raise AssertionError(f'{player.name} did not finish in {limit} s')


def test_player_interpolates_linearly() -> None:
    player = SkillPlayer(one())
    joints = {'llj3': 0.0, 'llj4': 0.0, 'hj1': 0.3}
    targets, finished = player.execute(True, 10.0, joints)
    assert not finished
    assert targets == pytest.approx(joints)  # at the keyframe's start
    targets, _ = player.execute(False, 10.2, joints)  # half of the 0.4 s wait
    assert targets['llj3'] == pytest.approx(20 * D2R)
    assert targets['llj4'] == pytest.approx(-30 * D2R)
    assert targets['hj1'] == pytest.approx(0.3)  # untouched joints hold
    targets, _ = player.execute(False, 10.3, joints)
    assert targets['llj3'] == pytest.approx(30 * D2R)


def test_player_inctar_scale_reset_and_finish() -> None:
    player = SkillPlayer(one())
    joints = {'llj3': 40 * D2R, 'llj4': -60 * D2R, 'llj2': 0.0}
    player.execute(True, 0.0, joints)
    _, finished = player.execute(False, 0.4, joints)  # keyframe 1 starts
    assert player.keyframe == 1 and not finished
    targets, _ = player.execute(False, 0.45, joints)
    assert targets['llj3'] == pytest.approx((40 - 20 * 0.25) * D2R)  # inctar from the target
    assert targets['llj4'] == pytest.approx(-60 * D2R * 0.5)  # scale 2: twice as fast
    targets, _ = player.execute(False, 0.6, joints)  # keyframe 2: no wait, one cycle
    assert player.keyframe == 2
    assert targets['llj2'] == pytest.approx(6 * D2R)
    assert targets['llj4'] == pytest.approx(-30 * D2R)
    targets, finished = player.execute(False, 0.62, joints)
    assert finished
    assert targets == pytest.approx({'llj3': 18 * D2R, 'llj4': -30 * D2R, 'llj2': 6 * D2R})
    assert player.execute(False, 5.0, joints)[1]  # stays finished
    # reset starts again from the first keyframe, from the joints as they are now
    targets, finished = player.execute(True, 6.0, {'llj3': 0.0, 'llj4': 0.0})
    assert not finished and player.keyframe == 0
    assert player.execute(False, 6.2, {'llj3': 0.0, 'llj4': 0.0})[0]['llj3'] == pytest.approx(20 * D2R)


def test_player_runs_to_completion_in_cycles() -> None:
    steps = list(run(SkillPlayer(one()), {'llj3': 0.0, 'llj4': 0.0}))
    assert steps[-1][2]
    assert steps[-1][0] == pytest.approx(0.62)  # 0.4 + 0.2 + one cycle for the keyframe without a wait


def test_player_clamps_to_the_robot() -> None:
    skill = parse_skl(SKILL.replace('EFF_LL1 1', 'EFF_LL1 -200 EFF_LL7 10'), 'x.skl').resolve({})['S']
    player = SkillPlayer(skill, robot=nao(0))
    *_, (_, targets, finished) = run(player, {'llj1': 0.0, 'llj7': 0.0})
    assert finished
    assert targets == {'llj1': pytest.approx(-90 * D2R)}  # nao0 has no toes


class FakeSolver:
    def __init__(self) -> None:
        self.calls: list[tuple[str, BodyPart]] = []

    def foot(self, leg, pose, joints):
        self.calls.append(('foot', leg))
        return {'llj3' if leg is BodyPart.LEG_LEFT else 'rlj3': pose.x}

    def stabilize(self, leg, zmp_x, zmp_y, joints):
        self.calls.append(('stabilize', leg))


def test_ik_skills_need_a_solver(ut: Path) -> None:
    p = params.load_type_params(ut / 'paramfiles', 4)
    skills = skl.load_skill_file(ut / 'skills' / 'kick_ik_0.skl').resolve(p)
    player = SkillPlayer(skills['SKILL_KICK_IK_0_RIGHT_LEG'])
    assert not player.is_ready()
    with pytest.raises(RuntimeError, match='needs a LegSolver'):
        player.execute(True, 0.0, {})
    solver = FakeSolver()
    player = SkillPlayer(skills['SKILL_KICK_IK_0_RIGHT_LEG'], nao(4), solver)
    assert player.is_ready()
    steps = list(run(player, {j: 0.0 for j in nao(4).joint_names}))
    assert steps[-1][2]
    assert {leg for _, leg in solver.calls} == {BodyPart.LEG_RIGHT}
    assert len(solver.calls) >= 3  # setfoot, then the curve on several cycles


def test_curve_pose_follows_ut_offsets() -> None:
    pts = (skl.Pose6(1.0, 0, 0, 0, 0, 0), skl.Pose6(0.5, 0, 0, 0, 0, 0), skl.Pose6(2.0, 0, 0, 0, 0, 0))
    curve = skl.Curve(1, BodyPart.LEG_LEFT, pts)
    assert engine.curve_pose(curve, 0.0).x == pytest.approx(1.0)  # first point: relative to the ball
    assert engine.curve_pose(curve, 0.5).x == pytest.approx(1.5)  # others: relative to the first
    assert engine.curve_pose(curve, 1.0).x == pytest.approx(3.0)


@pytest.mark.parametrize('robot_type', range(5))
def test_reference_skills_play(ut: Path, robot_type: int) -> None:
    p = params.load_type_params(ut / 'paramfiles', robot_type)
    registry = load_registry([ut / 'skills'], p)
    robot = nao(robot_type)
    for name in ('SKILL_STAND', 'SKILL_KICK_LEFT_LEG', 'SKILL_KICK_RIGHT_LEG'):
        steps = list(run(registry.player(name, robot), {j: 0.0 for j in robot.joint_names}))
        assert steps[-1][2]
        assert steps[-1][0] == pytest.approx(registry[name].duration, abs=2 * DT + 1e-6)


# --------------------------------------------------------------------------- registry and our skills


def test_registry_rejects_duplicates() -> None:
    registry = SkillRegistry([one()])
    assert 'ONE' in registry and len(registry) == 1
    with pytest.raises(ValueError, match='ONE is already registered'):
        registry.add(one())
    with pytest.raises(KeyError, match='no skill'):
        registry.player('TWO')


def test_shipped_skills_parse_and_stay_within_limits() -> None:
    files = sorted(DATA_DIR.glob('*.skl'))
    assert {f.name for f in files} >= {'stand.skl', 'wave.skl'}
    assert (DATA_DIR / 'README.md').is_file()
    registry = load_registry([DATA_DIR])
    assert set(registry) >= {'SKILL_STAND', 'SKILL_WAVE_RIGHT_ARM', 'SKILL_WAVE_LEFT_ARM'}
    for robot_type in range(5):
        limits = nao(robot_type).by_name
        for name, skill in registry.items():
            assert not skill.needs_ik
            player = SkillPlayer(skill)
            joints = {j: 0.0 for j in limits}
            for _, targets, _ in run(player, joints):
                for j, v in targets.items():
                    assert limits[j].lower - 1e-9 <= v <= limits[j].upper + 1e-9, (name, j, v / D2R)


@pytest.mark.parametrize('name', ['SKILL_STAND', 'SKILL_WAVE_RIGHT_ARM', 'SKILL_WAVE_LEFT_ARM'])
def test_shipped_skills_run_to_completion(name: str) -> None:
    registry = load_registry([DATA_DIR])
    robot = nao(0)
    player = registry.player(name, robot)
    assert player.is_ready()
    steps = list(run(player, {j: 0.0 for j in robot.joint_names}, t0=3.0))
    assert steps[-1][2]
    assert steps[-1][0] - 3.0 == pytest.approx(registry[name].duration, abs=1e-6)
    final = steps[-1][1]
    if name == 'SKILL_STAND':
        assert final['llj4'] == pytest.approx(-50 * D2R) and final['rlj3'] == pytest.approx(25 * D2R)
    else:
        arm = 'raj' if 'RIGHT' in name else 'laj'
        sign = 1.0 if arm == 'raj' else -1.0
        assert final[f'{arm}4'] == pytest.approx(sign * 45 * D2R)
        assert final['llj3'] == 0.0  # legs untouched


def test_shipped_and_reference_skills_load_together(ut: Path) -> None:
    p = params.load_type_params(ut / 'paramfiles', 0)
    with pytest.raises(ValueError, match='SKILL_STAND is already defined'):
        load_registry([DATA_DIR, ut / 'skills'], p)
    registry = load_registry([DATA_DIR, ut / 'skills' / 'kick.skl'], p)
    assert 'SKILL_KICK_RIGHT_LEG' in registry and 'SKILL_WAVE_LEFT_ARM' in registry


@pytest.mark.parametrize('robot_type', range(5))
def test_nao_getup_skills_resolve_per_type_within_limits(robot_type: int) -> None:
    """The shipped get-ups resolve against defaultParams.txt + the type's file and stay within its joint ranges."""
    registry = engine.load_nao_registry(robot_type)
    robot = nao(robot_type)
    for name in ('GETUP_FRONT', 'GETUP_BACK', 'GETUP_SIDE', 'GETUP_BACK_FAST'):
        player = registry.player(name, robot)
        steps = list(run(player, dict.fromkeys(robot.joint_names, 0.0)))
        assert steps[-1][2], f'{name} did not finish'
        for _, targets, _ in steps:
            for j, v in targets.items():
                assert robot.by_name[j].lower - 1e-9 <= v <= robot.by_name[j].upper + 1e-9, (name, j, v / D2R)


@pytest.mark.parametrize('robot_type', range(5))
def test_nao_side_getup_is_symmetric_and_ends_where_the_back_getup_starts(robot_type: int) -> None:
    """GETUP_SIDE serves both sides (its targets are their own mirror image), is short, and ends in the back
    get-up's first pose (stand legs, arms at the sides): the motion node plays GETUP_BACK after it."""
    registry = engine.load_nao_registry(robot_type)
    robot = nao(robot_type)
    steps = list(run(registry.player('GETUP_SIDE', robot), dict.fromkeys(robot.joint_names, 0.0)))
    for _, targets, _ in steps:
        for j, v in targets.items():
            sign = -1.0 if j in skl.FLIPPED_JOINTS else 1.0
            assert targets[skl.MIRROR_JOINT[j]] == pytest.approx(sign * v, abs=1e-9), j
    assert 0.0 < registry['GETUP_SIDE'].duration <= 2.0
    final, back = steps[-1][1], registry['GETUP_BACK'].states[0]
    first = {j: v for c in back.commands if isinstance(c, skl.SetTarget) for j, v in c.targets}
    for j in ('llj3', 'llj4', 'llj5', 'rlj3', 'rlj4', 'rlj5', 'laj1', 'raj1'):
        assert final[j] == pytest.approx(first[j], abs=1e-9), j


def test_nao_skill_parameter_files_override_in_order(tmp_path: Path) -> None:
    """An extra parameter file changes the skill for that load only; an unknown file is an error."""
    extra = tmp_path / 'mine.txt'
    extra.write_text('# faster rise\ngetup_front_3_leg3\t40\n')
    base = engine.load_nao_registry(0)['GETUP_FRONT']
    mine = engine.load_nao_registry(0, [extra])['GETUP_FRONT']

    def hip_targets(skill: skl.Skill) -> list[float]:
        return [
            dict(c.targets)['llj3']
            for state in skill.states
            for c in state.commands
            if isinstance(c, skl.SetTarget) and 'llj3' in dict(c.targets)
        ]

    assert hip_targets(base)[2] == pytest.approx(54.0 * D2R) and hip_targets(mine)[2] == pytest.approx(40.0 * D2R)
    assert hip_targets(base)[:2] == hip_targets(mine)[:2]
    with pytest.raises(OSError):
        engine.load_nao_registry(0, [tmp_path / 'missing.txt'])


# --------------------------------------------------------------------------- Nao kicks

KICKS = ('KICK_LONG', 'KICK_QUICK', 'KICK_VAR')


@pytest.mark.parametrize('robot_type', range(5))
def test_nao_kicks_resolve_per_type_run_to_completion_within_limits(robot_type: int) -> None:
    """kick_long/kick_quick/kick_var.skl resolve for every type, finish, and stay within its joint ranges."""
    files = {p.name for p in (DATA_DIR / 'nao').glob('kick_*.skl')}
    assert files >= {'kick_long.skl', 'kick_quick.skl', 'kick_var.skl'}
    registry = engine.load_nao_registry(robot_type)
    robot = nao(robot_type)
    for kick in KICKS:
        for side in ('RIGHT', 'LEFT'):
            name = f'{kick}_{side}'
            player = registry.player(name, robot)
            assert player.is_ready() and not registry[name].needs_ik
            steps = list(run(player, dict.fromkeys(robot.joint_names, 0.0), t0=5.0))
            assert steps[-1][2], f'{name} did not finish'
            assert steps[-1][0] - 5.0 == pytest.approx(registry[name].duration, abs=DT + 1e-6)
            for _, targets, _ in steps:
                for j, v in targets.items():
                    assert robot.by_name[j].lower - 1e-9 <= v <= robot.by_name[j].upper + 1e-9, (name, j, v / D2R)
            # every kick ends in the stand pose, feet side by side (the motion node's stand takes over)
            final = steps[-1][1]
            for leg in ('llj', 'rlj'):
                assert final[f'{leg}2'] == pytest.approx(0.0) and final[f'{leg}6'] == pytest.approx(0.0)
                assert final[f'{leg}4'] < -30 * D2R
    assert registry['KICK_QUICK_RIGHT'].duration <= 0.5 + 1e-9


def _raw_targets(skill: skl.Skill) -> list[list[tuple[str, float]]]:
    return [
        sorted((j, round(v, 9)) for c in state.commands if isinstance(c, SetTarget) for j, v in c.targets)
        for state in skill.states
    ]


@pytest.mark.parametrize('robot_type', range(5))
def test_nao_left_kicks_mirror_the_right(robot_type: int) -> None:
    """Each LEFT kick is the RIGHT one mirrored: the other leg kicks, roll signs flip, waits are equal."""
    registry = engine.load_nao_registry(robot_type)
    for kick in KICKS:
        right, left = registry[f'{kick}_RIGHT'], registry[f'{kick}_LEFT']
        assert [s.wait for s in left.states] == [s.wait for s in right.states]
        assert _raw_targets(left) == _raw_targets(right.reflect('X'))

        # the kicking leg is the right one in the RIGHT kick: its hip pitch moves most
        def swing(skill: skl.Skill, joint: str) -> float:
            values = [
                v
                for state in skill.states
                for c in state.commands
                if isinstance(c, SetTarget)
                for j, v in c.targets
                if j == joint
            ]
            return max(values, default=0.0) - min(values, default=0.0)

        assert swing(right, 'rlj3') > swing(right, 'llj3') and swing(left, 'llj3') > swing(left, 'rlj3')
        for mine, other in (('llj2', 'rlj2'), ('llj6', 'rlj6')):
            r = dict(p for s in _raw_targets(right) for p in s)
            m = dict(p for s in _raw_targets(left) for p in s)
            assert m[mine] == pytest.approx(-r[other])


def test_kick_strength_overrides_are_per_player() -> None:
    """registry.player(name, robot, overrides={...}) re-resolves the skill with those $parameters only."""
    registry = engine.load_nao_registry(0)
    robot = nao(0)
    full = registry.player('KICK_VAR_RIGHT', robot)
    soft = registry.player('KICK_VAR_RIGHT', robot, overrides={'kick_strength': 0.25})
    scale = lambda skill: dict(next(c for c in skill.states[1].commands if isinstance(c, skl.SetScale)).scales)  # noqa: E731
    p = params.load_type_params(DATA_DIR / 'nao', 0)
    s_full = p['kv_scale_min'] + (1 - p['kv_scale_min']) * p['kick_strength']
    s_soft = p['kv_scale_min'] + (1 - p['kv_scale_min']) * 0.25
    assert scale(full.skill)['rlj3'] == pytest.approx(s_full)
    assert scale(soft.skill)['rlj3'] == pytest.approx(s_soft)
    assert soft.skill.states[1].wait == pytest.approx(p['kq_1_wait'] / s_soft)
    assert registry['KICK_VAR_RIGHT'] is full.skill  # the registry's own skill is unchanged
    left = registry.player('KICK_VAR_LEFT', robot, overrides={'kick_strength': 0.25})
    assert scale(left.skill)['llj3'] == pytest.approx(s_soft)  # reflections follow
    assert registry.with_overrides('KICK_VAR_RIGHT', {'kick_strength': 0.25}) is soft.skill  # cached
    with pytest.raises(ValueError, match='unknown skill parameter'):
        registry.player('KICK_VAR_RIGHT', robot, overrides={'kick_strenght': 0.5})
    with pytest.raises(ValueError, match='finite'):
        registry.player('KICK_VAR_RIGHT', robot, overrides={'kick_strength': float('nan')})
    with pytest.raises(ValueError, match='load_registry'):
        SkillRegistry([registry['KICK_VAR_RIGHT']]).player('KICK_VAR_RIGHT', overrides={'kick_strength': 1.0})
    steps = list(run(soft, dict.fromkeys(robot.joint_names, 0.0)))
    assert steps[-1][2] and steps[-1][0] == pytest.approx(soft.skill.duration, abs=DT + 1e-6)


def test_motion_core_starts_a_skill_with_parameter_overrides() -> None:
    from robocup3d_bridge.config_files import load_config  # noqa: PLC0415
    from robocup3d_motion.core import MotionCore  # noqa: PLC0415

    core = MotionCore(nao(0), load_config('robots.yaml'))
    core.on_imu(0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 9.81), wall=0.0)
    assert core.request('KICK_VAR_RIGHT kick_strength=0.3') == ''
    assert core.skill == 'KICK_VAR_RIGHT'
    assert core.player.skill == engine.load_nao_registry(0).with_overrides('KICK_VAR_RIGHT', {'kick_strength': 0.3})
    assert core.request('KICK_QUICK_LEFT') == '' and core.skill == 'KICK_QUICK_LEFT'
    assert 'bad parameter override' in core.request('KICK_VAR_RIGHT kick_strength=strong')
    assert 'unknown skill parameter' in core.request('KICK_VAR_RIGHT power=1')
    assert core.skill == 'KICK_QUICK_LEFT'  # refused requests change nothing
