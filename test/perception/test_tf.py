"""The world model's pose as a TF transform (what rviz/tf2 get on a ROS 2 install)."""

from __future__ import annotations

import math

from geometry_msgs.msg import PoseWithCovarianceStamped

from robocup3d_perception.conversions import transform_msg


def test_pose_becomes_a_transform_from_the_field_to_the_robot() -> None:
    pose = PoseWithCovarianceStamped()
    pose.header.frame_id = 'field'
    pose.header.stamp.sec = 12
    pose.pose.pose.position.x, pose.pose.pose.position.y, pose.pose.pose.position.z = -3.5, 1.25, 0.0
    pose.pose.pose.orientation.z, pose.pose.pose.orientation.w = math.sin(0.4), math.cos(0.4)
    t = transform_msg(pose, 'A/p3/base_footprint')
    assert (t.header.frame_id, t.child_frame_id, t.header.stamp.sec) == ('field', 'A/p3/base_footprint', 12)
    assert (t.transform.translation.x, t.transform.translation.y) == (-3.5, 1.25)
    assert (t.transform.rotation.z, t.transform.rotation.w) == (math.sin(0.4), math.cos(0.4))
