"""Candidate evaluations of ``robocup3d optimize`` as Ray tasks, on this machine or a cluster.

Each evaluation is one task: it starts its own server and player (free ports of the machine it
runs on) in a ROS domain that it claims on that machine (:func:`claim_domain`), so tasks never
share a domain however Ray places them. A task whose worker dies (killed, or its machine lost) is
run again by Ray (``max_retries``); :attr:`RayPool.retried` counts the runs that did not finish.

``RayPool(workers)`` starts a local Ray with ``workers`` CPUs; ``RayPool(address='ray://HOST:10001')``
or ``address='auto'`` joins a running cluster, where each task needs one CPU and this repository
installed on every node.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ['DOMAINS', 'RayPool', 'claim_domain']

#: ROS domains tasks claim (clear of the 1-100 that single runs and tests pick at random; <= 232 for DDS ports)
DOMAINS = range(120, 232)


@contextlib.contextmanager
def claim_domain(domains: range = DOMAINS) -> Iterator[int]:
    """Hold a ROS domain of this machine no other claimant holds (a lock file per domain; freed on exit or death)."""
    for domain in domains:
        path = Path(tempfile.gettempdir()) / f'robocup3d-domain-{domain}.lock'
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        try:
            yield domain
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        return
    raise RuntimeError(f'every ROS domain in {domains.start}-{domains.stop - 1} is taken on this machine')


def _attempt(fn: Callable[..., Any], arg: Any, domains: range, marks: str, niceness: int) -> Any:
    """Run ``fn(arg, domain)`` in a claimed domain; a mark file stands for the attempt until it ends.

    Ray runs its workers at niceness 15; the evaluation (a server and a player in sync mode) gets the
    driver's, where the system allows it: at 15 one took 19-20 s against 11 s beside other work.
    """
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, niceness)
    mark = Path(marks) / uuid.uuid4().hex
    with contextlib.suppress(OSError):  # on another machine of a cluster the folder is not there
        mark.touch()
    with claim_domain(domains) as domain:
        result = fn(arg, domain)
    mark.unlink(missing_ok=True)
    return result


class RayPool:
    """Run evaluations as Ray tasks: ``map(fn, args)`` calls ``fn(arg, domain)`` for each, in order."""

    def __init__(
        self, workers: int = 2, address: str | None = None, domains: range = DOMAINS, max_retries: int = 3
    ) -> None:
        os.environ.setdefault('RAY_USAGE_STATS_ENABLED', '0')  # Ray reports nothing home
        if not address:  # a local Ray keeps every service and connection on loopback (read at import)
            os.environ['RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER'] = '0'
        try:
            import ray  # noqa: PLC0415 - an optional extra
        except ImportError:
            raise RuntimeError("robocup3d optimize runs on Ray: pip install -e '.[ray]'") from None
        self._ray = ray
        if not ray.is_initialized():
            options: dict[str, Any] = {'include_dashboard': False, 'log_to_driver': False}
            if address:
                ray.init(address=address, **options)
            else:
                ray.init(num_cpus=max(1, workers), _node_ip_address='127.0.0.1', **options)
        self._task = ray.remote(num_cpus=1, max_retries=max_retries)(_attempt)
        self._domains = domains
        self._marks = tempfile.mkdtemp(prefix='r3d_ray_attempts_')
        self.retried = 0  # attempts on this machine that did not end (their worker died)

    def map(self, fn: Callable[[Any, int], Any], args: Sequence[Any]) -> list[Any]:
        """``[fn(a, domain) for a in args]``, run as tasks; a task lost with its worker is run again."""
        nice = os.getpriority(os.PRIO_PROCESS, 0)
        results = self._ray.get([self._task.remote(fn, a, self._domains, self._marks, nice) for a in args])
        left = list(Path(self._marks).iterdir())  # attempts whose worker died before they ended
        self.retried += len(left)
        for mark in left:
            mark.unlink()
        return results

    def close(self) -> None:
        """Stop the local Ray (a cluster keeps running)."""
        self._ray.shutdown()

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
