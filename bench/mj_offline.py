"""RCSSServerMJ's own simulation with one T1 (or K1) and our motion core in one process, no sockets (shared by the
offline bench tools: ``kick_offline.py``, ``walk_offline.py``).

:class:`Offline` builds the server's ``SoccerSimulation`` (with ``robocup3d_tools.mujoco_server``'s two mends),
adds one T1 or K1 (``robot``), and each cycle encodes the server's perceptions, parses them with our bridge, steps
``MotionCore`` and feeds the command back through the server's own action parser, one cycle late as the server's
loop does in sync mode (``delay`` cycles later still, for a player that misses cycles). :class:`Snapshot` saves
the simulation's state once and restores it for every trial (with a fresh core: the core holds closures that do
not copy).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

CYCLE = 0.02
#: torso height (m) a robot is put down at (as ``SimSession.place``)
PLACE_Z = {'T1': 0.68, 'K1': 0.57}


class Offline:
    """The server's simulation with one T1 or K1 and our motion core, stepped in lockstep."""

    def __init__(self, walk_file: str | Path | None = None, robot: str = 'T1') -> None:
        self.walk_file, self.robot = walk_file, robot
        from robocup3d_tools.mujoco_server import install, mend_contact_filter  # noqa: PLC0415

        install()
        mend_contact_filter()
        from rcsssmj.sim import simulation  # noqa: PLC0415

        simulation.a_forward = lambda *a: None  # the audio engine fails on a scene built this way; unused
        simulation.a_step = lambda *a: None
        from rcsssmj.games.soccer.server.soccer_action_parser import SoccerActionParser  # noqa: PLC0415
        from rcsssmj.games.soccer.sim.soccer_referee import SoccerReferee  # noqa: PLC0415
        from rcsssmj.games.soccer.sim.soccer_sim import SoccerSimulation  # noqa: PLC0415
        from rcsssmj.games.soccer.soccer_fields import create_soccer_field  # noqa: PLC0415
        from rcsssmj.games.soccer.soccer_rules import SoccerRuleBooks, create_soccer_rule_book  # noqa: PLC0415
        from rcsssmj.server.perception_encoder import DefaultPerceptionEncoder  # noqa: PLC0415
        from rcsssmj.sim.actions import InitRequest  # noqa: PLC0415

        from robocup3d_bridge.protocol import make_protocol  # noqa: PLC0415
        from robocup3d_description.robots import robot_spec  # noqa: PLC0415

        rules = create_soccer_rule_book(SoccerRuleBooks.SSIM.value)
        self.sim = SoccerSimulation(field=create_soccer_field(rules.default_field_version.value), rules=rules,
                                    referee=SoccerReferee())  # fmt: skip
        self.sim.init()
        self.agent = self.sim.add_players([InitRequest(robot, 'A', 2)])[0]
        self.parser, self.encoder = SoccerActionParser(), DefaultPerceptionEncoder()
        self.spec = robot_spec('mujoco', robot)
        self.protocol = make_protocol(self.spec, 'A', 2)
        self.new_core()
        self.pending = None
        self.late: list = []  # commands held back by :attr:`delay`
        self.delay = 0  # extra cycles each command takes (the graph's latency under load; 0: sync mode's one)
        self.wall = 0.0
        m = self.sim.mj_model
        names = [m.body(i).name for i in range(m.nbody)]
        self.torso = next(i for i, n in enumerate(names) if n.endswith('torso'))
        self.ball_id = names.index('ball')

    def new_core(self) -> None:
        """A fresh motion core (the walk sets of :attr:`walk_file`: the shipped ``walk.yaml`` unless set)."""
        from robocup3d_bridge.config_files import load_config  # noqa: PLC0415
        from robocup3d_motion.core import MotionCore  # noqa: PLC0415
        from robocup3d_motion.kick_config import ball_skills_for, load_kicks_config  # noqa: PLC0415
        from robocup3d_motion.motion_config import load_walk_config  # noqa: PLC0415

        kicks = ball_skills_for(load_kicks_config('kicks.yaml'), self.robot, 0, 'mujoco')
        walk = load_walk_config(self.walk_file or 'walk.yaml')
        self.core = MotionCore(self.spec, load_config('robots.yaml'), 0.3, walk_cfg=walk, cmd_timeout=2.0,
                               ball_skills=kicks)  # fmt: skip

    def cycle(self) -> None:
        from robocup3d_bridge.perception import parse_percept  # noqa: PLC0415
        from robocup3d_bridge.protocol import Action, JointCommand  # noqa: PLC0415

        self.sim.generate_perceptions()
        if self.pending is not None:
            self.agent.set_actions(self.pending)
        p = parse_percept(self.encoder.encode(self.agent.perceptions), 'mujoco')
        self.wall += CYCLE
        t = p.time or 0.0
        if p.gyro is not None and p.accel is not None:
            self.core.on_imu(t, p.gyro, p.accel, self.wall)
        targets = self.core.step(t, p.joint_positions, self.wall)
        kp, kd = self.core.gains()
        out = self.core.controller.command(targets, p.joint_positions, kp, None)
        cmd = JointCommand(position=dict(zip(out.names, out.position, strict=True)), kp=kp, kd=kd)
        text = self.protocol.encode(Action(joints=cmd)).text
        self.late.append(self.parser.parse_action(text.encode(), self.agent.agent_id.prefix))
        if len(self.late) > self.delay:
            self.pending = self.late.pop(0)
        self.sim.step([])

    def run(self, seconds: float) -> None:
        for _ in range(round(seconds / CYCLE)):
            self.cycle()

    def up(self) -> float:
        """z of the torso's z axis (1 upright)."""
        return float(self.sim.mj_data.xmat[self.torso][8])

    def yaw(self) -> float:
        r = self.sim.mj_data.xmat[self.torso]
        return math.atan2(r[3], r[0])

    def ball(self) -> np.ndarray:
        return self.sim.mj_data.xpos[self.ball_id].copy()


class Snapshot:
    """The state of ``o``'s simulation (and its pending command) now, to :meth:`restore` for each trial."""

    def __init__(self, o: Offline) -> None:
        import mujoco  # noqa: PLC0415

        self._mj, self.o = mujoco, o
        kind = mujoco.mjtState.mjSTATE_INTEGRATION
        self.state = np.zeros(mujoco.mj_stateSize(o.sim.mj_model, kind))
        mujoco.mj_getState(o.sim.mj_model, o.sim.mj_data, self.state, kind)
        self.pending, self.wall, self.late = o.pending, o.wall, list(o.late)

    def restore(self) -> Offline:
        """The simulation as saved, with a fresh motion core."""
        o, mj = self.o, self._mj
        mj.mj_setState(o.sim.mj_model, o.sim.mj_data, self.state, mj.mjtState.mjSTATE_INTEGRATION)
        mj.mj_forward(o.sim.mj_model, o.sim.mj_data)
        o.pending, o.wall, o.late = self.pending, self.wall, list(self.late)
        o.new_core()
        return o


def stand(walk_file: str | Path | None = None, settle: float = 3.0, robot: str = 'T1') -> Offline:
    """One ``robot`` put down at (-14, 0) facing the opponents' goal (the ball far away), standing after ``settle``
    s."""
    o = Offline(walk_file, robot)
    o.sim.request_drop_ball((20.0, 15.0))
    o.sim.request_place_player(2, 'A', (-14.0, 0.0, PLACE_Z[robot]), (1.0, 0.0, 0.0, 0.0))
    o.run(settle)
    return o
