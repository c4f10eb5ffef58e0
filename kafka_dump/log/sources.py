"""What a path holds: the one walk every command takes its files from.

A path is a file (a segment, a side file), ``-`` (standard input), or a directory walked to any
depth: a partition directory, a log dir, a JBOD parent of log dirs, a whole backup tree. Each
directory is listed once and each entry's type taken from the listing (no ``stat`` per file). The
files come in one order for every command: a directory's own files (a KRaft ``bootstrap.checkpoint``,
a log dir's checkpoint files) in offset order, then its subdirectories by topic and partition number.

What the walk passes over is never dropped without a word: it is counted by kind in ``Found.skipped``
(unreadable directories, symlink loops, directories and files reached twice, Kafka's transient
files, files that are not Kafka's), for the command to report. A URL (``s3://…``) is walked as a
directory is, through ``remote.py``; its objects, and tiered-storage objects anywhere, are opened
through their local copies (``copies.py``).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from typing import IO, NamedTuple

from kafka_dump.errors import NotASegmentError
from kafka_dump.log import aiven, copies, remote
from kafka_dump.log.names import SIDE_NAMES, SIDE_SUFFIXES, name_order, segment_base_offset, snapshot_id
from kafka_dump.log.remote import Store, is_url

STDIN = "-"

# Kafka's transient files (a suffix after the file's own name) and directories (a suffix after
# ``topic-N.<id>``), by the state each names: being deleted, cleaned, swapped in, moved, left over.
TRANSIENT_FILES = {".deleted": "deleted", ".cleaned": "cleaned", ".swap": "swap"}
TRANSIENT_DIRS = {"-delete": "delete", "-future": "future", "-stray": "stray"}

SEGMENT, SNAPSHOT, SIDE = "segment", "snapshot", "side"  # a source's kinds
READ_KINDS = (SEGMENT, SNAPSHOT)  # what the record readers read

# What a walk passes over, by kind (Found.skipped's keys, in the order they are reported).
UNREADABLE, LOOP, TWICE, TRANSIENT, OTHER = "unreadable", "loop", "twice", "transient", "other"
SKIPPED_KINDS = (UNREADABLE, LOOP, TWICE, TRANSIENT, OTHER)

_PARTITION_DIR = re.compile(r"^(.*)-(\d+)$")
_TRANSIENT_DIR = re.compile(r"^(.*-\d+)\.[0-9a-f]{32}-(delete|future|stray)$")


class Source(NamedTuple):
    """One file to read: how to open it (``os.fspath``: a local file), how to show it, what it is."""

    path: str  # where it is: the path as spelled below the path given, an object's URL, standard input's copy
    name: str  # what is shown: the path, or ``-`` (``--name``) for standard input
    kind: str  # SEGMENT (.log, or any file named on the command line), SNAPSHOT (.checkpoint), SIDE
    state: str | None = None  # Kafka's transient state: TRANSIENT_FILES' or TRANSIENT_DIRS' values
    piped: bool = False  # standard input, copied once to a temporary file that readers open by path
    given: bool = False  # named on the command line (not found by a walk)
    store: Store | None = None  # set for an object (in a store, or tiered): copied when first opened
    manifest: str | None = None  # the tiered-storage plugin's .rsm-manifest of a .log object (log/aiven.py)
    size: int | None = None  # an object's size as its store's listing gave it (a progress bar's total)

    def __fspath__(self) -> str:
        """The local file readers open: the path itself, or the local copy of an object."""
        return self.path if self.store is None else copies.local(self)

    def __str__(self) -> str:
        return self.name

    @property
    def file_name(self) -> str:
        """The name in its directory, less a transient suffix (``0...0.log`` for ``0...0.log.deleted``)."""
        name = os.path.basename(self.path)
        if self.state in FILE_STATES:
            name = name[: name.rfind(".")]
        return name

    @property
    def directory(self) -> str:
        """The directory it lies in, as spelled ("" for standard input and a bare name)."""
        return "" if self.piped else os.path.dirname(self.path)

    @property
    def base_offset(self) -> int | None:
        """The base offset in a segment's name as Kafka (or the tiered-storage plugin) writes it;
        None for a free-form name, a pipe."""
        if self.manifest is not None:
            return aiven.base_offset(self.path)
        return None if self.piped else segment_base_offset(self.file_name)

    @property
    def snapshot(self) -> tuple[int, int] | None:
        """(end offset, epoch) of a KRaft snapshot named ``<endOffset>-<epoch>.checkpoint``."""
        return None if self.piped else snapshot_id(self.file_name)


FILE_STATES = frozenset(TRANSIENT_FILES.values())


class Found(NamedTuple):
    """The sources under the paths given, in reading order, and what the walk passed over."""

    sources: list[Source]
    skipped: dict[str, list[str]]  # kind -> paths, for each kind met (SKIPPED_KINDS)
    listed: frozenset[str]  # the directories listed, as their files' ``Source.directory`` spells them

    def readable(self) -> list[Source]:
        """What the record readers read: the segments found, and every file named."""
        return [s for s in self.sources if s.kind in READ_KINDS or s.given]


def as_sources(paths: Iterable[str | os.PathLike[str] | Source]) -> list[Source]:
    """What a reader given ``paths`` reads: a Source as it is, any other path as ``find`` resolves it
    (``Found.readable``; for a library caller, which passes paths)."""
    out: list[Source] = []
    for p in paths:
        out += [p] if isinstance(p, Source) else find([os.fspath(p)]).readable()
    return out


def partition_sources(path: str, why: str) -> list[Source]:
    """What a command that takes one partition reads for ``path`` (a segment, a partition directory):
    its segments; a directory that holds several partitions, or ``-``, is an error that says ``why``."""
    if path == STDIN:
        raise NotASegmentError(f"standard input cannot be read here: {why}", file=STDIN)
    found = find([path]).readable()
    if len({s.directory for s in found}) > 1:
        raise NotASegmentError(f"holds more than one partition directory: {why}", file=path)
    return found


def common_dir(names: Sequence[str]) -> str:
    """The directory (or prefix) every one of two or more names lies below, as they spell it; "" when
    there is none worth naming (the root, the current directory, paths and URLs mixed)."""
    if len(names) < 2:
        return ""
    scheme = names[0].split("://", 1)[0] + "://" if is_url(names[0]) else ""
    if not all(n.startswith(scheme) and is_url(n) == bool(scheme) for n in names):
        return ""
    try:
        common = os.path.commonpath(list({os.path.dirname(n[len(scheme) :]) or "." for n in names}))
    except ValueError:  # absolute and relative paths mixed
        return ""
    if scheme and not names[0][len(scheme) :].startswith("/"):
        common = common.lstrip("/")
    return "" if common in ("", ".", os.sep) else scheme + common


def kind_of(name: str) -> str | None:
    """What a file in a walk is, by its name: SEGMENT, SNAPSHOT, SIDE, or None (not Kafka's)."""
    dot = name.rfind(".")
    suffix = name[dot:] if 0 < dot < len(name) - 1 else ""
    if suffix == ".log":
        return SEGMENT
    if suffix == ".checkpoint":
        return SNAPSHOT
    if suffix in SIDE_SUFFIXES or name in SIDE_NAMES or suffix in (aiven.MANIFEST, aiven.INDEXES):
        return SIDE
    return None


def find(
    paths: Iterable[str],
    *,
    transient: bool = False,
    stdin_name: str | None = None,
    store: Store | None = None,
) -> Found:
    """Every file the paths hold, each once, in reading order (``_Walk``). ``transient``: read Kafka's
    transient files and directories too (each with its state), rather than pass over them.
    ``stdin_name``: the name shown for ``-`` (by default ``-``). ``store``: how to reach the object
    stores a URL names (``remote.Store``), walked as a directory is.

    Raises NotASegmentError for a path that does not exist, cannot be listed or opened as a file, or
    is a directory with no segment at any depth (naming how deep it looked)."""
    walk = _Walk(transient, store or Store())
    for raw in paths:
        if raw == STDIN:
            walk.stdin(stdin_name or STDIN)
        elif is_url(raw):
            walk.url(raw)
        else:
            walk.path(raw)
    skipped = {k: walk.skipped[k] for k in SKIPPED_KINDS if walk.skipped.get(k)}
    return Found(walk.sources, skipped, frozenset(walk.listed))


class _Walk:
    """The walk of the paths named, one after the other: a file that several reach (a path named
    twice, a file named inside a directory named, a symlink) is read once."""

    def __init__(self, transient: bool, store: Store) -> None:
        self.transient = transient
        self.store = store
        self.sources: list[Source] = []
        self.skipped: dict[str, list[str]] = {}
        self._files: set[str] = set()  # real paths of the files taken
        self._dirs: set[str] = set()  # real paths of the directories walked
        self.listed: list[str] = []
        self._stdin = False

    def stdin(self, name: str) -> None:
        if self._stdin:
            raise NotASegmentError("standard input is given twice: it can be read once", file=STDIN)
        if os.isatty(0):
            raise NotASegmentError("standard input is a terminal: pipe a segment into it", file=STDIN)
        self._stdin = True
        self.sources.append(Source(_spooled_stdin(), name, SEGMENT, piped=True, given=True))

    def path(self, raw: str) -> None:
        spelled = os.path.normpath(raw) if raw else raw  # as Path spells it: no "./", no "//"
        try:
            st = os.stat(spelled)
        except FileNotFoundError:
            raise NotASegmentError("no such file or directory", file=raw) from None
        except OSError as exc:
            raise NotASegmentError(exc.strerror or str(exc), file=raw) from None
        if stat.S_ISDIR(st.st_mode):
            self._directory(raw, spelled)
            return
        if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            raise NotASegmentError("a device file is not read as a segment", file=raw)
        if not stat.S_ISREG(st.st_mode) and not stat.S_ISFIFO(st.st_mode):
            raise NotASegmentError("not a regular file or a pipe", file=raw)
        real = os.path.realpath(spelled)
        if real in self._files:
            self._skip(TWICE, spelled)
            return
        self._files.add(real)
        name = os.path.basename(spelled)
        state = _file_state(name)
        kind = kind_of(name[: name.rfind(".")] if state else name) or SEGMENT  # named: read as a segment
        manifest = aiven.manifest_path(spelled) if name.endswith(".log") else None
        if manifest is not None and not aiven.plugin_named(name) and not os.path.isfile(manifest):
            manifest = None
        store = self.store if manifest is not None else None
        self.sources.append(Source(spelled, spelled, kind, state, given=True, store=store, manifest=manifest))

    def _directory(self, raw: str, spelled: str) -> None:
        """Walk a directory named on the command line."""
        before = len(self.sources)
        unreadable = len(self.skipped.get(UNREADABLE, ()))
        real = os.path.realpath(spelled)
        if real in self._dirs:
            self._skip(TWICE, spelled)
            return
        try:
            depth = self._walk(spelled, real, (real,), None, 0, top=True)
        except PermissionError as exc:
            raise NotASegmentError(f"cannot list the directory ({exc.strerror})", file=raw) from None
        if any(s.kind in READ_KINDS for s in self.sources[before:]):
            return
        below = _below(depth)
        why = ""
        if (n := len(self.skipped.get(UNREADABLE, ())) - unreadable) > 0:
            why = f"; {n} director{'ies' if n > 1 else 'y'} below it could not be listed"
        raise NotASegmentError(f"directory holds no .log or .checkpoint segment {below}{why}", file=raw)

    def url(self, raw: str) -> None:
        """An object, or a prefix walked as a directory is (one listing a level)."""
        store = self.store
        url = raw.rstrip("/")
        entry = remote.stat(store, url)
        if entry is None:
            raise NotASegmentError("no such object or prefix", file=raw)
        if not entry.is_dir:
            state = _file_state(entry.name)
            kind = kind_of(entry.name[: entry.name.rfind(".")] if state else entry.name) or SEGMENT
            manifest = aiven.manifest_path(url) if url.endswith(".log") else None
            if (
                manifest is not None
                and not aiven.plugin_named(entry.name)
                and not remote.exists(store, manifest)
            ):
                manifest = None
            self.sources.append(
                Source(url, url, kind, state, given=True, store=store, manifest=manifest, size=entry.size)
            )
            return
        before = len(self.sources)
        depth = self._walk_prefix(store, url, 0)
        if not any(s.kind in READ_KINDS for s in self.sources[before:]):
            raise NotASegmentError(f"prefix holds no .log or .checkpoint segment {_below(depth)}", file=raw)

    def _walk_prefix(self, store: Store, url: str, depth: int, state: str | None = None) -> int:
        files: list[remote.Entry] = []
        dirs: list[remote.Entry] = []
        for e in remote.listing(store, url):
            (dirs if e.is_dir else files).append(e)
        self.listed.append(url)
        names = {e.name for e in files}
        for e in sorted(files, key=lambda e: _file_order((e.name, "", ""))):
            self._file(e.url, e.name, e.url, state, store, _manifest(e.url, e.name, names), e.size)
        deepest = depth
        for e in sorted(dirs, key=lambda e: _dir_order(e.name)):
            sub_state = state
            if (m := _TRANSIENT_DIR.match(e.name)) is not None:
                sub_state = TRANSIENT_DIRS["-" + m.group(2)]
                if not self.transient:
                    self._skip(TRANSIENT, e.url)
                    continue
            deepest = max(deepest, self._walk_prefix(store, e.url, depth + 1, sub_state))
        return deepest

    def _walk(
        self,
        spelled: str,
        real: str,
        ancestors: tuple[str, ...],
        state: str | None,
        depth: int,
        top: bool = False,
    ) -> int:
        """Take the files of one directory, then walk its subdirectories; the depth reached."""
        self._dirs.add(real)
        files: list[tuple[str, str, str]] = []  # (name, path, real path)
        odd: list[tuple[str, str]] = []  # (path, what is skipped) of the entries that are neither
        dirs: list[tuple[tuple[str, int, str], str, str]] = []  # (order, name, real path or "")
        prefix = "" if spelled == "." else spelled
        try:
            with os.scandir(spelled) as it:
                for e in it:
                    name = e.name
                    path = os.path.join(prefix, name)
                    try:
                        is_dir = e.is_dir()
                        is_file = not is_dir and e.is_file()
                        link = e.is_symlink()
                    except OSError:
                        odd.append((path, UNREADABLE))
                        continue
                    if is_dir:
                        dirs.append((_dir_order(name), name, os.path.realpath(path) if link else ""))
                    elif not is_file:
                        odd.append((path, UNREADABLE if link else OTHER))  # a dangling link; a socket...
                    else:
                        files.append(
                            (name, path, os.path.realpath(path) if link else os.path.join(real, name))
                        )
        except PermissionError:
            if top:
                raise
            self._skip(UNREADABLE, spelled)
            return depth
        except OSError:  # gone since its parent was listed, or not a directory any more
            self._skip(UNREADABLE, spelled)
            return depth
        self.listed.append(prefix)
        files.sort(key=_file_order)
        names = (
            {name for name, _, _ in files} if any(n.endswith(aiven.MANIFEST) for n, _, _ in files) else None
        )
        for name, path, file_real in files:
            self._file(path, name, file_real, state, None, _manifest(path, name, names))
        for path, kind in sorted(odd):
            self._skip(kind, path)
        deepest = depth
        for _, name, link_real in sorted(dirs):
            path = os.path.join(prefix, name)
            sub_real = link_real or os.path.join(real, name)
            if sub_real in ancestors or (link_real and real.startswith(sub_real + os.sep)):
                self._skip(LOOP, path)
                continue
            if sub_real in self._dirs:
                self._skip(TWICE, path)
                continue
            sub_state = state
            if (m := _TRANSIENT_DIR.match(name)) is not None:
                sub_state = TRANSIENT_DIRS["-" + m.group(2)]
                if not self.transient:
                    self._skip(TRANSIENT, path)
                    continue
            deepest = max(deepest, self._walk(path, sub_real, (*ancestors, sub_real), sub_state, depth + 1))
        return deepest

    def _file(
        self,
        path: str,
        name: str,
        real: str,
        state: str | None,
        store: Store | None,
        manifest: str | None,
        size: int | None = None,
    ) -> None:
        """Take a file of a walk (in reading order), or count it as passed over."""
        file_state = _file_state(name)
        kind = kind_of(name[: name.rfind(".")] if file_state else name)
        if kind is None:
            self._skip(OTHER, path)
        elif file_state is not None and not self.transient:
            self._skip(TRANSIENT, path)
        elif real in self._files:
            self._skip(TWICE, path)
        else:
            self._files.add(real)
            if manifest is not None:
                store = store or self.store  # restored from its chunks when opened
            self.sources.append(
                Source(path, path, kind, file_state or state, store=store, manifest=manifest, size=size)
            )

    def _skip(self, kind: str, path: str) -> None:
        self.skipped.setdefault(kind, []).append(path)


_SPOOLS: list[IO[bytes]] = []  # standard input's copies: removed when closed, at exit at the latest


def _spooled_stdin() -> str:
    """Copy standard input, read once from start to end, to a temporary file: every reader opens it by
    path and may seek and read it again, as a file (a pipe's bytes are read once, whatever its size)."""
    import shutil
    import tempfile

    spool = tempfile.NamedTemporaryFile(prefix="kdump-stdin-")  # noqa: SIM115 (kept open until exit)
    with open(0, "rb", buffering=0, closefd=False) as stdin:
        shutil.copyfileobj(stdin, spool, 1 << 20)
    spool.flush()
    _SPOOLS.append(spool)
    return spool.name


def transient_dir_partition(name: str) -> str | None:
    """The partition of Kafka's transient directory ``topic-N.<id>-delete`` (``topic-N``), else None."""
    m = _TRANSIENT_DIR.match(name)
    return m.group(1) if m else None


def _manifest(path: str, name: str, names: set[str] | None) -> str | None:
    """The ``.rsm-manifest`` listed beside a ``.log`` object, or that belongs beside one the plugin named."""
    if not name.endswith(".log"):
        return None
    if aiven.plugin_named(name) or (names is not None and aiven.manifest_path(name) in names):
        return aiven.manifest_path(path)  # a plugin's object without its manifest: reading says so
    return None


def _below(depth: int) -> str:
    return "in it" if depth == 0 else f"in it or {depth} level{'s' if depth > 1 else ''} below it"


def _file_state(name: str) -> str | None:
    dot = name.rfind(".")
    return TRANSIENT_FILES.get(name[dot:]) if dot > 0 else None


def _file_order(file: tuple[str, str, str]) -> tuple[tuple[bool, int, str], str]:
    """Files in offset order (a transient one by the name it had), then the others by name."""
    name = file[0]
    plain = name[: name.rfind(".")] if _file_state(name) else name
    return name_order(plain), name


def _dir_order(name: str) -> tuple[str, int, str]:
    """Partition directories by topic, then partition number (``t-2`` before ``t-10``); others by name."""
    m = _PARTITION_DIR.match(name)
    return (m.group(1), int(m.group(2)), name) if m else (name, -1, name)
