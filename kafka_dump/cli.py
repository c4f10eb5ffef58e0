"""The ``kdump`` group and the error and exit-code edge; each command lives in ``commands/NAME.py``.

Exit codes: 0 all good; 1 corrupt data was found (and reported in place); 2 the input could not be
read (a ``KafkaDumpError``: one line on stderr); 130 interrupted (Ctrl-C: one line). A closed stdout
ends the output quietly (``Output.closed``) and the command keeps its verdict. A command's module (and
Rich) is imported only when that command runs or is listed.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
from collections.abc import Iterator, MutableMapping
from typing import Any

import click

from kafka_dump import __version__
from kafka_dump.commands import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK
from kafka_dump.errors import KafkaDumpError

__all__ = ["DOCS", "main"]

DOCS = "https://kdump.readthedocs.io/en/latest/"  # the site (mkdocs.yml's site_url); a command's page: commands/NAME/


class _LazyCommands(MutableMapping[str, click.Command]):
    """The group's commands by name; one registered as ``"module:attribute"`` is imported when read
    (``[]``, ``get``, ``values``), not for its name alone (``in``, iteration, ``--help``'s listing)."""

    def __init__(self) -> None:
        self._loaded: dict[str, click.Command] = {}
        self._where: dict[str, str] = {}

    def register(self, name: str, where: str) -> None:
        self._where[name] = where

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded and name in self._where:
            module, _, attribute = self._where[name].partition(":")
            command: click.Command = getattr(importlib.import_module(module), attribute)
            command.epilog = f"Docs: {DOCS}commands/{name}/"  # the last line of its --help
            self._loaded[name] = command
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self._where.pop(name, None)
        del self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(self._where), **dict.fromkeys(self._loaded)})

    def __len__(self) -> int:
        return len(self._where.keys() | self._loaded.keys())

    def __contains__(self, name: object) -> bool:
        return name in self._where or name in self._loaded


class _Kdump(click.Group):
    """``kdump FILE`` means ``kdump dump FILE``; and the one place where errors become exit codes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = self._lazy = _LazyCommands()

    def add_lazy_command(self, name: str, where: str) -> None:
        """Register the command ``where`` names (``"package.module:attribute"``), imported when used."""
        self._lazy.register(name, where)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = next((a for a in args if not a.startswith("-")), None)
        wants_help = any(a in ("--help", "-h", "--version") for a in args)
        if not wants_help and args and (first is None or not self._names_command(first)):
            args = ["dump", *args]
        return super().parse_args(ctx, args)

    def _names_command(self, word: str) -> bool:
        """A command's name, or a misspelt one (no such path, close to a name): Click then answers
        "No such command ... Did you mean ...?" rather than ``dump`` reporting a missing file. Close
        means one or two letters off (``stat``), not a word such as ``table`` (a ``--format`` value)."""
        if word in self.commands:
            return True
        import difflib

        return not os.path.exists(word) and bool(
            difflib.get_close_matches(word, list(self.commands), cutoff=0.75)
        )

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[Any]:
        """The first word completes as a command's name or, as ``kdump FILE`` reads, a file name."""
        from click.shell_completion import CompletionItem

        return [CompletionItem(incomplete, type="file"), *super().shell_complete(ctx, incomplete)]

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command: its returned code is the exit code; library errors are one line and exit 2."""
        _freeze_start_up()
        try:
            code = super().invoke(ctx)
            sys.stdout.flush()
        except KafkaDumpError as exc:
            from kafka_dump.commands.options import TRACEBACK
            from kafka_dump.render.payload import printable

            if ctx.meta.get(TRACEBACK):
                import traceback

                traceback.print_exc()
            _say(f"kdump: error: {printable(str(exc))}")
            ctx.exit(EXIT_BAD_INPUT)
        except BrokenPipeError:
            # Written past Output (rare): Python flushes stdout again at exit, so point it at /dev/null.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(EXIT_OK)
        except OSError as exc:  # reads fail as KafkaDumpError: this is a write to stdout that failed
            _output_failed(ctx, exc)
        except KeyboardInterrupt:
            # One line, not Click's "Aborted!" and exit 1 (which means corrupt data here).
            _say("kdump: interrupted")
            ctx.exit(EXIT_INTERRUPTED)
        if isinstance(code, int) and code != EXIT_OK:
            ctx.exit(code)
        return code


def _freeze_start_up() -> None:
    """What start-up made (modules, the command tree) lives to the end: out of the cyclic collector's
    way, which would otherwise walk it again at each full collection of a run over many files. Once a
    process: a test runner invoking kdump again freezes nothing more."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.freeze()


_frozen = False


def _output_failed(ctx: click.Context, exc: OSError) -> None:
    """One line naming the output (a full disk: ``> /dev/full``), exit 2; what is still buffered is
    dropped, so that Python's flush at exit cannot fail again."""
    from kafka_dump.commands.options import TRACEBACK
    from kafka_dump.render.payload import printable

    if ctx.meta.get(TRACEBACK):
        import traceback

        traceback.print_exc()
    where = "standard output: cannot write" if exc.filename is None else printable(str(exc.filename))
    _say(f"kdump: error: {where}: {exc.strerror or exc}")
    with contextlib.suppress(OSError, ValueError):  # not a real file (a test's capture)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    ctx.exit(EXIT_BAD_INPUT)


def _say(line: str) -> None:
    """One line on stderr; on a terminal from the start of a cleared line, where a progress bar may be."""
    click.echo(("\r\x1b[K" if sys.stderr.isatty() else "") + line, err=True)


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``: the version, then the build in use in plain words, loading nothing else for it."""
    if not value or ctx.resilient_parsing:
        return
    from kafka_dump.native import ACTIVE

    build = "compiled extensions" if ACTIVE == "compiled" else "pure Python"
    click.echo(f"kdump {__version__} ({build})", color=ctx.color)
    ctx.exit()


@click.group(cls=_Kdump, context_settings={"help_option_names": ["-h", "--help"]}, epilog=f"Docs: {DOCS}")
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and exit.",
)
def main() -> None:
    """Inspect Apache Kafka log segments: every message format (v0, v1, v2) and codec.

    \b
    Example:
      kdump 00000000000000000000.log            # same as: kdump dump FILE
      kdump dump --format json my-topic-0/ | jq .
    """


main.add_lazy_command("dump", "kafka_dump.commands.dump:dump")
main.add_lazy_command("convert", "kafka_dump.commands.convert:convert")
main.add_lazy_command("stats", "kafka_dump.commands.stats:stats")
main.add_lazy_command("verify-crc", "kafka_dump.commands.verify:verify_crc")
main.add_lazy_command("ls", "kafka_dump.commands.ls:ls")
main.add_lazy_command("upgrade-check", "kafka_dump.commands.upgrade:upgrade_check")
main.add_lazy_command("diff", "kafka_dump.commands.diff:diff_command")
main.add_lazy_command("state", "kafka_dump.commands.state:state")
main.add_lazy_command("redact", "kafka_dump.commands.redact:redact")
