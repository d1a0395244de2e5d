"""How the player moves: joint control, balance, the walk, fall detection, skills and get-ups.

A pure core (``walk``, ``joint_control``, ``skills``, ``getup``, ...) under one node,
``motion_node``. May import :mod:`robocup3d_bridge` and :mod:`robocup3d_description`;
never perception, strategy or tools.
"""
