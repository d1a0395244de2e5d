"""Linters run as tests (like ament_lint): the tree is ruff-clean, its imports point down the layers, and its cores
import no ROS."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.name for p in REPO.glob('robocup3d_*') if (p / '__init__.py').is_file())


def _tool(name: str) -> str:
    exe = shutil.which(name) or str(Path(sys.executable).parent / name)
    if not Path(exe).exists():
        pytest.skip(f'{name} is not installed (pip install -e .[test])')
    return exe


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` with the contract of ``pyproject.toml``, on the packages under ``root``."""
    env = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.run(
        [_tool('lint-imports'), '--no-cache'], cwd=root, env=env, capture_output=True, text=True, check=False
    )


def test_ruff_clean() -> None:
    result = subprocess.run([_tool('ruff'), 'check', str(REPO)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_launch_files_compile() -> None:
    for path in (REPO / 'launch').glob('*.launch.py'):
        compile(path.read_text(encoding='utf-8'), str(path), 'exec')


def test_layers_contract_covers_every_package() -> None:
    text = (REPO / 'pyproject.toml').read_text(encoding='utf-8')
    layers = text.split('layers = [', 1)[1].split(']', 1)[0]
    assert sorted(name for name in PACKAGES if f'"{name}' in layers or f'| {name}' in layers) == PACKAGES


def test_imports_point_down_the_layers() -> None:
    result = _lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'Contracts: 2 kept, 0 broken' in result.stdout


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    """A copy of the tree where the bridge imports strategy: the same check fails and names the import."""
    for name in PACKAGES:
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns('__pycache__', 'data'))
    shutil.copy(REPO / 'pyproject.toml', tmp_path)
    upward = tmp_path / 'robocup3d_bridge' / 'upward.py'
    upward.write_text('from robocup3d_strategy import formation\n', encoding='utf-8')
    result = _lint_imports(tmp_path)
    assert result.returncode != 0
    assert 'robocup3d_bridge.upward -> robocup3d_strategy.formation' in result.stdout


# the modules that may import ROS: the nodes, the message conversions and the nodes' helpers
ROS_MODULES = {
    'robocup3d_bridge.audience',
    'robocup3d_bridge.bridge_node',
    'robocup3d_bridge.conversions',
    'robocup3d_bridge.cycle_record',
    'robocup3d_bridge.node_main',
    'robocup3d_bridge.percept_topics',
    'robocup3d_motion.motion_node',
    'robocup3d_perception.conversions',
    'robocup3d_perception.world_model_node',
    'robocup3d_strategy.strategy_node',
}


def test_every_module_below_the_tools_is_a_core_or_a_ros_module() -> None:
    """A new module is put on one side: in the ROS-free contract's list, or among the few that may import ROS."""
    text = (REPO / 'pyproject.toml').read_text(encoding='utf-8')
    listed = text.split('name = "The cores import no ROS"', 1)[1].split('source_modules = [', 1)[1].split(']', 1)[0]
    cores = {line.strip().strip('",') for line in listed.splitlines() if line.strip()}
    modules = {f'{pkg}.{f.stem}' for pkg in PACKAGES if pkg != 'robocup3d_tools' for f in (REPO / pkg).glob('*.py')} - {
        f'{pkg}.__init__' for pkg in PACKAGES
    }
    assert not cores & ROS_MODULES
    assert sorted(modules - cores - ROS_MODULES) == [], 'modules on neither side'
    assert sorted(cores - modules) == [], 'listed modules that do not exist'


def test_a_core_that_imports_rclpy_breaks_the_contract(tmp_path: Path) -> None:
    """A copy of the tree where the motion core imports rclpy: the check fails and names the import."""
    for name in PACKAGES:
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns('__pycache__', 'data'))
    shutil.copy(REPO / 'pyproject.toml', tmp_path)
    core = tmp_path / 'robocup3d_motion' / 'core.py'
    core.write_text(core.read_text(encoding='utf-8') + '\nimport rclpy  # noqa: E402\n', encoding='utf-8')
    result = _lint_imports(tmp_path)
    assert result.returncode != 0
    assert 'The cores import no ROS BROKEN' in result.stdout
    assert 'robocup3d_motion.core -> rclpy' in result.stdout
