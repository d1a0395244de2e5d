"""Trace get-ups: the torso's height and tilt every 0.1 s from the fall report, through the player.

    python bench/trace_getup.py --robot T1 --direction front --trials 2 [--skill-params FILE ...]

Each line: seconds since the fall report, torso height (m), tilt from vertical (deg), the z of
the torso's x axis (+: chest up, -: chest down), and the motion node's skill and fallen flag.
A trial ends when the robot has stood for ``getup_tasks.HOLD`` s (``up after S s``) or after
``--until`` s. For designing a skill by eye; ``robocup3d_tools.getup_tasks`` is what scores one.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robocup3d_tools.getup_tasks import HOLD, START, _knock, _upright
from robocup3d_tools.sim_session import CYCLE, SimSession


class _TracingSession(SimSession):
    """A session that also keeps the z of the torso's x axis (chest up or down)."""

    chest_z = 0.0

    def _on_pose(self, msg: object) -> None:
        o = msg.pose.orientation
        self.chest_z = 2.0 * (o.x * o.z - o.w * o.y)
        super()._on_pose(msg)


def trace(session: _TracingSession, direction: str, trials: int, seed: int, until: float) -> list[float | None]:
    """Print a trace per trial; the time to upright of each (None: not up within ``until``)."""
    rng = random.Random(seed)
    times: list[float | None] = []
    for k in range(trials):
        session.place(*START)
        session.wait_cycles(round(rng.uniform(0.2, 0.6) / CYCLE))
        fell_at = _knock(session, direction, rng)
        if fell_at is None:
            print(f'trial {k}: not knocked')
            continue
        up_since: float | None = None
        took: float | None = None
        print(f'trial {k}')
        while session.cycles * CYCLE - fell_at < until:
            session.wait_cycles(1)
            t = session.cycles * CYCLE - fell_at
            p, st = session.pose, session.state
            if session.cycles % 5 == 0 and p is not None:
                tilt = math.degrees(math.acos(max(-1.0, min(1.0, p.up))))
                print(
                    f'  {t:5.2f} z {p.z:5.2f} tilt {tilt:5.0f} chest {session.chest_z:+5.2f}'
                    f' {st.get("skill", "")} {"fallen" if st.get("fallen") else ""}'
                )
            if not _upright(session):
                up_since = None
            elif up_since is None:
                up_since = t
            elif t - up_since >= HOLD:
                took = up_since
                break
        print(f'  -> up after {took:.2f} s' if took is not None else '  -> not up')
        times.append(took)
    return times


def main() -> int:
    """Parse the arguments and trace."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--robot', default='T1')
    ap.add_argument('--direction', default='front', choices=('front', 'back', 'left', 'right'))
    ap.add_argument('--trials', type=int, default=2)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--until', type=float, default=6.0)
    ap.add_argument('--skill-params', nargs='*', default=[], metavar='FILE')
    args = ap.parse_args()
    player_args = ('--skill-params', *args.skill_params) if args.skill_params else ()
    with _TracingSession(args.robot, player_args=player_args) as session:
        times = trace(session, args.direction, args.trials, args.seed, args.until)
    print('times:', times)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
