"""robocup3d match's statistics from a real RCSSServerMJ monitor stream (robocup3d_tools.match_stats)."""

from __future__ import annotations

from pathlib import Path

from robocup3d_tools.match_stats import MatchStats, summary_lines


def _monitor_lines(shared_dir: Path) -> list[str]:
    return (shared_dir / 'captures/rcssservermj/monitor_rsmp.txt').read_text().splitlines()


def test_the_live_stream_gives_the_robots_the_ball_and_the_teams(shared_dir: Path) -> None:
    stats = MatchStats()
    assert stats.analysis() is None  # nothing seen yet
    for _ in range(2):  # the capture twice over: enough robot samples
        for line in _monitor_lines(shared_dir):
            stats.take(line.encode())
    analysed = stats.analysis()
    assert analysed is not None
    a, data = analysed
    assert 'Probe/p1' in data.truth and data.truth['Probe/p1'].v.shape[1] == 7
    assert data.ball is not None and abs(data.ball.v[0][2] - 0.11) < 0.01  # the ball on the centre spot
    assert a.team_left == 'Probe' and a.score == (0, 0)
    lines = summary_lines(a, stats.fouls)
    assert any(line.startswith('Probe: 0 kicks') and 'fouls: none' in line for line in lines), lines


def test_a_foul_the_stream_repeats_is_counted_once(shared_dir: Path) -> None:
    stats = MatchStats()
    lines = _monitor_lines(shared_dir)
    for line in lines:
        stats.take(line.encode())
    last = lines[-1]
    fouled = last.replace('(play_mode 3)', '(play_mode 3)(foul 9 1 2)', 1)  # as RCSSServerMJ sends it
    assert fouled != last
    for _ in range(3):
        stats.take(fouled.encode())
    assert stats.fouls == {('left', 'double touch'): 1}
    a, _ = stats.analysis()
    assert any('fouls: 1 double touch' in line for line in summary_lines(a, stats.fouls))


def test_a_free_kick_whose_foul_the_stream_missed_counts_the_foul(shared_dir: Path) -> None:
    """RCSSServerMJ 0.2.1 sends a monitor every other frame, and a foul stands in one frame only: the free kick it
    gives comes without it half the time (a 3 v 3 match of 2026-11-25 had one, and the summary said no foul)."""
    lines = _monitor_lines(shared_dir)
    last = lines[-1]
    assert '(play_mode 3)' in last
    missed, reported = MatchStats(), MatchStats()
    for stats in (missed, reported):
        for line in lines:
            stats.take(line.encode())
    missed.take(last.replace('(play_mode 3)', '(play_mode 16)', 1).encode())  # free_kick_right, no foul
    missed.take(last.replace('(play_mode 3)', '(play_mode 17)', 1).encode())  # direct_free_kick_left
    assert missed.fouls == {('left', 'double touch'): 1, ('right', 'hand'): 1}
    reported.take(last.replace('(play_mode 3)', '(play_mode 16)(foul 9 1 2)', 1).encode())  # the foul came too
    assert reported.fouls == {('left', 'double touch'): 1}


def test_rcssserver3d_stream_gives_the_goal_possession_and_the_players(shared_dir: Path) -> None:
    """The captured rcssserver3d monitor stream (its first 200 messages): Alpha's goal, who was near the ball."""
    stats = MatchStats('simspark')
    for line in (shared_dir / 'captures/simspark/match_monitor_port3200.txt').read_bytes().splitlines():
        stats.take(line)
    analysed = stats.analysis()
    assert analysed is not None
    a, data = analysed
    assert set(data.truth) == {'Alpha/p1', 'Alpha/p2', 'Beta/p1'}
    assert data.field.half_length == 15.0  # rcssserver3d's 30 m field
    lines = summary_lines(a)
    assert any(line.startswith('goal:') and 'Alpha' in line and '(1:0)' in line for line in lines), lines
    goal = next(line for line in lines if line.startswith('goal:'))
    assert f'{a.goals[0].game_time:6.1f} s of half' in goal  # the game clock, as the play-mode lines
    assert any(line.startswith('possession: Alpha') for line in lines), lines


def test_rcssserver3d_fouls_each_count_once_in_the_summary(shared_dir: Path) -> None:
    """rcssserver3d reports each foul once (real messages: test/data/simspark_monitor_fouls.txt, six illegal-defence
    fouls of the left team; the same player's come seconds apart and count each time)."""
    stats = MatchStats('simspark')
    for line in (shared_dir / 'captures/simspark/match_monitor_port3200.txt').read_bytes().splitlines():
        stats.take(line)
    fouls = Path(__file__).resolve().parents[1] / 'data' / 'simspark_monitor_fouls.txt'
    for line in fouls.read_bytes().splitlines():
        stats.take(line)
    assert stats.fouls == {('left', 'illegal defence'): 6}
    a, _ = stats.analysis()
    lines = summary_lines(a, stats.fouls)
    assert any(line.startswith('Alpha:') and 'fouls: 6 illegal defence' in line for line in lines), lines
    assert any(line.startswith('Beta:') and 'fouls: none' in line for line in lines), lines


def test_a_punished_rcssserver3d_foul_recorded_every_cycle_of_the_lift_counts_once() -> None:
    """rcssserver3d records a charging foul again every cycle it holds the player in the air (0.5 s,
    ``SoccerRuleAspect``'s ``FoulHoldTime``): a half against UT Austin Villa counted 104 charging records for them."""
    stats = MatchStats('simspark')

    def foul(t: float, index: int, unum: int) -> bytes:  # the header as rcssserver3d sends it (test/data's capture)
        return f'((time {t:.2f})(foul {index} 6 2 {unum}))(RDS 0 1)()'.encode()

    index = 0
    for start, unum in ((50.0, 7), (50.3, 9), (53.0, 7)):  # player 7 twice, 3 s apart; player 9 once
        for k in range(25):
            index += 1
            stats.take(foul(start + 0.02 * k, index, unum))
    assert stats.fouls == {('right', 'charging'): 3}
