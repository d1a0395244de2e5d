"""Schema of ``config/optimize.yaml``: the search spaces of ``robocup3d optimize``.

``walk.<server>.<name>: [abs|rel, lo, hi]``; ``getup.<robot>``: ``step`` sizes, Nao ``bounds``
per kind of value, T1/K1 ``mirror`` pairs and ``t_scale`` and the names searched per skill (``front``,
``back``) and per kick (``long``, ``quick``: names, or on the Nao a ``prefix`` of its
``$parameters``); ``dribble.<robot>``: the dribble's ``values`` searched within their ``bounds``. A bad file
raises one :class:`~robocup3d_bridge.config_files.ConfigError` naming
the file, the key and what is allowed (``robocup3d optimize`` prints it and exits 2).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, PlainValidator

from robocup3d_bridge.config_files import config_path, load_config
from robocup3d_bridge.config_schema import Finite, Section, Text, validate

__all__ = ['OptimizeFile', 'load_optimize_config']


def _finite(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise ValueError(f'must be a finite number, got {v!r}')
    return float(v)


def _walk_range(v: Any) -> tuple[str, float, float]:
    if not (isinstance(v, list | tuple) and len(v) == 3 and v[0] in ('abs', 'rel')):
        raise ValueError(f'must be [abs|rel, lo, hi], got {v!r}')
    lo, hi = _finite(v[1]), _finite(v[2])
    if lo >= hi:
        raise ValueError(f'lo must be below hi, got {v!r}')
    return (v[0], lo, hi)


def _range(v: Any) -> tuple[float, float]:
    if not (isinstance(v, list | tuple) and len(v) == 2):
        raise ValueError(f'must be [lo, hi], got {v!r}')
    lo, hi = _finite(v[0]), _finite(v[1])
    if lo >= hi:
        raise ValueError(f'lo must be below hi, got {v!r}')
    return (lo, hi)


def _twin(v: Any) -> tuple[str, float]:
    if not (isinstance(v, list | tuple) and len(v) == 2 and isinstance(v[0], str) and v[1] in (1, -1)):
        raise ValueError(f'must be [twin_joint, 1 or -1], got {v!r}')
    return (v[0], float(v[1]))


WalkRange = Annotated[tuple[str, float, float], PlainValidator(_walk_range)]
Range = Annotated[tuple[float, float], PlainValidator(_range)]
Twin = Annotated[tuple[str, float], PlainValidator(_twin)]


class SkillSpace(Section):
    """What a skill search moves by how much: step sizes, Nao bounds by kind of value, T1/K1 mirror pairs."""

    step: dict[str, Finite] = Field(default_factory=dict)
    bounds: dict[str, Range] = Field(default_factory=dict)
    mirror: dict[str, Twin] = Field(default_factory=dict)
    #: T1/K1: a frame's ``t`` within [lo * t, hi * t] of the file's (instead of +-step.t)
    t_scale: Range | None = None
    #: T1/K1: a ``kp.JOINT`` (the skill's gain) within [lo * kp, hi * kp] of the robot's own (instead of +-step.kp)
    kp_scale: Range | None = None


class GetupSpace(SkillSpace):
    """One robot's get-up search: the names searched per skill."""

    front: list[Text] = Field(default_factory=list)
    back: list[Text] = Field(default_factory=list)


class Prefix(Section):
    """The Nao's $parameters whose names start with ``prefix``."""

    prefix: Text


class KickSpace(SkillSpace):
    """One robot's kick search: names per kick (or a $parameter prefix on the Nao)."""

    long: list[Text] | Prefix = Field(default_factory=list)
    quick: list[Text] | Prefix = Field(default_factory=list)
    #: the in-walk kick's values (``config/kicks.yaml``: ``walk.*`` and the ball spot ``ball_x``, ``ball_y``, the
    #: window ``near``, ``far``), each within ``bounds``
    walk: list[Text] = Field(default_factory=list)


class DribbleSpace(Section):
    """One robot's dribble search (``config/kicks.yaml``: its ``dribble``): the values searched, each within
    ``bounds``."""

    values: list[Text] = Field(default_factory=list)
    bounds: dict[str, Range] = Field(default_factory=dict)


class OptimizeFile(Section):
    """The whole file."""

    walk: dict[str, dict[str, WalkRange]] = Field(default_factory=dict)
    getup: dict[str, GetupSpace] = Field(default_factory=dict)
    kick: dict[str, KickSpace] = Field(default_factory=dict)
    dribble: dict[str, DribbleSpace] = Field(default_factory=dict)


def load_optimize_config(name_or_path: str | Path = 'optimize.yaml') -> OptimizeFile:
    """The checked file; a bad one raises :class:`ConfigError`."""
    path = config_path(name_or_path)
    return validate(OptimizeFile, load_config(path), str(path))
