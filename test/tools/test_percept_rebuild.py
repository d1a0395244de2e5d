"""The recorder's rebuild of a player's percept topics, on captured server messages of both servers."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from robocup3d_bridge.percept import Dialect
from robocup3d_bridge.percept_topics import PerceptTopics
from robocup3d_bridge.perception import parse_percept
from robocup3d_bridge.protocol import make_protocol
from robocup3d_bridge.sanitize import PerceptSanitizer
from robocup3d_description.robots import mujoco_robot, nao
from robocup3d_tools.percept_rebuild import PerceptRebuild


@pytest.mark.parametrize(
    ('capture', 'robot'),
    [
        ('rcssservermj/capture_T1.txt', 'T1'),
        ('rcssservermj/capture_K1.txt', 'K1'),
        ('simspark/type0_single_agent.txt', 'nao0'),
        ('simspark/match_A2_Alpha2_type4.txt', 'nao4'),
        ('simspark/say_edgecases_A2_Alpha2_listener.txt', 'nao0'),
    ],
)
def test_the_rebuild_gives_what_the_bridges_steps_give(shared_dir: Path, capture: str, robot: str) -> None:
    """Robot and dialect found from the first message; then, message for message, the bridge's own steps."""
    lines = [line for line in (shared_dir / 'captures' / capture).read_text().splitlines() if line.startswith('(')]
    assert lines
    rebuild = PerceptRebuild('/Alpha/p2')
    spec = mujoco_robot(robot) if robot in ('T1', 'K1') else nao(int(robot[3:]))
    dialect = Dialect.MUJOCO if robot in ('T1', 'K1') else Dialect.SIMSPARK
    topics, sanitizer = PerceptTopics(spec, 'Alpha/p2/'), PerceptSanitizer(spec.joint_names)
    protocol = make_protocol(spec, 'Alpha', 2)
    seen: set[str] = set()
    for line in lines:
        ours = copy.deepcopy(rebuild.messages(line, lambda _: True))  # joint_states and imu are refilled
        p = parse_percept(line, dialect)
        sanitizer.clean(p)
        protocol.observe(p)
        theirs = topics.messages(p, protocol.side.value, lambda _: True)
        assert ours == theirs
        seen.update(t for t, _ in ours)
    assert rebuild.robot is not None and rebuild.robot.name == spec.name
    assert {'joint_states', 'imu'} <= seen
    if robot == 'nao4':
        assert 'foot_contacts/lf1' in seen
