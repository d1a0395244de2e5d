"""Schemas for the YAML files in ``config/`` (pydantic v2), and one clear message per bad file.

Every file is checked against a :class:`Section` model before anything reads it. A
model forbids unknown keys and names the allowed ones; the value types below take
YAML values as they are (no ``'3'`` -> 3, no ``1.9`` -> 1, no ``true`` -> 1) and say what
is allowed. :func:`validate` turns the first problem into a :class:`ConfigError`::

    team_mujoco.yaml: players.2: unknown key 'tpye'; allowed: robot, type
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, PlainValidator, ValidationError, model_validator

from robocup3d_bridge.config_files import ConfigError

__all__ = ['Choice', 'Finite', 'NonNegative', 'Positive', 'Section', 'Text', 'ranged_int', 'validate']

M = TypeVar('M', bound=BaseModel)


class Section(BaseModel):
    """A mapping with known keys only; a non-mapping or an unknown key is refused by name."""

    model_config = ConfigDict(extra='forbid', frozen=True, populate_by_name=True)

    @model_validator(mode='before')
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        allowed = sorted(f.alias or n for n, f in cls.model_fields.items())
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise ValueError(f'expected a mapping with the keys {", ".join(allowed)}; got {data!r}')
        unknown = [k for k in data if k not in allowed]
        if unknown:
            raise ValueError(f'unknown key {unknown[0]!r}; allowed: {", ".join(allowed)}')
        return data


def _finite(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise ValueError(f'must be a finite number, got {v!r}')
    return float(v)


#: A finite real number (an int is taken as a float).
Finite = Annotated[float, PlainValidator(_finite)]


def _positive(v: Any) -> float:
    if _finite(v) <= 0.0:
        raise ValueError(f'must be a number > 0, got {v!r}')
    return float(v)


def _non_negative(v: Any) -> float:
    if _finite(v) < 0.0:
        raise ValueError(f'must be a number >= 0, got {v!r}')
    return float(v)


#: A finite number above zero.
Positive = Annotated[float, PlainValidator(_positive)]
#: A finite number, zero or more.
NonNegative = Annotated[float, PlainValidator(_non_negative)]


def ranged_int(lo: int | None = None, hi: int | None = None, what: str = 'an integer') -> Any:
    """An int type within ``lo..hi`` (either may be open; bools, floats and strings refused)."""
    span = f' {lo}-{hi}' if lo is not None and hi is not None else f' >= {lo}' if lo is not None else ''

    def check(v: Any) -> int:
        ok = isinstance(v, int) and not isinstance(v, bool)
        if not ok or (lo is not None and v < lo) or (hi is not None and v > hi):
            raise ValueError(f'must be {what}{span}, got {v!r}')
        return v

    return Annotated[int, PlainValidator(check)]


def _text(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError(f'must be a string, got {v!r}')
    return v


#: A string (a number is refused, not turned into text).
Text = Annotated[str, PlainValidator(_text)]


def Choice(*allowed: str) -> Any:
    """A string type that is one of ``allowed``."""
    names = [repr(a) for a in allowed]
    text = ' or '.join(names) if len(names) == 2 else 'one of ' + ', '.join(names)

    def check(v: Any) -> str:
        if v not in allowed:
            raise ValueError(f'must be {text}, got {v!r}')
        return v

    return Annotated[str, PlainValidator(check)]


def _where(loc: Iterable[object]) -> str:
    return '.'.join(str(p) for p in loc if not (isinstance(p, str) and p.startswith('function-')))


def _message(err: dict) -> str:
    msg = str(err['msg']).removeprefix('Value error, ').removeprefix('Assertion failed, ')
    if err['type'] in ('dict_type', 'model_type'):
        return f'expected a mapping, got {err.get("input")!r}'
    if err['type'] in ('list_type', 'tuple_type'):
        return f'expected a list, got {err.get("input")!r}'
    if err['type'] == 'too_short' and err.get('ctx', {}).get('min_length') == 1:
        return 'must not be empty'
    return msg


def validate(model: type[M], data: object, source: str) -> M:
    """``data`` checked against ``model``; raises :class:`ConfigError` naming ``source``, the key and the rule."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        where = _where(first['loc'])
        more = f' (and {len(errors) - 1} more problems)' if len(errors) > 1 else ''
        msg = _message(first)
        sep = ' ' if msg.startswith('must ') else ': '
        raise ConfigError(f'{source}: {where + sep if where else ""}{msg}{more}') from None
