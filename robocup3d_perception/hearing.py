"""Which heard messages the world model takes in (pure Python, no rclpy).

A heard message (the bridge's ``hear`` JSON: ``team``, ``self``, ``text``, ...) becomes a
:class:`~robocup3d_bridge.team_talk.TeammateReport` only when it is a teammate's:

* rcssserver3d names the speaker's team in every ``hear``: another team's message is
  dropped by that name, whatever it says (a forged message with our check passes
  :func:`~robocup3d_bridge.team_talk.decode`; the team field does not lie);
* RCSSServerMJ sends no team name (``team`` is null): the message's check, keyed by our
  team name, turns the other team's messages away;
* our own messages, undecodable ones and ones that claim our own shirt number are dropped;
* with a team secret the check is keyed by it (never sent), so an opponent cannot make it;
* a message said more than :data:`MAX_AGE_CYCLES` cycles ago by its stamp is stale (both servers
  deliver in 2): a replay of an old message is dropped;
* a teammate that would have moved faster than :data:`MAX_SPEED` since its last report is
  implausible (a forged or garbled position), unless play was stopped (a beam).

What :class:`~robocup3d_perception.ball_tracker.BallTracker` then does with a report that
contradicts the estimate is its own business (it waits for corroboration).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from robocup3d_bridge import team_talk
from robocup3d_bridge.team_talk import TeammateReport

__all__ = ['HEAR_OUTCOMES', 'MAX_AGE_CYCLES', 'MAX_SPEED', 'implausible', 'teammate_report']

#: Why a heard message was or was not taken in (the keys of the node's counters).
HEAR_OUTCOMES = ('taken', 'own', 'other_team', 'not_team_talk', 'own_number', 'stale', 'implausible')
MAX_AGE_CYCLES = 4  # a message is heard 2 cycles after it was said; a little slack for a busy machine
MAX_SPEED = 2.0  # m/s, well above any walk: a teammate's report that moved faster is implausible
_SLACK = 0.5  # m, the messages' 1/8 m steps and the speaker's own localization error


def teammate_report(
    heard: Mapping, team: str, unum: int, side: str, now: float, secret: str = ''
) -> tuple[TeammateReport | None, str]:
    """The report in one heard message (``None`` if not taken in) and the outcome (see ``HEAR_OUTCOMES``)."""
    if heard.get('self'):
        return None, 'own'
    speaker_team = heard.get('team')
    if speaker_team is not None and speaker_team != team:
        return None, 'other_team'
    msg = team_talk.decode(str(heard.get('text', '')), team, secret)
    if msg is None:
        return None, 'not_team_talk'
    if msg.unum == unum:
        return None, 'own_number'
    if (team_talk.server_cycle(now) - msg.stamp) % 16 > MAX_AGE_CYCLES:
        return None, 'stale'
    return team_talk.to_report(msg, now, side), 'taken'


def implausible(last: TeammateReport | None, report: TeammateReport) -> bool:
    """Whether ``report`` puts its speaker farther from its ``last`` report than it can have walked."""
    if last is None or last.position is None or report.position is None or report.time <= last.time:
        return False
    moved = math.hypot(report.position[0] - last.position[0], report.position[1] - last.position[1])
    return moved > MAX_SPEED * (report.time - last.time) + _SLACK
