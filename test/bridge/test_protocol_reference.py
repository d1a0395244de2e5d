"""RCSSServerMJ's joint encoding against the way it was written before session 42 (kept here as the reference).

The per-cycle encoder tests the usual case (every value finite and in range) in one expression and hands anything
else to the checks as they always were; ``JointCommand.names`` returns the position's keys when the other fields
name no other joint. Same text, same warnings, same errors, on random commands that include NaN, infinities,
negative and huge gains, values out of range, missing and unknown joints, ints, numpy floats and numeric strings.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from robocup3d_bridge.protocol import (
    MAX_GAIN,
    Action,
    ActionError,
    JointCommand,
    MujocoProtocol,
    _clamp,
    make_protocol,
)
from robocup3d_description.robots import robot_spec

_R2D = 180.0 / math.pi


def _names_reference(cmd: JointCommand) -> list[str]:
    seen = dict.fromkeys(cmd.position)
    seen.update(dict.fromkeys(cmd.velocity))
    seen.update(dict.fromkeys(cmd.effort))
    seen.update(dict.fromkeys(cmd.kp))
    seen.update(dict.fromkeys(cmd.kd))
    return list(seen)


def _encode_joints_reference(proto: MujocoProtocol, cmd: JointCommand, warnings: list[str]) -> str:
    """``MujocoProtocol._encode_joints`` as it was at 4b8f9f9."""
    out = []
    pos, vel, eff, kp, kd = cmd.position, cmd.velocity, cmd.effort, cmd.kp, cmd.kd
    for name in _names_reference(cmd):
        effector, lo, hi, vmax, tmax = proto._limit(name)
        try:
            q, dq, p, d, tau = (
                float(pos.get(name, 0.0)),
                float(vel.get(name, 0.0)),
                float(kp.get(name, 0.0)),
                float(kd.get(name, 0.0)),
                float(eff.get(name, 0.0)),
            )
        except (TypeError, ValueError):
            raise ActionError(f'{name}: joint command values must be numbers') from None
        if not math.isfinite(q + dq + p + d + tau):
            raise ActionError(f'{name}: a value is not finite: q={q} dq={dq} kp={p} kd={d} tau={tau}')
        if not (0.0 <= p <= MAX_GAIN and 0.0 <= d <= MAX_GAIN):
            if p < 0 or d < 0:
                raise ActionError(f'{name}: gains must be >= 0, got kp={p} kd={d}')
            p, d = (_clamp(g, 0.0, MAX_GAIN, f'{name} {k}', warnings) for g, k in ((p, 'kp'), (d, 'kd')))
        if not -vmax <= dq <= vmax:
            dq = _clamp(dq, -vmax, vmax, f'{name} velocity', warnings)
        if not lo <= q <= hi:
            q = _clamp(q, lo, hi, f'{name} position', warnings)
        if not -tmax <= tau <= tmax:
            tau = _clamp(tau, -tmax, tmax, f'{name} torque', warnings)
        out.append('(%s %.6g %.6g %.6g %.6g %.6g)' % (effector, q * _R2D, dq * _R2D, p, d, tau))  # noqa: UP031
    return ''.join(out)


def _outcome(encode: object) -> tuple[str, object, list[str]]:
    warnings: list[str] = []
    try:
        return 'ok', encode(warnings), warnings
    except ActionError as exc:
        return 'error', str(exc), warnings


_ODD = (math.nan, math.inf, -math.inf, -0.0, 0.0, -1.0, 1e5, -1e5, 3, np.float64(0.25), '0.5', 'x', None, 1e308)


def _value(rng: random.Random, scale: float, odd: float) -> object:
    if rng.random() < odd:
        return rng.choice(_ODD)
    return rng.uniform(-scale, scale)


def _command(rng: random.Random, names: list[str], odd: float) -> JointCommand:
    cmd = JointCommand()
    for name in names:
        if rng.random() < 0.97:
            cmd.position[name] = _value(rng, 4.0, odd)
        if rng.random() < 0.9:
            cmd.velocity[name] = _value(rng, 120.0, odd)
        if rng.random() < 0.3:
            cmd.effort[name] = _value(rng, 1200.0, odd)
        if rng.random() < 0.95:
            gain = _value(rng, 12000.0, odd)
            cmd.kp[name] = abs(gain) if isinstance(gain, float) and rng.random() < 0.995 else gain
        if rng.random() < 0.95:
            gain = _value(rng, 20.0, odd)
            cmd.kd[name] = abs(gain) if isinstance(gain, float) and rng.random() < 0.995 else gain
    if rng.random() < 0.05:
        cmd.kd['no_such_joint'] = 1.0
    return cmd


@pytest.mark.parametrize('robot', ['T1', 'K1'])
def test_mujoco_joint_encoding_matches_the_reference(robot: str) -> None:
    proto = make_protocol(robot_spec('mujoco', robot), 'A', 2)
    assert isinstance(proto, MujocoProtocol)
    names = [j.name for j in proto.robot.joints]
    rng = random.Random(42)
    kinds = {'ok': 0, 'error': 0, 'warned': 0}
    for i in range(4000):
        odd = (0.0, 0.002, 0.05)[i % 3]
        shuffled = rng.sample(names, len(names)) if i % 5 == 0 else names
        cmd = _command(rng, shuffled, odd)
        assert cmd.names() == _names_reference(cmd)
        new = _outcome(lambda w, c=cmd: proto._encode_joints(c, w))
        ref = _outcome(lambda w, c=cmd: _encode_joints_reference(proto, c, w))
        assert new == ref, (i, cmd)
        kinds[new[0]] += 1
        kinds['warned'] += bool(new[2])
    assert min(kinds.values()) > 100, kinds  # every path was taken, many times


def test_mujoco_encoded_action_of_a_usual_command_is_unchanged() -> None:
    proto = make_protocol(robot_spec('mujoco', 'T1'), 'A', 2)
    names = [j.name for j in proto.robot.joints]
    cmd = JointCommand(
        position={j.name: 0.5 * (j.lower + j.upper) for j in proto.robot.joints},
        velocity=dict.fromkeys(names, 0.0),
        kp=dict.fromkeys(names, 60.0),
        kd=dict.fromkeys(names, 2.0),
    )
    text = proto.encode(Action(joints=cmd)).text
    warnings: list[str] = []
    assert text == _encode_joints_reference(proto, cmd, warnings) + '(syn)'
    assert not warnings
