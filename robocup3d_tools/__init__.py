"""The application around the team: the ``robocup3d`` CLI, players, team runner, matches.

Holds the CLI (``cli``), the composed player process (``player``), team files and the
team runner, server management, simulation sessions and walk tasks, ``optimize``, and
the offline ``inspect`` and ``localize`` commands. The top layer: it may import every
package; none imports it.
"""
