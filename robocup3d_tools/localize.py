"""``robocup3d localize FILE``: the perception pipeline offline over a capture file.

Reads a capture (one server message per line, either server), feeds every message
to a :class:`~robocup3d_perception.world_model.WorldModel` **without** its ground
truth (``mypos``/``myorien``/``ballpos`` on SimSpark, ``pos``/``quat`` on
RCSSServerMJ are removed from the input), prints the estimated trajectory and, when
the file carries ground truth, the error statistics.

Scoring:

* position: torso (x, y) estimate against MJ ``pos``, or against SimSpark ``mypos``
  (the head; on the Nao it sits straight above the torso origin when upright). SimSpark
  says ``mypos``, ``myorien`` and ``ballpos`` in the agent's team frame, turned by 180
  degrees for the right team: they are turned back into the absolute frame;
* heading: torso yaw against the yaw of MJ ``quat``; on SimSpark the camera's heading
  against ``myorien`` (which follows the head);
* robustness: the file is streamed with a cap on the line length; a message whose time is
  not finite or jumps ahead is skipped and reported, a time going back starts afresh; a
  file without a valid message, an estimate that froze or went non-finite exit 1.
* "after convergence": samples less than ``--settle`` seconds after the start or after
  a ground-truth jump (a beam or a trainer move: > 0.3 m or > 15 degrees between two
  ``See``) are left out; the recovery time after each jump is reported on its own.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path

import numpy as np

from robocup3d_bridge.percept import Side
from robocup3d_bridge.perception import PerceptParseError, parse_percept
from robocup3d_description.body import body_for
from robocup3d_perception.field import field_for
from robocup3d_perception.inputs import cycle_input
from robocup3d_perception.representations import WorldState
from robocup3d_perception.world_model import WorldModel
from robocup3d_tools.capture_file import MAX_LINE, capture_lines

__all__ = ['CaptureEvents', 'Sample', 'Summary', 'main', 'run_capture', 'summarize']


def _yaw_of_quat(q: tuple[float, float, float, float]) -> float:
    w, x, y, z = q
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def _upright(q: tuple[float, float, float, float]) -> float:
    _, x, y, _ = q
    return 1 - 2 * (x * x + y * y)  # R[2, 2]: cosine of the torso tilt


@dataclass(slots=True)
class Sample:
    """One ``See`` cycle: the estimate and, when known, the truth (absolute frame)."""

    time: float
    state: WorldState
    heading: float  # rad, the estimate compared with the truth (torso yaw or camera yaw)
    true_xy: tuple[float, float] | None = None
    true_heading: float | None = None
    true_ball: tuple[float, float, float] | None = None
    ball_seen: bool = False
    cpu: float = 0.0  # s, world model update of this cycle

    @property
    def pos_error(self) -> float | None:
        """Position error (m)."""
        if self.true_xy is None:
            return None
        return math.hypot(self.state.pose.x - self.true_xy[0], self.state.pose.y - self.true_xy[1])

    @property
    def heading_error(self) -> float | None:
        """Absolute heading error (rad)."""
        if self.true_heading is None:
            return None
        return abs((self.heading - self.true_heading + math.pi) % (2 * math.pi) - math.pi)

    @property
    def ball_error(self) -> float | None:
        """Ball position error on the ground (m)."""
        if self.true_ball is None:
            return None
        b = self.state.ball.position
        return math.hypot(b[0] - self.true_ball[0], b[1] - self.true_ball[1])


def _detect(lines: list[str]) -> tuple[str, str]:
    head = ' '.join(lines[:20])
    if 'torso_quat' in head or '(n q_' in head:
        robot = 'T1' if '(n q_tj1)' in head else 'K1'
        return 'mujoco', robot
    return 'simspark', 'nao4' if '(n llj7)' in head else 'nao0'


MAX_STEP_S = 2.0  # s; a message whose time is further ahead of the last one (or not finite) is skipped
NEW_RUN_LINES = 3  # consecutive messages that agree on a far time: the capture goes on from there
FROZEN_SEES = 25  # See cycles with a bit-identical pose estimate: the estimate froze


@dataclass(slots=True)
class CaptureEvents:
    """What went wrong along a capture (line numbers from 1 when known, else message numbers)."""

    messages: int = 0  # parsed messages with a time
    unparsed: int = 0  # lines that are not a server message
    time_jumps: list[tuple[int, float, float]] = field(default_factory=list)  # (line, last time, its time)
    new_runs: list[tuple[int, float]] = field(default_factory=list)  # (line, time): model started afresh
    frozen: list[tuple[float, float]] = field(default_factory=list)  # (from, to) s: estimate did not change
    not_finite: int = 0  # See cycles with a non-finite estimate


def _numbered(lines: Iterable[str | tuple[int, str]]) -> Iterator[tuple[int, str]]:
    for i, ln in enumerate(lines, 1):
        yield ln if isinstance(ln, tuple) else (i, ln)


def run_capture(
    lines: Iterable[str | tuple[int, str]],
    server: str | None = None,
    robot: str | None = None,
    rules: str = 'ssim',
    side: str | None = None,
    seed: int = 0,
    cpu_clock: object = None,
    events: CaptureEvents | None = None,
    max_step: float = MAX_STEP_S,
) -> Iterator[Sample]:
    """Feed a capture through a world model; yield one :class:`Sample` per ``See`` cycle.

    ``lines`` are read as a stream (strings, or ``(line number, string)``). A message whose
    time is not finite or more than ``max_step`` s ahead is skipped, unless ``NEW_RUN_LINES``
    in a row agree on the new time (then, as when time goes back by more than 1 s, a new
    world model starts). ``events`` collects what was skipped, restarted or froze.
    """
    import time as _time  # noqa: PLC0415 - only the clock

    clock = cpu_clock or _time.perf_counter
    ev = events if events is not None else CaptureEvents()
    stream = ((n, ln) for n, ln in _numbered(lines) if ln.strip())
    head = list(islice(stream, 20))
    det_server, det_robot = _detect([ln for _, ln in head])
    server = server or det_server
    robot = robot or det_robot
    from robocup3d_perception.world_model import WorldModelParameters  # noqa: PLC0415

    def model() -> WorldModel:
        return WorldModel(
            body_for(robot),
            field_for(server, rules),
            use_lines=server == 'simspark',
            params=WorldModelParameters(seed=seed),
        )

    wm = model()
    our_side, team, unum = side or 'left', '', 0
    last_t: float | None = None
    ahead: list[tuple[int, float]] = []  # skipped messages that agree on a time far ahead
    last_pose: tuple[float, float, float] | None = None
    same = 0
    for n, line in chain(head, stream):
        try:
            p = parse_percept(line, server)
        except PerceptParseError:
            ev.unparsed += 1
            continue
        if p.time is None:
            ev.unparsed += 1
            continue
        t = p.time
        if not math.isfinite(t) or (last_t is not None and t > last_t + max_step):
            if math.isfinite(t) and ahead and 0.0 <= t - ahead[-1][1] <= max_step:
                ahead.append((n, t))
            else:
                ahead = [(n, t)] if math.isfinite(t) else []
            if len(ahead) < NEW_RUN_LINES:
                ev.time_jumps.append((n, last_t if last_t is not None else math.nan, t))
                continue
            del ev.time_jumps[len(ev.time_jumps) - (NEW_RUN_LINES - 1) :]  # not jumps: a new run
            t = ahead[0][1]
            last_t = None
        ahead = []
        if last_t is None or t < last_t - 1.0:  # the first message, or a new run (time went back or on)
            if ev.messages:
                ev.new_runs.append((n, t))
                wm, last_pose, same = model(), None, 0
            last_t = t
        last_t = max(t, last_t)
        ev.messages += 1
        g = p.game
        if g is not None:
            if side is None and g.side in (Side.LEFT, Side.RIGHT):
                our_side = g.side.value
            unum = g.unum or unum
        inp = cycle_input(p, our_side, team, unum)
        t0 = clock()
        state = wm.update(inp)
        cpu = clock() - t0
        if p.vision is None:
            continue
        pose = (state.pose.x, state.pose.y, state.pose.yaw)
        if not all(math.isfinite(v) for v in pose):
            ev.not_finite += 1
        same = same + 1 if pose == last_pose else 0
        if same == FROZEN_SEES:
            ev.frozen.append((p.time, p.time))
        elif same > FROZEN_SEES:
            ev.frozen[-1] = (ev.frozen[-1][0], p.time)
        last_pose = pose
        v = p.vision
        sample = Sample(p.time, state, state.pose.yaw, ball_seen=v.ball is not None, cpu=cpu)
        if p.torso_position is not None and p.torso_orientation is not None:
            sample.true_xy = p.torso_position[:2]
            if _upright(p.torso_orientation) > 0.5:  # lying: the torso heading is not defined
                sample.true_heading = _yaw_of_quat(p.torso_orientation)
        elif v.my_position is not None:
            # rcssserver3d says mypos, myorien and ballpos in the agent's team frame: turned by 180 deg on the right
            sign = -1.0 if our_side == 'right' else 1.0
            sample.true_xy = (sign * v.my_position[0], sign * v.my_position[1])
            if v.my_orientation is not None:
                turn = math.pi if our_side == 'right' else 0.0
                sample.true_heading = math.remainder(v.my_orientation + turn, math.tau)
                sample.heading = state.pose.camera_yaw
            if v.ball_position is not None:
                bx, by, bz = v.ball_position
                sample.true_ball = (sign * bx, sign * by, bz)
        if v.ball_position is not None and sample.true_ball is None:
            sample.true_ball = v.ball_position
        yield sample


@dataclass(slots=True)
class Summary:
    """Error statistics of a run (m, deg, s)."""

    samples: int = 0
    scored: int = 0
    pos_median: float = math.nan
    pos_p95: float = math.nan
    heading_median: float = math.nan  # deg
    heading_p95: float = math.nan  # deg
    ball_median: float = math.nan  # while seen
    ball_p95: float = math.nan
    ball_scored: int = 0
    recoveries: list[tuple[float, float | None]] = field(default_factory=list)  # (jump time, recovery s)


def _jumps(samples: list[Sample]) -> list[float]:
    out = []
    prev = None
    for s in samples:
        if s.true_xy is None:
            continue
        if prev is not None:
            moved = math.hypot(s.true_xy[0] - prev.true_xy[0], s.true_xy[1] - prev.true_xy[1])
            turned = 0.0
            if s.true_heading is not None and prev.true_heading is not None:
                turned = (s.true_heading - prev.true_heading + math.pi) % (2 * math.pi) - math.pi
            if moved > 0.3 or abs(turned) > math.radians(15):
                out.append(s.time)
        prev = s
    return out


def summarize(
    samples: list[Sample], settle: float = 1.0, recovered_pos: float = 0.3, recovered_deg: float = 10.0
) -> Summary:
    """Median and 95th percentile errors after convergence, and recovery times."""
    out = Summary(samples=len(samples))
    truth = [s for s in samples if s.true_xy is not None]
    if not truth:
        return out
    starts = [truth[0].time, *_jumps(truth)]

    def settled(t: float) -> bool:
        last = max(s for s in starts if s <= t)
        return t - last >= settle

    scored = [s for s in truth if settled(s.time)]
    out.scored = len(scored)
    if scored:
        pe = np.array([s.pos_error for s in scored])
        he = np.degrees([s.heading_error for s in scored if s.heading_error is not None])
        out.pos_median, out.pos_p95 = float(np.median(pe)), float(np.percentile(pe, 95))
        if len(he):
            out.heading_median, out.heading_p95 = float(np.median(he)), float(np.percentile(he, 95))
    be = [s.ball_error for s in truth if s.ball_seen and s.ball_error is not None and settled(s.time)]
    if be:
        out.ball_scored = len(be)
        out.ball_median, out.ball_p95 = float(np.median(be)), float(np.percentile(be, 95))
    for j in starts:
        rec = None
        for s in truth:
            if s.time < j:
                continue
            if s.pos_error < recovered_pos and (
                s.heading_error is None or math.degrees(s.heading_error) < recovered_deg
            ):
                rec = s.time - j
                break
        out.recoveries.append((j, rec))
    return out


def _fmt(s: Sample) -> str:
    p = s.state.pose
    b = s.state.ball
    text = f'{s.time:8.2f} {p.x:7.2f} {p.y:7.2f} {math.degrees(s.heading):7.1f} {p.confidence:5.2f}'
    text += f'  ball {b.position[0]:6.2f} {b.position[1]:6.2f}' if b.valid else '  ball      -      -'
    if s.true_xy is not None:
        text += f'  | true {s.true_xy[0]:7.2f} {s.true_xy[1]:7.2f}'
        if s.true_heading is not None:
            text += f' {math.degrees(s.true_heading):7.1f}'
        text += f'  err {s.pos_error:5.2f} m'
        if s.heading_error is not None:
            text += f' {math.degrees(s.heading_error):5.1f} deg'
    return text


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d localize``."""
    ap = argparse.ArgumentParser(prog='robocup3d localize', description=__doc__.split('\n\n')[0])
    ap.add_argument('file', type=Path, help='capture file (one server message per line)')
    ap.add_argument('--server', choices=('simspark', 'mujoco'), help='default: detected from the file')
    ap.add_argument('--robot', help='nao0..nao4, T1, K1 (default: detected)')
    ap.add_argument('--rules', default='ssim', help='RCSSServerMJ rule book: ssim, ssim26, fifa')
    ap.add_argument('--side', choices=('left', 'right'), help='our side (default: from GS, else left)')
    ap.add_argument('--settle', type=float, default=1.0, help='s after the start and each jump not scored')
    ap.add_argument('--every', type=int, default=1, help='print every Nth See cycle (0: summary only)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument(
        '--max-step', type=float, default=MAX_STEP_S, help='s; a message further ahead in time is skipped (inf: none)'
    )
    ap.add_argument('--max-line', type=int, default=MAX_LINE, metavar='BYTES', help='longer lines are skipped')
    args = ap.parse_args(argv)
    name = args.file
    try:
        f = open(args.file, 'rb')
    except OSError as exc:
        print(f'robocup3d localize: {exc}', file=sys.stderr)
        return 2
    long_lines: list[int] = []

    def text_lines() -> Iterator[tuple[int, str]]:
        for line in capture_lines(f, args.max_line):
            if line.data is None:
                long_lines.append(line.number)
                continue
            yield line.number, line.data.decode('ascii', errors='replace')

    samples = []
    events = CaptureEvents()
    if args.every:
        print('    time       x       y   head  conf                  (absolute frame, m / deg)')
    with f:
        run = run_capture(
            text_lines(),
            args.server,
            args.robot,
            args.rules,
            args.side,
            args.seed,
            events=events,
            max_step=args.max_step,
        )
        for i, s in enumerate(run):
            samples.append(s)
            if args.every and i % args.every == 0:
                print(_fmt(s))
    for n in long_lines[:10]:
        print(f'{name}:{n}: line longer than {args.max_line} bytes: skipped', file=sys.stderr)
    for n, was, t in events.time_jumps[:10]:
        print(f'{name}:{n}: time jumped from {was:.2f} s to {t:.6g} s: message skipped', file=sys.stderr)
    for n, t in events.new_runs:
        print(f'{name}:{n}: time went on from {t:.2f} s: started afresh', file=sys.stderr)
    if not events.messages:
        print(f'robocup3d localize: {name}: no valid server message (none with a time)', file=sys.stderr)
        return 1
    summ = summarize(samples, args.settle)
    cpu = np.array([s.cpu for s in samples]) * 1e3 if samples else np.zeros(1)
    print(
        f'\n{summ.samples} See cycles; update CPU on See cycles '
        f'p50 {np.median(cpu):.3f} ms, p99 {np.percentile(cpu, 99):.3f} ms'
    )
    if summ.scored:
        print(
            f'after convergence ({summ.scored} cycles): position error median {summ.pos_median:.3f} m, '
            f'p95 {summ.pos_p95:.3f} m; heading error median {summ.heading_median:.2f} deg, '
            f'p95 {summ.heading_p95:.2f} deg'
        )
        if summ.ball_scored:
            print(
                f'ball error while seen ({summ.ball_scored} cycles): '
                f'median {summ.ball_median:.3f} m, p95 {summ.ball_p95:.3f} m'
            )
        for t, rec in summ.recoveries:
            print(
                f'  start/jump at {t:.2f} s: '
                + (f'within 0.3 m / 10 deg after {rec:.2f} s' if rec is not None else 'not recovered')
            )
    elif samples:
        print('no ground truth in this file')
    skipped = len(events.time_jumps) + len(long_lines)
    print(
        f'{events.messages} messages used; skipped: {len(events.time_jumps)} time jumps, '
        f'{len(long_lines)} long lines, {events.unparsed} not server messages; {len(events.new_runs)} restarts'
    )
    if skipped:
        print(f'robocup3d localize: {name}: {skipped} messages skipped (see above)', file=sys.stderr)
    failed = False
    for a, b in events.frozen:
        print(f'robocup3d localize: {name}: the estimate froze from {a:.2f} s to {b:.2f} s', file=sys.stderr)
        failed = True
    if events.not_finite:
        print(f'robocup3d localize: {name}: {events.not_finite} See cycles with a non-finite estimate', file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == '__main__':
    raise SystemExit(main())
