"""URDF text for a robot model, from ``body.py`` geometry and ``robots.py`` limits.

Kinematics, inertials and what each link looks like: the Nao's boxes, spheres and
capsules of rcssserver3d's ``.rsg`` files as ``<visual>`` and ``<collision>``; the T1/K1
meshes that the installed ``rcsssmj`` ships, as ``file://`` URIs of their STL files
(visuals). URDF has no capsule: one is drawn as a cylinder and two spheres. Link names are
the model's (``torso`` at the root, a fixed ``camera`` link); joints take the
canonical names (``llj3`` ...). Limits, speeds and torques come from
``robots.py``; a speed or torque the server does not limit is written as
``UNLIMITED``, since URDF wants a number.

CLI: ``python -m robocup3d_description.urdf ROBOT [--type N] > robot.urdf`` with ROBOT
``nao``, ``T1`` or ``K1``.
"""

from __future__ import annotations

import argparse
import copy
import math
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from robocup3d_description.body import Body, Shape, body_for
from robocup3d_description.kinematics import quat_matrix
from robocup3d_description.robots import RobotSpec, mujoco_robot, nao

__all__ = ['UNLIMITED', 'main', 'robot_name', 'urdf_string']

UNLIMITED = 1000.0  # written for effort (N m) / velocity (rad/s) the server leaves unlimited


def _num(v: float) -> str:
    return f'{v:.9g}'


def _vec(v: tuple[float, ...]) -> str:
    return ' '.join(_num(x + 0.0) for x in v)


def _rpy(q: tuple[float, float, float, float]) -> tuple[float, float, float]:
    """URDF fixed-axis roll-pitch-yaw of a (w, x, y, z) quaternion."""
    r = quat_matrix(q)
    pitch = math.asin(max(-1.0, min(1.0, -float(r[2, 0]))))
    if abs(math.cos(pitch)) < 1e-9:
        return (math.atan2(-float(r[1, 2]), float(r[1, 1])), pitch, 0.0)
    return (math.atan2(float(r[2, 1]), float(r[2, 2])), pitch, math.atan2(float(r[1, 0]), float(r[0, 0])))


def _spec(body: Body) -> RobotSpec:
    return nao(int(body.name[3:])) if body.name.startswith('nao') else mujoco_robot(body.name)


def _geometries(shape: Shape) -> list[tuple[tuple[float, float, float], ET.Element]]:
    """URDF geometry elements of a shape, each with its offset along the shape's z axis."""
    geom = ET.Element('geometry')
    if shape.kind == 'box':
        ET.SubElement(geom, 'box', size=_vec(shape.size))
    elif shape.kind == 'sphere':
        ET.SubElement(geom, 'sphere', radius=_num(shape.size[0]))
    elif shape.kind == 'mesh':
        ET.SubElement(geom, 'mesh', filename=Path(shape.mesh).resolve().as_uri(), scale=_vec(shape.size))
    elif shape.kind == 'capsule':
        radius, length = shape.size
        ET.SubElement(geom, 'cylinder', radius=_num(radius), length=_num(length))
        out = [((0.0, 0.0, 0.0), geom)]
        for end in (-0.5 * length, 0.5 * length):
            cap = ET.Element('geometry')
            ET.SubElement(cap, 'sphere', radius=_num(radius))
            out.append(((0.0, 0.0, end), cap))
        return out
    else:
        raise ValueError(f'unknown shape kind {shape.kind!r}')
    return [((0.0, 0.0, 0.0), geom)]


def _add_shapes(el: ET.Element, shapes: tuple[Shape, ...]) -> None:
    """``<visual>`` for every shape, and ``<collision>`` for the primitive ones (the server's own)."""
    for shape in shapes:
        r = quat_matrix(shape.rotation)
        for offset, geom in _geometries(shape):
            xyz = tuple(shape.origin[i] + float(r[i] @ offset) for i in range(3))
            tags = ('visual',) if shape.kind == 'mesh' else ('visual', 'collision')
            for tag in tags:
                part = ET.SubElement(el, tag)
                ET.SubElement(part, 'origin', xyz=_vec(xyz), rpy=_vec(_rpy(shape.rotation)))
                part.append(copy.deepcopy(geom))


def robot_name(urdf: str) -> str | None:
    """The ``<robot name="...">`` of a URDF text (``body_for`` takes it back to the model); None without one."""
    m = re.search(r'<robot\s+name="([^"]+)"', urdf)
    return m.group(1) if m else None


def urdf_string(body: Body) -> str:
    """The URDF document for ``body`` (see ``body_for``)."""
    spec = _spec(body).by_name
    robot = ET.Element('robot', name=body.name)
    for link in body.links:
        el = ET.SubElement(robot, 'link', name=link.name)
        _add_shapes(el, link.shapes)
        if link.mass > 0.0:
            inertial = ET.SubElement(el, 'inertial')
            ET.SubElement(inertial, 'origin', xyz=_vec(link.com), rpy='0 0 0')
            ET.SubElement(inertial, 'mass', value=_num(link.mass))
            ixx, iyy, izz, ixy, ixz, iyz = link.inertia
            ET.SubElement(
                inertial,
                'inertia',
                ixx=_num(ixx),
                ixy=_num(ixy),
                ixz=_num(ixz),
                iyy=_num(iyy),
                iyz=_num(iyz),
                izz=_num(izz),
            )
    for link in body.links:
        if not link.parent:
            continue
        kind = 'revolute' if link.joint else 'fixed'
        name = link.joint or f'{link.parent}_to_{link.name}'
        joint = ET.SubElement(robot, 'joint', name=name, type=kind)
        ET.SubElement(joint, 'parent', link=link.parent)
        ET.SubElement(joint, 'child', link=link.name)
        ET.SubElement(joint, 'origin', xyz=_vec(link.origin), rpy=_vec(_rpy(link.rotation)))
        if link.joint:
            ET.SubElement(joint, 'axis', xyz=_vec(link.axis))
            js = spec.get(link.joint)
            if js is None:
                raise ValueError(f'{body.name}: joint {link.joint} is not in robots.py')
            ET.SubElement(
                joint,
                'limit',
                lower=_num(js.lower),
                upper=_num(js.upper),
                effort=_num(js.max_torque if math.isfinite(js.max_torque) else UNLIMITED),
                velocity=_num(js.max_speed if math.isfinite(js.max_speed) else UNLIMITED),
            )
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding='unicode') + '\n'


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: print the URDF of a robot."""
    parser = argparse.ArgumentParser(prog='python -m robocup3d_description.urdf', description=__doc__.split('\n')[0])
    parser.add_argument('robot', help="'nao', 'T1' or 'K1'")
    parser.add_argument('--type', type=int, default=0, help='Nao heterogeneous type 0-4 (default 0)')
    args = parser.parse_args(argv)
    try:
        body = body_for(args.robot, args.type)
    except (ValueError, RuntimeError) as exc:
        parser.error(str(exc))
    sys.stdout.write(urdf_string(body))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
