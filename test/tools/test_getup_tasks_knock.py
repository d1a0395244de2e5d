"""The Nao get-up task varies its falls: place, heading and the falling pose's size per trial (no server)."""

from __future__ import annotations

from robocup3d_tools.getup_tasks import KNOCK_DEG, KNOCK_SCALE, SPREAD, START, run_getup


class FakeNaoSession:
    """Records placements and held poses; the robot 'falls' at the first knock and stands up at once."""

    simspark = True
    robot = 'nao'

    def __init__(self) -> None:
        self.cycles = 0
        self.places: list[tuple[float, float, float]] = []
        self.poses: list[dict[str, float]] = []
        self.state: dict = {}
        self.pose = None

    def place(self, x: float, y: float, yaw: float = 0.0) -> None:
        self.places.append((x, y, yaw))
        self.state = {}

    def wait_cycles(self, n: int) -> None:
        self.cycles += n

    def hold_pose(self, targets: dict[str, float]) -> None:
        if targets:
            self.poses.append(dict(targets))
            self.state = {'fallen': True}


def test_each_nao_trial_falls_from_its_own_place_heading_and_pose() -> None:
    session = FakeNaoSession()
    run_getup(session, 'back', trials=4, seed=3)  # type: ignore[arg-type]
    assert len(set(session.places)) == 4 and len({round(p[2], 6) for p in session.places}) == 4
    assert all(abs(x - START[0]) <= SPREAD and abs(y - START[1]) <= SPREAD for x, y, _ in session.places)
    scales = {round(p['llj4'] / KNOCK_DEG['back']['llj4'], 9) for p in session.poses}
    assert len(scales) == 4 and all(KNOCK_SCALE[0] <= s <= KNOCK_SCALE[1] for s in scales)
    again = FakeNaoSession()
    run_getup(again, 'back', trials=4, seed=3)  # type: ignore[arg-type]
    assert again.places == session.places  # the seed decides
