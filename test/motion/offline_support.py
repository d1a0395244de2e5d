"""The bench's offline models (RCSSServerMJ's own simulation with our motion core) as modules for the tests."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / 'bench'


def bench_script(name: str) -> ModuleType:
    """The script ``bench/<name>.py`` as a module; skips the test without ``rcsssmj`` (the server's package)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    pytest.importorskip('rcsssmj')
    return importlib.import_module(name)
