"""``robocup3d inspect`` and ``robocup3d localize`` on files no server would send (issue 24).

Each case is a real capture with one change (or a file that is no capture at all); the tools
run as a user runs them, in a process of their own.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from robocup3d_tools.capture_file import capture_lines

REPO = Path(__file__).resolve().parents[2]
# runs one command and prints its peak memory (kB, VmHWM: since exec, unlike ru_maxrss) last on stderr
_RUN = (
    'import re, sys\n'
    'from robocup3d_tools.cli import main\n'
    'rc = main(sys.argv[1:])\n'
    "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
    "print('maxrss_kb', hwm, file=sys.stderr)\n"
    'sys.exit(rc)\n'
)


def _tool(*args: str) -> tuple[int, str, str, int]:
    """(exit status, stdout, stderr without the memory line, peak memory in kB)."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(REPO), env.get('PYTHONPATH', '')) if p)
    res = subprocess.run(
        [sys.executable, '-c', _RUN, *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    err, _, mem = res.stderr.rpartition('maxrss_kb ')
    return res.returncode, res.stdout, err, int(mem)


def _edited(shared_dir: Path, tmp_path: Path, line: int, pattern: str, repl: str) -> Path:
    """groundtruth_type0_single_agent.txt with one substitution in line ``line`` (from 1)."""
    lines = (shared_dir / 'captures/simspark/groundtruth_type0_single_agent.txt').read_text().splitlines()
    lines[line - 1], count = re.subn(pattern, repl, lines[line - 1])
    assert count == 1
    out = tmp_path / 'edited.txt'
    out.write_text('\n'.join(lines) + '\n')
    return out


def test_inspect_streams_a_50_mb_single_line_file(tmp_path: Path) -> None:
    """Before: 1.29 GB of memory and exit 0 with the line parsed. Now: skipped, named, exit 1, memory flat."""
    big = tmp_path / 'big.txt'
    with open(big, 'wb') as f:
        f.write(b'(time (now 1.0))' + b'(GYR (n torso) (rt 1 2 3))' * 2_000_000 + b'\n')
    assert big.stat().st_size > 50e6
    rc, _, err, mem_kb = _tool('inspect', str(big), '--summary-only')
    assert rc == 1, err
    assert f'{big}:1: line of {big.stat().st_size - 1} bytes, longer than 1048576: skipped' in err
    assert f'{big}: no valid server message' in err
    assert 'Traceback' not in err
    assert mem_kb < 100_000, mem_kb


@pytest.mark.parametrize('tool', ['inspect', 'localize'])
@pytest.mark.parametrize('content', [b'', b'\n\n', bytes(range(256)) * 400], ids=['empty', 'blank', 'binary'])
def test_a_file_without_a_message_is_refused(tool: str, content: bytes, tmp_path: Path) -> None:
    """Before: localize printed "0 See cycles" and exited 0."""
    path = tmp_path / 'not_a_capture.txt'
    path.write_bytes(content)
    rc, _, err, _ = _tool(tool, str(path))
    assert rc == 1, (rc, err)
    assert f'{path}: no valid server message' in err, err
    assert 'Traceback' not in err


def test_localize_survives_a_gyro_of_1e200(shared_dir: Path, tmp_path: Path) -> None:
    """Before: OverflowError in orientation.py."""
    path = _edited(shared_dir, tmp_path, 51, r'\(rt [^)]*\)', '(rt 1e200 1e200 1e200)')
    rc, out, err, _ = _tool('localize', str(path), '--every', '0')
    assert rc == 0 and 'Traceback' not in err, err
    median = float(re.search(r'position error median ([0-9.]+) m', out).group(1))
    assert median < 0.1, out


def test_localize_skips_and_reports_a_time_of_1e308(shared_dir: Path, tmp_path: Path) -> None:
    """Before: the estimate froze at -inf for the rest of the file, and localize exited 0 silently."""
    path = _edited(shared_dir, tmp_path, 61, r'\(now [^)]*\)', '(now 1e308)')
    rc, out, err, _ = _tool('localize', str(path), '--every', '0')
    assert rc == 0, err
    assert f'{path}:61: time jumped from 1.84 s to 1e+308 s: message skipped' in err, err
    assert '299 messages used; skipped: 1 time jumps' in out
    median = float(re.search(r'position error median ([0-9.]+) m', out).group(1))
    assert median < 0.1, out
    # without the skip, the damage is reported, not silent
    rc, out, err, _ = _tool('localize', str(path), '--every', '0', '--max-step', 'inf')
    assert rc == 1 and f'{path}: 1 See cycles with a non-finite estimate' in err, err


def test_a_server_restart_in_a_capture_starts_afresh(shared_dir: Path, tmp_path: Path) -> None:
    """Two captures back to back (time goes back to 0.66 s): a new world model for the second."""
    one = (shared_dir / 'captures/simspark/groundtruth_type0_single_agent.txt').read_text()
    path = tmp_path / 'twice.txt'
    path.write_text(one + one)
    rc, out, err, _ = _tool('localize', str(path), '--every', '0')
    assert rc == 0, err
    assert f'{path}:301: time went on from 0.66 s: started afresh' in err, err
    assert '600 messages used' in out and '1 restarts' in out


def test_capture_lines_caps_and_numbers_lines() -> None:
    data = b'(a)\n\n' + b'x' * 100 + b'\n(b)\r\n(c)\n\n\n'
    got = [(ln.number, ln.data, ln.length) for ln in capture_lines(io.BytesIO(data), max_line=50)]
    assert got == [(1, b'(a)', 3), (2, b'', 0), (3, None, 100), (4, b'(b)', 4), (5, b'(c)', 3)]
    assert [ln.data for ln in capture_lines(io.BytesIO(b'(a)'), max_line=3)] == [b'(a)']
    assert [ln.data for ln in capture_lines(io.BytesIO(b'(ab)'), max_line=3)] == [None]
