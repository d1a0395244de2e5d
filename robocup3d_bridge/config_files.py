"""Find and load the YAML files in ``config/`` wherever the package is installed."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

import yaml

__all__ = ['ConfigError', 'config_dir', 'load_config']

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


def load_config(name_or_path: str | Path) -> dict:
    """Load a YAML file by path, or by name from :func:`config_dir` (``.yaml`` optional)."""
    path = Path(name_or_path)
    if not path.is_file():
        name = path.name if path.suffix else f'{path.name}.yaml'
        path = config_dir() / name
    try:
        with open(path, encoding='utf-8') as f:
            data = yaml.safe_load(f)
    except FileNotFoundError:
        raise ConfigError(f'config file not found: {name_or_path}') from None
    except yaml.YAMLError as exc:
        raise ConfigError(f'{path}: not valid YAML: {exc}') from None
    if not isinstance(data, dict):
        raise ConfigError(f'{path}: expected a mapping at the top level')
    return data
