"""The robots as the servers build them: joint tables, links and masses, kinematics, URDF.

Holds :mod:`robots` (joint specs of the Nao types and of RCSSServerMJ's T1/K1),
:mod:`body` (links, masses, leg chains), :mod:`kinematics` (forward kinematics, leg IK),
:mod:`urdf` and :mod:`guess` (which robot a player is, from its joints or its URDF). The
bottom layer: every other package may import it, and it imports none of ours (only numpy
and the ``rcsssmj`` package's model files).
"""
