"""Robots drawn from their models in ``robocup3d view``: every link's shapes, locked to its TF frame.

A player's robot is found from the link frames its TF names (``<team>/p<unum>/<link>``): the first
model (T1, K1, Nao) whose links those are. Each link with shapes becomes one frame-locked
``SceneEntity``: the Nao's boxes, spheres and capsules of rcssserver3d's ``.rsg`` files as primitives,
the T1/K1 meshes that ``rcsssmj`` ships as ``ModelPrimitive`` with a ``package://robocup3d/meshes/...``
URL. The view serves those files itself (the Foxglove protocol's ``fetchAsset``): :class:`MeshAssets`
answers only for the meshes it handed out, so no other file can be asked for.
"""

from __future__ import annotations

from pathlib import Path

from robocup3d_tools.view_scene import TEAM_RGBA, _color, _m, _pose, _ts

__all__ = ['MESH_URL', 'MeshAssets', 'RobotModels', 'robot_scene']

MESH_URL = 'package://robocup3d/meshes/'
_ROBOTS = ('T1', 'K1', 'nao4')  # the Nao types share their link names; type 4's shapes stand for all


def _rotate(q: tuple[float, float, float, float], v: tuple[float, float, float]) -> tuple[float, float, float]:
    """``v`` turned by the unit quaternion ``q`` (w, x, y, z)."""
    w, x, y, z = q
    tx, ty, tz = 2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]), 2 * (x * v[1] - y * v[0])
    return (
        v[0] + w * tx + y * tz - z * ty,
        v[1] + w * ty + z * tx - x * tz,
        v[2] + w * tz + x * ty - y * tx,
    )


class MeshAssets:
    """The mesh files handed out as URLs; :meth:`__call__` is the Foxglove server's asset handler."""

    def __init__(self) -> None:
        self.files: dict[str, Path] = {}

    def url(self, robot: str, mesh: str) -> str:
        path = Path(mesh).resolve()
        url = f'{MESH_URL}{robot}/{path.name}'
        self.files[url] = path
        return url

    def __call__(self, uri: str) -> bytes | None:
        path = self.files.get(uri)
        if path is None:
            return None
        try:
            return path.read_bytes()
        except OSError:
            return None


class RobotModels:
    """Which model each player is, from its link frames (``None``: no model has those links)."""

    def __init__(self) -> None:
        self._bodies: dict[str, object] = {}
        self._links: dict[str, frozenset[str]] = {}

    def _candidates(self) -> dict[str, object]:
        if not self._bodies:
            from robocup3d_description.body import body_for  # noqa: PLC0415

            for robot in _ROBOTS:
                try:
                    body = body_for(robot)
                except (ValueError, OSError):  # the T1/K1 models need rcsssmj
                    continue
                self._bodies[robot] = body
                self._links[robot] = frozenset(link.name for link in body.links)
        return self._bodies

    def of(self, links: set[str]) -> tuple[str, object] | None:
        """``(robot name, body)`` of the model whose links include all of ``links``."""
        for robot, body in self._candidates().items():
            if links and links <= self._links[robot] | {'base_link'}:
                return robot, body
        return None


def _link_entity(player: str, robot: str, link: object, rgba: tuple, assets: MeshAssets, ns: int) -> object:
    m = _m()
    cubes, spheres, cylinders, models = [], [], [], []
    color = _color(rgba)
    for s in link.shapes:
        w, x, y, z = s.rotation
        pose = _pose(*s.origin, (x, y, z, w))
        if s.kind == 'box':
            cubes.append(m.CubePrimitive(pose=pose, size=m.Vector3(x=s.size[0], y=s.size[1], z=s.size[2]), color=color))
        elif s.kind == 'sphere':
            d = 2 * s.size[0]
            spheres.append(m.SpherePrimitive(pose=pose, size=m.Vector3(x=d, y=d, z=d), color=color))
        elif s.kind == 'capsule':  # a cylinder along the shape's z and a sphere at each end
            r, length = s.size
            cylinders.append(m.CylinderPrimitive(pose=pose, size=m.Vector3(x=2 * r, y=2 * r, z=length), color=color))
            for end in (-0.5 * length, 0.5 * length):
                off = _rotate(s.rotation, (0.0, 0.0, end))
                at = _pose(*(s.origin[i] + off[i] for i in range(3)))
                spheres.append(m.SpherePrimitive(pose=at, size=m.Vector3(x=2 * r, y=2 * r, z=2 * r), color=color))
        elif s.kind == 'mesh':
            models.append(
                m.ModelPrimitive(
                    pose=pose,
                    scale=m.Vector3(x=s.size[0], y=s.size[1], z=s.size[2]),
                    color=color,
                    override_color=True,
                    url=assets.url(robot, s.mesh),
                    media_type='model/stl',
                )
            )
    return m.SceneEntity(
        timestamp=_ts(ns),
        frame_id=f'{player}/{link.name}',
        id=f'robot/{player}/{link.name}',
        frame_locked=True,
        cubes=cubes,
        spheres=spheres,
        cylinders=cylinders,
        models=models,
    )


def robot_scene(frames: set[str], sides: dict[str, str], models: RobotModels, assets: MeshAssets, ns: int) -> object:
    """Every player's robot from its model, in its team's colour; a ball per link where no model fits."""
    m = _m()
    by_player: dict[str, set[str]] = {}
    for frame in frames:
        player, link = frame.rsplit('/', 1)
        by_player.setdefault(player, set()).add(link)
    entities = []
    for player, links in sorted(by_player.items()):
        rgba = TEAM_RGBA[sides.get(player.split('/', 1)[0])]
        found = models.of(links)
        if found is not None:
            robot, body = found
            entities += [_link_entity(player, robot, ln, rgba, assets, ns) for ln in body.links if ln.shapes]
            continue
        ball = m.Vector3(x=0.07, y=0.07, z=0.07)
        for link in sorted(links):
            entities.append(
                m.SceneEntity(
                    timestamp=_ts(ns),
                    frame_id=f'{player}/{link}',
                    id=f'link/{player}/{link}',
                    frame_locked=True,
                    spheres=[m.SpherePrimitive(pose=_pose(0.0, 0.0, 0.0), size=ball, color=_color(rgba))],
                )
            )
    return m.SceneUpdate(entities=entities)
