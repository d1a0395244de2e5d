"""The parser's hinge-joint fast path against the way it was written before session 42 (kept here as the reference).

Session 42 splits RCSSServerMJ's messages with a regex of that server's exact spelling first (the general one only
when an ``(HJ`` in another form is left) and keeps the last message's joint names. Every field of the percept, the
order of its joints, perceptor kinds and errors included, must come out the same, on every captured message of both
servers and on the same messages with their joints respelled, cut short, given bad values or moved.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
from pathlib import Path

import pytest

from robocup3d_bridge import perception
from robocup3d_bridge.percept import Dialect, Percept

CAPTURES = Path(__file__).resolve().parents[2] / '..' / 'shared' / 'captures'


def _fast_joints_reference(text: str, p: Percept) -> str:
    """``robocup3d_bridge.perception._fast_joints`` as it was at 4b8f9f9."""
    pieces = perception._HJ_FAST.split(text)
    if len(pieces) == 1:
        return text
    names = [n[2:] if n.startswith('q_') else n for n in pieces[1::4]]
    axs, vxs = pieces[2::4], pieces[3::4]
    d2r = math.pi / 180.0
    try:
        angles = [float(a) * d2r for a in axs]
        rates = [float(v) * d2r for v in vxs if v is not None]
        ok = math.isfinite(sum(angles) + sum(rates))
    except ValueError:
        ok = False
    pos, vel = p.joint_positions, p.joint_velocities
    if ok:
        pos.update(zip(names, angles, strict=True))
        if len(rates) == len(names):
            vel.update(zip(names, rates, strict=True))
        else:
            vel.update((n, float(v) * d2r) for n, v in zip(names, vxs, strict=True) if v is not None)
    else:
        for name, ax, vx in zip(names, axs, vxs, strict=True):
            try:
                pos[name] = perception._f(ax) * d2r
                if vx is not None:
                    vel[name] = perception._f(vx) * d2r
            except ValueError as exc:
                pos.pop(name, None)
                p.errors.append(f'HJ {name}: {exc}')
    p.kinds.extend(['HJ'] * ((len(pieces) - 1) // 4))
    return ''.join(pieces[0::4])


def _as_data(p: Percept) -> list:
    """Every field of ``p``, dicts as their items in order (equal dicts in another order differ here)."""
    out = []
    for f in dataclasses.fields(p):
        v = getattr(p, f.name)
        out.append((f.name, list(v.items()) if isinstance(v, dict) else repr(v)))
    return out


def _parse(text: str, dialect: Dialect, monkeypatch: pytest.MonkeyPatch, reference: bool) -> object:
    with monkeypatch.context() as m:
        if reference:
            m.setattr(perception, '_fast_joints', _fast_joints_reference)
        try:
            return _as_data(perception.parse_percept(text, dialect))
        except perception.PerceptParseError as exc:
            return ('error', str(exc))


def _variants(text: str, rng: random.Random) -> list[str]:
    """``text`` and a few respellings of its hinge joints that the fast path must either take alike or leave."""
    out = [text]
    joints = list(re.finditer(r'\(HJ [^()]*(?:\([^()]*\)[^()]*)*\)', text))
    if not joints:
        return out
    j = rng.choice(joints)
    a, b = j.span()
    hj = text[a:b]
    for other in (
        hj.replace(')(ax', ') (ax'),  # rcssserver3d's spacing, in an MJ message
        re.sub(r'\(vx [^()]*\)', '', hj),  # no velocity
        hj.replace('(ax ', '(ax nan', 1),  # a bad angle
        hj.replace('(vx ', '(vx 1e999', 1),  # an infinite rate
        hj.replace('(n ', '(n  ', 1),  # two spaces
        hj[:-1],  # cut short: the message is malformed
        hj.replace('(HJ ', '(HJ', 1),
    ):
        out.append(text[:a] + other + text[b:])
    out.append(text[:a] + text[b:] + hj)  # a joint moved to the end
    out.append(text.replace(')(ax ', ') (ax '))  # every joint spelled as rcssserver3d does
    return out


def _captures() -> list[Path]:
    return sorted(CAPTURES.glob('*/*.txt')) if CAPTURES.is_dir() else []


@pytest.mark.skipif(not _captures(), reason='no captures in shared/captures')
@pytest.mark.parametrize('path', _captures(), ids=lambda p: f'{p.parent.name}/{p.name}')
def test_fast_joints_match_the_reference_on_captures(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dialect = Dialect.SIMSPARK if path.parent.name == 'simspark' else Dialect.MUJOCO
    lines = [ln for ln in path.read_text(encoding='ascii', errors='replace').splitlines() if ln.strip()]
    rng = random.Random(path.name)
    checked = 0
    for i, line in enumerate(lines[:400]):
        for text in _variants(line, rng) if i % 4 == 0 else [line]:
            assert _parse(text, dialect, monkeypatch, False) == _parse(text, dialect, monkeypatch, True), text[:200]
            checked += 1
    assert checked >= min(len(lines), 400)


def test_fast_joints_keep_names_per_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """A message naming other joints (another robot in the same process) after one whose names were kept."""
    t1 = '(time (now 1.0))(HJ (n q_hj1)(ax 1.0)(vx 2.0))(HJ (n q_llj1)(ax 3.0)(vx 4.0))'
    k1 = '(time (now 1.0))(HJ (n q_hj2)(ax 1.0)(vx 2.0))(HJ (n llj1)(ax 3.0)(vx 4.0))'
    for text in (t1, k1, t1, t1, k1):
        assert _parse(text, Dialect.MUJOCO, monkeypatch, False) == _parse(text, Dialect.MUJOCO, monkeypatch, True)
    p = perception.parse_percept(k1, Dialect.MUJOCO)
    assert list(p.joint_positions) == ['hj2', 'llj1']
