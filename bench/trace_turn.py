"""Where a turn in place goes: each foot's yaw on the ground and in the air, from RCSSServerMJ's monitor scene.

The robot (T1 or K1, one walk set) turns in place for ``--seconds``; every monitor scene gives the torso's and
both feet's world poses (a foot: the deepest transform of its leg, near the ground). A foot is on the ground while
its link is within ``--ground`` m of its lowest height. Printed, after ``--skip`` s: the torso's turn rate, each
foot's turn rate split into what it turned on the ground (slip: the body's turn lost) and in the air, and the
share of the time both feet are down.

    PYTHONPATH=. python bench/trace_turn.py [--robot T1] [--walk-config F] [--set positioning]
    PYTHONPATH=. python bench/trace_turn.py --creep    # the server's T1 contacts alone: creep under a yaw torque

``--creep`` needs no server: it loads the server's T1 model in MuJoCo on a plane, stands it by PD on its
position actuators, and twists its trunk with a steady yaw torque for 1 s (both feet down), once with the
feet's own contact parameters and once with MuJoCo's default ``solimp``.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robocup3d_tools.monitor_truth import SceneTracker
from robocup3d_tools.sim_session import SimSession
from robocup3d_tools.walk_tasks import START


def _transforms(node: object, world: np.ndarray, depth: int, out: list[tuple[int, np.ndarray]]) -> None:
    """Every transform node's world pose and depth under ``node``."""
    if node.slt is not None:
        world = world @ node.slt
        out.append((depth, world))
    for child in node.children:
        _transforms(child, world, depth + 1, out)


def _yaw(m: np.ndarray) -> float:
    return math.atan2(m[1, 0], m[0, 0])


def record(robot: str, walk_config: str, walk_set: str, seconds: float) -> list[dict[str, float]]:
    """Turn in place at the set's limit; one row per monitor scene: time, torso yaw, each foot's yaw and z."""
    rows: list[dict[str, float]] = []
    with SimSession(robot=robot, walk_config=walk_config) as s:
        tracker = SceneTracker()

        def on_monitor(message: bytes) -> None:
            if not tracker.update(message) or tracker.root is None:
                return
            truth = tracker.truth()
            torso = truth.robots.get((s.team, s.unum))
            if torso is None or truth.time is None:
                return
            nodes: list[tuple[int, np.ndarray]] = []
            _transforms(tracker.root, np.eye(4), 0, nodes)
            feet: dict[str, tuple[int, np.ndarray]] = {}
            for depth, m in nodes:
                rel = torso[:3, :3].T @ (m[:3, 3] - torso[:3, 3])
                if m[2, 3] > 0.12 or np.hypot(rel[0], rel[1]) > 0.5:
                    continue  # not a foot of this robot
                side = 'l' if rel[1] > 0.0 else 'r'
                if side not in feet or depth > feet[side][0]:
                    feet[side] = (depth, m)
            if len(feet) == 2:
                row = {'t': truth.time, 'yaw': _yaw(torso)}
                for side, (_, m) in feet.items():
                    row[f'{side}yaw'], row[f'{side}z'] = _yaw(m), float(m[2, 3])
                rows.append(row)

        s.trainer.listeners.append(on_monitor)
        if walk_set:
            s.request(f'walk_set {walk_set}')
        s.place(*START)
        s.drive(seconds, lambda _t: (0.0, 0.0, 10.0))
    return rows


def summary(rows: list[dict[str, float]], skip: float, ground: float) -> dict[str, float]:
    """Torso turn rate, and each foot's turn split into on the ground (slip) and in the air (deg/s), both feet
    down (share of the time). A foot's turn between two scenes counts on the ground when it was down at both."""
    t = np.array([r['t'] for r in rows]) - rows[0]['t']
    keep = t >= skip
    span = float(t[keep][-1] - t[keep][0])
    torso = np.degrees(np.unwrap([r['yaw'] for r in rows]))
    out = {'torso_deg_s': float(np.polyfit(t[keep], torso[keep], 1)[0])}
    down = {}
    for side in 'lr':
        yaw = np.degrees(np.unwrap([r[f'{side}yaw'] for r in rows]))[keep]
        z = np.array([r[f'{side}z'] for r in rows])[keep]
        down[side] = z < z.min() + ground
        planted = down[side][:-1] & down[side][1:]
        turn = np.diff(yaw)
        out[f'{side}_ground_deg_s'] = float(turn[planted].sum() / span)
        out[f'{side}_air_deg_s'] = float(turn[~planted].sum() / span)
    out['double_support'] = float(np.mean(down['l'] & down['r']))
    return out


def creep(torques: tuple[float, ...] = (5.0, 10.0, 20.0)) -> None:
    """The server's T1 standing on a plane: trunk and left foot yaw (deg) after 1 s of a yaw torque on the trunk."""
    import mujoco  # noqa: PLC0415 - only here
    import rcsssmj  # noqa: PLC0415

    path = Path(rcsssmj.__file__).parent / 'resources/robots/T1/robot.xml'
    for solimp in (None, [0.9, 0.95, 0.001, 0.5, 2.0]):
        spec = mujoco.MjSpec.from_file(str(path))
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[10, 10, 1])
        spec.option.timestep = 0.005
        for g in spec.geoms:
            if solimp is not None and g.name in ('left_foot', 'right_foot'):
                g.solimp = solimp
        m = spec.compile()
        crouch = {'Hip_Pitch': -0.25, 'Knee_Pitch': 0.5, 'Ankle_Pitch': -0.25}
        d = mujoco.MjData(m)
        for a in range(m.nu):
            name, joint = m.actuator(a).name, m.joint(m.actuator_trnid[a, 0]).name
            if name.endswith('_pos'):
                m.actuator_gainprm[a, 0], m.actuator_biasprm[a, 1] = 300.0, -300.0
                d.ctrl[a] = next((v for k, v in crouch.items() if joint.endswith(k)), 0.0)
            elif name.endswith('_vel'):
                m.actuator_gainprm[a, 0], m.actuator_biasprm[a, 2] = 3.0, -3.0
        d.qpos[2] = 0.72
        for _ in range(600):
            mujoco.mj_step(m, d)
        foot = m.geom_bodyid[m.geom('left_foot').id]
        depth = -min(c.dist for c in d.contact[: d.ncon])
        label = 'server solimp' if solimp is None else 'default solimp'
        print(f'{label}: {d.ncon} contacts, feet {1000 * depth:.1f} mm into the ground')
        for torque in torques:
            e = mujoco.MjData(m)
            e.qpos[:], e.ctrl[:] = d.qpos, d.ctrl
            mujoco.mj_forward(m, e)
            y0 = (_yaw(e.xmat[1].reshape(3, 3)), _yaw(e.xmat[foot].reshape(3, 3)))
            e.xfrc_applied[1, 5] = torque
            for _ in range(200):
                mujoco.mj_step(m, e)
            y1 = (_yaw(e.xmat[1].reshape(3, 3)), _yaw(e.xmat[foot].reshape(3, 3)))
            print(
                f'  {torque:4.0f} N m on the trunk, 1 s: trunk {math.degrees(y1[0] - y0[0]):6.2f} deg, '
                f'left foot {math.degrees(y1[1] - y0[1]):6.2f} deg'
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--robot', default='T1')
    ap.add_argument('--walk-config', default='')
    ap.add_argument('--set', default='', help='walk set (default: the robot default)')
    ap.add_argument('--seconds', type=float, default=8.0)
    ap.add_argument('--skip', type=float, default=3.0, help='s of the start left out')
    ap.add_argument('--ground', type=float, default=0.012, help='m above its lowest a foot counts as down')
    ap.add_argument('--creep', action='store_true', help='the contact creep test (no server)')
    args = ap.parse_args()
    if args.creep:
        creep()
        return
    rows = record(args.robot, args.walk_config, args.set, args.seconds)
    for key, value in summary(rows, args.skip, args.ground).items():
        print(f'{key:16s} {value:8.2f}')


if __name__ == '__main__':
    main()
