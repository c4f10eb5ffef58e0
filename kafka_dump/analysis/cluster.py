"""Work shared out to an existing Dask cluster (``--dask SCHEDULER_ADDRESS``, the ``dask`` extra):
one task per partition or segment, the answers taken back in order, so that the output is what one
process writes. ``-j N`` stays the local form."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from kafka_dump.errors import KafkaDumpError

T = TypeVar("T")
R = TypeVar("R")
INSTALL = "pip install 'kdump[dask]'"


def on_dask(address: str, fn: Callable[..., R], items: Sequence[T], *args: Any) -> Iterator[R]:
    """``fn(item, *args)`` for each item on the cluster at ``address``, the results in order."""
    try:
        from distributed import Client
    except ImportError:
        raise KafkaDumpError(f"--dask needs the dask extra: {INSTALL}") from None
    try:
        client = Client(address, timeout=10)  # type: ignore[no-untyped-call]
    except OSError as exc:
        raise KafkaDumpError(f"cannot reach the Dask scheduler at {address} ({exc})") from None
    try:
        futures = client.map(fn, items, *[[a] * len(items) for a in args], pure=False)
        for future in futures:
            try:
                result = future.result()
            except KafkaDumpError:
                raise  # the task's own one-line error (a file, an object), as a local run says it
            except Exception as exc:  # the cluster's: a worker lost, a task it could not unpickle
                first = (str(exc).strip().splitlines() or [""])[0][:200]
                raise KafkaDumpError(
                    f"the Dask cluster at {address} could not run a task ({type(exc).__name__}: {first}); "
                    "its workers need the kdump and Python of this machine"
                ) from None
            yield result
    finally:
        client.close()  # type: ignore[no-untyped-call]
