"""Find and load the YAML files in ``config/`` wherever the package is installed."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

import yaml

__all__ = ['ConfigError', 'config_dir', 'config_path', 'load_config']

PACKAGE = 'robocup3d'


class ConfigError(ValueError):
    """A configuration file is missing or says something impossible."""


@cache
def config_dir() -> Path:
    """The ``config`` directory: ament share dir, then the pip prefix, then the source tree."""
    candidates = []
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory  # noqa: PLC0415

        try:
            candidates.append(Path(get_package_share_directory(PACKAGE)) / 'config')
        except (PackageNotFoundError, OSError):  # OSError: AMENT_PREFIX_PATH unset
            pass
    except ImportError:
        pass
    candidates.append(Path(sys.prefix) / 'share' / PACKAGE / 'config')
    candidates.append(Path(__file__).resolve().parents[1] / 'config')
    for c in candidates:
        if (c / 'robots.yaml').is_file():
            return c
    raise ConfigError(f'no robocup3d config directory found (looked in {", ".join(map(str, candidates))})')


class _DuplicateKey(yaml.YAMLError):
    """A mapping gives one key twice."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a mapping key given twice (plain PyYAML keeps the last one silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)):
                continue
            if key in seen:
                mark = key_node.start_mark
                raise _DuplicateKey(f'line {mark.line + 1}: key {key!r} is given twice')
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def config_path(name_or_path: str | Path) -> Path:
    """The file meant by ``name_or_path``: an existing path, else a name in :func:`config_dir` (``.yaml`` optional)."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    name = path.name if path.suffix else f'{path.name}.yaml'
    return config_dir() / name


def load_config(name_or_path: str | Path) -> dict:
    """Load a YAML file by path, or by name from :func:`config_dir` (``.yaml`` optional).

    Raises :class:`ConfigError` (naming the file) when it is missing, not YAML, gives a key twice
    or is not a mapping.
    """
    try:
        path = config_path(name_or_path)
        with open(path, encoding='utf-8') as f:
            data = yaml.load(f, Loader=_UniqueKeyLoader)
    except FileNotFoundError:
        raise ConfigError(f'config file not found: {name_or_path}') from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f'{name_or_path}: cannot read: {exc}') from None
    except _DuplicateKey as exc:
        raise ConfigError(f'{path}: {exc}') from None
    except yaml.YAMLError as exc:
        raise ConfigError(f'{path}: not valid YAML: {exc}') from None
    if not isinstance(data, dict):
        raise ConfigError(f'{path}: expected a mapping at the top level')
    return data
