"""What the player believes: orientation, self-localization, ball and player tracking.

A pure core (``world_model``, filters, ``field``, ``representations``) under one node,
``world_model_node``. May import :mod:`robocup3d_bridge` and :mod:`robocup3d_description`;
never motion, strategy or tools.
"""
