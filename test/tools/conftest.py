"""Fixtures of the tools tests: a bag recorded from a real short RCSSServerMJ match."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: the recorded team (test_record_replay.TEAM is the same name: same process)
TEAM = f'Rec{os.getpid() % 10000}'


@pytest.fixture(scope='session')
def recorded_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One T1 (team :data:`TEAM`) on a sync-mode RCSSServerMJ, recorded for 6 s of server time after it joined.

    The ball is put in the T1's penalty box at the start, so the goalie walks out to clear it.

    Shared by the record/replay, report and view tests: one short match per test session.
    """
    from bag_support import recorded_session  # noqa: PLC0415

    run = tmp_path_factory.mktemp('record')
    with recorded_session(run, {'bag': {}}, [TEAM]) as session:
        session.add_team(TEAM, extra_args=['--no-raw'], clock_player=1)
        session.let_recorders_subscribe()
        session.trainer.kick_off('Left')
        session.trainer.drop_ball()  # play on, the ball in our box: the goalie walks out to clear it (a track to draw)
        session.trainer.move_ball(-22.0, 3.0, 0.11)
        session.play(6.0, wall_seconds=6.0)
    return run / 'bag'
