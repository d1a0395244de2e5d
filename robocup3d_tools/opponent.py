"""Another team, given by its start command: started in a process group of its own, stopped with it.

The command is a shell command line. It may name the server with ``{host}``, ``{port}`` (agent port),
``{monitor_port}`` and ``{team}`` placeholders, and it gets the same as ``ROBOCUP3D_HOST``,
``ROBOCUP3D_PORT``, ``ROBOCUP3D_MONITOR_PORT`` and ``ROBOCUP3D_TEAM`` in its environment. It may
start its agents in the background and exit: the team is stopped by killing its process group
(SIGTERM, SIGKILL after a grace period) and every process it started that is still running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ['OpponentError', 'OpponentTeam', 'format_command', 'opponent_team']

_PLACEHOLDERS = ('host', 'port', 'monitor_port', 'team')


class OpponentError(RuntimeError):
    """The opponent's start command is malformed, failed, or its team did not join."""


def format_command(template: str, host: str, port: int, monitor_port: int, team: str) -> str:
    """``template`` with its ``{host}``, ``{port}``, ``{monitor_port}``, ``{team}`` filled in."""
    if not template.strip():
        raise OpponentError('the opponent command is empty')
    values = {'host': host, 'port': port, 'monitor_port': monitor_port, 'team': team}
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        raise OpponentError(
            f'bad opponent command {template!r}: {exc!r} (placeholders: '
            f'{", ".join("{" + p + "}" for p in _PLACEHOLDERS)}; write {{{{ }}}} for a literal brace)'
        ) from None


def _children() -> dict[int, list[int]]:
    """Parent PID -> child PIDs of every process now running (Linux ``/proc``)."""
    out: dict[int, list[int]] = {}
    for d in Path('/proc').iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / 'stat').read_text().rsplit(')', 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        out.setdefault(ppid, []).append(int(d.name))
    return out


def _start_time(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (tells a process from a later one with the same PID)."""
    try:
        return (Path(f'/proc/{pid}/stat')).read_text().rsplit(')', 1)[1].split()[19]
    except (OSError, IndexError):
        return None


@dataclass
class OpponentTeam:
    """One run of an opponent's start command (:meth:`start`, :meth:`alive`, :meth:`stop`)."""

    command: str  # after :func:`format_command`
    log: Path
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    cwd: Path | None = None
    proc: subprocess.Popen | None = None
    _seen: dict[int, str | None] = field(default_factory=dict)  # descendants: pid -> start time

    def start(self) -> None:
        """Run the command with ``/bin/sh -c`` in a new session; its output goes to :attr:`log`."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, 'ab') as out:
            self.proc = subprocess.Popen(
                self.command,
                shell=True,
                cwd=self.cwd,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def track(self) -> None:
        """Note the processes the command has started so far (those that left its group are stopped too)."""
        if self.proc is None:
            return
        children = _children()
        todo = [self.proc.pid]
        while todo:
            for c in children.get(todo.pop(), []):
                if c not in self._seen:
                    self._seen[c] = _start_time(c)
                todo.append(c)

    def _living(self) -> list[int]:
        return [p for p, t in self._seen.items() if t is not None and _start_time(p) == t]

    def alive(self) -> bool:
        """Whether anything the command started still runs (its group or a tracked process)."""
        if self.proc is None:
            return False
        self.proc.poll()
        try:
            os.killpg(self.proc.pid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return bool(self._living())

    @property
    def returncode(self) -> int | None:
        """The shell's exit code, once it ended."""
        return None if self.proc is None else self.proc.poll()

    def log_tail(self, lines: int = 1) -> str:
        """The last non-empty lines of the command's output."""
        try:
            text = self.log.read_text(errors='replace').strip().splitlines()
        except OSError:
            return ''
        return ' | '.join(line.strip() for line in text[-lines:])

    def stop(self, grace: float = 3.0) -> None:
        """SIGTERM the group and the tracked processes, SIGKILL what is left after ``grace`` s."""
        if self.proc is None:
            return
        self.track()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)
            for pid in self._living():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + (grace if sig == signal.SIGTERM else 5.0)
            while time.monotonic() < deadline and self.alive():
                time.sleep(0.05)
            if not self.alive():
                break
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(1.0)


def opponent_team(
    template: str, host: str, port: int, monitor_port: int, team: str, log: Path, env: dict[str, str]
) -> OpponentTeam:
    """The team ``template`` starts (not started yet), its command filled in and the server named in its environment
    (``ROBOCUP3D_HOST``, ``ROBOCUP3D_PORT``, ``ROBOCUP3D_MONITOR_PORT``, ``ROBOCUP3D_TEAM``) besides ``env``."""
    command = format_command(template, host, port, monitor_port, team)
    named = {
        'ROBOCUP3D_HOST': host,
        'ROBOCUP3D_PORT': str(port),
        'ROBOCUP3D_MONITOR_PORT': str(monitor_port),
        'ROBOCUP3D_TEAM': team,
    }
    return OpponentTeam(command, log, env={**env, **named})
