"""The server link: both servers' protocols, percepts, ROS message conversions and node plumbing.

Holds the S-expression parser and framing, percepts and actions of rcssserver3d and
RCSSServerMJ, the agent loop and its ROS node (``bridge_node``), the trainer/monitor
client, the team-talk wire format (:mod:`team_talk`, spoken by strategy, heard by the
world model), config-file loading and the node ``main`` helpers every node uses.
May import :mod:`robocup3d_description` only.
"""
