"""``robocup3d report BAG -o report.html``: a recorded match as one self-contained HTML page, and a summary.

The page holds plotly.js inline (it opens offline) and one figure per topic: score and possession,
ball and player trajectories and heatmaps on the field, kicks and shots, falls and get-up times,
walking speeds, each player's localization error, CPU and latency. Every figure's JSON sits in a
``<script type="application/json" id="fig-<name>">`` tag that the page draws. The numbers come from
:mod:`robocup3d_tools.match_analysis`; this module only draws them.
"""

from __future__ import annotations

import argparse
import html
import math
import sys
from pathlib import Path

import numpy as np

from robocup3d_tools.match_analysis import Analysis, analyze, speeds

__all__ = ['figures', 'main', 'render_html', 'summary_text']

COLORS = {'left': '#1f77b4', 'right': '#d62728', None: '#7f7f7f'}
_PLAYER_PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22']


def _field_shapes(f: object, xref: str = 'x', yref: str = 'y') -> list[dict]:
    """The field's lines, centre circle and goals as plotly layout shapes."""
    line = {'color': 'white', 'width': 2}
    shapes = [
        {
            'type': 'rect',
            'xref': xref,
            'yref': yref,
            'x0': -f.half_length - f.border,
            'x1': f.half_length + f.border,
            'y0': -f.half_width - f.border,
            'y1': f.half_width + f.border,
            'fillcolor': '#3a7d44',
            'line': {'width': 0},
            'layer': 'below',
        }
    ]
    for x1, y1, x2, y2 in f.lines:
        shapes.append(
            {
                'type': 'line',
                'xref': xref,
                'yref': yref,
                'x0': x1,
                'y0': y1,
                'x1': x2,
                'y1': y2,
                'line': line,
                'layer': 'below',
            }
        )
    for cx, cy, r in f.circles:
        shapes.append(
            {
                'type': 'circle',
                'xref': xref,
                'yref': yref,
                'x0': cx - r,
                'x1': cx + r,
                'y0': cy - r,
                'y1': cy + r,
                'line': line,
                'layer': 'below',
            }
        )
    depth, gw = 0.6, f.goal_width / 2
    for s in (-1, 1):
        x0 = s * f.half_length
        shapes.append(
            {
                'type': 'rect',
                'xref': xref,
                'yref': yref,
                'x0': x0,
                'x1': x0 + s * depth,
                'y0': -gw,
                'y1': gw,
                'line': {'color': 'yellow', 'width': 3},
                'layer': 'below',
            }
        )
    return shapes


def _field_axes(fig: object, f: object, row: int | None = None, col: int | None = None) -> None:
    m = f.border
    kw = {} if row is None else {'row': row, 'col': col}
    fig.update_xaxes(range=[-f.half_length - m, f.half_length + m], title='x (m)', showgrid=False, **kw)
    fig.update_yaxes(range=[-f.half_width - m, f.half_width + m], title='y (m)', showgrid=False, **kw)


def _team_name(a: Analysis, side: str | None) -> str:
    return {'left': a.team_left or 'left', 'right': a.team_right or 'right'}.get(side, '?')


def _player_colors(players: list[str]) -> dict[str, str]:
    return {p: _PLAYER_PALETTE[i % len(_PLAYER_PALETTE)] for i, p in enumerate(players)}


def fig_score(a: Analysis) -> object:
    """Score over time with the goals, and who was nearest the ball (possession)."""
    from plotly.subplots import make_subplots  # noqa: PLC0415 - optional package ([report] extra)

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.75, 0.25], vertical_spacing=0.08)
    end = a.end - a.start
    for k, side in enumerate(('left', 'right')):
        if len(a.score_t):
            x = [*(a.score_t - a.start), end]
            y = [*a.score_lr[:, k], a.score_lr[-1, k]]
        else:
            x, y = [0.0, end], [0, 0]
        fig.add_scatter(
            x=x,
            y=y,
            mode='lines',
            line={'shape': 'hv', 'color': COLORS[side]},
            name=f'{_team_name(a, side)} ({side})',
            row=1,
            col=1,
        )
    if a.goals:
        fig.add_scatter(
            x=[g.t - a.start for g in a.goals],
            y=[g.score_left if g.team == 'left' else g.score_right for g in a.goals],
            mode='markers',
            marker={'symbol': 'star', 'size': 14, 'color': [COLORS[g.team] for g in a.goals]},
            name='goal',
            text=[f'goal {_team_name(a, g.team)}: {g.score_left}-{g.score_right}' for g in a.goals],
            row=1,
            col=1,
        )
    for side, level in (('left', 1), ('right', -1)):
        held = a.possession_side == side
        share = a.possession_share.get(side, float('nan'))
        fig.add_scatter(
            x=a.possession_t[held] - a.start,
            y=np.full(int(held.sum()), level),
            mode='markers',
            marker={'color': COLORS[side], 'size': 4, 'symbol': 'line-ns-open'},
            name=f'nearest to the ball: {_team_name(a, side)} ({share:.0%})' if not math.isnan(share) else side,
            row=2,
            col=1,
        )
    fig.update_yaxes(title='goals', rangemode='tozero', dtick=1, row=1, col=1)
    fig.update_yaxes(tickvals=[1, -1], ticktext=['left', 'right'], range=[-2, 2], title='possession', row=2, col=1)
    fig.update_xaxes(title="s since the bag's start", row=2, col=1)
    fig.update_layout(title='Score and possession', height=450)
    return fig


def _break_jumps(xy: np.ndarray, gap: float = 1.0) -> np.ndarray:
    """The track with a gap (nan) where it jumps by more than ``gap`` m between samples (beams)."""
    jump = np.nonzero(np.linalg.norm(np.diff(xy, axis=0), axis=1) > gap)[0] + 1
    return np.insert(np.asarray(xy, dtype=float), jump, np.nan, axis=0)


def fig_field(a: Analysis, data: object) -> object:
    """Ball and player trajectories from the ground truth, with the kicks."""
    import plotly.graph_objects as go  # noqa: PLC0415

    f = data.field
    fig = go.Figure()
    colors = _player_colors(sorted(data.truth))
    for p, s in sorted(data.truth.items()):
        xy = _break_jumps(s.v[:, :2])
        fig.add_scatter(
            x=xy[:, 0],
            y=xy[:, 1],
            mode='lines',
            line={'color': colors[p], 'width': 1.5},
            name=p,
            legendgroup='players',
            meta={'kind': 'player', 'player': p, 'side': data.side_of(p)},
        )
    if data.ball is not None:
        ball = _break_jumps(data.ball.v[:, :2], gap=2.0)  # not drawn across a placement (2 m in one sample)
        fig.add_scatter(
            x=ball[:, 0],
            y=ball[:, 1],
            mode='lines',
            line={'color': 'white', 'width': 2.5},
            name='ball',
            meta={'kind': 'ball'},
        )
    if a.kicks:
        fig.add_scatter(
            x=[k.x for k in a.kicks],
            y=[k.y for k in a.kicks],
            mode='markers',
            marker={
                'symbol': ['star' if k.shot else 'circle' for k in a.kicks],
                'size': 11,
                'color': [COLORS[k.team] for k in a.kicks],
                'line': {'color': 'black', 'width': 1},
            },
            text=[
                f'{k.kicker or "?"}: {k.speed:.1f} m/s, {"shot" if k.shot else "kick"}, {k.outcome}' for k in a.kicks
            ],
            name='kicks (star: shot)',
            meta={'kind': 'kicks'},
        )
    fig.update_layout(
        shapes=_field_shapes(f),
        title=f'Trajectories (ground truth) on the {f.name} field',
        height=560,
        plot_bgcolor='#2d6236',
    )
    _field_axes(fig, f)
    fig.update_xaxes(constrain='domain')
    fig.update_yaxes(scaleanchor='x', scaleratio=1, constrain='domain')
    return fig


_HEAT = [[0.0, 'rgba(255,255,255,0)'], [1e-6, '#ffffb2'], [0.4, '#fd8d3c'], [1.0, '#bd0026']]


def fig_heatmaps(data: object) -> object:
    """Where the ball and the players were (time spent per cell)."""
    from plotly.subplots import make_subplots  # noqa: PLC0415

    f = data.field
    fig = make_subplots(rows=1, cols=2, subplot_titles=['ball', 'players'], horizontal_spacing=0.06)
    bins = {
        'xbins': {'start': -f.half_length - f.border, 'end': f.half_length + f.border, 'size': f.length / 22},
        'ybins': {'start': -f.half_width - f.border, 'end': f.half_width + f.border, 'size': f.width / 14},
    }
    if data.ball is not None:
        fig.add_histogram2d(
            x=data.ball.v[:, 0],
            y=data.ball.v[:, 1],
            colorscale=_HEAT,
            showscale=False,
            name='ball',
            **bins,
            row=1,
            col=1,
        )
    if data.truth:
        xy = np.concatenate([s.v[:, :2] for s in data.truth.values()])
        fig.add_histogram2d(
            x=xy[:, 0], y=xy[:, 1], colorscale=_HEAT, showscale=False, name='players', **bins, row=1, col=2
        )
    shapes = _field_shapes(f, 'x', 'y') + _field_shapes(f, 'x2', 'y2')
    for s in shapes:
        if 'fillcolor' not in s:
            s['layer'] = 'above'
    fig.update_layout(shapes=shapes, title='Heatmaps (ground truth): where the ball and the players were', height=380)
    for col in (1, 2):
        _field_axes(fig, f, 1, col)
    return fig


def fig_falls(a: Analysis) -> object:
    """Each fall as a bar from the fall to standing again."""
    import plotly.graph_objects as go  # noqa: PLC0415

    fig = go.Figure()
    end = a.end - a.start
    rows = [(p, fl) for p, st in a.players.items() for fl in st.falls]
    fig.add_bar(
        y=[p for p, _ in rows],
        base=[fl.t - a.start for _, fl in rows],
        x=[(fl.t_up if fl.t_up is not None else a.end) - fl.t for _, fl in rows],
        orientation='h',
        marker={'color': ['#d62728' if fl.t_up is None else '#ff7f0e' for _, fl in rows]},
        text=[f'{fl.getup_time:.1f} s' if fl.t_up is not None else 'still down' for _, fl in rows],
        name='on the ground',
    )
    if not rows:
        fig.add_annotation(text='no falls', x=end / 2, y=0, showarrow=False, font={'size': 16})
    fig.update_xaxes(range=[0, end], title="s since the bag's start")
    fig.update_yaxes(categoryorder='array', categoryarray=sorted(a.players))
    fig.update_layout(title='Falls and get-up times (torso height, ground truth)', height=150 + 30 * len(a.players))
    return fig


def fig_speed(a: Analysis, data: object) -> object:
    """Each player's ground speed over time (1 s windows)."""
    import plotly.graph_objects as go  # noqa: PLC0415

    from robocup3d_tools.match_analysis import interpolate  # noqa: PLC0415

    fig = go.Figure()
    colors = _player_colors(sorted(data.truth))
    for p, s in sorted(data.truth.items()):
        if s.t[-1] - s.t[0] < 2:
            continue
        grid = np.arange(s.t[0], s.t[-1], 1.0)
        at = interpolate(s.t, s.v[:, :2], grid, max_gap=1.0)
        v = speeds(grid, at)
        v[v > 2.5] = np.nan  # beams
        fig.add_scatter(x=grid[1:] - a.start, y=v, mode='lines', name=p, line={'color': colors[p]})
    fig.update_layout(title='Walking speed (ground truth, 1 s windows)', height=350)
    fig.update_xaxes(title="s since the bag's start")
    fig.update_yaxes(title='m/s', rangemode='tozero')
    return fig


def fig_localization(a: Analysis) -> object:
    """Distance of each player's believed position from the ground truth."""
    import plotly.graph_objects as go  # noqa: PLC0415

    fig = go.Figure()
    colors = _player_colors(sorted(a.players))
    for p, st in sorted(a.players.items()):
        if st.loc_error is not None and len(st.loc_error[0]):
            t, e = st.loc_error
            fig.add_scatter(
                x=t - a.start,
                y=e,
                mode='lines',
                name=f'{p} (median {st.loc_error_median:.2f} m)',
                line={'color': colors[p]},
            )
    fig.update_layout(title='Localization error: its pose vs the ground truth', height=350)
    fig.update_xaxes(title="s since the bag's start")
    fig.update_yaxes(title='m', rangemode='tozero')
    return fig


def fig_load(a: Analysis) -> object:
    """CPU (of the player's process) and perceive-to-act latency from /diagnostics."""
    from plotly.subplots import make_subplots  # noqa: PLC0415

    fig = make_subplots(rows=1, cols=2, subplot_titles=['CPU (% of a core)', 'latency (ms): p50 solid, p99 dotted'])
    colors = _player_colors(sorted(a.players))
    for p, st in sorted(a.players.items()):
        if st.cpu is not None:
            fig.add_scatter(
                x=st.cpu[0] - a.start,
                y=100 * st.cpu[1],
                mode='lines+markers',
                name=f'{p} CPU',
                line={'color': colors[p]},
                row=1,
                col=1,
            )
        if st.latency is not None:
            t, p50, p99 = st.latency
            fig.add_scatter(
                x=t - a.start, y=p50, mode='lines+markers', name=f'{p} p50', line={'color': colors[p]}, row=1, col=2
            )
            fig.add_scatter(
                x=t - a.start,
                y=p99,
                mode='lines',
                name=f'{p} p99',
                line={'color': colors[p], 'dash': 'dot'},
                row=1,
                col=2,
            )
    fig.update_xaxes(title="s since the bag's start")
    fig.update_yaxes(rangemode='tozero')
    fig.update_layout(title='Load per player (/diagnostics)', height=350)
    return fig


def figures(a: Analysis, data: object) -> dict[str, object]:
    """Every figure of the report, by name."""
    return {
        'score': fig_score(a),
        'field': fig_field(a, data),
        'heatmaps': fig_heatmaps(data),
        'falls': fig_falls(a),
        'speed': fig_speed(a, data),
        'localization': fig_localization(a),
        'load': fig_load(a),
    }


def _fmt(x: float, spec: str = '.2f', none: str = '-') -> str:
    return none if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def _player_rows(a: Analysis) -> list[list[str]]:
    rows = []
    for p, st in sorted(a.players.items()):
        ups = [fl.getup_time for fl in st.falls if fl.getup_time is not None]
        cpu = f'{100 * float(np.mean(st.cpu[1])):.0f} %' if st.cpu is not None else '-'
        lat = f'{float(np.median(st.latency[1])):.2f} / {float(np.max(st.latency[2])):.2f}' if st.latency else '-'
        rows.append(
            [
                p,
                st.side or '?',
                str(len(st.falls)),
                '-' if st.motion_falls is None else str(st.motion_falls),
                _fmt(float(np.mean(ups)) if ups else None, '.1f'),
                _fmt(st.mean_speed),
                _fmt(st.max_speed),
                _fmt(st.distance, '.1f'),
                _fmt(st.loc_error_median),
                cpu,
                lat,
            ]
        )
    return rows


_PLAYER_HEAD = [
    'player',
    'side',
    'falls',
    'falls (motion)',
    'mean get-up (s)',
    'walk (m/s)',
    'max (m/s)',
    'distance (m)',
    'loc. error (m)',
    'CPU',
    'latency p50 / p99 (ms)',
]


def summary_text(a: Analysis, data: object) -> str:
    """The short text summary printed on stdout."""
    lines = [
        f'bag:        {data.bag}',
        f'duration:   {a.end - a.start:.1f} s of server time ({a.start:.1f} to {a.end:.1f}), field {data.field.name}',
        f'teams:      {a.team_left or "?"} (left) vs {a.team_right or "-"} (right)',
        f'score:      {a.score[0]}:{a.score[1]}'
        + (' (goals at ' + ', '.join(f'{g.t - a.start:.0f} s {g.team}' for g in a.goals) + ')' if a.goals else ''),
    ]
    share = a.possession_share
    if not any(math.isnan(v) for v in share.values()):
        lines.append(f'possession: left {share["left"]:.0%}, right {share["right"]:.0%} (nearest to the ball)')
    loose = []
    for side in ('left', 'right'):
        mine = [b for b in a.loose if b.side == side]
        if mine:
            played = [b.waited for b in mine if b.first == side]
            when = f' after {float(np.median(played)):.1f} s median' if played else ''
            loose.append(f'{side} {len(mine)}, played first {len(played)}{when}')
    if loose:
        lines.append('loose balls: ' + '; '.join(loose) + " (at rest at a player's feet, no opponent within 1 m)")
    shots = sum(k.shot for k in a.kicks)
    outcomes = {}
    for k in a.kicks:
        outcomes[k.outcome] = outcomes.get(k.outcome, 0) + 1
    lines.append(
        f'kicks:      {len(a.kicks)} ({shots} shots)'
        + (': ' + ', '.join(f'{n} {o}' for o, n in sorted(outcomes.items())) if outcomes else '')
    )
    falls = []
    for side in ('left', 'right'):
        mine = [f for st in a.players.values() if st.side == side for f in st.falls]
        if mine:
            known = [f for f in mine if f.contact is not None]
            falls.append(f'{side} {len(mine)} ({sum(f.contact for f in known)} of {len(known)} with an opponent near)')
    if falls:
        lines.append('falls:      ' + ', '.join(falls))
    width = [max(len(r[i]) for r in [_PLAYER_HEAD, *_player_rows(a)]) for i in range(len(_PLAYER_HEAD))]
    for r in [_PLAYER_HEAD, *_player_rows(a)]:
        lines.append('  ' + '  '.join(c.ljust(w) for c, w in zip(r, width, strict=True)).rstrip())
    return '\n'.join(lines)


def _table(head: list[str], rows: list[list[str]]) -> str:
    h = ''.join(f'<th>{html.escape(c)}</th>' for c in head)
    body = ''.join('<tr>' + ''.join(f'<td>{html.escape(c)}</td>' for c in r) + '</tr>' for r in rows)
    return f'<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>'


_STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th { background: #eee; } td:first-child { text-align: left; }
pre { background: #f6f6f6; padding: 0.8em; }
.fig { margin-bottom: 1.5em; }
"""

_DRAW = """
document.querySelectorAll('script.figure').forEach(function (s) {
  var f = JSON.parse(s.textContent);
  var div = document.getElementById(s.id.replace(/^fig-/, 'plot-'));
  Plotly.newPlot(div, f.data, f.layout, {responsive: true});
});
"""


def render_html(a: Analysis, data: object) -> str:
    """The report page: plotly.js inline, the figures' JSON, tables and the summary."""
    from plotly.offline import get_plotlyjs  # noqa: PLC0415

    parts = []
    for name, fig in figures(a, data).items():
        js = fig.to_json().replace('</', '<\\/')
        parts.append(
            f'<div class="fig" id="plot-{name}"></div>\n<script type="application/json" class="figure" id="fig-{name}">'
            f'{js}</script>'
        )
    kicks = [
        [f'{k.t - a.start:.1f}', k.kicker or '?', k.team or '?', f'{k.speed:.1f}', 'yes' if k.shot else 'no', k.outcome]
        for k in a.kicks
    ]
    title = f'{a.team_left or "?"} vs {a.team_right or "-"}: {a.score[0]}:{a.score[1]}'
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f'<title>robocup3d report: {html.escape(title)}</title><style>{_STYLE}</style>'
        f'<script type="text/javascript">{get_plotlyjs()}</script></head><body>\n'
        f'<h1>{html.escape(title)}</h1>\n<pre>{html.escape(summary_text(a, data))}</pre>\n'
        f'<h2>Players</h2>{_table(_PLAYER_HEAD, _player_rows(a))}\n'
        f'<h2>Kicks</h2>{_table(["t (s)", "kicker", "side", "speed (m/s)", "shot", "outcome"], kicks)}\n'
        + '\n'.join(parts)
        + f'\n<script type="text/javascript">{_DRAW}</script>\n</body></html>\n'
    )


def report_parser() -> argparse.ArgumentParser:
    """Arguments of ``robocup3d report``."""
    p = argparse.ArgumentParser(prog='robocup3d report', description=__doc__.splitlines()[0])
    p.add_argument('bag', type=Path, help='the bag directory (or its .mcap file)')
    p.add_argument('-o', '--out', type=Path, default=Path('report.html'), help='the HTML file to write')
    p.add_argument(
        '--server',
        choices=['auto', 'mujoco', 'simspark'],
        default='auto',
        help='which field to draw (auto: RCSSServerMJ when the bag has ground truth)',
    )
    p.add_argument('--rules', default='ssim', help='RCSSServerMJ rule book (field size): ssim, ssim26, fifa')
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``robocup3d report``: exit 2 with one line for a bag that cannot be read."""
    from robocup3d_tools.match_data import load_match  # noqa: PLC0415
    from robocup3d_tools.replay import BagError  # noqa: PLC0415

    args = report_parser().parse_args(argv)
    try:
        data = load_match(args.bag, args.server, args.rules)
    except BagError as exc:
        print(f'robocup3d report: {exc}', file=sys.stderr)
        return 2
    a = analyze(data)
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(render_html(a, data), encoding='utf-8')
    except OSError as exc:
        print(f'robocup3d report: {args.out}: cannot write ({exc.strerror or exc})', file=sys.stderr)
        return 2
    print(summary_text(a, data))
    print(f'report:     {args.out}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
