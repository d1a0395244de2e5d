"""Which heard messages the world model takes in (pure Python, no rclpy).

A heard message (the bridge's ``hear`` JSON: ``team``, ``self``, ``text``, ...) becomes a
:class:`~robocup3d_bridge.team_talk.TeammateReport` only when it is a teammate's:

* rcssserver3d names the speaker's team in every ``hear``: another team's message is
  dropped by that name, whatever it says (a forged message with our check passes
  :func:`~robocup3d_bridge.team_talk.decode`; the team field does not lie);
* RCSSServerMJ sends no team name (``team`` is null): the message's check, keyed by our
  team name, turns the other team's messages away;
* our own messages, undecodable ones and ones that claim our own shirt number are dropped.

What :class:`~robocup3d_perception.ball_tracker.BallTracker` then does with a report that
contradicts the estimate is its own business (it waits for corroboration).
"""

from __future__ import annotations

from collections.abc import Mapping

from robocup3d_bridge import team_talk
from robocup3d_bridge.team_talk import TeammateReport

__all__ = ['HEAR_OUTCOMES', 'teammate_report']

#: Why a heard message was or was not taken in (the keys of the node's counters).
HEAR_OUTCOMES = ('taken', 'own', 'other_team', 'not_team_talk', 'own_number')


def teammate_report(heard: Mapping, team: str, unum: int, side: str, now: float) -> tuple[TeammateReport | None, str]:
    """The report in one heard message (``None`` if not taken in) and the outcome (see ``HEAR_OUTCOMES``)."""
    if heard.get('self'):
        return None, 'own'
    speaker_team = heard.get('team')
    if speaker_team is not None and speaker_team != team:
        return None, 'other_team'
    msg = team_talk.decode(str(heard.get('text', '')), team)
    if msg is None:
        return None, 'not_team_talk'
    if msg.unum == unum:
        return None, 'own_number'
    return team_talk.to_report(msg, now, side), 'taken'
