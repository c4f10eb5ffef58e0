"""Renderers turn the decoder's stream into output; each builds what to print and never prints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from kafka_dump.model import Batch, Problem, Record

if TYPE_CHECKING:  # for the annotation only: a renderer of stats need not load the side-file readers
    from kafka_dump.log.sidefiles import SideItem

T_co = TypeVar("T_co", covariant=True)


class Renderer(Protocol[T_co]):
    """What a renderer answers for each event of a dump; ``T_co`` is str or a Rich renderable."""

    def file_start(
        self, path: str, base_offset: int | None, snapshot: tuple[int, int] | None
    ) -> Sequence[T_co]: ...

    def batch(self, batch: Batch, records: tuple[Record, ...] | None) -> Sequence[T_co]: ...

    def aborted_batch(self, batch: Batch, records: tuple[Record, ...] | None) -> Sequence[T_co]:
        """A data batch of an aborted transaction (``dump`` finds them in the ``.txnindex`` files)."""
        ...

    def problem(self, problem: Problem) -> Sequence[T_co]: ...

    def side(self, path: str, item: SideItem) -> Sequence[T_co]: ...

    def file_end(self, path: str, trailing: int) -> Sequence[T_co]: ...
