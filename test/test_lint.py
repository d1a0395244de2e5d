"""Linters run as tests (like ament_lint): the whole tree is ruff-clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_ruff_clean() -> None:
    ruff = shutil.which('ruff') or str(Path(sys.executable).parent / 'ruff')
    if not Path(ruff).exists():
        pytest.skip('ruff is not installed (pip install ruff)')
    result = subprocess.run([ruff, 'check', str(REPO)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_launch_files_compile() -> None:
    for path in (REPO / 'launch').glob('*.launch.py'):
        compile(path.read_text(encoding='utf-8'), str(path), 'exec')
