"""Issue #21's scoring scenario: a forward 3 m behind the ball, 4 m in front of the opponents' goal.

One T1 plays on its own (its whole player: world model, strategy, motion) on RCSSServerMJ in sync
mode; the trainer puts the ball at (23.5, 0) and the robot at (20.5, y) facing the goal, and the server's
ground truth (the ball over the goal line between the posts, or the referee's score) says whether and when
it scored.

    PYTHONPATH=. python bench/bench_score.py [--trials 5] [--seconds 40] [--offset 0.0]

Prints per trial: scored or not, the time, the ball's end position, and the strategy's reasons in order,
with the referee's play modes (and the fouls it called) in brackets.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robocup3d_tools.ball_tasks import await_goal_call, clear_kick_off
from robocup3d_tools.sim_session import SimSession

GOAL_X, POST_Y, BALL_R = 27.5, 1.83, 0.11  # RCSSServerMJ's fifa7vs7 field
CYCLE = 0.02
HALF_S = 300.0  # s of game clock in a half (RCSSServerMJ's rules)
HALF_MARGIN = 10.0  # s kept spare for placing the robot


def trial(s: SimSession, i: int, args: argparse.Namespace) -> bool | None:
    """One trial: place the ball and the robot, let it play; True for a goal, None when the game ended first."""
    s.trainer.drop_ball()
    s.place(GOAL_X - 7.0, args.offset, 0.0, ball=(GOAL_X - 4.0, 0.0, BALL_R))
    start, scored, reasons = s.cycles, False, []
    score = s.trainer.state.score_left  # we play left, towards +x
    mode = s.trainer.state.play_mode
    while (s.cycles - start) * CYCLE < args.seconds and not scored:
        s.wait_cycles(10)
        reason = s.strategy.get('reason')
        if reason and (not reasons or reasons[-1] != reason):
            reasons.append(reason)
        if s.trainer.state.play_mode != mode:  # the referee's calls, and the fouls behind them
            mode = s.trainer.state.play_mode
            if mode == 'GameOver':
                print(f'{i:>5}  void: the game clock ran out, again in a fresh session', flush=True)
                return None
            fouls = ' '.join(kind for kind, _, _ in s.trainer.state.fouls)
            reasons.append(f'[{mode}{": " + fouls if fouls else ""}]')
        b = s.ball
        # over the line between the posts, or the referee's count (it puts the ball back at once)
        crossed = b is not None and b[0] > GOAL_X + BALL_R and abs(b[1]) < POST_Y
        scored = crossed or s.trainer.state.score_left > score
    b = s.ball or (float('nan'), float('nan'))
    t = (s.cycles - start) * CYCLE
    result = 'goal' if scored else 'no goal'
    if scored:
        await_goal_call(s)
    print(f'{i:>5}  {result:<8}{t:>6.1f}  {b[0]:>7.2f}{b[1]:>7.2f}  {", ".join(reasons)}', flush=True)
    return scored


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--trials', type=int, default=5)
    ap.add_argument('--seconds', type=float, default=40.0, help='server seconds a trial may take')
    ap.add_argument('--offset', type=float, default=0.0, help='m to the side the robot starts')
    args = ap.parse_args(argv)
    print(f'{"trial":>5}  {"result":<8}{"at s":>6}  {"ball end":>14}  reasons')
    goals, done = 0, 0
    while done < args.trials:  # the game clock runs out (one half, alone on the field): then a fresh session
        before = done
        with SimSession('T1', unum=2, player_args=('--world-model',), play=True) as s:
            clear_kick_off(s, GOAL_X - 7.0, args.offset, 0.0, (GOAL_X - 4.0, 0.0, BALL_R))
            while done < args.trials and s.trainer.state.game_time + args.seconds + HALF_MARGIN < HALF_S:
                scored = trial(s, done, args)
                if scored is None:
                    break
                goals += scored
                done += 1
        if done == before:
            raise SystemExit(f'a fresh session ran no trial: --seconds {args.seconds:g} does not fit in a half')
    print(f'goals: {goals} of {args.trials}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
