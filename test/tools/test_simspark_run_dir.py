"""rcssserver3d started from a relative run directory (``robocup3d match --server simspark``'s default, runs/match)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from simspark_support import kill_pid

from robocup3d_bridge.percept import Dialect
from robocup3d_tools.servers import connect_trainer, free_port, start_simspark_server

pytestmark = [
    pytest.mark.simspark,
    pytest.mark.skipif(shutil.which('rcssserver3d') is None, reason='rcssserver3d (SimSpark) is not on PATH'),
]


def test_the_server_starts_and_serves_its_monitor_from_a_relative_run_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # it runs from its run dir: a relative path was looked for inside itself
    monitor_port = free_port()
    proc = start_simspark_server(Path('runs/match'), free_port(), monitor_port)
    try:
        trainer = connect_trainer(monitor_port, Dialect.SIMSPARK)  # raises without a monitor stream
        trainer.close()
        log = (tmp_path / 'runs/match/server.log').read_text(errors='replace')
        assert 'Cannot locate file' not in log and 'Cannot create directory' not in log, log[-2000:]
    finally:
        kill_pid(proc.pid)  # it ignores SIGTERM
        proc.wait(10)
