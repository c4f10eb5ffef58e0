"""Start-up loads only what the work needs (issue 13): each codec library on first use, and crc32c's
compiled function without the package's ``importlib.metadata`` version lookup. Checked by the
modules a fresh interpreter holds afterwards, not by timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

HEAVY = ("importlib.metadata", "lz4", "snappy", "zstandard")


def _loaded_after(args: list[str]) -> dict[str, bool]:
    code = (
        "import sys, json\n"
        "from kafka_dump.cli import main\n"
        f"sys.argv = ['kdump', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    loaded: dict[str, bool] = json.loads(result.stderr.strip().splitlines()[-1])
    return loaded


def test_version_loads_no_codec_and_no_metadata() -> None:
    assert _loaded_after(["--version"]) == dict.fromkeys(HEAVY, False)


@pytest.mark.parametrize(
    ("fixture", "codec"),
    [("v2-none.log", None), ("v1-none.log", None), ("v2-zstd.log", "zstandard"), ("v1-lz4.log", "lz4")],
)
def test_a_dump_loads_only_the_codecs_it_meets(fixture: str, codec: str | None) -> None:
    loaded = _loaded_after(["dump", "--format", "json", f"fixtures/{fixture}"])
    assert loaded == {m: m == codec for m in HEAVY}


def test_version_loads_no_command_and_no_ui() -> None:
    """``kdump --version`` imports the group and the compiled module it names, not the commands behind
    it, nor the decoder nor the encoders."""
    code = (
        "import sys\n"
        "from kafka_dump.cli import main\n"
        "sys.argv = ['kdump', '--version']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m in ('kafka_dump.wire.decode', 'kafka_dump.wire.encode') "
        "or m.startswith(('rich', "
        "'kafka_dump.commands.', 'kafka_dump.log.segment', 'kafka_dump.render'))), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KDUMP_PURE"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env
    )
    assert result.stdout.startswith("kdump ")
    loaded = result.stderr.strip().splitlines()[-1]
    assert loaded == "[]"


def _modules_after(args: list[str], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` (modules, or packages with all below them) ``kdump ARGS`` loaded, compiled twins on."""
    code = (
        "import sys\n"
        "from kafka_dump.cli import main\n"
        f"sys.argv = ['kdump', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"names = {names!r}\n"
        "print(sorted(n for n in names if any(m == n or m.startswith(n + '.') for m in sys.modules)), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KDUMP_PURE"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env
    )
    loaded: list[str] = json.loads(result.stderr.strip().splitlines()[-1].replace("'", '"'))
    return loaded


OTHER_TWINS = ("kafka_dump.wire._gather_pure", "kafka_dump.wire.encoder", "kafka_dump.wire.decode")


def test_version_makes_no_dataclass_and_loads_no_other_twin() -> None:
    """The model's classes are written out (a dataclass exec()s its methods at import), and the walk,
    gather and encoder twins are imported when first used, not when ``kafka_dump.wire`` is imported
    (which ``--version`` does not import at all)."""
    names = ("dataclasses", "kafka_dump.wire", "json", *OTHER_TWINS)
    assert _modules_after(["--version"], names) == []


def test_a_clean_shallow_check_loads_only_what_it_uses() -> None:
    names = ("rich", "dataclasses", "kafka_dump.log.segment", "kafka_dump.wire._walk_pure", *OTHER_TWINS)
    loaded = _modules_after(["verify-crc", "--shallow", "fixtures/v1-gzip.log"], names)
    assert loaded == ["kafka_dump.wire._walk_pure"]


@pytest.mark.parametrize("fmt", ["json", "kafka"])
def test_a_dump_without_the_table_loads_no_rich(fmt: str) -> None:
    """Rich draws the table format (and the progress bar and closing summary, on a terminal) only."""
    assert _modules_after(["dump", "--format", fmt, "fixtures/v1-gzip.log"], ("rich",)) == []
    assert _modules_after(["dump", "fixtures/v1-gzip.log"], ("rich",)) == ["rich"]  # the table does


def test_stats_loads_rich_only_for_colour() -> None:
    """``stats --format json`` is for scripts, and the tables without colour are only characters
    (``render/stats.py``'s ``stats_text``, ``render/compare.py``'s ``compare_text``): Rich comes in
    for colour."""
    assert _modules_after(["stats", "--format", "json", "fixtures/v1-gzip.log"], ("rich",)) == []
    assert _modules_after(["stats", "fixtures/v1-gzip.log"], ("rich",)) == []
    assert _modules_after(["stats", "--color", "always", "fixtures/v1-gzip.log"], ("rich",)) == ["rich"]
    assert _modules_after(["stats", "--compare", "fixtures/v1-gzip.log"], ("rich",)) == []
    assert _modules_after(["stats", "--compare", "--color", "always", "fixtures/v1-gzip.log"], ("rich",)) == [
        "rich"
    ]


def test_a_listing_loads_only_what_it_shows() -> None:
    """``kdump ls`` as a table without colour is characters alone: no Rich, no json (JSON Lines only),
    no base64 module (payloads are not shown; base64 is binascii's where they are)."""
    names = ("rich", "json", "base64")
    assert _modules_after(["ls", "fixtures/v2-none.log"], names) == []
    assert _modules_after(["ls", "--format", "plain", "fixtures/v2-none.log"], names) == []
    assert _modules_after(["ls", "--format", "json", "fixtures/v2-none.log"], names) == ["json"]
