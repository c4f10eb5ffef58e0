"""Architecture and documentation checks (DESIGN.md, "Layers and the direction of imports"; "Testing habits" 5).

* Imports flow one way: cli -> render/analysis -> log/internal_topics -> wire/native -> model/errors. The pure
  layers (``wire/``, ``native/``, ``model.py``, ``errors.py``) import neither click nor rich, checked twice: from
  the source (``ast``, every import statement, also those inside functions) and from a fresh
  interpreter's ``sys.modules`` after importing the decoder modules.
* Every command and every option of every command is explained in the prose of its page on the site
  (``docs/commands/NAME.md``; the options' list below that prose is generated from Click at build time).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from kafka_dump.cli import main
from tests.conftest import ROOT

PACKAGE = ROOT / "kafka_dump"
COMMAND_PAGES = ROOT / "docs" / "commands"
UI_LIBRARIES = {"click", "rich"}
CODEC_LIBRARIES = {"crc32c", "lz4", "snappy", "zstandard", "cramjam"}

# Lower layers may not import higher ones. Equal ranks may import each other (format's modules do).
RANKS = {
    "kafka_dump": 0,
    "kafka_dump.errors": 0,
    "kafka_dump.model": 0,
    "kafka_dump.native": 1,
    "kafka_dump.wire": 1,
    "kafka_dump.log": 2,
    "kafka_dump.internal_topics": 2,
    "kafka_dump.analysis": 3,
    "kafka_dump.render": 3,
    "kafka_dump.commands": 4,
    "kafka_dump.cli": 4,
    "kafka_dump.__main__": 5,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def rank(module: str) -> int:
    while module not in RANKS:
        module = module.rpartition(".")[0]
        if not module:
            raise KeyError(module)
    return RANKS[module]


def imported_modules(path: Path) -> set[str]:
    """Every module an import statement in ``path`` names, absolute, anywhere in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base)
                mod = f"{prefix}.{node.module}" if node.module else prefix
            else:
                mod = node.module or ""
            found.add(mod)
            # ``from kafka_dump import format`` imports the submodule kafka_dump.wire.
            found.update(
                f"{mod}.{alias.name}" for alias in node.names if f"{mod}.{alias.name}" in _ALL_MODULES
            )
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))
_ALL_MODULES = {module_name(p) for p in SOURCES}
PURE = [p for p in SOURCES if rank(module_name(p)) <= 1]


def test_the_pure_layers_exist() -> None:
    names = {module_name(p) for p in PURE}
    assert {
        "kafka_dump.errors",
        "kafka_dump.model",
        "kafka_dump.wire.v2",
        "kafka_dump.wire.legacy",
    } <= names


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_pure_layers_import_no_ui_library(path: Path) -> None:
    tops = {m.partition(".")[0] for m in imported_modules(path)}
    assert not tops & UI_LIBRARIES, f"{path.name} imports {sorted(tops & UI_LIBRARIES)}"


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_pure_layers_use_stdlib_and_codecs_only(path: Path) -> None:
    tops = {m.partition(".")[0] for m in imported_modules(path)}
    others = tops - set(sys.stdlib_module_names) - CODEC_LIBRARIES - {"kafka_dump", "__future__"}
    assert not others, f"{path.name} imports {sorted(others)}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_flow_one_way(path: Path) -> None:
    own = rank(module_name(path))
    upward = sorted(
        m
        for m in imported_modules(path)
        if m.startswith("kafka_dump") and m in _ALL_MODULES and rank(m) > own
    )
    assert not upward, f"{module_name(path)} (layer {own}) imports higher layers: {upward}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_click_only_in_cli(path: Path) -> None:
    if module_name(path) in ("kafka_dump.cli", "kafka_dump.__main__") or module_name(path).startswith(
        "kafka_dump.commands"
    ):
        return
    assert "click" not in {m.partition(".")[0] for m in imported_modules(path)}


def test_import_checker_sees_what_it_should() -> None:
    """Guard against a checker that finds nothing: cli.py imports click (and, inside its error edge,
    commands.options), and render/output.py rich."""
    cli = imported_modules(PACKAGE / "cli.py")
    assert "click" in cli and "kafka_dump.commands.options" in cli
    assert any(m.startswith("rich") for m in imported_modules(PACKAGE / "render" / "output.py"))
    assert "kafka_dump.wire.layout" in imported_modules(PACKAGE / "log" / "segment.py")


def test_decoder_modules_load_no_ui_library() -> None:
    code = (
        "import json, sys\n"
        "import kafka_dump.errors, kafka_dump.model, kafka_dump.wire, kafka_dump.wire.v2,"
        " kafka_dump.wire.legacy, kafka_dump.wire.codecs, kafka_dump.wire.varint,"
        " kafka_dump.wire.checksum, kafka_dump.log.segment, kafka_dump.log.index, kafka_dump.analysis.dump\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('click', 'rich'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


# --- the command pages' prose -------------------------------------------------------------------


def _mentioned(word: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def _section(command: str) -> str:
    """The written text of the command's page, without the block mkdocs-click fills in at build time."""
    page = COMMAND_PAGES / f"{command}.md"
    assert page.is_file(), f"docs/commands/{command}.md is missing"
    return page.read_text(encoding="utf-8").split("::: mkdocs-click", 1)[0]


def _options(cmd: click.Command) -> list[str]:
    """Every option string of ``cmd``, and its help option names as Click would build them.

    ``Command.get_params`` is avoided on purpose: Click caches the help option it builds, so calling it
    with a hand-made context would change the real ``-h`` of the command for the rest of the session.
    """
    names = []
    for param in cmd.params:
        if isinstance(param, click.Option):
            names += [*param.opts, *param.secondary_opts]
    if cmd.add_help_option:
        parent = click.Context(main, info_name="kdump", **main.context_settings)
        ctx = parent if cmd is main else click.Context(cmd, parent=parent, info_name=cmd.name)
        names += ctx.help_option_names
    return names


COMMANDS = sorted(main.commands)


def test_group_has_commands() -> None:
    assert "dump" in COMMANDS


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_a_page(command: str) -> None:
    assert _section(command).strip()


@pytest.mark.parametrize(
    ("command", "option"),
    [(c, o) for c in COMMANDS for o in _options(main.commands[c]) if o not in ("--help", "-h")],
)
def test_every_option_is_explained_on_its_page(command: str, option: str) -> None:
    assert _mentioned(option, _section(command)), (
        f"{option} of `kdump {command}` is not explained on its page"
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_every_argument_is_on_its_page(command: str) -> None:
    cmd = main.commands[command]
    for param in cmd.params:
        if isinstance(param, click.Argument):
            shown = param.make_metavar(click.Context(cmd)) if param.metavar is None else param.metavar
            assert shown in _section(command), shown


@pytest.mark.parametrize("option", [o for o in _options(main) if o != "-h"])
def test_every_group_option_is_on_the_commands_page(option: str) -> None:
    assert _mentioned(option, _section("index")), option


@pytest.mark.parametrize("command", COMMANDS)
def test_choices_are_documented(command: str) -> None:
    """Each value of a Choice option (``--format json``, ``--payload hex``) appears in the section."""
    section = _section(command)
    for param in main.commands[command].params:
        if isinstance(param, click.Option) and isinstance(param.type, click.Choice):
            for choice in param.type.choices:
                assert _mentioned(str(choice), section), f"{param.opts[0]} {choice}"
