"""Which data batches of a segment belong to aborted transactions, found as a broker finds them for a fetch.

A broker appends an ``AbortedTxn`` (version, producerId, firstOffset, lastOffset: the ABORT marker's,
lastStableOffset: the LSO once it aborted) to the ``.txnindex`` of the segment it writes the ABORT
marker in. A transaction may begin in an earlier segment, so, as ``LocalLog.collectAbortedTransactions``
does for a fetch, the search reads the segment's own index, then those of the later segments of the
directory, keeping entries with ``lastOffset >= base`` and ``firstOffset < end`` (the next segment's
base offset), until an entry's ``lastStableOffset`` reaches ``end``: every transaction open before
``end`` had ended by then.

A data batch (transactional, not control) is aborted when an entry of its producer spans it:
``firstOffset <= batch.lastOffset`` and ``batch.baseOffset <= lastOffset``, which is what a
read_committed consumer skips (``CompletedFetch``).

Newer brokers write a ``.txnindex`` only once a transaction aborts, so a segment without one may have
no aborted data or may have been copied without it: then ``AbortedTxns.known`` is False and nothing is
marked. An ABORT marker further on in the ``.log`` is not looked for: the dump streams. At most
``MAX_ENTRIES`` entries are held (in three arrays), each checked before it is used.
"""

from __future__ import annotations

import os
import re
import stat
from array import array
from bisect import bisect_left, bisect_right
from pathlib import Path

from kafka_dump.log.index import TXN_ENTRY as ENTRY
from kafka_dump.log.index import txn_entries
from kafka_dump.log.names import segment_base_offset
from kafka_dump.model import Batch, Check, Problem, ProblemKind

# Kafka caps no .txnindex, but a segment's other indexes at segment.index.bytes (10 MiB by default);
# past this many entries (~300k aborted transactions) the rest of a file is not read.
MAX_BYTES = 10 * 1024 * 1024
MAX_ENTRIES = MAX_BYTES // ENTRY.size
_NO_END = 1 << 63
_TXN_NAME = re.compile(r"^(\d{20})\.txnindex$")
_LOG_NAME = re.compile(r"^(\d{20})\.log$")


class AbortedTxns:
    """The aborted transactions that concern one segment, looked up by producer and offsets."""

    __slots__ = ("_firsts", "_lasts", "_pids", "files", "known")

    def __init__(self, entries: list[tuple[int, int, int]], files: list[Path]) -> None:
        entries.sort()
        self._pids = array("q", [e[0] for e in entries])
        self._firsts = array("q", [e[1] for e in entries])
        self._lasts = array("q", [e[2] for e in entries])
        self.files = files  # the .txnindex files read
        self.known = bool(files)  # False: no .txnindex was found; nothing can be marked

    def __len__(self) -> int:
        return len(self._pids)

    def covers(self, b: Batch) -> bool:
        """``b`` (a transactional data batch) lies in an aborted transaction of its producer."""
        pids = self._pids
        lo = bisect_left(pids, b.producerId)
        hi = bisect_right(pids, b.producerId, lo)
        if lo == hi:
            return False
        # A producer's transactions do not overlap: only the last one starting by b.lastOffset can span b.
        k = bisect_right(self._firsts, b.lastOffset, lo, hi) - 1
        return k >= lo and self._lasts[k] >= b.baseOffset


class TxnIndexes:
    """The ``.txnindex`` files met by one dump: each directory is listed once (a partition may hold
    thousands of segments), and each file's problems are given once, however many segments read it."""

    def __init__(self) -> None:
        self._reported: set[str] = set()
        self._dirs: dict[str, _Listing | None] = {}

    def for_log(self, log: Path) -> tuple[AbortedTxns, list[Problem]]:
        """The aborted transactions a fetch of the whole of ``log`` would be given, and the problems
        of the ``.txnindex`` files read for it that were not given before."""
        base = segment_base_offset(log)
        start = -1 if base is None else base
        listing = None if base is None else self._listing(os.path.dirname(log))
        if base is not None and listing is not None:
            end, later, own = listing.after(base)  # the one listing says which .txnindex files there are
            if own is None and not later:
                return _NONE_FOUND, []
        else:
            end, later, own = _NO_END, [], log.with_suffix(".txnindex")
        entries: list[tuple[int, int, int]] = []
        files: list[Path] = []
        problems: list[Problem] = []
        for path in [own, *later] if own is not None else later:
            data, problem = _read(path)
            if problem is not None:
                problems.append(problem)
            if data is None:
                continue
            files.append(path)
            own_base = segment_base_offset(path)
            found, complete = _collect(path, data, start, end, -1 if own_base is None else own_base, problems)
            room = MAX_ENTRIES - len(entries)
            if len(found) > room:
                reason = (
                    f"more than {MAX_ENTRIES} aborted transactions for one segment: the rest are not marked"
                )
                problems.append(_problem(path, 0, len(data), reason, Check.INDEX_SIZE))
                entries += found[:room]
                break
            entries += found
            if complete:
                break
        fresh = [p for p in problems if p.file not in self._reported]
        self._reported.update(p.file for p in problems)
        return AbortedTxns(entries, files), fresh

    def _listing(self, directory: str) -> _Listing | None:
        """The directory's listing, made at the first segment of it asked for (None: it cannot be listed)."""
        if directory not in self._dirs:
            self._dirs[directory] = _Listing.of(Path(directory))
        return self._dirs[directory]


_NONE_FOUND = AbortedTxns([], [])  # no .txnindex to read: nothing can be marked


class _Listing:
    """The base offsets of a directory's segments, and its .txnindex files by base offset, in order."""

    __slots__ = ("logs", "txn_bases", "txns")

    def __init__(self, logs: list[int], txn_bases: list[int], txns: list[Path]) -> None:
        self.logs, self.txn_bases, self.txns = logs, txn_bases, txns

    @classmethod
    def of(cls, directory: Path) -> _Listing | None:
        try:
            names = os.listdir(directory)
        except OSError:
            return None
        logs: list[int] = []
        txns: list[tuple[int, str]] = []
        for name in names:
            if m := _LOG_NAME.match(name):
                logs.append(int(m.group(1)))
            elif m := _TXN_NAME.match(name):
                txns.append((int(m.group(1)), name))
        txns.sort()
        return cls(sorted(logs), [b for b, _ in txns], [directory / n for _, n in txns])

    def after(self, base: int) -> tuple[int, list[Path], Path | None]:
        """For the segment at ``base``: the next segment's base offset (or none), the .txnindex files of
        later segments in order, and its own .txnindex (None when there is none)."""
        logs, bases = self.logs, self.txn_bases
        k = bisect_right(logs, base)
        end = logs[k] if k < len(logs) else _NO_END
        t = bisect_right(bases, base)
        own = self.txns[t - 1] if t and bases[t - 1] == base else None
        return end, self.txns[t:], own


def _read(path: Path) -> tuple[bytes | None, Problem | None]:
    """A .txnindex's bytes (None when there is none), read no further than ``MAX_BYTES``."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a pipe would block, a device never end
            reason = "not a regular file: the aborted transactions in it are not marked"
            return None, _problem(path, 0, 0, reason, Check.OTHER)
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + ENTRY.size)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        reason = f"cannot read ({exc.strerror}): the aborted transactions in it are not marked"
        return None, _problem(path, 0, 0, reason, Check.OTHER)
    if len(data) > MAX_BYTES:
        reason = f"larger than {MAX_BYTES} bytes: only the first {MAX_ENTRIES} aborted transactions are read"
        return data[: MAX_ENTRIES * ENTRY.size], _problem(path, MAX_BYTES, 0, reason, Check.INDEX_SIZE)
    return data, None


def _collect(
    path: Path, data: bytes, start: int, end: int, own_base: int, problems: list[Problem]
) -> tuple[list[tuple[int, int, int]], bool]:
    """The (producerId, firstOffset, lastOffset) of one file's entries that overlap ``[start, end)``, and
    whether the search is complete; an entry that breaks Kafka's rules is a problem and is not used."""
    size = ENTRY.size
    found: list[tuple[int, int, int]] = []
    whole = len(data) - len(data) % size
    for at, (version, pid, first, last, lso) in txn_entries(data):
        if version == 0 and pid == 0 and first == 0 and last == 0 and lso == 0:
            continue  # zero-filled (space allocated but never written): names no transaction
        reason = None
        if version != 0:
            reason = f"aborted transaction entry has version {version}"
        elif pid < 0 or first < 0 or first > last:
            reason = f"aborted transaction of producer {pid} spans offsets {first}..{last}"
        elif last < own_base:
            reason = (
                f"aborted transaction of producer {pid} ends at {last}, before the segment's base {own_base}"
            )
        if reason is not None:
            problems.append(_problem(path, at, size, reason + ": not used", Check.INDEX_MISMATCH))
            continue
        if last >= start and first < end:
            found.append((pid, first, last))
        if lso >= end:
            return found, True
    if whole < len(data):
        tail = len(data) - whole
        reason = f"{tail} bytes at the end, less than one {size}-byte entry"
        problems.append(_problem(path, whole, tail, reason, Check.PARTIAL_TAIL, ProblemKind.PARTIAL_TAIL))
    return found, False


def _problem(
    path: Path, at: int, length: int, reason: str, check: str, kind: ProblemKind = ProblemKind.CORRUPT
) -> Problem:
    return Problem(str(path), at, length, kind, reason, None, check)
