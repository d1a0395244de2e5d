"""What the team does: formations and the strategy node that drives a player.

Holds the team's behaviour only. May import every layer below it (motion, perception,
bridge, description); never :mod:`robocup3d_tools`.
"""
