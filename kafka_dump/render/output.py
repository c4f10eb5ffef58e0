"""The one output path every command writes through: stdout as text or bytes, Rich consoles, stderr.

An ``Output`` decides once the width (``COLUMNS``, else stdout's terminal; None, never cut, for a pipe
or a file whatever terminal started the command, as ``ls`` and ``git`` do), the colour (``--color``)
and how lines go out: text and bytes in call order, bytes gathered into big writes off a terminal.
Data never reaches Rich as markup. The progress bar (``track``) is drawn on stderr when it is a
terminal and stdout is not a pipe, and erased before anything is written to that terminal. When the
reader of stdout leaves (``| head``), what follows is dropped and ``closed`` says so: the command
stops, or goes on to its verdict.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, BinaryIO, Literal, NamedTuple, TextIO, TypeVar

from kafka_dump.render.payload import printable

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.segment import Segment

    from kafka_dump.render.progress import Bar

T = TypeVar("T")

ColorMode = Literal["auto", "always", "never"]
COLOR_MODES: tuple[ColorMode, ...] = ("auto", "always", "never")
UNWRAPPED = 1000  # Rich needs a width; off a terminal, small tables are never cut
CHUNK_BYTES = 1 << 18  # lines of bytes are written this much at a time (not on a terminal)
_BIG_LINE = 16 * 1024  # lines this long on average are written one by one, not copied to be joined


# Spaces at the end of a line, before any colour codes that close it: what pads a line to a width.
_TRAILING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


def unpadded(text: str) -> str:
    """``text`` with no space at the end of any line (a colour's closing code kept): a row is never
    padded to the width of a table or a terminal, which ``grep``, ``diff`` and a copy would carry."""
    return _TRAILING.sub(r"\1", text)


def _isatty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


def _size_of(stream: object) -> int | None:
    try:
        return os.get_terminal_size(stream.fileno()).columns or None  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None


def terminal_width(stream: TextIO, environ: Mapping[str, str] = os.environ) -> int | None:
    """The width to lay ``stream`` out for: ``COLUMNS``, else its terminal's; None (never cut) off one."""
    columns = environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return _size_of(stream) if _isatty(stream) else None


def _is_pipe(stream: object) -> bool:
    """stdout is a pipe or a socket (``| less``, ``| head``): a bar on the terminal would cross its reader."""
    try:
        mode = os.fstat(stream.fileno()).st_mode  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _writes_utf8(stream: TextIO) -> bool:
    """The text stream encodes as UTF-8 and has a byte buffer beneath it."""
    encoding = getattr(stream, "encoding", None)
    try:
        utf8 = encoding is not None and codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False
    return utf8 and hasattr(stream, "buffer")


def color_wanted(mode: ColorMode, stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    """``always`` and ``never`` are what they say; ``auto``: a terminal, without ``NO_COLOR``."""
    if mode != "auto":
        return mode == "always"
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    return _isatty(stream) and environ.get("TERM") != "dumb"


class Look(NamedTuple):
    """What an ``Output`` decided from its streams (``Output.look``): given to another process that
    writes a share of the output to files (``dump -j``), so that the share is what it would have
    written itself."""

    is_terminal: bool
    color: bool
    width: int | None
    utf8: bool
    encoding: str
    errors: str


class Output:
    """stdout and stderr for one command run, with the width and colour decided once."""

    def __init__(
        self,
        color: ColorMode = "auto",
        *,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        environ: Mapping[str, str] = os.environ,
        progress: bool | None = None,
    ) -> None:
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.is_terminal = _isatty(self.stdout)  # stdout shows on a terminal: escape what data sends
        self.err_is_terminal = _isatty(self.stderr)
        self.color = color_wanted(color, self.stdout, environ)
        self.err_color = color_wanted(color, self.stderr, environ)
        self.width = terminal_width(self.stdout, environ)
        self._err_width = terminal_width(self.stderr, environ)
        self._console: Console | None = None
        self._err_console: Console | None = None
        self._bytes_pending = False
        self._chunk: list[bytes] = []  # lines of bytes gathered and not yet written
        self._chunk_len = 0
        self._chunk_bytes = 0 if self.is_terminal else CHUNK_BYTES
        self._utf8 = _writes_utf8(self.stdout)
        self.closed = False  # stdout's reader left: nothing more is written
        # A bar: asked for (--progress/--no-progress), else on a terminal's stderr, stdout not a pipe.
        self.progress = (
            progress if progress is not None else self.err_is_terminal and not _is_pipe(self.stdout)
        )
        self._environ = environ
        self._bar: Bar | None = None

    def look(self) -> Look:
        """What this output decided, for another process to write as it would (``like``)."""
        stdout = self.stdout
        encoding, errors = getattr(stdout, "encoding", "utf-8"), getattr(stdout, "errors", None) or "strict"
        return Look(self.is_terminal, self.color, self.width, self._utf8, encoding, errors)

    @classmethod
    def like(cls, look: Look, stdout: TextIO, stderr: TextIO) -> Output:
        """An output on ``stdout`` and ``stderr`` (files) that writes what one with ``look`` writes;
        no progress bar."""
        out = cls("never", stdout=stdout, stderr=stderr, progress=False)
        out.is_terminal, out.color, out.width, out._utf8 = look.is_terminal, look.color, look.width, look.utf8
        out._chunk_bytes = 0 if look.is_terminal else CHUNK_BYTES
        return out

    def track(
        self,
        events: Iterable[T],
        where: Callable[[T], tuple[str, int] | None],
        total: int | None = None,
        files: int | None = None,
    ) -> Iterable[T]:
        """``events`` as they are, followed by a progress bar when one is wanted (``progress``):
        ``where`` gives an event's (file, bytes done in it); ``total``: every file's bytes, if known;
        ``files``: how many. The bar also follows the fetching of objects from a store."""
        if not self.progress:
            return events
        from kafka_dump.log import copies
        from kafka_dump.render.progress import Bar, delay_from

        if self._bar is None:  # one bar for the command, whatever it tracks in turn
            self._bar = Bar(self.stderr, self._err_width, total, files=files, delay=delay_from(self._environ))
        bar = self._bar

        def tracked() -> Iterator[T]:
            copies.watch(bar.fetching)  # while these events are read, and no longer
            try:
                yield from bar.track(events, where)
            finally:
                copies.watch(None)

        return tracked()

    def _clear_bar(self) -> None:
        if self._bar is not None:
            self._bar.clear()

    def _reader_left(self) -> None:
        """stdout is a pipe whose reader left: drop what is pending and point stdout at /dev/null, so
        that no later write (Python's own flush at exit included) fails again."""
        self.closed = True
        self._chunk.clear()
        self._chunk_len = 0
        self._bytes_pending = False
        _to_devnull(self.stdout)

    def write(self, text: str) -> None:
        """Text as it is (the renderer has escaped what needs escaping)."""
        if self.closed:
            return
        if self.is_terminal:
            self._clear_bar()
        try:
            if self._bytes_pending:
                self._flush_bytes()
            self.stdout.write(text)
        except BrokenPipeError:
            self._reader_left()

    def write_lines(self, lines: Iterable[str]) -> None:
        """Lines of text in one write: under ``-u`` the text layer writes through, a call per line."""
        self.write("".join(lines))

    def write_bytes(self, data: bytes) -> None:
        """Bytes straight to stdout's buffer (JSON Lines): no decode and re-encode."""
        self.write_byte_lines((data,))
        if self._chunk:
            self._write_or_leave(self._write_chunk)

    def write_byte_lines(self, lines: Iterable[bytes]) -> None:
        """Lines of bytes to stdout's buffer, gathered into writes of ``CHUNK_BYTES`` or more."""
        if self.closed:
            return
        if self.is_terminal:
            self._clear_bar()
        if not self._bytes_pending:
            self._write_or_leave(self.stdout.flush)  # the text written before goes first
            self._bytes_pending = not self.closed
        chunk = self._chunk
        for line in lines:
            chunk.append(line)
            self._chunk_len += len(line)
        if self._chunk_len >= self._chunk_bytes:
            self._write_or_leave(self._write_chunk)

    def _write_or_leave(self, write: Callable[[], None]) -> None:
        try:
            write()
        except BrokenPipeError:
            self._reader_left()

    def _write_chunk(self) -> None:
        chunk = self._chunk
        if len(chunk) * _BIG_LINE <= self._chunk_len:  # big lines (batches of many records): as they are
            for piece in chunk:
                _write_all(self.stdout.buffer, piece)
        else:
            _write_all(self.stdout.buffer, b"".join(chunk))
        chunk.clear()
        self._chunk_len = 0

    def _flush_bytes(self) -> None:
        if self._chunk:
            self._write_chunk()
        self.stdout.buffer.flush()
        self._bytes_pending = False

    def write_utf8_lines(self, lines: Iterable[bytes]) -> None:
        """Lines of UTF-8 text (the bulk table): as bytes when stdout writes UTF-8, else as text."""
        if self._utf8:
            self.write_byte_lines(lines)
        else:
            self.write_lines([line.decode() for line in lines])

    def print(self, renderable: RenderableType, *, soft_wrap: bool = False) -> None:
        """A Rich renderable on stdout (a ``Text``, a small ``Table``); never a str of data."""
        if not self.closed:
            if self.is_terminal:
                self._clear_bar()
            self._write_or_leave(lambda: self._print(renderable, soft_wrap))

    def _print(self, renderable: RenderableType, soft_wrap: bool) -> None:
        if self._bytes_pending:
            self._flush_bytes()
        self.console.print(renderable, soft_wrap=soft_wrap)

    def flush(self) -> None:
        if not self.closed:
            self._write_or_leave(self._flush)

    def _flush(self) -> None:
        self.stdout.flush()
        if self._bytes_pending:
            self._flush_bytes()

    def diagnostic(self, message: str) -> None:
        """One ``kdump: message`` line on stderr, control characters escaped (dropped when no one reads)."""
        self._to_stderr(lambda: self.stderr.write(f"kdump: {printable(message)}\n"))

    def write_err(self, text: str) -> None:
        """Text for stderr as it is: what another process wrote for it (its lines escaped there)."""
        self._to_stderr(lambda: self.stderr.write(text))

    def err_print(self, renderable: RenderableType) -> None:
        """A Rich renderable on stderr (a closing summary)."""
        self._to_stderr(lambda: self.err_console.print(renderable))

    def _to_stderr(self, write: Callable[[], object]) -> None:
        """Write to stderr after what stdout holds and with no bar over it; dropped when no one reads."""
        self.flush()
        self._clear_bar()
        try:
            write()
            self.stderr.flush()
        except BrokenPipeError:
            _to_devnull(self.stderr)

    @property
    def console(self) -> Console:
        if self._console is None:
            self._console = make_console(self.stdout, self.color, self.width)
        return self._console

    @property
    def err_console(self) -> Console:
        if self._err_console is None:
            self._err_console = make_console(self.stderr, self.err_color, self._err_width)
        return self._err_console


def _to_devnull(stream: TextIO) -> None:
    """Point ``stream``'s file at /dev/null (a pipe whose reader left); nothing for a stream with no file."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _write_all(stream: BinaryIO, data: bytes) -> None:
    """``data`` whole: under ``-u`` stdout's buffer is the raw file, whose write may take less."""
    done = stream.write(data)
    if done is None or done >= len(data):
        return
    view = memoryview(data)
    while done < len(data):
        done += stream.write(view[done:]) or 0


def make_console(file: TextIO, color: bool, width: int | None) -> Console:
    """A Rich console on ``file`` with the theme, colour or none, and a fixed width."""
    from rich.console import Console

    from kafka_dump.render.theme import THEME

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError  # ended quietly at the CLI's edge, as for every format

        def _render_buffer(self, buffer: Iterable[Segment]) -> str:
            return unpadded(super()._render_buffer(buffer))  # a title or a last cell, padded by Rich

    return _Console(
        file=file,
        theme=THEME,
        width=width or UNWRAPPED,
        force_terminal=color,
        color_system="auto" if color else None,
        no_color=not color,
        highlight=False,
        emoji=False,
        markup=False,  # a str handed to print is shown as it is, never parsed as markup
    )
