"""Environment for every process we start: DDS stays on this machine, one domain per run."""

from __future__ import annotations

import os
import random

__all__ = ['ros_environment']


def ros_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default ``os.environ``) with localhost-only discovery and a domain id.

    An existing ``ROS_DOMAIN_ID`` is kept (so a user's rviz can join); otherwise one
    is picked at random for this run.
    """
    env = dict(os.environ if base is None else base)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))
    env.setdefault('PYTHONUNBUFFERED', '1')
    return env
