"""The UT Austin Villa skill language (``.skl``): parser, parameters, reflection.

A file holds skills and reflections::

    STARTSKILL SKILL_NAME
    STARTSTATE                      # one keyframe
    settar EFF_LL3 18 EFF_LL4 ( -30 + $p ) end
    wait 0.3 end
    ENDSTATE
    ENDSKILL
    REFLECTSKILL SKILL_NAME SKILL_NAME_MIRRORED

Tokens are separated by white space; ``#`` starts a comment. Values are expressions
of numbers and ``$param`` references with ``+ - * /``, unary signs and parentheses.
Commands inside a state: ``settar``/``inctar``/``setscale`` (joint value pairs),
``reset`` (body parts), ``wait``, ``setfoot``/``stabilize`` and ``STARTCURVE`` ...
``controlpoint`` ... ``ENDCURVE`` (foot poses for inverse kinematics); all but the
curve end with ``end``. File angles are degrees and lengths metres.

Parsing gives ``Skill[Expr]`` (values still expressions, file units); ``resolve`` with a
parameter dict gives ``Skill[float]`` in SI units (rad, m, s). Joints use our canonical
names (``llj3``), mapped from UT's effector names (``EFF_LL3``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Generic, TypeVar

__all__ = [
    'EFFECTOR_JOINTS',
    'FLIPPED_JOINTS',
    'MIRROR_JOINT',
    'RESET_POSE',
    'BinOp',
    'BodyPart',
    'Command',
    'Curve',
    'Expr',
    'IncTarget',
    'KeyFrame',
    'Neg',
    'Num',
    'Param',
    'Pose6',
    'Reflection',
    'Reset',
    'SetFoot',
    'SetScale',
    'SetTarget',
    'Skill',
    'SkillFile',
    'Stabilize',
    'evaluate',
    'load_skill_file',
    'parse_expression',
    'parse_skl',
    'resolve_files',
]

_D2R = math.pi / 180.0

# --------------------------------------------------------------------------- joints

#: UT effector enum name -> canonical (SimSpark perceptor) joint name.
EFFECTOR_JOINTS: dict[str, str] = {
    'EFF_H1': 'hj1',
    'EFF_H2': 'hj2',
    **{f'EFF_{ut}{i}': f'{ours}{i}' for ut, ours, n in (('LA', 'laj', 4), ('RA', 'raj', 4)) for i in range(1, n + 1)},
    **{f'EFF_{ut}{i}': f'{ours}{i}' for ut, ours in (('LL', 'llj'), ('RL', 'rlj')) for i in range(1, 8)},
}

#: Joint -> its mirror image across the sagittal plane (head joints map to themselves).
MIRROR_JOINT: dict[str, str] = {
    'hj1': 'hj1',
    'hj2': 'hj2',
    **{f'{a}{i}': f'{b}{i}' for a, b in (('laj', 'raj'), ('raj', 'laj')) for i in range(1, 5)},
    **{f'{a}{i}': f'{b}{i}' for a, b in (('llj', 'rlj'), ('rlj', 'llj')) for i in range(1, 8)},
}

#: Joints whose angle changes sign when mirrored: rotations about the x (roll) and z
#: (yaw) axes. Pitch joints (y axis, incl. the Nao's 45-degree hip yaw-pitch, whose
#: left and right ranges are equal) keep their sign. UT's table agrees except for the
#: head yaw, which UT leaves unflipped; a mirrored look-left should look right.
FLIPPED_JOINTS: frozenset[str] = frozenset(
    {'hj1', 'laj2', 'laj3', 'laj4', 'raj2', 'raj3', 'raj4', 'llj2', 'llj6', 'rlj2', 'rlj6'}
)


class BodyPart(Enum):
    """Body parts that ``reset`` and the foot commands name."""

    HEAD = 'HEAD'
    ARM_LEFT = 'ARM_LEFT'
    ARM_RIGHT = 'ARM_RIGHT'
    LEG_LEFT = 'LEG_LEFT'
    LEG_RIGHT = 'LEG_RIGHT'

    @property
    def mirror(self) -> BodyPart:
        """The same part on the other side (the head is its own mirror)."""
        return _MIRROR_PART[self]


_MIRROR_PART = {
    BodyPart.HEAD: BodyPart.HEAD,
    BodyPart.ARM_LEFT: BodyPart.ARM_RIGHT,
    BodyPart.ARM_RIGHT: BodyPart.ARM_LEFT,
    BodyPart.LEG_LEFT: BodyPart.LEG_RIGHT,
    BodyPart.LEG_RIGHT: BodyPart.LEG_LEFT,
}
_LEGS = (BodyPart.LEG_LEFT, BodyPart.LEG_RIGHT)


def _pose(prefix: str, degrees: Iterable[float], flip: Iterable[int] = ()) -> tuple[tuple[str, float], ...]:
    sign = [-1.0 if i in set(flip) else 1.0 for i in range(1, 8)]
    return tuple((f'{prefix}{i}', s * d * _D2R) for i, (d, s) in enumerate(zip(degrees, sign, strict=False), start=1))


#: What ``reset <part>`` sets the targets to (rad): the language's neutral pose.
RESET_POSE: dict[BodyPart, tuple[tuple[str, float], ...]] = {
    BodyPart.HEAD: _pose('hj', (0.0, -45.0)),
    BodyPart.ARM_LEFT: _pose('laj', (-50.0, 30.0, 0.0, -50.0)),
    BodyPart.ARM_RIGHT: _pose('raj', (-50.0, 30.0, 0.0, -50.0), flip=(2, 3, 4)),
    BodyPart.LEG_LEFT: _pose('llj', (0.0, 6.0, 18.0, -30.0, 18.0, -6.0, 0.0)),
    BodyPart.LEG_RIGHT: _pose('rlj', (0.0, 6.0, 18.0, -30.0, 18.0, -6.0, 0.0), flip=(2, 6)),
}

# --------------------------------------------------------------------------- expressions


class ParameterError(ValueError):
    """A ``$name`` that the parameter dict lacks."""

    def __init__(self, name: str) -> None:
        super().__init__(f'unknown parameter ${name}')
        self.name = name


@dataclass(frozen=True, slots=True)
class Num:
    """A number literal."""

    value: float

    def evaluate(self, params: Mapping[str, float]) -> float:
        return self.value

    def parameters(self) -> frozenset[str]:
        return frozenset()


@dataclass(frozen=True, slots=True)
class Param:
    """A ``$name`` reference."""

    name: str

    def evaluate(self, params: Mapping[str, float]) -> float:
        try:
            return float(params[self.name])
        except KeyError:
            raise ParameterError(self.name) from None

    def parameters(self) -> frozenset[str]:
        return frozenset({self.name})


@dataclass(frozen=True, slots=True)
class Neg:
    """Unary minus."""

    operand: Expr

    def evaluate(self, params: Mapping[str, float]) -> float:
        return -self.operand.evaluate(params)

    def parameters(self) -> frozenset[str]:
        return self.operand.parameters()


@dataclass(frozen=True, slots=True)
class BinOp:
    """``left op right`` with op one of ``+ - * /``."""

    op: str
    left: Expr
    right: Expr

    def evaluate(self, params: Mapping[str, float]) -> float:
        a, b = self.left.evaluate(params), self.right.evaluate(params)
        if self.op == '+':
            return a + b
        if self.op == '-':
            return a - b
        if self.op == '*':
            return a * b
        if b == 0.0:
            raise ValueError('division by zero')
        return a / b

    def parameters(self) -> frozenset[str]:
        return self.left.parameters() | self.right.parameters()


Expr = Num | Param | Neg | BinOp

# --------------------------------------------------------------------------- tokens

_TOKEN = re.compile(
    r"""(?P<nl>\n)|(?P<ws>[ \t\r\f\v]+)|(?P<comment>\#[^\n]*)
    |(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
    |(?P<param>\$\w*)|(?P<word>[A-Za-z_]\w*)|(?P<op>[-+*/()])|(?P<bad>.)""",
    re.VERBOSE | re.ASCII,
)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # num, param, word, op, eof
    text: str
    line: int


def _tokenize(text: str, source: str) -> list[_Token]:
    tokens, line = [], 1
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or 'bad'
        if kind == 'nl':
            line += 1
        elif kind == 'bad':
            raise ValueError(f'{source}:{line}: unexpected character {m.group()!r}')
        elif kind == 'param' and len(m.group()) == 1:
            raise ValueError(f'{source}:{line}: "$" must be followed by a parameter name')
        elif kind not in ('ws', 'comment'):
            tokens.append(_Token(kind, m.group(), line))
    tokens.append(_Token('eof', '', line))
    return tokens


class _Cursor:
    """A position in a token list, with error reporting."""

    def __init__(self, tokens: list[_Token], source: str) -> None:
        self.tokens, self.pos, self.source = tokens, 0, source

    def peek(self) -> _Token:
        return self.tokens[self.pos]

    def take(self) -> _Token:
        tok = self.tokens[self.pos]
        if tok.kind != 'eof':
            self.pos += 1
        return tok

    def error(self, msg: str, tok: _Token | None = None) -> ValueError:
        return ValueError(f'{self.source}:{(tok or self.peek()).line}: {msg}')

    def expect_word(self, word: str) -> _Token:
        tok = self.take()
        if tok.kind != 'word' or tok.text != word:
            raise self.error(f'expected {word!r}, got {_describe(tok)}', tok)
        return tok

    def name(self, what: str) -> _Token:
        tok = self.take()
        if tok.kind != 'word' or tok.text == 'end':
            raise self.error(f'expected {what}, got {_describe(tok)}', tok)
        return tok

    def starts_value(self) -> bool:
        tok = self.peek()
        return tok.kind in ('num', 'param') or (tok.kind == 'op' and tok.text in '(-+')

    # expr := term (('+'|'-') term)* ; term := factor (('*'|'/') factor)*
    # factor := number | $param | '(' expr ')' | '-' factor | '+' factor
    def expr(self) -> Expr:
        node = self._term()
        while self.peek().kind == 'op' and self.peek().text in '+-':
            op = self.take().text
            node = BinOp(op, node, self._term())
        return node

    def _term(self) -> Expr:
        node = self._factor()
        while self.peek().kind == 'op' and self.peek().text in '*/':
            op = self.take().text
            node = BinOp(op, node, self._factor())
        return node

    def _factor(self) -> Expr:
        tok = self.take()
        if tok.kind == 'num':
            return Num(float(tok.text))
        if tok.kind == 'param':
            return Param(tok.text[1:])
        if tok.kind == 'op' and tok.text == '(':
            node = self.expr()
            close = self.take()
            if close.kind != 'op' or close.text != ')':
                raise self.error(f'expected ")", got {_describe(close)}', close)
            return node
        if tok.kind == 'op' and tok.text == '-':
            return Neg(self._factor())
        if tok.kind == 'op' and tok.text == '+':
            return self._factor()
        raise self.error(f'expected a value, got {_describe(tok)}', tok)

    def value(self, what: str) -> Expr:
        if not self.starts_value():
            raise self.error(f'expected a value for {what}, got {_describe(self.peek())}')
        return self.expr()


def _describe(tok: _Token) -> str:
    return 'end of file' if tok.kind == 'eof' else repr(tok.text)


def parse_expression(text: str) -> Expr:
    """The expression in ``text`` (all of it).

    Raises:
        ValueError: on a syntax error or trailing tokens.
    """
    cur = _Cursor(_tokenize(text, '<expression>'), '<expression>')
    node = cur.value('the expression')
    if cur.peek().kind != 'eof':
        raise cur.error(f'unexpected {_describe(cur.peek())} after the expression')
    return node


def evaluate(text: str, params: Mapping[str, float] | None = None) -> float:
    """Evaluate an expression such as ``( -12 + $kick_p14 ) * 2`` (no ``eval``)."""
    return parse_expression(text).evaluate(params or {})


# --------------------------------------------------------------------------- commands

V = TypeVar('V')
_Eval = Callable[[Expr], float]


@dataclass(frozen=True, slots=True)
class Pose6(Generic[V]):
    """A foot pose: position (m) relative to the ball, orientation roll/pitch/yaw (rad)."""

    x: V
    y: V
    z: V
    roll: V
    pitch: V
    yaw: V

    def resolve(self, ev: _Eval) -> Pose6[float]:
        x, y, z, r, p, w = (ev(v) for v in (self.x, self.y, self.z, self.roll, self.pitch, self.yaw))  # type: ignore[arg-type]
        return Pose6(x, y, z, r * _D2R, p * _D2R, w * _D2R)

    def reflect(self) -> Pose6[float]:
        """Mirror across the sagittal plane: y, roll and yaw change sign."""
        return Pose6(self.x, -self.y, self.z, -self.roll, self.pitch, -self.yaw)  # type: ignore[operator]


def _joint_values(pairs: tuple[tuple[str, V], ...], ev: _Eval, unit: float) -> tuple[tuple[str, float], ...]:
    return tuple((j, ev(v) * unit) for j, v in pairs)  # type: ignore[arg-type]


def _mirror_values(pairs: tuple[tuple[str, float], ...], flip: bool) -> tuple[tuple[str, float], ...]:
    return tuple((MIRROR_JOINT[j], -v if flip and j in FLIPPED_JOINTS else v) for j, v in pairs)


@dataclass(frozen=True, slots=True)
class SetTarget(Generic[V]):
    """``settar``: set joint targets (rad)."""

    line: int
    targets: tuple[tuple[str, V], ...]

    def resolve(self, ev: _Eval) -> SetTarget[float]:
        return SetTarget(self.line, _joint_values(self.targets, ev, _D2R))

    def reflect(self) -> SetTarget[float]:
        return SetTarget(self.line, _mirror_values(self.targets, flip=True))  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class IncTarget(Generic[V]):
    """``inctar``: add to joint targets (rad)."""

    line: int
    increments: tuple[tuple[str, V], ...]

    def resolve(self, ev: _Eval) -> IncTarget[float]:
        return IncTarget(self.line, _joint_values(self.increments, ev, _D2R))

    def reflect(self) -> IncTarget[float]:
        return IncTarget(self.line, _mirror_values(self.increments, flip=True))  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class SetScale(Generic[V]):
    """``setscale``: per-joint controller gain factors (1 = normal); they last until set again."""

    line: int
    scales: tuple[tuple[str, V], ...]

    def resolve(self, ev: _Eval) -> SetScale[float]:
        # Negative scales are legal: UT's type-1 kick parameters give one (3 + kick_scale3 < 0).
        return SetScale(self.line, _joint_values(self.scales, ev, 1.0))

    def reflect(self) -> SetScale[float]:
        return SetScale(self.line, _mirror_values(self.scales, flip=False))  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Reset(Generic[V]):
    """``reset``: targets of whole body parts back to ``RESET_POSE``."""

    line: int
    parts: tuple[BodyPart, ...]

    def resolve(self, ev: _Eval) -> Reset[float]:
        return Reset(self.line, self.parts)

    def reflect(self) -> Reset[float]:
        return Reset(self.line, tuple(p.mirror for p in self.parts))


@dataclass(frozen=True, slots=True)
class SetFoot(Generic[V]):
    """``setfoot``: move a foot to a pose relative to the ball (needs inverse kinematics)."""

    line: int
    leg: BodyPart
    pose: Pose6[V]

    def resolve(self, ev: _Eval) -> SetFoot[float]:
        return SetFoot(self.line, self.leg, self.pose.resolve(ev))

    def reflect(self) -> SetFoot[float]:
        return SetFoot(self.line, self.leg.mirror, self.pose.reflect())  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Curve(Generic[V]):
    """``STARTCURVE``: a foot path over the keyframe's wait (needs inverse kinematics).

    As in UT, the first point is relative to the ball and the others relative to the
    first.
    """

    line: int
    leg: BodyPart
    points: tuple[Pose6[V], ...]

    def resolve(self, ev: _Eval) -> Curve[float]:
        return Curve(self.line, self.leg, tuple(p.resolve(ev) for p in self.points))

    def reflect(self) -> Curve[float]:
        return Curve(self.line, self.leg.mirror, tuple(p.reflect() for p in self.points))  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Stabilize(Generic[V]):
    """``stabilize``: shift the centre of mass over a foot to a ZMP (m, foot frame)."""

    line: int
    leg: BodyPart
    zmp_x: V
    zmp_y: V

    def resolve(self, ev: _Eval) -> Stabilize[float]:
        return Stabilize(self.line, self.leg, ev(self.zmp_x), ev(self.zmp_y))  # type: ignore[arg-type]

    def reflect(self) -> Stabilize[float]:
        return Stabilize(self.line, self.leg.mirror, self.zmp_x, -self.zmp_y)  # type: ignore[operator]


Command = SetTarget | IncTarget | SetScale | Reset | SetFoot | Curve | Stabilize
IK_COMMANDS = (SetFoot, Curve, Stabilize)


@dataclass(frozen=True, slots=True)
class KeyFrame(Generic[V]):
    """One ``STARTSTATE`` ... ``ENDSTATE``: commands run in order, then ``wait`` (s).

    Without a wait the keyframe lasts one cycle. ``line``/``wait_line``: where the
    state and its wait are in the file.
    """

    line: int
    commands: tuple[Command, ...]
    wait: V | None = None
    wait_line: int = 0

    def resolve(self, ev: _Eval) -> KeyFrame[float]:
        """Evaluated values; errors are prefixed with ``line N:``."""
        commands = tuple(_at(c.line, lambda c=c: c.resolve(ev)) for c in self.commands)
        wait = None if self.wait is None else _at(self.wait_line, lambda: ev(self.wait))  # type: ignore[arg-type]
        if wait is not None and wait < 0.0:
            raise ValueError(f'line {self.wait_line}: negative wait {wait}')
        return KeyFrame(self.line, commands, wait, self.wait_line)

    def reflect(self) -> KeyFrame[float]:
        return KeyFrame(self.line, tuple(c.reflect() for c in self.commands), self.wait, self.wait_line)  # type: ignore[arg-type]


def _at(line: int, fn: Callable[[], V]) -> V:
    try:
        return fn()
    except ValueError as exc:
        raise ValueError(f'line {line}: {exc}') from exc


@dataclass(frozen=True, slots=True)
class Skill(Generic[V]):
    """A named sequence of keyframes; ``source`` is ``file:line`` of its definition."""

    name: str
    states: tuple[KeyFrame[V], ...]
    source: str = ''

    @property
    def duration(self) -> float:
        """Sum of the waits (s); keyframes without a wait count as 0."""
        return sum(float(s.wait or 0.0) for s in self.states)  # type: ignore[arg-type]

    @property
    def needs_ik(self) -> bool:
        """Whether any keyframe uses setfoot, a curve or stabilize."""
        return any(isinstance(c, IK_COMMANDS) for s in self.states for c in s.commands)

    def parameters(self) -> frozenset[str]:
        """Names of the ``$params`` this (unresolved) skill refers to."""
        names: set[str] = set()

        def collect(e: Expr) -> float:
            names.update(e.parameters())
            return 0.0

        for state in self.states:
            state.resolve(collect)
        return frozenset(names)

    def resolve(self, params: Mapping[str, float]) -> Skill[float]:
        """Values evaluated against ``params``, in SI units.

        Raises:
            ValueError: naming the skill, file, line and the unknown parameter (or
                division by zero, negative wait or scale).
        """
        ev: _Eval = lambda e: e.evaluate(params)  # noqa: E731
        try:
            states = tuple(state.resolve(ev) for state in self.states)
        except ValueError as exc:
            file = self.source.rsplit(':', 1)[0]
            raise ValueError(f'skill {self.name} in {file}, {exc}') from exc
        return Skill(self.name, states, self.source)

    def reflect(self, name: str) -> Skill[float]:
        """The mirror image (left and right swapped), called ``name``."""
        return Skill(name, tuple(s.reflect() for s in self.states), self.source)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Reflection:
    """``REFLECTSKILL source target``."""

    source: str
    target: str
    line: int


@dataclass(frozen=True, slots=True)
class SkillFile:
    """A parsed ``.skl`` file: skills (unresolved) and reflections, in file order."""

    path: str
    skills: tuple[Skill[Expr], ...]
    reflections: tuple[Reflection, ...]

    def parameters(self) -> frozenset[str]:
        """All ``$params`` the file refers to."""
        return frozenset().union(*(s.parameters() for s in self.skills))

    def resolve(
        self, params: Mapping[str, float], known: Mapping[str, Skill[float]] | None = None
    ) -> dict[str, Skill[float]]:
        """Resolved skills, reflections included; ``known`` skills may be reflected too."""
        return resolve_files([self], params, known)


# --------------------------------------------------------------------------- parser

_JOINT_COMMANDS = {'settar': SetTarget, 'inctar': IncTarget, 'setscale': SetScale}
_COMMANDS = ('settar', 'inctar', 'setscale', 'reset', 'wait', 'setfoot', 'STARTCURVE', 'stabilize')


class _SkillParser:
    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.cur = _Cursor(_tokenize(text, source), source)

    def parse(self) -> SkillFile:
        cur = self.cur
        skills: list[Skill[Expr]] = []
        reflections: list[Reflection] = []
        while cur.peek().kind != 'eof':
            tok = cur.take()
            if tok.kind == 'word' and tok.text == 'STARTSKILL':
                skills.append(self._skill(tok))
            elif tok.kind == 'word' and tok.text == 'REFLECTSKILL':
                src, dst = cur.name('the skill to reflect'), cur.name('the reflected skill name')
                reflections.append(Reflection(src.text, dst.text, tok.line))
            else:
                raise cur.error(f'expected STARTSKILL or REFLECTSKILL, got {_describe(tok)}', tok)
        if not skills and not reflections:
            raise ValueError(f'{self.source}: no skills in file')
        return SkillFile(self.source, tuple(skills), tuple(reflections))

    def _skill(self, start: _Token) -> Skill[Expr]:
        cur = self.cur
        name = cur.name('a skill name after STARTSKILL')
        states = []
        while cur.peek().kind == 'word' and cur.peek().text == 'STARTSTATE':
            states.append(self._state(cur.take()))
        if not states:
            raise cur.error(f'skill {name.text} needs at least one STARTSTATE, got {_describe(cur.peek())}')
        cur.expect_word('ENDSKILL')
        return Skill(name.text, tuple(states), f'{self.source}:{start.line}')

    def _state(self, start: _Token) -> KeyFrame[Expr]:
        cur = self.cur
        commands: list[Command] = []
        wait: Expr | None = None
        wait_line = 0
        while True:
            tok = cur.take()
            if tok.kind == 'word' and tok.text == 'ENDSTATE':
                break
            if tok.kind != 'word' or tok.text not in _COMMANDS:
                hint = 'a command or ENDSTATE' if tok.kind != 'eof' else 'ENDSTATE'
                what = f'unknown command {tok.text!r}' if tok.kind == 'word' else f'unexpected {_describe(tok)}'
                raise cur.error(f'{what} (expected {hint})', tok)
            if tok.text == 'wait':
                if wait is not None:
                    raise cur.error('second wait in one state', tok)
                wait, wait_line = cur.value('wait'), tok.line
                cur.expect_word('end')
            else:
                commands.append(self._command(tok))
        if not commands and wait is None:
            raise cur.error('empty state', start)
        return KeyFrame(start.line, tuple(commands), wait, wait_line)

    def _leg(self, what: str) -> BodyPart:
        tok = self.cur.name(f'LEG_LEFT or LEG_RIGHT for {what}')
        if tok.text not in ('LEG_LEFT', 'LEG_RIGHT'):
            raise self.cur.error(f'{what} takes LEG_LEFT or LEG_RIGHT, got {tok.text!r}', tok)
        return BodyPart(tok.text)

    def _pose(self, what: str) -> Pose6[Expr]:
        return Pose6(*(self.cur.value(f'{what} ({i + 1} of 6)') for i in range(6)))

    def _command(self, tok: _Token) -> Command:
        cur, kw, line = self.cur, tok.text, tok.line
        if kw in _JOINT_COMMANDS:
            pairs = []
            while not (cur.peek().kind == 'word' and cur.peek().text == 'end'):
                joint = cur.name(f'a joint name or end in {kw}')
                if joint.text not in EFFECTOR_JOINTS:
                    raise cur.error(f'{kw}: unknown joint {joint.text!r} (expected EFF_H1 ... EFF_RL7)', joint)
                pairs.append((EFFECTOR_JOINTS[joint.text], cur.value(f'{joint.text} in {kw}')))
            if not pairs:
                raise cur.error(f'{kw} needs at least one joint', tok)
            cur.take()
            return _JOINT_COMMANDS[kw](line, tuple(pairs))
        if kw == 'reset':
            parts = []
            while not (cur.peek().kind == 'word' and cur.peek().text == 'end'):
                part = cur.name('a body part or end in reset')
                if part.text not in BodyPart.__members__:
                    known = ', '.join(BodyPart.__members__)
                    raise cur.error(f'reset: unknown body part {part.text!r} (expected one of {known})', part)
                parts.append(BodyPart(part.text))
            if not parts:
                raise cur.error('reset needs at least one body part', tok)
            cur.take()
            return Reset(line, tuple(parts))
        if kw == 'setfoot':
            leg = self._leg('setfoot')
            pose = self._pose('setfoot')
            cur.expect_word('end')
            return SetFoot(line, leg, pose)
        if kw == 'stabilize':
            leg = self._leg('stabilize')
            zx, zy = cur.value('stabilize x'), cur.value('stabilize y')
            cur.expect_word('end')
            return Stabilize(line, leg, zx, zy)
        # STARTCURVE
        leg = self._leg('STARTCURVE')
        points = []
        while cur.peek().kind == 'word' and cur.peek().text == 'controlpoint':
            cur.take()
            points.append(self._pose('controlpoint'))
            cur.expect_word('end')
        if not points:
            raise cur.error('STARTCURVE needs at least one controlpoint')
        cur.expect_word('ENDCURVE')
        return Curve(line, leg, tuple(points))


def parse_skl(text: str, source: str = '<string>') -> SkillFile:
    """Parse skill-language ``text``; ``source`` names it in errors (``source:line: ...``).

    Raises:
        ValueError: on any syntax error, unknown command, joint or body part.
    """
    return _SkillParser(text, source).parse()


def load_skill_file(path: str | Path) -> SkillFile:
    """Parse the ``.skl`` file at ``path``."""
    path = Path(path)
    return parse_skl(path.read_text(encoding='utf-8'), str(path))


def resolve_files(
    files: Iterable[SkillFile],
    params: Mapping[str, float],
    known: Mapping[str, Skill[float]] | None = None,
) -> dict[str, Skill[float]]:
    """Resolve files in order; ``REFLECTSKILL`` may name any skill defined before it.

    Raises:
        ValueError: on an unknown parameter, a duplicate skill name or a reflection
            of a skill not defined yet.
    """
    out: dict[str, Skill[float]] = {}
    seen = dict(known or {})
    for f in files:
        for skill in f.skills:
            if skill.name in seen:
                raise ValueError(f'{skill.source}: skill {skill.name} is already defined')
            seen[skill.name] = out[skill.name] = skill.resolve(params)
        for r in f.reflections:
            if r.source not in seen:
                raise ValueError(f'{f.path}:{r.line}: REFLECTSKILL of unknown skill {r.source}')
            if r.target in seen:
                raise ValueError(f'{f.path}:{r.line}: skill {r.target} is already defined')
            seen[r.target] = out[r.target] = seen[r.source].reflect(r.target)
    return out
