"""The one progress bar of every command: a line on stderr with the file's name, bytes done of the
total, rate and time left.

It is drawn only after ``DELAY`` seconds of work (``KDUMP_PROGRESS_DELAY`` sets another), redrawn a
few times a second, cut to the terminal's width and erased when done. It is drawn by hand, not by a
thread: ``Output`` erases it before it writes to the same terminal, so output and bar never mix.
The caller says where each event stands, ``(file, bytes done in it)``, so this module knows no event.
While an object of a store is fetched (or restored from its chunks) before it is read, the line says
so: bytes fetched of the object's, chunks, and which object of how many.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TextIO, TypeVar

from kafka_dump.log.remote import is_url
from kafka_dump.render.payload import printable
from kafka_dump.render.plain import binary_size as binary_size  # the one bytes style, re-exported

T = TypeVar("T")
DELAY = 1.0  # seconds of work before a bar appears: a quick command never flashes one
_REDRAW = 0.1  # seconds between redraws
_CELLS = 20  # the bar's own width


def delay_from(environ: Mapping[str, str]) -> float:
    """``KDUMP_PROGRESS_DELAY`` (seconds) when it is a number, else ``DELAY``."""
    try:
        return max(0.0, float(environ.get("KDUMP_PROGRESS_DELAY", DELAY)))
    except ValueError:
        return DELAY


def _clock(seconds: float) -> str:
    minutes, s = divmod(int(seconds), 60)
    hours, m = divmod(minutes, 60)
    return f"{hours}:{m:02d}:{s:02d}" if hours else f"{m}:{s:02d}"


def file_size(path: str | os.PathLike[str]) -> int:
    """A file's size for a progress bar: an object's from its store's listing, 0 for one not
    listed (a look-up must not fetch it); a tiered object on disk by its own size."""
    listed = getattr(path, "size", None)
    if listed is not None:
        return int(listed)
    if getattr(path, "store", None) is not None:
        path = str(getattr(path, "path", ""))
        if is_url(path):
            return 0
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _pace(done: int, total: int, seconds: float) -> str:
    """``rate/s · time left`` of ``done`` bytes of ``total`` in ``seconds``."""
    rate = done / max(seconds, 1e-3)
    left = _clock((total - done) / rate) if rate > 0 else "-:--"
    return f"{binary_size(rate)}/s · {left} left"


class Bar:
    """A progress line on ``stream``; ``total``: the bytes of every file to read (None: each file's
    own size is the total while it is read)."""

    def __init__(
        self,
        stream: TextIO,
        width: int | None,
        total: int | None = None,
        *,
        files: int | None = None,
        delay: float = DELAY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._width = max((width or 80) - 1, 10)  # never the last column: a full line would wrap
        self._total = total
        self._clock = clock
        self._start = clock()
        self._next = self._start + delay  # no line before this time
        self._fill, self._empty = ("━", "─") if _utf8(stream) else ("#", "-")
        self._file = ""
        self._file_size = 0
        self._before = 0  # bytes of the files already read
        self._done = 0
        self._files = files  # the files (objects) to read, when known
        self._index = 0  # which of them is read now, from 1
        self._fetch_start = 0.0
        self.shown = False

    def at(self, path: str, done: int) -> None:
        """Reading ``path``, ``done`` bytes into it; the line is redrawn when it is time."""
        self._turn(path)
        self._done = done
        if (now := self._due()) is not None:
            self._draw(now)

    def _due(self) -> float | None:
        """Now, when it is time to redraw (and the next redraw is set); else None."""
        now = self._clock()
        if now < self._next:
            return None
        self._next = now + _REDRAW
        return now

    def _turn(self, path: str) -> None:
        if path != self._file:
            if self._file:
                self._before += max(self._file_size, self._done)  # an object's size: what was read
            self._file, self._file_size = path, file_size(path)
            self._done = 0
            self._index += 1
            self._fetch_start = self._clock()

    def fetching(self, path: str, done: int, total: int, what: str) -> None:
        """An object is fetched before it is read: ``done`` of its ``total`` bytes, ``what`` more
        (``3 of 17 chunks``)."""
        self._turn(path)
        if (now := self._due()) is None:
            return
        total = max(total, done)
        which = f"object {self._index:,} of {self._files:,} · " if self._files and self._files > 1 else ""
        more = f" · {what}" if what else ""
        pace = _pace(done, total, now - self._fetch_start)
        self._line(f"{which}fetching {binary_size(done)} of {binary_size(total)}{more} · {pace}", done, total)

    def _draw(self, now: float) -> None:
        done = self._done if self._total is None else self._before + self._done
        total = max(self._file_size if self._total is None else self._total, done)
        pace = _pace(done, total, now - self._start)
        self._line(f"{binary_size(done)} of {binary_size(total)} · {pace}", done, total)

    def _line(self, numbers: str, done: int, total: int) -> None:
        name = printable(os.path.basename(self._file))
        room = self._width - len(numbers) - 1  # for the name and the bar
        cells = min(_CELLS, room - 1 - min(len(name), 24))
        bar = ""
        if cells >= 5:  # the bar is the first to go on a narrow terminal, then the name's end
            filled = cells * done // total if total else cells
            bar = f"{self._fill * filled}{self._empty * (cells - filled)} "
        line = _fit(f"{_fit(name, room - len(bar))} {bar}{numbers}", self._width)
        self._stream.write(f"\r{line}\x1b[K")
        self._stream.flush()
        self.shown = True

    def clear(self) -> None:
        """Erase the line (before other output on the same terminal); it comes back at the next redraw."""
        if self.shown:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
            self.shown = False

    def track(self, events: Iterable[T], where: Callable[[T], tuple[str, int] | None]) -> Iterator[T]:
        """Yield ``events`` unchanged, following the positions ``where`` gives; erased at the end."""
        try:
            for event in events:
                if (at := where(event)) is not None:
                    self.at(*at)
                yield event
        finally:
            self.clear()


def _utf8(stream: TextIO) -> bool:
    return (getattr(stream, "encoding", None) or "").lower().replace("-", "") == "utf8"


def _fit(text: str, cells: int) -> str:
    """``text`` within ``cells`` terminal cells, cut with ``…``."""
    from rich.cells import cell_len

    if cell_len(text) <= cells:
        return text
    while text and cell_len(text) > cells - 1:
        text = text[:-1]
    return text + "…" if cells > 0 else ""
