"""Object stores as places segments live: ``s3://``, ``gs://``, ``az://`` (and ``file://``,
``memory://``) through fsspec, the ``remote`` extra, imported only when a URL is given.

A prefix is listed one level at a time (one listing per level, the types and sizes from it); an
object is fetched by byte ranges into a local temporary file that the readers open as a segment
(``sources.Source.__fspath__``), never whole into memory. Credentials and endpoints come from each
backend's usual places (for S3 the AWS environment, ``AWS_ENDPOINT_URL`` included, and profiles),
plus the ``--storage-option KEY=VALUE`` pairs handed to fsspec.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

from kafka_dump.errors import NotASegmentError

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
RANGE = 8 << 20  # bytes fetched a request
AT_ONCE = 4  # requests in flight at once (fsspec's cat_ranges): memory holds AT_ONCE * RANGE
INSTALL = "pip install 'kdump[remote]'"


def is_url(path: str) -> bool:
    """A path of an object store (``scheme://...``), not of a local file."""
    return _URL.match(path) is not None


class Store:
    """How to reach the stores and read what they hold: the options handed to fsspec
    (``--storage-option``) and the private keys of encrypted objects (``--rsa-key``), shared by the
    sources of one run (a plain class: a dataclass costs every command's start-up its ``exec``)."""

    __slots__ = ("_systems", "options", "rsa_keys")

    def __init__(
        self, options: Mapping[str, str] | None = None, rsa_keys: Mapping[str, str] | None = None
    ) -> None:
        self.options = dict(options or {})
        self.rsa_keys = dict(rsa_keys or {})  # key pair id ("" for any) -> PEM file: --rsa-key
        self._systems: dict[str, Any] = {}  # scheme -> its file system, made once

    def __getstate__(self) -> tuple[dict[str, str], dict[str, str]]:
        return self.options, self.rsa_keys  # sent to a worker: its file systems are its own

    def __setstate__(self, state: tuple[dict[str, str], dict[str, str]]) -> None:
        self.options, self.rsa_keys = state
        self._systems = {}

    def __repr__(self) -> str:
        return f"Store({self.options!r}, {sorted(self.rsa_keys)!r})"

    def fs(self, url: str) -> tuple[Any, str]:
        """The fsspec file system for ``url`` (made once a scheme), and the path in it."""
        scheme = url.split("://", 1)[0]
        fs = self._systems.get(scheme)
        if fs is not None:
            return fs, fs._strip_protocol(url)
        fs, path = self._make(url)
        self._systems[scheme] = fs
        return fs, path

    def _make(self, url: str) -> tuple[Any, str]:
        try:
            import fsspec
        except ImportError:
            raise NotASegmentError(
                f"reading an object store needs the remote extra: {INSTALL}", file=url
            ) from None
        try:
            return fsspec.core.url_to_fs(url, **_endpoint(url), **self.options)  # type: ignore[no-any-return]
        except ImportError as exc:  # the backend's own package (s3fs, gcsfs, adlfs)
            raise NotASegmentError(
                f"reading {url.split('://')[0]}:// needs {exc.name or 'its fsspec backend'}: {INSTALL}",
                file=url,
            ) from None
        except ValueError as exc:
            raise NotASegmentError(f"not an object store URL ({exc})", file=url) from None


def _endpoint(url: str) -> dict[str, Any]:
    """For S3: ``AWS_ENDPOINT_URL`` as s3fs takes it (an S3-compatible server: MinIO, Ceph, moto)."""
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if url.startswith(("s3://", "s3a://")) and endpoint:
        return {"client_kwargs": {"endpoint_url": endpoint}}
    return {}


class Entry:
    """One entry of a listing: its URL, whether it is a directory (a common prefix), its size."""

    __slots__ = ("is_dir", "name", "size", "url")

    def __init__(self, url: str, name: str, is_dir: bool, size: int) -> None:
        self.url, self.name, self.is_dir, self.size = url, name, is_dir, size


@contextlib.contextmanager
def _reaching(url: str, what: str = "the object") -> Iterator[None]:
    """A store's errors as one line that names the URL: a missing object, or one not reached."""
    try:
        yield
    except FileNotFoundError:
        raise NotASegmentError("no such object", file=url) from None
    except OSError as exc:
        raise NotASegmentError(f"cannot reach {what} ({exc})", file=url) from None


def stat(store: Store, url: str) -> Entry | None:
    """What ``url`` is: an object, a prefix (a directory), or None when there is nothing there."""
    fs, path = store.fs(url)
    try:
        with _reaching(url):
            info = fs.info(path)
    except NotASegmentError as exc:
        if exc.reason == "no such object":
            return None
        raise
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return Entry(url, name, info.get("type") == "directory", int(info.get("size") or 0))


def listing(store: Store, url: str) -> Iterator[Entry]:
    """The entries one level below the prefix ``url`` (one listing request, paged by the backend)."""
    fs, path = store.fs(url)
    scheme = url.split("://", 1)[0]
    with _reaching(url, "the prefix"):
        found = fs.ls(path, detail=True)
    top = path.rstrip("/")
    for info in found:
        name = str(info["name"]).rstrip("/")
        if name == top:
            continue
        base = name.rsplit("/", 1)[-1]
        yield Entry(f"{scheme}://{name}", base, info.get("type") == "directory", int(info.get("size") or 0))


def fetch(
    store: Store,
    url: str,
    out: IO[bytes],
    start: int = 0,
    end: int | None = None,
    seen: Callable[[int, int, str], None] | None = None,
) -> int:
    """Copy the object's bytes ``start..end`` into ``out`` a range at a time; the bytes copied.
    ``seen(done, total, "")`` after each range (a progress bar)."""
    fs, path = store.fs(url)
    with _reaching(url):
        size = fs.size(path) if end is None else end
    pos = start
    if seen is not None:
        seen(0, size - start, "")
    while pos < size:
        ranges = [(a, min(size, a + RANGE)) for a in range(pos, min(size, pos + AT_ONCE * RANGE), RANGE)]
        for data in read_ranges(store, url, ranges):
            out.write(data)
            pos += len(data)
        if seen is not None:
            seen(pos - start, size - start, "")
        if pos < ranges[-1][1]:
            break  # the object is shorter than it said
    return pos - start


def read_ranges(store: Store, url: str, ranges: list[tuple[int, int]]) -> list[bytes]:
    """The object's bytes in each ``(start, end)`` range, the requests in flight together."""
    fs, path = store.fs(url)
    with _reaching(url):
        if len(ranges) == 1 or not hasattr(fs, "cat_ranges"):
            return [bytes(fs.cat_file(path, start=a, end=b)) for a, b in ranges]
        found = fs.cat_ranges([path] * len(ranges), [a for a, _ in ranges], [b for _, b in ranges])
    return [bytes(x) for x in found]


def size(store: Store, url: str) -> int:
    """The object's size in bytes."""
    fs, path = store.fs(url)
    with _reaching(url):
        return int(fs.size(path))


def exists(store: Store, url: str) -> bool:
    fs, path = store.fs(url)
    try:
        return bool(fs.exists(path))
    except OSError:
        return False


def read(store: Store, url: str, start: int, end: int) -> bytes:
    """The object's bytes ``start..end`` (a small range: a manifest, a chunk)."""
    fs, path = store.fs(url)
    with _reaching(url):
        return bytes(fs.cat_file(path, start=start, end=end))
