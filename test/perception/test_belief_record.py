"""The world model's estimates packed as numbers for a recorder make the same messages as the world model builds.

``robocup3d_perception.belief_record``: the player packs ``pose``, ``ball`` and ``players`` as numbers, the
recorder builds the messages with :func:`~robocup3d_perception.conversions.pose_from_values`,
:func:`~robocup3d_perception.conversions.ball_from_values` and
:func:`~robocup3d_perception.belief_record.players_text`. Here the two ways meet on states of both sides
(the right team's frame is turned), with tracked robots of every kind; ``test/tools/test_record_rebuild.py``
compares a real recorded player's bag with its live topics.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from rclpy.serialization import serialize_message

from robocup3d_bridge.conversions import stamp_from_seconds
from robocup3d_perception import belief_record as br
from robocup3d_perception import conversions as conv
from robocup3d_perception.representations import (
    BallModel,
    PlayerEstimate,
    RobotPose,
    WorldState,
    frozen_array,
)


def _state(side: str, seed: int) -> WorldState:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(3, 3))
    b = rng.normal(size=(4, 4))
    pose = RobotPose(
        time=12.34,
        x=float(rng.normal()),
        y=np.float64(rng.normal()),  # the filter's values may be numpy scalars
        z=0.61,
        yaw=float(rng.uniform(-math.pi, math.pi)),
        roll=0.01,
        pitch=-0.02,
        covariance=frozen_array(a @ a.T),
    )
    ball = BallModel(
        time=12.34,
        position=frozen_array(rng.normal(size=3)),
        velocity=frozen_array(rng.normal(size=2)),
        stop=frozen_array(rng.normal(size=2)),
        covariance=frozen_array(b @ b.T),
        valid=True,
    )
    players = (
        PlayerEstimate(
            'Them', 3, False, frozen_array([1.5, -2.25]), frozen_array([0.1, 0.0]), frozen_array(b @ b.T), 12.0
        ),
        PlayerEstimate(
            None, None, False, frozen_array([-4.0, 0.3]), frozen_array([0.0, -0.2]), frozen_array(np.eye(4)), 11.9
        ),
        PlayerEstimate(
            'Us',
            2,
            True,
            frozen_array([0.0, 0.0]),
            frozen_array([0.0, 0.0]),
            frozen_array(np.eye(4) * 0.3),
            12.34,
            fallen=True,
            intent='kick',
        ),
    )
    return WorldState(time=12.34, side=side, pose=pose, ball=ball, players=players)


@pytest.mark.parametrize('side', ['left', 'right'])
def test_the_packed_beliefs_make_the_messages_the_world_model_builds(side: str) -> None:
    state = _state(side, 7 if side == 'left' else 8)
    stamp = stamp_from_seconds(state.time)

    t, values, frame = br.unpack_pose(br.pack_pose(state, b'field'))
    assert (t, frame) == (state.time, 'field')
    rebuilt = conv.pose_from_values(values, stamp_from_seconds(t), frame)
    assert serialize_message(rebuilt) == serialize_message(conv.pose_msg(state, stamp, 'field'))

    t, values, frame = br.unpack_ball(br.pack_ball(state, b'my_field'))
    assert (t, frame) == (state.time, 'my_field')
    rebuilt = conv.ball_from_values(values, stamp_from_seconds(t), frame)
    assert serialize_message(rebuilt) == serialize_message(conv.ball_msg(state, stamp, 'my_field'))

    assert br.players_text(br.pack_players(state)) == conv.players_msg(state).data


def test_a_truncated_players_record_is_refused() -> None:
    packed = br.pack_players(_state('left', 1))
    with pytest.raises(ValueError, match='truncated'):
        br.players_text(packed[:-3])
