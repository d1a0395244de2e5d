"""Monitor/trainer client for both servers: read the game state, send referee commands.

rcssserver3d's monitor port (3200) and RCSSServerMJ's monitor port (``--mport``) both stream
length-prefixed monitor messages and accept trainer commands on the same connection.

Monitor messages (the game-state header is read; of RCSSServerMJ's scene graph, the ball's position):

* rcssserver3d: ``((FieldLength 30)...(play_modes ...)(time 0)(half 1)...(play_mode 0))(RSG 0 1)(<scene>)``
  for a full state and ``((time T)[changed fields])(RDS 0 1)(<diff>)`` otherwise. ``time`` is the
  *game* time (it stays 0 during BeforeKickOff); there is no server time. A foul the referee gives
  comes once, in the next message's header, as ``(foul index type team unum)`` (``type`` of
  ``SoccerRuleAspect::EFoulType``: :data:`SIMSPARK_FOULS`; team 1 left, 2 right).
* RCSSServerMJ (RSMP 1.0): ``((RSMP 1 0)((gt 1 0)<server time>)((sg 1 0)full|diff ...)((gs 1 0)(time t)
  (half h)(score_left n)(score_right n)(play_mode i)[(team_left A)(team_right B)][(foul f team unum)...])
  [((ge 1 0)...(play_modes ...)...)])``. Team names and ``ge`` only come with full states; a missing
  team is sent as ``<LEFT>`` / ``<RIGHT>`` (kept here as ``None``).

Both send ``play_mode`` as an index into the ``play_modes`` list of the full state. The lists differ
after index 18: rcssserver3d continues with ``pass_left pass_right``, RCSSServerMJ with the four
penalty modes.

Trainer commands are built by the pure ``build_*`` functions; :class:`TrainerClient` sends them.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from collections.abc import Callable
from numbers import Real
from typing import Self

from robocup3d_bridge.framing import MAX_MESSAGE_SIZE
from robocup3d_bridge.link import ServerLink
from robocup3d_bridge.percept import Dialect
from robocup3d_bridge.sexp import SExpParseError, parse_sexp

__all__ = [
    'MUJOCO_PLAY_MODES',
    'SIMSPARK_FOULS',
    'SIMSPARK_PLAY_MODES',
    'MonitorParseError',
    'MonitorState',
    'TrainerClient',
    'UnsupportedCommandError',
    'build_drop_ball',
    'build_kick_off',
    'build_kill_agent',
    'build_kill_sim',
    'build_move_agent',
    'build_move_ball',
    'build_request_full_state',
    'build_select_agent',
    'build_set_play_mode',
    'build_set_score',
    'build_set_time',
    'parse_monitor_message',
    'simspark_ball',
    'simspark_torso_poses',
    'simspark_torsos',
]

_COMMON_PLAY_MODES = (
    'BeforeKickOff',
    'KickOff_Left',
    'KickOff_Right',
    'PlayOn',
    'KickIn_Left',
    'KickIn_Right',
    'corner_kick_left',
    'corner_kick_right',
    'goal_kick_left',
    'goal_kick_right',
    'offside_left',
    'offside_right',
    'GameOver',
    'Goal_Left',
    'Goal_Right',
    'free_kick_left',
    'free_kick_right',
    'direct_free_kick_left',
    'direct_free_kick_right',
)
SIMSPARK_PLAY_MODES: tuple[str, ...] = (*_COMMON_PLAY_MODES, 'pass_left', 'pass_right')
"""rcssserver3d play modes in index order (as its monitor's ``play_modes`` list)."""
MUJOCO_PLAY_MODES: tuple[str, ...] = (
    *_COMMON_PLAY_MODES,
    'penalty_kick_left',
    'penalty_kick_right',
    'penalty_shoot_left',
    'penalty_shoot_right',
)
"""RCSSServerMJ play modes in index order (``rcsssmj.games.soccer.play_mode.PlayMode``)."""

_DEFAULT_PLAY_MODES = {Dialect.SIMSPARK: SIMSPARK_PLAY_MODES, Dialect.MUJOCO: MUJOCO_PLAY_MODES}
_MAX_UNUM = {Dialect.SIMSPARK: 11, Dialect.MUJOCO: 99}
_SIDES = {'left': 'Left', 'l': 'Left', 'right': 'Right', 'r': 'Right'}
_MJ_NO_TEAM = {'<LEFT>', '<RIGHT>'}
_NAME_RE = re.compile(r'[A-Za-z0-9_.:+\-]+\Z')
_PARENS = re.compile(r'[()]')
_MAX_DRAIN = 1000  # receive() calls per poll(), so a fast stream cannot keep poll() busy forever


class MonitorParseError(ValueError):
    """A monitor message is not a well-formed game-state message of the expected dialect."""


class UnsupportedCommandError(ValueError):
    """The command does not exist on the selected server (e.g. ``set_score`` on RCSSServerMJ)."""


@dataclasses.dataclass
class MonitorState:
    """Game state as last reported by the monitor stream.

    ``server_time`` is RCSSServerMJ's global time (``gt``); rcssserver3d does not send one (``None``).
    ``team_left``/``team_right`` are ``None`` until a team has joined. ``fouls`` holds the
    ``(kind, team 1=left 2=right, unum)`` entries of the latest message only: RCSSServerMJ's kind is
    its foul code, repeated in every message while the foul stands; rcssserver3d's is the foul's name
    (:data:`SIMSPARK_FOULS`), reported once.
    ``field`` collects the numeric environment constants of full states (FieldLength, GoalWidth, ...).
    """

    server_time: float | None = None
    game_time: float = 0.0
    half: int = 1
    play_mode: str = 'BeforeKickOff'
    play_mode_index: int = 0
    score_left: int = 0
    score_right: int = 0
    team_left: str | None = None
    team_right: str | None = None
    play_modes: tuple[str, ...] = ()
    fouls: tuple[tuple[str, int, int], ...] = ()
    field: dict[str, float] = dataclasses.field(default_factory=dict)
    messages: int = 0
    #: RCSSServerMJ: the ball's centre (m, world frame) as the scene last moved it (rcssserver3d's
    #: diffs do not name the ball: read full scenes with :func:`simspark_ball`)
    ball: tuple[float, float, float] | None = None


# ----------------------------------------------------------------------------- monitor parsing


def _dialect(dialect: Dialect | str) -> Dialect:
    try:
        return Dialect(dialect)
    except ValueError:
        raise ValueError(f'unknown dialect {dialect!r}: use {[d.value for d in Dialect]}') from None


def _section_end(text: str, start: int) -> int:
    """Index just past the parenthesised expression that opens at ``text[start]``."""
    depth = 0
    for m in _PARENS.finditer(text, start):
        depth += 1 if m.group() == '(' else -1
        if depth == 0:
            return m.end()
    raise MonitorParseError(f'unbalanced parentheses in monitor message from offset {start}')


def _parse_part(text: str) -> list:
    try:
        (expr,) = parse_sexp(text)
    except (SExpParseError, ValueError) as exc:
        raise MonitorParseError(f'bad game-state expression {text[:80]!r}: {exc}') from None
    return expr


def _num(value: object, key: str, kind: type = float) -> float | int:
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise MonitorParseError(
            f'({key} ...) needs {"an integer" if kind is int else "a number"}, got {value!r}'
        ) from None
    if kind is float and not math.isfinite(number):
        raise MonitorParseError(f'({key} ...) must be finite, got {value!r}')
    return number


def _fields(items: list) -> dict[str, list]:
    """``[['time','0'], ['half','1'], ...]`` -> ``{'time': ['0'], ...}``; repeated keys keep the last."""
    out: dict[str, list] = {}
    for item in items:
        if not isinstance(item, list) or not item or not isinstance(item[0], str):
            raise MonitorParseError(f'game-state field is not (name value...): {item!r}')
        out[item[0]] = item[1:]
    return out


def _one(values: list, key: str) -> str:
    if len(values) != 1 or not isinstance(values[0], str):
        raise MonitorParseError(f'({key} ...) needs exactly one value, got {values!r}')
    return values[0]


def _apply_fields(fields: dict[str, list], upd: dict, dialect: Dialect) -> None:
    """Translate header fields into MonitorState updates (``upd``), validating them."""
    if 'play_modes' in fields:
        modes = fields.pop('play_modes')
        if not modes or not all(isinstance(m, str) for m in modes):
            raise MonitorParseError(f'bad play_modes list: {modes!r}')
        upd['play_modes'] = tuple(modes)
    for key, values in fields.items():
        if key in ('time', 'half', 'score_left', 'score_right', 'play_mode'):
            raw = _one(values, key)
            upd[key] = _num(raw, key, float if key == 'time' else int)
        elif key in ('team_left', 'team_right'):
            name = _one(values, key)
            upd[key] = None if dialect is Dialect.MUJOCO and name in _MJ_NO_TEAM else name
        elif len(values) == 1 and isinstance(values[0], str):
            try:
                upd.setdefault('field', {})[key] = float(values[0])
            except ValueError:
                pass  # a non-numeric environment value we do not use


#: rcssserver3d's foul types (``SoccerRuleAspect::EFoulType``), by the number its monitor sends
SIMSPARK_FOULS = (
    'crowding',
    'touching',
    'illegal defence',
    'illegal attack',
    'incapable',
    'kick-off',
    'charging',
    'self collision',
)


def _parse_simspark(text: str) -> dict:
    if not text.startswith('(('):
        raise MonitorParseError(f'rcssserver3d monitor message must start with "((": {text[:40]!r}')
    end = _section_end(text, 0)
    if not text.startswith(('(RSG ', '(RDS '), end):
        raise MonitorParseError(f'expected (RSG ..) or (RDS ..) after the header, got {text[end : end + 20]!r}')
    upd: dict = {}
    items = _parse_part(text[:end])
    is_foul = [isinstance(i, list) and i[:1] == ['foul'] for i in items]
    upd['fouls'] = tuple(_simspark_foul(i[1:]) for i, foul in zip(items, is_foul, strict=True) if foul)
    _apply_fields(_fields([i for i, foul in zip(items, is_foul, strict=True) if not foul]), upd, Dialect.SIMSPARK)
    return upd


def _simspark_foul(values: list) -> tuple[str, int, int]:
    """``(foul index type team unum)`` -> (type's name, team, unum)."""
    if len(values) != 4 or not all(isinstance(v, str) for v in values):
        raise MonitorParseError(f'(foul index type team unum) expected, got {values!r}')
    kind = int(_num(values[1], 'foul', int))
    name = SIMSPARK_FOULS[kind] if 0 <= kind < len(SIMSPARK_FOULS) else f'foul type {kind}'
    return name, int(_num(values[2], 'foul', int)), int(_num(values[3], 'foul', int))


def _find_section(text: str, tag: str) -> str | None:
    """Text of the top-level RSMP section ``((tag M m)...)``, or None; the scene graph is never tokenised."""
    needle = f'(({tag} '
    pos = text.find(needle)
    while pos >= 0:
        if text.count('(', 0, pos) - text.count(')', 0, pos) == 1:  # directly inside ((RSMP ..) ...)
            return text[pos : _section_end(text, pos)]
        pos = text.find(needle, pos + 1)
    return None


def _section_body(section: str, tag: str) -> list:
    expr = _parse_part(section)
    head = expr[0] if expr else None
    if not isinstance(head, list) or head[:2] != [tag, '1']:
        raise MonitorParseError(f'unsupported {tag} section version: {head!r}')
    return expr[1:]


def _parse_mujoco(text: str) -> dict:
    if not text.startswith('((RSMP 1 '):
        raise MonitorParseError(f'RCSSServerMJ monitor message must start with "((RSMP 1 ": {text[:40]!r}')
    if text.count('(') != text.count(')'):
        raise MonitorParseError('unbalanced parentheses in RSMP message')
    upd: dict = {}
    gt = _find_section(text, 'gt')
    if gt is not None:
        upd['server_time'] = _num(_one(_section_body(gt, 'gt'), 'gt'), 'gt')
    ge = _find_section(text, 'ge')
    if ge is not None:
        _apply_fields(_fields(_section_body(ge, 'ge')), upd, Dialect.MUJOCO)
    ball = _mujoco_ball(text)
    if ball is not None:
        upd['ball'] = ball
    gs = _find_section(text, 'gs')
    if gs is None:
        raise MonitorParseError('RSMP message without a ((gs 1 0) ...) game-state section')
    items = _section_body(gs, 'gs')
    fouls = [i[1:] for i in items if isinstance(i, list) and i[:1] == ['foul']]
    upd['fouls'] = tuple(_foul(f) for f in fouls)
    _apply_fields(_fields([i for i in items if not (isinstance(i, list) and i[:1] == ['foul'])]), upd, Dialect.MUJOCO)
    return upd


def _mujoco_ball(text: str) -> tuple[float, float, float] | None:
    """The ball's position from an RSMP scene (``((sg 1 0)full|diff (nd ...)...)``), if it changed.

    The ball is the scene's first node, ``(nd TRF (SLT ..) (nd DSC (ball) (nd TRF (SLT m0..m15) ...)))``;
    a diff repeats the tree's shape with only the changed transforms, so the ball moved when the third
    level of that first node carries an ``SLT`` (its translation is ``m12 m13 m14``). Only that subtree
    is read.
    """
    pos = text.find('((sg 1 0)')
    if pos < 0:
        return None
    start = text.find('(nd', pos + 9)
    if start < 0:
        return None
    try:
        expr = _parse_part(text[start : _section_end(text, start)])
    except MonitorParseError:
        return None
    full = len(expr) > 1 and expr[1] == 'TRF'

    def first_nd(node: list) -> list | None:
        return next((c for c in node[1:] if isinstance(c, list) and c[:1] == ['nd']), None)

    dsc = first_nd(expr)
    if dsc is None or (full and ['ball'] not in dsc):
        return None
    trf = first_nd(dsc)
    slt = next((c for c in trf[1:] if isinstance(c, list) and c[:1] == ['SLT']), None) if trf else None
    if slt is None or len(slt) != 17:
        return None
    try:
        x, y, z = (float(v) for v in slt[13:16])
    except ValueError:
        return None
    return (x, y, z) if all(map(math.isfinite, (x, y, z))) else None


def _foul(values: list) -> tuple[str, int, int]:
    if len(values) != 3 or not all(isinstance(v, str) for v in values):
        raise MonitorParseError(f'(foul kind team unum) expected, got {values!r}')
    return values[0], int(_num(values[1], 'foul', int)), int(_num(values[2], 'foul', int))


def parse_monitor_message(text: str | bytes, dialect: Dialect | str, state: MonitorState | None = None) -> MonitorState:
    """Update ``state`` (or a new :class:`MonitorState`) from one monitor message and return it.

    The state is changed only if the whole header parses: on error it is left untouched.

    Raises:
        MonitorParseError: the message is not a game-state message of ``dialect`` (bad framing of
            the header, non-numeric values, a play-mode index outside the known list, ...).
        ValueError: unknown ``dialect``.
    """
    dialect = _dialect(dialect)
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode('ascii', 'replace')
    if not isinstance(text, str):
        raise MonitorParseError(f'monitor message must be str or bytes, got {type(text).__name__}')
    text = text.strip()
    state = MonitorState() if state is None else state
    upd = _parse_simspark(text) if dialect is Dialect.SIMSPARK else _parse_mujoco(text)
    modes = upd.get('play_modes') or state.play_modes or _DEFAULT_PLAY_MODES[dialect]
    if 'play_mode' in upd:
        index = upd['play_mode']
        if not 0 <= index < len(modes):
            raise MonitorParseError(f'play_mode index {index} outside the {len(modes)} known play modes')
        upd['play_mode_index'], upd['play_mode'] = index, modes[index]
    if 'time' in upd:
        upd['game_time'] = upd.pop('time')
    if 'field' in upd:
        upd['field'] = {**state.field, **upd['field']}
    for key, value in upd.items():
        setattr(state, key, value)
    state.messages += 1
    return state


# ----------------------------------------------------------------------------- command building


def _fmt(value: object, name: str) -> str:
    """A finite number as a short decimal (never exponent notation)."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise ValueError(f'{name} must be a finite number, got {value!r}')
    text = f'{float(value):.6f}'.rstrip('0').rstrip('.')
    return '0' if text in ('-0', '') else text


def _int(value: object, name: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f'{name} must be an integer, got {value!r}')
    if value < low or (high is not None and value > high):
        raise ValueError(f'{name} must be in [{low}, {high if high is not None else "inf"}], got {value}')
    return value


def _side(team: object) -> str | None:
    """'Left'/'Right' for a side word (left, Left, L, r, ...), else None."""
    return _SIDES.get(team.lower()) if isinstance(team, str) else None


def _team(team: object, dialect: Dialect) -> str:
    side = _side(team)
    if side is not None:
        return side
    if dialect is Dialect.SIMSPARK:
        raise ValueError(f'rcssserver3d trainer commands need a team side Left/Right, got {team!r}')
    if not isinstance(team, str) or not _NAME_RE.match(team):
        raise ValueError(f'team must be a side (Left/Right) or a team name without spaces/parentheses, got {team!r}')
    return team


def _require(dialect: Dialect | str, wanted: Dialect, what: str) -> Dialect:
    d = _dialect(dialect)
    if d is not wanted:
        server = 'rcssserver3d' if wanted is Dialect.SIMSPARK else 'RCSSServerMJ'
        raise UnsupportedCommandError(
            f'{what} is only supported by {server} (dialect {wanted.value!r}), not {d.value!r}'
        )
    return d


def _agent_id(dialect: Dialect, unum: int, team: str) -> str:
    return f'(unum {_int(unum, "unum", 1, _MAX_UNUM[dialect])}) (team {_team(team, dialect)})'


def build_move_agent(
    dialect: Dialect | str, unum: int, team: str, x: float, y: float, z: float, theta_deg: float | None = None
) -> str:
    """``(agent (unum n) (team t) (pos x y z))``, or ``(move x y z theta)`` when ``theta_deg`` is given.

    ``team``: a side (Left/Right, any case, L/R) for both servers, or a team name (RCSSServerMJ only).
    ``theta_deg`` is passed unchanged: on rcssserver3d the robot then faces ``theta_deg + 90`` deg
    (0 = +x, as its ``myorien`` shows); on RCSSServerMJ it is the torso yaw.
    """
    d = _dialect(dialect)
    pose = f'{_fmt(x, "x")} {_fmt(y, "y")} {_fmt(z, "z")}'
    if theta_deg is None:
        return f'(agent {_agent_id(d, unum, team)} (pos {pose}))'
    return f'(agent {_agent_id(d, unum, team)} (move {pose} {_fmt(theta_deg, "theta_deg")}))'


def build_move_ball(
    dialect: Dialect | str, x: float, y: float, z: float, vx: float = 0.0, vy: float = 0.0, vz: float = 0.0
) -> str:
    """``(ball (pos x y z) (vel vx vy vz))`` (same on both servers)."""
    _dialect(dialect)
    pos = f'{_fmt(x, "x")} {_fmt(y, "y")} {_fmt(z, "z")}'
    return f'(ball (pos {pos}) (vel {_fmt(vx, "vx")} {_fmt(vy, "vy")} {_fmt(vz, "vz")}))'


def build_set_play_mode(dialect: Dialect | str, mode: str) -> str:
    """``(playMode <mode>)``; ``mode`` must be one of the server's play modes (exact spelling).

    Note: RCSSServerMJ 0.2.1 parses but ignores this command (it only logs it).
    """
    d = _dialect(dialect)
    known = _DEFAULT_PLAY_MODES[d]
    if mode not in known:
        raise ValueError(f'unknown play mode {mode!r} for {d.value}; known: {", ".join(known)}')
    return f'(playMode {mode})'


def build_drop_ball(dialect: Dialect | str) -> str:
    """``(dropBall)``: drop the ball where it is and switch to PlayOn."""
    _dialect(dialect)
    return '(dropBall)'


def build_kick_off(dialect: Dialect | str, side: str | None) -> str:
    """``(kickOff Left|Right)``; ``side=None`` gives ``(kickOff None)`` / MJ's random ``(kickOff)``."""
    d = _dialect(dialect)
    if side is None:
        return '(kickOff None)' if d is Dialect.SIMSPARK else '(kickOff)'
    norm = _side(side)
    if norm is None:
        raise ValueError(f'kick-off side must be Left, Right or None, got {side!r}')
    return f'(kickOff {norm})'


def build_set_score(dialect: Dialect | str, left: int, right: int) -> str:
    """``(score (left n) (right n))`` (rcssserver3d only)."""
    _require(dialect, Dialect.SIMSPARK, 'set_score')
    return f'(score (left {_int(left, "left", 0)}) (right {_int(right, "right", 0)}))'


def build_set_time(dialect: Dialect | str, t: float) -> str:
    """``(time t)``: set the game time in seconds (rcssserver3d only)."""
    _require(dialect, Dialect.SIMSPARK, 'set_time')
    text = _fmt(t, 't')
    if t < 0:
        raise ValueError(f't must be >= 0, got {t}')
    return f'(time {text})'


def build_kill_agent(dialect: Dialect | str, unum: int, team: str) -> str:
    """``(kill (unum n) (team Left|Right))``: remove an agent (rcssserver3d only)."""
    d = _require(dialect, Dialect.SIMSPARK, 'kill_agent')
    return f'(kill {_agent_id(d, unum, team)})'


def build_select_agent(dialect: Dialect | str, unum: int, team: str) -> str:
    """``(select (unum n) (team Left|Right))`` (rcssserver3d only)."""
    d = _require(dialect, Dialect.SIMSPARK, 'select_agent')
    return f'(select {_agent_id(d, unum, team)})'


def build_request_full_state(dialect: Dialect | str) -> str:
    """``(reqfullstate)``: ask for a full scene (rcssserver3d only)."""
    _require(dialect, Dialect.SIMSPARK, 'request_full_state')
    return '(reqfullstate)'


def build_kill_sim(dialect: Dialect | str) -> str:
    """``(killsim)``: shut the server down (RCSSServerMJ only)."""
    _require(dialect, Dialect.MUJOCO, 'kill_sim')
    return '(killsim)'


# ----------------------------------------------------------------------------- client


class TrainerClient:
    """Monitor-port client: keeps :attr:`state` up to date and sends trainer commands.

    Every command method validates its arguments, sends the command and returns the text sent.
    Sending does not wait for the server: use :meth:`wait_for` to see the effect.
    """

    def __init__(
        self,
        host: str = '127.0.0.1',
        port: int = 3200,
        dialect: Dialect | str = Dialect.SIMSPARK,
        connect_timeout: float = 2.0,
    ) -> None:
        self.dialect = _dialect(dialect)
        # a full scene is ~100 kB (rcssserver3d) and grows with the robots: the agents' 64 kB cap is too small
        self.link = ServerLink(host, port, connect_timeout, max_message=MAX_MESSAGE_SIZE)
        self.state = MonitorState()
        #: called with every monitor message :meth:`poll` applies (e.g. to gather match statistics)
        self.listeners: list[Callable[[bytes], None]] = []

    # -- connection
    def connect(self) -> None:
        """Open the connection (raises ``LinkDown`` if refused); resets :attr:`state`."""
        self.link.connect()
        self.state = MonitorState()

    def close(self) -> None:
        """Close the connection."""
        self.link.close()

    def __enter__(self) -> Self:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def receive(self, timeout: float | None) -> list[bytes]:
        """Wait up to ``timeout`` s for monitor messages and return them unparsed (none above 4 MB)."""
        return [m for m in self.link.receive(timeout) if m is not None]

    def poll(self, timeout: float = 0.0) -> int:
        """Wait up to ``timeout`` s for monitor messages, apply all that arrived; return how many.

        Raises ``LinkDown`` if the server went away and :class:`MonitorParseError` for a bad message
        (the good messages received with it are still applied).
        """
        deadline = time.monotonic() + max(0.0, timeout)
        count = 0
        for _ in range(_MAX_DRAIN):
            wait = max(0.0, deadline - time.monotonic()) if count == 0 else 0.0
            batch = self.receive(wait)
            self._apply(batch)
            count += len(batch)
            if (count and not batch) or (not count and time.monotonic() >= deadline):
                break
        return count

    def _apply(self, batch: list[bytes]) -> None:
        """Parse every message of a batch; a bad one is reported after the others were applied."""
        error: MonitorParseError | None = None
        for msg in batch:
            try:
                parse_monitor_message(msg, self.dialect, self.state)
            except MonitorParseError as exc:
                error = error or exc
            for take in self.listeners:
                take(msg)
        if error is not None:
            raise error

    def wait_for(self, predicate: Callable[[MonitorState], bool], timeout: float) -> MonitorState:
        """Poll until ``predicate(state)`` is true; return the state or raise ``TimeoutError``."""
        deadline = time.monotonic() + timeout
        while not predicate(self.state):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f'condition not met within {timeout} s; last monitor state: {self.state}')
            self.poll(min(remaining, 0.1))
        return self.state

    def send(self, command: str) -> str:
        """Send a raw command (no validation) and return it."""
        self.link.send(command)
        return command

    # -- commands
    def _team_arg(self, team: str) -> str:
        """On rcssserver3d, map a known team name to its side (the server only takes sides)."""
        if self.dialect is Dialect.SIMSPARK and _side(team) is None:
            if team is not None and team == self.state.team_left:
                return 'Left'
            if team is not None and team == self.state.team_right:
                return 'Right'
            raise ValueError(
                f'team {team!r} is neither a side (Left/Right) nor a team the monitor reported '
                f'(left={self.state.team_left!r}, right={self.state.team_right!r})'
            )
        return team

    def move_agent(self, unum: int, team: str, x: float, y: float, z: float, theta_deg: float | None = None) -> str:
        """Place an agent. ``team``: a side (Left/Right) or a team name (rcssserver3d: a name the
        monitor has reported, translated to its side). See :func:`build_move_agent` for ``theta_deg``."""
        return self.send(build_move_agent(self.dialect, unum, self._team_arg(team), x, y, z, theta_deg))

    def move_ball(self, x: float, y: float, z: float, vx: float = 0.0, vy: float = 0.0, vz: float = 0.0) -> str:
        """Place the ball with a velocity (m, m/s)."""
        return self.send(build_move_ball(self.dialect, x, y, z, vx, vy, vz))

    def set_play_mode(self, mode: str) -> str:
        """Set the play mode by name (RCSSServerMJ 0.2.1 ignores it; use drop_ball/kick_off there)."""
        return self.send(build_set_play_mode(self.dialect, mode))

    def drop_ball(self) -> str:
        """Drop the ball (switches to PlayOn)."""
        return self.send(build_drop_ball(self.dialect))

    def kick_off(self, side: str | None) -> str:
        """Give the kick-off to ``side`` (Left/Right; None: server's choice)."""
        return self.send(build_kick_off(self.dialect, side))

    def set_score(self, left: int, right: int) -> str:
        """Set the score (rcssserver3d only)."""
        return self.send(build_set_score(self.dialect, left, right))

    def set_time(self, t: float) -> str:
        """Set the game time (rcssserver3d only)."""
        return self.send(build_set_time(self.dialect, t))

    def kill_agent(self, unum: int, team: str) -> str:
        """Remove an agent (rcssserver3d only)."""
        return self.send(build_kill_agent(self.dialect, unum, self._team_arg(team)))

    def select_agent(self, unum: int, team: str) -> str:
        """Select an agent (rcssserver3d only)."""
        return self.send(build_select_agent(self.dialect, unum, self._team_arg(team)))

    def request_full_state(self) -> str:
        """Ask for a full scene/state message (rcssserver3d only)."""
        return self.send(build_request_full_state(self.dialect))

    def kill_sim(self) -> str:
        """Shut the simulator down (RCSSServerMJ only)."""
        return self.send(build_kill_sim(self.dialect))


Vec3 = tuple[float, float, float]


def _simspark_torso_matrices(message: bytes | str) -> dict[tuple[str, int], list[float]]:
    """Column-major 4x4 world transforms of the agents' torsos in a full rcssserver3d scene.

    An agent's body mesh is ``(nd StaticMesh ... (load models/naobody<T>.obj) ... (resetMaterials
    matNum<N> matLeft|matRight ...))``; its parent TRF only turns the mesh and the TRF above
    that is the torso, whose ``SLT`` is the transform.
    """
    out: dict[tuple[str, int], list[float]] = {}

    def child(node: list, key: str) -> list:
        return next((c for c in node if isinstance(c, list) and c and c[0] == key), [])

    def walk(node: list, slts: list) -> None:
        kind = node[1] if len(node) > 1 and isinstance(node[1], str) else None
        if kind == 'TRF':
            slts = [*slts, child(node, 'SLT')[1:]]
        elif kind == 'StaticMesh':
            load, mats = child(node, 'load'), child(node, 'resetMaterials')
            if len(load) > 1 and 'naobody' in str(load[1]) and len(slts) >= 2 and len(slts[-2]) == 16:
                num = next((m[6:] for m in mats[1:] if isinstance(m, str) and m.startswith('matNum')), '')
                side = 'Left' if 'matLeft' in mats else 'Right' if 'matRight' in mats else None
                if num.isdigit() and side:
                    out[(side, int(num))] = [float(v) for v in slts[-2]]
        for c in node:
            if isinstance(c, list) and c and c[0] == 'nd':
                walk(c, slts)

    for expr in parse_sexp(message):
        for c in expr if isinstance(expr, list) else ():
            if isinstance(c, list) and c and c[0] == 'nd':
                walk(c, [])
    return out


def simspark_torsos(message: bytes | str) -> dict[tuple[str, int], tuple[Vec3, Vec3]]:
    """Torso poses from a full rcssserver3d scene (``(RSG 0 1)``, e.g. after ``(reqfullstate)``).

    Returns ``{('Left'|'Right', unum): (position m, torso z axis in the world)}`` (see
    :func:`simspark_torso_poses` for the heading too).
    """
    return {k: ((m[12], m[13], m[14]), (m[8], m[9], m[10])) for k, m in _simspark_torso_matrices(message).items()}


def simspark_torso_poses(message: bytes | str) -> dict[tuple[str, int], tuple[Vec3, Vec3, float]]:
    """Torso position, z axis and heading (rad) per agent from a full rcssserver3d scene.

    The Nao faces its torso's +y axis in rcssserver3d; the heading is that axis' direction on
    the ground (0 = world +x, counter-clockwise positive), as the ``myorien`` of a beam.
    """
    return {
        k: ((m[12], m[13], m[14]), (m[8], m[9], m[10]), math.atan2(m[5], m[4]))
        for k, m in _simspark_torso_matrices(message).items()
    }


def simspark_ball(message: bytes | str) -> Vec3 | None:
    """The ball's position (m) in a full rcssserver3d scene, or ``None`` if it has none.

    The ball is ``(nd TRF (SLT ...) (nd StaticMesh ... (load models/soccerball.obj) ...))``: the
    translation of the TRF right above its mesh (an ``(RDS)`` diff carries no meshes).
    """
    found: list[Vec3] = []

    def walk(node: list, slt: list) -> None:
        kind = node[1] if len(node) > 1 and isinstance(node[1], str) else None
        if kind == 'TRF':
            slt = next((c[1:] for c in node if isinstance(c, list) and c and c[0] == 'SLT'), slt)
        elif kind == 'StaticMesh':
            load = next((c for c in node if isinstance(c, list) and c and c[0] == 'load'), [])
            if len(load) > 1 and 'soccerball' in str(load[1]) and len(slt) == 16:
                found.append((float(slt[12]), float(slt[13]), float(slt[14])))
        for c in node:
            if not found and isinstance(c, list) and c and c[0] == 'nd':
                walk(c, slt)

    for expr in parse_sexp(message):
        for c in expr if isinstance(expr, list) else ():
            if not found and isinstance(c, list) and c and c[0] == 'nd':
                walk(c, [])
    return found[0] if found else None
