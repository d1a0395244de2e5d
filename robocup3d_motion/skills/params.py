"""Parameter files in the UT Austin Villa format: ``name<TAB>value`` per line.

Comments: ``#`` and ``//`` to the end of the line, ``/* ... */`` blocks (which may
span lines). Blank lines are ignored. Name and value may be separated by tabs or
spaces; a value must be a number. When several files are loaded, later files
override earlier ones. Per robot type, ``defaultParams.txt`` is loaded first and
then ``defaultParams_t<type>.txt``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path

__all__ = ['load_params', 'load_type_params', 'parse_params', 'type_param_files']

_NAME = re.compile(r'\w+\Z', re.ASCII)
_COMMENT_START = re.compile(r'/\*|#|//')


def _strip_comments(text: str, source: str) -> list[tuple[int, str]]:
    """Lines (1-based numbers) with all comments removed."""
    out: list[tuple[int, str]] = []
    block_start = 0  # line where an open /* began, 0 when none
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line, kept = raw, []
        while line:
            if block_start:
                end = line.find('*/')
                if end < 0:
                    line = ''
                    break
                line, block_start = line[end + 2 :], 0
                continue
            m = _COMMENT_START.search(line)
            if m is None:
                kept.append(line)
                break
            kept.append(line[: m.start()])
            if m.group() == '/*':
                line, block_start = line[m.end() :], lineno
            else:
                break
        out.append((lineno, ''.join(kept)))
    if block_start:
        raise ValueError(f'{source}:{block_start}: unterminated /* comment')
    return out


def parse_params(text: str, source: str = '<string>') -> dict[str, float]:
    """Parameters in ``text``; ``source`` names the file in error messages.

    Raises:
        ValueError: ``source:line`` and what is wrong, for a line that is not
            ``name value`` with a finite number, or an unterminated ``/*``.
    """
    params: dict[str, float] = {}
    for lineno, line in _strip_comments(text, source):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise ValueError(f'{source}:{lineno}: expected "name<TAB>value", got {line.strip()!r}')
        name, value = fields
        if not _NAME.match(name):
            raise ValueError(f'{source}:{lineno}: bad parameter name {name!r} (letters, digits, _ only)')
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f'{source}:{lineno}: value of {name} is not a number: {value!r}') from None
        if not math.isfinite(number):
            raise ValueError(f'{source}:{lineno}: value of {name} is not finite: {value!r}')
        params[name] = number
    return params


def load_params(paths: Iterable[str | Path]) -> dict[str, float]:
    """Load parameter files in order; a later file's value replaces an earlier one."""
    params: dict[str, float] = {}
    for path in paths:
        path = Path(path)
        params.update(parse_params(path.read_text(encoding='utf-8'), str(path)))
    return params


def type_param_files(directory: str | Path, robot_type: int) -> tuple[Path, Path]:
    """``defaultParams.txt`` and ``defaultParams_t<robot_type>.txt`` in ``directory``."""
    directory = Path(directory)
    return directory / 'defaultParams.txt', directory / f'defaultParams_t{int(robot_type)}.txt'


def load_type_params(directory: str | Path, robot_type: int, extra: Iterable[str | Path] = ()) -> dict[str, float]:
    """The parameters of a Nao of ``robot_type``: defaults, the type's file, then ``extra`` files."""
    return load_params([*type_param_files(directory, robot_type), *extra])
