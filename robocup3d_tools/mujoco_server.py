"""RCSSServerMJ (PyPI ``rcsssmj``) as our tools start it: the stock server with two faults mended.

``python -m robocup3d_tools.mujoco_server --host 127.0.0.1 --aport ... --mport ...`` takes the
arguments of ``rcssservermj``. Both faults are reported in ``docs/servers.md`` for upstream.

**A joining robot's controls.** Each time an agent joins, the server
adds the robot to its MuJoCo spec and calls ``MjSpec.recompile(model, data)``, which in
MuJoCo 3.5 leaves ``data.ctrl`` of the added actuators uninitialised (seen: -5.5e303 at three
of a T1's 69 actuators). The forward pass right after the recompile finds them and logs
"Nan, Inf or huge value in CTRL at ACTUATOR n"; until the agent's first command overwrites
them, MuJoCo replaces every control of the scene by zero, all robots' included. An agent that
sends only its init gets the same warning, so nothing an agent sends can prevent it: the
controls of the actuators a recompile added are zeroed here before that forward pass.

**A K1 touching the ball.** 0.2.1 finds who touches the ball by the touching geom's name
(``r-<team>-<unum>-...``), but the K1's collision geoms have no names: ``decode_agent_prefix(None)``
raises ``AttributeError`` and the simulation stops the first time a K1 touches the ball. Here an
unnamed geom is named by its body (which carries the agent's prefix), so a K1's touch is credited
to that K1, as a T1's is, and the game goes on.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = [
    'FreshControlsZeroed',
    'check_monitor_interval',
    'geom_owner_name',
    'install',
    'main',
    'mend_contact_filter',
    'set_monitor_interval',
    'stop_on_sigterm',
]


class FreshControlsZeroed:
    """Stands in for the ``mujoco`` module inside ``rcsssmj.sim.simulation``.

    ``expect_recompile`` notes the actuators of the model before a recompile; the next
    ``mj_forward`` zeroes the controls of every actuator that was not among them.
    """

    def __init__(self, mujoco: Any) -> None:
        self._mujoco = mujoco
        self._known: set[str] | None = None
        self.zeroed = 0  # controls set to zero so far

    def __getattr__(self, name: str) -> Any:
        return getattr(self._mujoco, name)

    def expect_recompile(self, model: Any) -> None:
        """Remember the actuator names of ``model`` (``None`` before the first compile)."""
        self._known = {model.actuator(i).name for i in range(model.nu)} if model is not None else set()

    def mj_forward(self, model: Any, data: Any) -> None:
        """``mujoco.mj_forward``, after zeroing the controls of actuators a recompile just added."""
        known, self._known = self._known, None
        if known is not None:
            for i in range(model.nu):
                if model.actuator(i).name not in known:
                    data.ctrl[i] = 0.0
                    self.zeroed += 1
        self._mujoco.mj_forward(model, data)


def install() -> FreshControlsZeroed:
    """Patch the loaded ``rcsssmj`` so that a recompile never leaves garbage controls."""
    import mujoco  # noqa: PLC0415 - only when the server runs
    from rcsssmj.sim import simulation  # noqa: PLC0415

    shim = FreshControlsZeroed(mujoco)
    simulation.mujoco = shim
    original: Callable[[Any], None] = simulation.BaseSimulation._recompile

    def _recompile(self: Any) -> None:
        shim.expect_recompile(self.mj_model)
        original(self)

    simulation.BaseSimulation._recompile = _recompile
    return shim


def geom_owner_name(mj_model: Any, gid: int) -> str:
    """A geom's name, or for an unnamed geom its body's name ('' if neither has one)."""
    import mujoco  # noqa: PLC0415 - the server's dependency, present where the server is

    name = mujoco.mj_id2name(mj_model, mujoco.mjtObj.mjOBJ_GEOM, gid)
    if name is None:
        name = mujoco.mj_id2name(mj_model, mujoco.mjtObj.mjOBJ_BODY, int(mj_model.geom_bodyid[gid]))
    return name or ''


def _filter_agent_contacts_with(geom_name: str, mj_model: Any, mj_data: Any) -> dict:
    """``rcsssmj.utils.mjutils.filter_agent_contacts_with``, with unnamed geoms named by their body."""
    import mujoco  # noqa: PLC0415
    from rcsssmj.sim.agent_id import decode_agent_prefix  # noqa: PLC0415

    gid = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_GEOM, geom_name)
    contacts = mj_data.contact
    agent_contacts: dict = {}
    for others in (contacts.geom1[contacts.geom2 == gid], contacts.geom2[contacts.geom1 == gid]):
        for other_gid in others:
            other_name = geom_owner_name(mj_model, int(other_gid))
            if (agent_id := decode_agent_prefix(other_name)) is not None:
                agent_contacts.setdefault(agent_id, set()).add(other_name)
    return agent_contacts


def mend_contact_filter() -> None:
    """Replace the server's contact filter where it is defined and where the ball imported it."""
    from rcsssmj.games.soccer.sim import soccer_ball  # noqa: PLC0415
    from rcsssmj.utils import mjutils  # noqa: PLC0415

    mjutils.filter_agent_contacts_with = _filter_agent_contacts_with
    soccer_ball.filter_agent_contacts_with = _filter_agent_contacts_with


def check_monitor_interval(frames: int) -> None:
    """Raise ``ValueError`` unless ``frames`` divides 250 (see :func:`set_monitor_interval`)."""
    if frames < 1 or 250 % frames:
        raise ValueError(f'--monitor-interval must divide 250 (1, 2, 5, 10, ...), got {frames}')


def set_monitor_interval(frames: int) -> None:
    """Every monitor gets a scene every ``frames`` simulation frames (the server's own choice: 2).

    Serialising the scene is a large share of the server's work (37 % of its GIL time with 6 T1 and
    one monitor), and a match's trainer needs far fewer scenes. ``frames`` must divide 250: the
    server sends a full scene (not a diff) to every monitor on frames that are multiples of 250.
    """
    check_monitor_interval(frames)
    from rcsssmj.server.remote_monitor import RSMPMonitor  # noqa: PLC0415

    original = RSMPMonitor.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.update_interval = frames

    RSMPMonitor.__init__ = __init__


#: s a terminated server has to shut down before it is ended outright
STOP_GRACE_S = 10.0


def stop_on_sigterm() -> None:
    """SIGTERM stops the server as Ctrl-C does, through the server's own shutdown.

    Raising ``SystemExit`` (what :func:`~robocup3d_tools.servers.end_with_parent` installs) ends only
    the main thread, which waits in ``join`` on the simulation thread: the interpreter then waits for
    that thread for ever, and the server went on stepping an empty field at 14 % of a core, its parent
    long gone. Here SIGTERM calls the SIGINT handler the server installed (``server.shutdown()``), and a
    daemon timer ends the process after :data:`STOP_GRACE_S` should the shutdown hang.
    """

    def _stop(signum: int, frame: object) -> None:
        timer = threading.Timer(STOP_GRACE_S, os._exit, args=(128 + signum,))
        timer.daemon = True
        timer.start()
        handler = signal.getsignal(signal.SIGINT)
        if not callable(handler):
            raise SystemExit(128 + signum)
        handler(signal.SIGINT, frame)  # the server's: a shutdown request; before it is installed, KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)


def main(argv: list[str] | None = None) -> None:
    """Start the server as ``rcssservermj`` would, with :func:`install` and :func:`mend_contact_filter` applied.

    One option of our own, taken out before the server sees the rest: ``--monitor-interval N``
    (:func:`set_monitor_interval`).
    """
    from robocup3d_tools.servers import end_with_parent  # noqa: PLC0415

    args = list(sys.argv[1:] if argv is None else argv)
    if '--monitor-interval' in args:
        i = args.index('--monitor-interval')
        try:
            frames = int(args[i + 1])
        except (IndexError, ValueError):
            raise SystemExit('--monitor-interval needs a whole number of frames') from None
        set_monitor_interval(frames)
        del args[i : i + 2]
    end_with_parent(only_if_asked=True)  # a sim session's server ends with the session
    stop_on_sigterm()  # after end_with_parent, whose handler it replaces
    install()
    mend_contact_filter()
    from rcsssmj.__main__ import soccer_sim  # noqa: PLC0415 - after the patch

    sys.argv = ['rcssservermj', *args]
    soccer_sim()


if __name__ == '__main__':
    main()
