"""A lone striker's pace: how fast one T1, its whole player deciding, carries the ball up the field.

One T1 plays on its own (world model, strategy, motion) on RCSSServerMJ in sync mode. Each trial the
trainer puts the ball at (``--ball-x``, 0) and the robot 3 m behind it facing the opponents' goal, and the
server's ground truth follows the ball for ``--seconds``: how far it went towards their goal, whether it
went in, how many kicks the player started, and how often it fell (and whether within 3 s of a kick's end).

    PYTHONPATH=. python bench/bench_advance.py [--trials 4] [--seconds 60] [--ball-x 0]

Prints one row per trial and the mean pace (m of progress towards their goal per second).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robocup3d_tools.ball_tasks import FALLEN_UP, clear_kick_off
from robocup3d_tools.sim_session import CYCLE, SimSession

GOAL_X, POST_Y, BALL_R = 27.5, 1.83, 0.11  # RCSSServerMJ's fifa7vs7 field
HALF_S = 300.0  # s of game clock in a half (RCSSServerMJ's rules)
HALF_MARGIN = 10.0  # s kept spare for placing the robot
AFTER_KICK = 3.0  # s after a kick's end a fall counts as the kick's


def trial(s: SimSession, args: argparse.Namespace) -> dict | None:
    """One trial's figures, or None when the game clock ran out first."""
    s.trainer.drop_ball()
    s.place(args.ball_x - 3.0, 0.0, 0.0, ball=(args.ball_x, 0.0, BALL_R))
    start, score = s.cycles, s.trainer.state.score_left
    kicks, falls, kick_falls, fallen = 0, 0, 0, False
    kicking, kick_end, reasons = False, -math.inf, []
    goal = None
    while (t := (s.cycles - start) * CYCLE) < args.seconds:
        s.wait_cycles(5)
        if s.trainer.state.play_mode == 'GameOver':
            return None
        reason = s.strategy.get('reason')
        if reason and (not reasons or reasons[-1] != reason):
            reasons.append(reason)
        task = s.state.get('task') or {}
        now_kicking = task.get('kind') == 'kick' and task.get('phase') == 'kicking'
        kicks += now_kicking and not kicking
        if kicking and not now_kicking:
            kick_end = t
        kicking = now_kicking
        p, b = s.pose, s.ball
        if p is not None:
            down = p.up < FALLEN_UP
            if down and not fallen:
                falls += 1
                kick_falls += t - kick_end <= AFTER_KICK or kicking
            fallen = down
        if (b is not None and b[0] > GOAL_X + BALL_R and abs(b[1]) < POST_Y) or s.trainer.state.score_left > score:
            goal = t
            break
    b = s.ball or (args.ball_x, 0.0)
    progress = GOAL_X if goal is not None else b[0]
    return {
        'progress': progress - args.ball_x,
        'seconds': goal if goal is not None else args.seconds,
        'goal': goal,
        'kicks': kicks,
        'falls': falls,
        'kick_falls': kick_falls,
        'reasons': reasons,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--trials', type=int, default=4)
    ap.add_argument('--seconds', type=float, default=60.0, help='server seconds a trial lasts (or until a goal)')
    ap.add_argument('--ball-x', type=float, default=0.0, help='where the ball starts (m; their goal line at 27.5)')
    ap.add_argument(
        '--player-arg', action='append', default=[], help="one more argument for the player ('--walk-config=FILE')"
    )
    args = ap.parse_args(argv)
    if args.seconds + HALF_MARGIN >= HALF_S:
        raise SystemExit(f'--seconds {args.seconds:g} does not fit in a half ({HALF_S:g} s)')
    head = f'{"trial":>5}{"progress m":>11}{"s":>6}{"m/s":>6}{"goal":>6}{"kicks":>6}{"falls":>6}{"after kick":>11}'
    print(f'{head}  reasons')
    rows: list[dict] = []
    while len(rows) < args.trials:  # a half's clock runs out (one robot alone on the field): a fresh session
        with SimSession('T1', unum=2, player_args=('--world-model', *args.player_arg), play=True) as s:
            clear_kick_off(s, args.ball_x - 3.0, 0.0, 0.0, (args.ball_x, 0.0, BALL_R))
            while len(rows) < args.trials and s.trainer.state.game_time + args.seconds + HALF_MARGIN < HALF_S:
                r = trial(s, args)
                if r is None:
                    break
                rows.append(r)
                goal = f'{r["goal"]:.0f}' if r['goal'] is not None else '-'
                print(
                    f'{len(rows):>5}{r["progress"]:>11.1f}{r["seconds"]:>6.0f}{r["progress"] / r["seconds"]:>6.2f}'
                    f'{goal:>6}{r["kicks"]:>6}{r["falls"]:>6}{r["kick_falls"]:>11}  {", ".join(r["reasons"])}',
                    flush=True,
                )
    pace = sum(r['progress'] for r in rows) / sum(r['seconds'] for r in rows)
    goals = sum(r['goal'] is not None for r in rows)
    kicks, kick_falls = sum(r['kicks'] for r in rows), sum(r['kick_falls'] for r in rows)
    falls = sum(r['falls'] for r in rows)
    print(f'pace {pace:.3f} m/s; {goals} goals in {len(rows)} trials; {kicks} kicks, {kick_falls} falls within')
    print(f'{AFTER_KICK:g} s of a kick; {falls} falls in all')
    return 0


if __name__ == '__main__':
    sys.exit(main())
