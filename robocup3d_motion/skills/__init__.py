"""Keyframe skills in the UT Austin Villa skill language: parameter files (``params``),
the ``.skl`` parser (``skl``) and the player with its registry (``engine``)."""
