"""Run RCSSServerMJ (PyPI ``rcsssmj``) with the controls of a joining robot zeroed.

``python -m robocup3d_tools.mujoco_server --host 127.0.0.1 --aport ... --mport ...`` takes the
arguments of ``rcssservermj``. Why it exists (issue #24): each time an agent joins, the server
adds the robot to its MuJoCo spec and calls ``MjSpec.recompile(model, data)``, which in
MuJoCo 3.5 leaves ``data.ctrl`` of the added actuators uninitialised (seen: -5.5e303 at three
of a T1's 69 actuators). The forward pass right after the recompile finds them and logs
"Nan, Inf or huge value in CTRL at ACTUATOR n"; until the agent's first command overwrites
them, MuJoCo replaces every control of the scene by zero, all robots' included. An agent that
sends only its init gets the same warning, so nothing an agent sends can prevent it: the
controls of the actuators a recompile added are zeroed here before that forward pass.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ['FreshControlsZeroed', 'install', 'main']


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


def main(argv: list[str] | None = None) -> None:
    """Start the server as ``rcssservermj`` would, with :func:`install` applied."""
    install()
    from rcsssmj.__main__ import soccer_sim  # noqa: PLC0415 - after the patch

    sys.argv = ['rcssservermj', *(sys.argv[1:] if argv is None else argv)]
    soccer_sim()


if __name__ == '__main__':
    main()
