"""Start, reach and stop the simulation servers (RCSSServerMJ and rcssserver3d), on loopback only."""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from robocup3d_bridge.link import LinkDown
from robocup3d_bridge.percept import Dialect
from robocup3d_bridge.trainer import TrainerClient

_PR_SET_PDEATHSIG = 1
_SOCCER_VAR = re.compile(r"\s*addSoccerVar\('(\w+)',")

__all__ = [
    'END_WITH_PARENT',
    'connect_trainer',
    'cpu_seconds',
    'end_with_parent',
    'free_port',
    'simspark_settings',
    'start_mujoco_server',
    'start_simspark_server',
    'stop_process',
]


#: set in the environment of a process that must end with its parent (see :func:`end_with_parent`)
END_WITH_PARENT = 'ROBOCUP3D_END_WITH_PARENT'


def end_with_parent(only_if_asked: bool = False) -> None:
    """Let this process end cleanly when its parent dies (Linux ``PR_SET_PDEATHSIG`` with SIGTERM).

    For what ``robocup3d optimize`` and sim sessions start: a task process whose Ray worker is lost
    (SIGTERM ends it through ``SystemExit``, so that its ``with SimSession`` stops what it started),
    and a session's server and player (``only_if_asked``: when :data:`END_WITH_PARENT` is set in the
    environment; a sync-mode RCSSServerMJ left without agents spins at 70 % of a core).
    Call it at start, before any thread exists.
    """
    if only_if_asked and os.environ.get(END_WITH_PARENT) != '1':
        return

    def _exit(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() == 1:  # the parent died before the call
        raise SystemExit(128 + signal.SIGTERM)


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start_mujoco_server(
    run_dir: Path, agent_port: int, monitor_port: int, extra: list[str] | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen:
    """Start RCSSServerMJ headless on loopback; its console log goes to ``run_dir/server.out``.

    It runs through :mod:`robocup3d_tools.mujoco_server`: the stock server with two faults mended
    (a joining robot's uninitialised controls, and the stop when the ball touches a K1).
    """
    if importlib.util.find_spec('rcsssmj') is None:
        raise FileNotFoundError('rcssservermj not found: pip install rcsssmj')
    run_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        '-m',
        'robocup3d_tools.mujoco_server',
        '--host',
        '127.0.0.1',
        '--aport',
        str(agent_port),
        '--mport',
        str(monitor_port),
        '--no-render',
        *(extra or []),
    ]
    with open(run_dir / 'server.out', 'ab') as out:
        return subprocess.Popen(cmd, cwd=run_dir, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def connect_trainer(port: int, dialect: Dialect, timeout: float = 15.0) -> TrainerClient:
    """Connect to the monitor port and wait for the first monitor message.

    RCSSServerMJ must have stepped once before an agent connects (an earlier agent
    crashes its simulation thread), which its first monitor message proves.
    """
    deadline = time.monotonic() + timeout
    while True:
        trainer = TrainerClient('127.0.0.1', port, dialect)
        try:
            trainer.connect()
            trainer.wait_for(lambda s: s.messages > 0, max(0.1, deadline - time.monotonic()))
            return trainer
        except (LinkDown, TimeoutError, OSError):
            trainer.close()
            if time.monotonic() > deadline:
                raise TimeoutError(f'no monitor stream on 127.0.0.1:{port} within {timeout} s') from None
            time.sleep(0.2)


def stop_process(proc: subprocess.Popen, timeout: float = 5.0) -> None:
    """SIGINT a process (its whole group if it leads one), SIGKILL it after ``timeout``."""
    if proc.poll() is not None:
        return
    try:
        group = os.getpgid(proc.pid) == proc.pid  # started with start_new_session
    except ProcessLookupError:
        proc.wait()
        return

    def send(sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig) if group else proc.send_signal(sig)

    send(signal.SIGINT)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        proc.wait()


def start_simspark_server(
    run_dir: Path,
    agent_port: int,
    monitor_port: int,
    env: dict[str, str] | None = None,
    soccer: dict[str, str] | None = None,
) -> subprocess.Popen:
    """Start rcssserver3d (must be on PATH) from ``run_dir`` with settings of its own (:func:`simspark_settings`).

    ``env`` ``SIMSPARK_SYNC=1`` runs it in sync mode (it waits for every agent's reply), and
    ``SIMSPARK_REALTIME=0`` lets it run as fast as the agents answer. ``soccer`` sets soccer variables
    of its ``naosoccersim.rb`` (e.g. ``{'RuleHalfTime': '60.0'}``). It ignores SIGTERM: stop it
    with ``stop_process(proc, timeout=0)`` (SIGKILL).
    """
    exe = shutil.which('rcssserver3d')
    if exe is None:
        raise FileNotFoundError('rcssserver3d is not on PATH')
    env = dict(os.environ if env is None else env)
    run_dir = Path(run_dir).resolve()  # it runs from run_dir: a relative path would be looked for inside itself
    run_dir.mkdir(parents=True, exist_ok=True)
    script = simspark_settings(
        Path(exe),
        run_dir,
        sync=env.get('SIMSPARK_SYNC') == '1',
        realtime=env.get('SIMSPARK_REALTIME') != '0',
        soccer=soccer,
    )
    env['HOME'] = str(run_dir)  # it reads spark.rb from $HOME/.simspark
    cmd = [exe, '--agent-port', str(agent_port), '--server-port', str(monitor_port), '--script-path', str(script)]
    with open(run_dir / 'server.log', 'ab') as out:
        return subprocess.Popen(
            cmd,
            cwd=run_dir,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )


def simspark_settings(
    exe: Path, run_dir: Path, sync: bool = False, realtime: bool = True, soccer: dict[str, str] | None = None
) -> Path:
    """Write rcssserver3d's settings for one run into ``run_dir``; the path of its ``rcssserver3d.rb``.

    From the installed defaults (``<prefix>/share/simspark/spark.rb``, ``share/rcssserver3d/rcssserver3d.rb``):
    the simulation single-threaded (0.7.3 with Ruby 3 crashes when a monitor connects otherwise);
    the agent control single-threaded (sync mode needs it, and with a thread per agent 0.7.3 died of a
    ``boost::lock_error`` in ``AgentThread`` when 11 players left at once on a loaded machine);
    ``sync``: the agent control in sync mode;
    ``realtime`` off: no timer, the simulation runs as fast as the agents answer; ``soccer``: values
    of ``addSoccerVar`` in a copy of ``naosoccersim.rb`` in ``run_dir`` (the server reads its cwd
    first). The user's own ``~/.simspark`` is neither read nor changed.
    """
    share = exe.resolve().parents[1] / 'share'
    settings = {
        '$serverMultiThreadedMode': 'false',
        '$agentSyncMode': 'true' if sync else 'false',
        '$threadedAgentControl': 'false',
    }
    dot = run_dir / '.simspark'
    dot.mkdir(exist_ok=True)
    (dot / 'spark.rb').write_text(_set_ruby(share / 'simspark' / 'spark.rb', settings), encoding='utf-8')
    script = run_dir / 'rcssserver3d.rb'
    realtime_mode = {'$enableRealTimeMode': 'true' if realtime else 'false'}
    script.write_text(_set_ruby(share / 'rcssserver3d' / 'rcssserver3d.rb', realtime_mode), encoding='utf-8')
    if soccer:
        text = _set_soccer_vars(share / 'rcssserver3d' / 'naosoccersim.rb', soccer)
        (run_dir / 'naosoccersim.rb').write_text(text, encoding='utf-8')
    return script


def _set_soccer_vars(path: Path, values: dict[str, str]) -> str:
    """``path``'s Ruby text with its ``addSoccerVar('Name', value)`` lines set to ``values`` (each must occur)."""

    def name(line: str) -> str | None:
        m = _SOCCER_VAR.match(line)
        return m.group(1) if m else None

    return _set_lines(path, values, name, lambda n, v: f"addSoccerVar('{n}', {v})")


def _set_ruby(path: Path, values: dict[str, str]) -> str:
    """``path``'s Ruby text with the global ``$name = value`` assignments set to ``values`` (each must occur)."""

    def name(line: str) -> str | None:
        return None if '=' not in line or line.lstrip().startswith('#') else line.split('=', 1)[0].strip()

    return _set_lines(path, values, name, lambda n, v: f'{n} = {v}')


def _set_lines(
    path: Path, values: dict[str, str], name_of: Callable[[str], str | None], render: Callable[[str, str], str]
) -> str:
    """``path``'s text with each line that ``name_of`` names in ``values`` replaced by ``render(name, value)``."""
    try:
        lines = path.read_text(encoding='utf-8').splitlines()
    except OSError as exc:
        raise FileNotFoundError(f'rcssserver3d is installed without {path}: {exc}') from None
    missing = set(values)
    for i, line in enumerate(lines):
        name = name_of(line)
        if name in values:
            lines[i] = render(name, values[name])
            missing.discard(name)
    if missing:
        raise ValueError(f'{path} does not set {sorted(missing)}: not the rcssserver3d 0.7.3 this was written for')
    return '\n'.join(lines) + '\n'


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, s) a process has used so far (Linux ``/proc``); NaN if it is gone."""
    try:
        fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    except OSError:
        return float('nan')
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')  # utime + stime
