"""The benchmark cases, one module each, and what they share: the run's settings and its files.

A case module has ``NAME``, ``ABOUT`` (one line) and ``run(ctx) -> list[Table] | str``: its tables, or
the one-line reason it skipped itself (a kdump piece or a peer it needs is not there yet).
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from benchmarks import gen
from benchmarks.harness import Contender, Table


@dataclass
class Context:
    """The run's settings, and the segment files generated (or found in the cache) on first use."""

    cache: Path
    records: int
    repeat: int
    seed: int
    only: list[str] | None = None
    big: bool = False
    skip_peers: bool = False
    skip_kdump: bool = False
    skip_compare: bool = False
    old_env: dict[str, str] | None = None  # --old: the environment that runs the old checkout's kdump
    _infos: dict[str, gen.SegmentInfo] = field(default_factory=dict)

    def files(self, default: Sequence[str], big: Sequence[str] = ()) -> list[str]:
        """The files a case runs on: its defaults (and big ones with --big), narrowed by --only."""
        names = [*default, *(big if self.big else ())]
        if self.only is not None:
            names = [n for n in self.only if n in (*default, *big)]
        return names

    def segment(self, name: str) -> gen.SegmentInfo:
        if name not in self._infos:
            self._infos[name] = gen.ensure_segment(self.cache, gen.SPECS[name], self.records, self.seed)
        return self._infos[name]

    def table(self, case: str, name: str) -> Table:
        """An empty table for a case on one file, titled with what the file holds."""
        info = self.segment(name)
        title = (
            f"{info.name}: {gen.SPECS[name].description}; {info.records:,} records, "
            f"{info.entries:,} log entries, {info.bytes / 1e6:,.1f} MB"
        )
        return Table(case, name, title, info.records, info.bytes)

    def scratch(self) -> Path:
        """A directory for outputs (dumps, converted segments), on the cache's file system."""
        path = self.cache / "scratch"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def wipe(self, path: Path) -> Callable[[], None]:
        """A cleanup that empties the directory path after each run (outputs must not pile up)."""

        def run() -> None:
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True, exist_ok=True)

        return run

    def keep(self, contenders: Sequence[Contender]) -> list[Contender]:
        """Drop what --skip-kdump and --skip-peers leave out; with --old, pair every kdump line."""
        dropped = {"kdump"} if self.skip_kdump else set()
        if self.skip_peers:
            dropped.add("peer")
        kept = [c for c in contenders if c.side not in dropped]
        return [p for c in kept for p in self.with_old(c)] if self.old_env is not None else kept

    def with_old(self, c: Contender) -> list[Contender]:
        """A kdump contender and, right after it, the same run by the old checkout ("... [old]").

        An in-process line becomes its ``child`` process, timed by itself, in both checkouts.
        """
        if c.side != "kdump" or (c.fn is not None and c.child is None):
            return [c]
        if c.fn is not None:
            c = dataclasses.replace(c, fn=None, argv=c.child, self_timed=True)
        return [c, dataclasses.replace(c, label=f"{c.label} [old]", env=self.old_env, old_of=c.label)]


def registry() -> dict[str, ModuleType]:
    """Every case, by name, in the order the report shows them."""
    from benchmarks.cases import (
        convert,
        decode,
        diff,
        dump_formats,
        encode,
        jbod,
        ls,
        many_segments,
        redact,
        search,
        startup,
        state,
        stats,
        tiered,
        verify,
    )

    cases = (
        decode,
        dump_formats,
        startup,
        verify,
        stats,
        encode,
        convert,
        redact,
        many_segments,
        search,
        ls,
        jbod,
        diff,
        state,
        tiered,
    )
    return {m.NAME: m for m in cases}
