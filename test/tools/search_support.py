"""Helpers for the search tests: ``robocup3d optimize`` with its candidates' results given."""

from __future__ import annotations

from collections.abc import Callable


def given_results_pool(results: Callable[[list[tuple]], list[dict]]) -> type:
    """A stand-in for ``optimize.RayPool`` whose ``map`` returns ``results(jobs)``: the search's wiring without its
    servers (every live candidate run is tested on its own)."""

    class GivenPool:
        retried = 0

        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def __enter__(self) -> GivenPool:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def map(self, fn: object, jobs: list[tuple]) -> list[dict]:
            return results(jobs)

    return GivenPool
