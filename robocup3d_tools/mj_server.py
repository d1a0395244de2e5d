"""RCSSServerMJ as our tools start it: the stock server with its ball-contact filter mended.

``python -m robocup3d_tools.mj_server [rcssservermj options]`` runs ``rcsssmj``'s own entry point
after one change. RCSSServerMJ 0.2.1 finds who touches the ball by the touching geom's name
(``r-<team>-<unum>-...``), but the K1's collision geoms have no names: ``decode_agent_prefix(None)``
raises ``AttributeError`` and the simulation stops the first time a K1 touches the ball. Here an
unnamed geom is named by its body (which carries the agent's prefix), so a K1's touch is credited
to that K1, as a T1's is, and the game goes on. Nothing else changes; the fault is reported in
``docs/servers.md`` for upstream.
"""

from __future__ import annotations

from typing import Any

__all__ = ['geom_owner_name', 'main', 'mend_contact_filter']


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


def main() -> None:
    """Run RCSSServerMJ (same options as ``rcssservermj``) with the mended contact filter."""
    mend_contact_filter()
    from rcsssmj.__main__ import soccer_sim  # noqa: PLC0415 - it configures logging on import

    soccer_sim()


if __name__ == '__main__':
    main()
