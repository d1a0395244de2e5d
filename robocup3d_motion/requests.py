"""What strategy asks of motion: one typed request on ``motion_request``.

A request is a JSON object with a ``kind`` (field frame: metres, radians, +x towards the
goal we attack)::

    {"kind": "goto", "x": -3.0, "y": 1.0, "theta": 0.0}
    {"kind": "kick", "target": [15.0, 0.0], "kick": "long", "slack": 0.5}
    {"kind": "kick", "target": [15.0, 0.0], "kick": "pass", "distance": 6.0}
    {"kind": "dribble", "target": [10.0, 2.0], "slack": 1.0}

An optional ``id`` (an int) comes back in ``motion_state``'s ``task`` so that the asker can
tell its request's outcome from an older one's. An optional ``avoid`` lists other robots'
positions (``[[x, y], ...]``, at most :data:`MAX_AVOID`): the walk goes round them. A plain word is still a skill name
(``stand``, ``KICK_LONG_RIGHT``, ``walk_set fast``). :func:`parse_request` refuses anything else
with one line saying why: unknown kinds and keys, missing or non-finite values.
Build requests in Python with the models and send ``request.to_text()``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, TypeAdapter, ValidationError

__all__ = ['Dribble', 'GoTo', 'Kick', 'MotionRequest', 'RequestError', 'SkillRequest', 'parse_request']

_NAME = re.compile(r'[A-Za-z][\w .=+-]*')  # NAME, walk_set NAME, NAME key=value (Nao)
FIELD_LIMIT = 100.0  # m: no point on or near any field is further from its centre


class RequestError(ValueError):
    """A request that cannot be carried out: the message says why."""


def _coordinate(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or abs(v) > FIELD_LIMIT:
        raise ValueError(f'must be a finite number of metres within +-{FIELD_LIMIT:g}, got {v!r}')
    return float(v)


def _angle(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise ValueError(f'must be a finite angle in radians, got {v!r}')
    return math.atan2(math.sin(v), math.cos(v))


Metres = Annotated[float, PlainValidator(_coordinate)]
Radians = Annotated[float, PlainValidator(_angle)]
MAX_AVOID = 24  # robots a request may ask to walk round
Obstacles = Annotated[tuple[tuple[Metres, Metres], ...], Field(max_length=MAX_AVOID)]


class _Request(BaseModel):
    model_config = ConfigDict(extra='forbid', frozen=True)

    id: int = Field(default=0, ge=0, strict=True)

    def to_text(self) -> str:
        """The request as sent on ``motion_request``."""
        return json.dumps(self.model_dump(), separators=(',', ':'))


class GoTo(_Request):
    """Walk to a pose on the field."""

    kind: Literal['goto'] = 'goto'
    x: Metres
    y: Metres
    theta: Radians = 0.0
    avoid: Obstacles = ()


class Kick(_Request):
    """Walk to the ball and kick it towards ``target`` with a kick of ``config/kicks.yaml``."""

    kind: Literal['kick'] = 'kick'
    target: tuple[Metres, Metres]
    kick: str = 'long'
    #: m either side of ``target``, across the kick, where the ball may as well go (a goal mouth): the
    #: robot kicks along whichever line in that window it is nearest to facing, rather than turning to the centre
    slack: Annotated[float, Field(ge=0.0, le=FIELD_LIMIT, allow_inf_nan=False)] = 0.0
    #: m the ball should go, for a kick whose length is chosen (none: as far as the target)
    distance: Annotated[float, Field(gt=0.0, le=FIELD_LIMIT, allow_inf_nan=False)] | None = None
    avoid: Obstacles = ()


class Dribble(_Request):
    """Walk the ball to ``target``, keeping it at the feet."""

    kind: Literal['dribble'] = 'dribble'
    target: tuple[Metres, Metres]
    #: m either side of ``target``, across the ball's way, where it may as well go (a goal mouth): the robot
    #: walks the ball along whichever line into that window it is nearest to being behind
    slack: Annotated[float, Field(ge=0.0, le=FIELD_LIMIT, allow_inf_nan=False)] = 0.0
    avoid: Obstacles = ()


class SkillRequest(_Request):
    """A skill by name, ``stand``, or ``walk_set NAME`` (the plain-text requests)."""

    kind: Literal['skill'] = 'skill'
    name: str

    def to_text(self) -> str:
        return self.name


MotionRequest = GoTo | Kick | Dribble | SkillRequest
_ADAPTER: TypeAdapter = TypeAdapter(Annotated[GoTo | Kick | Dribble, Field(discriminator='kind')])
KINDS = ('goto', 'kick', 'dribble')


def _reason(exc: ValidationError) -> str:
    err = exc.errors(include_url=False)[0]
    where = '.'.join(str(p) for p in err['loc'] if str(p) not in KINDS and not str(p).startswith('function-'))
    msg = str(err['msg']).removeprefix('Value error, ')
    if err['type'] == 'union_tag_invalid':
        return f'unknown kind {err["input"].get("kind")!r}; known: {", ".join(KINDS)}'
    if err['type'] == 'union_tag_not_found':
        return f'no "kind"; known kinds: {", ".join(KINDS)}'
    if err['type'] == 'extra_forbidden':
        return f'unknown key {where!r}'
    return f'{where}: {msg}' if where else msg


def parse_request(text: object) -> MotionRequest:
    """The request in ``text``; raises :class:`RequestError` with the reason it is refused."""
    if not isinstance(text, str):
        raise RequestError(f'a request is text, got {type(text).__name__}')
    body = text.strip()
    if not body:
        raise RequestError('empty request')
    if not body.startswith('{'):
        if len(body) > 200 or not _NAME.fullmatch(body):
            raise RequestError(f'not a skill name or a JSON request: {body[:40]!r}')
        return SkillRequest(name=body)
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise RequestError(f'not JSON: {exc}') from None
    if not isinstance(data, dict):
        raise RequestError('a JSON request is an object with a "kind"')
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        raise RequestError(f'{data.get("kind", "request")}: {_reason(exc)}') from None
