"""The documentation site (``docs/``, ``mkdocs.yml``) against the code: one page per command whose
options are generated from Click's own definitions (mkdocs-click, as ``mkdocs build`` runs it), every
page in the navigation, every ``--help`` ending with its page's address, nothing the old README said
lost (its headings, frozen in ``tests/data/readme-headings.txt``), and a README that fits on a few
screens."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kafka_dump.cli import DOCS, main
from tests.conftest import ROOT

DOCS_DIR = ROOT / "docs"
DIRECTIVE = re.compile(r"^::: mkdocs-click\n((?:    :\w+: .*\n)+)", re.M)
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][\w-]*)")


def _heading_texts(text: str) -> list[str]:
    """A Markdown text's headings, outside fenced blocks, without their ``#``s."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#+ (.+)", line)):
            found.append(m.group(1).strip())
    return found


def _directives(page: Path) -> list[dict[str, str]]:
    return [
        dict(re.findall(r":(\w+): (.*)", block))
        for block in DIRECTIVE.findall(page.read_text(encoding="utf-8"))
    ]


def rendered_options(options: dict[str, str]) -> set[str]:
    """The option names in what mkdocs-click writes for a directive: the **Options:** block."""
    from mkdocs_click._extension import replace_command_docs

    text = "\n".join(replace_command_docs(**options))
    block = text.split("**Options:**", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    names: set[str] = set()
    for line in block.splitlines():
        if re.match(r"  -", line):  # an option's own line: "  -j, --jobs INTEGER RANGE  help..."
            spec = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
            names.update(OPTION.findall(spec))
    return names


HELP = {"-h", "--help"}  # the help option: -h too once the group has built it (Click caches it)


def click_options(command: click.Command) -> set[str]:
    """Every option name the command defines and shows, the help option aside (mkdocs-click builds
    it from a context of its own, and ``Command.get_params`` would cache one)."""
    names = set()
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            names.update(param.opts + param.secondary_opts)
    return names


def mismatch(options: dict[str, str], command: click.Command) -> tuple[set[str], set[str]]:
    """(options the page lacks, options the page has that the command does not)."""
    page, defined = rendered_options(options), click_options(command)
    assert "--help" in page
    return defined - page, page - defined - HELP


def _command_pages() -> dict[str, dict[str, str]]:
    pages = {}
    for page in sorted((DOCS_DIR / "commands").glob("*.md")):
        for d in _directives(page):
            pages[page.stem] = d
    return pages


def test_each_command_has_a_page_whose_options_are_exactly_clicks() -> None:
    pages = _command_pages()
    assert set(pages) == {*main.commands, "index"}
    for name in main.commands:
        command = main.commands[name]
        directive = pages[name]
        assert directive["prog_name"] == f"kdump {name}"
        from mkdocs_click._loader import load_command

        assert load_command(directive["module"], directive["command"]) is command, name
        assert mismatch(directive, command) == (set(), set()), name
    assert pages["index"]["command"] == "main"


def test_an_option_added_to_a_command_is_caught() -> None:
    pytest.importorskip("mkdocs_click")
    command = copy.copy(main.commands["ls"])
    command.params = [*command.params, click.Option(["--brand-new"], help="Not on the page.")]
    assert mismatch(_command_pages()["ls"], command) == ({"--brand-new"}, set())
    shorter = copy.copy(main.commands["ls"])
    shorter.params = [p for p in shorter.params if p.name != "deep"]
    assert mismatch(_command_pages()["ls"], shorter) == (set(), {"--deep"})


def test_every_page_is_in_the_navigation_and_the_site_address_is_one() -> None:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = set(re.findall(r":\s+([\w/.-]+\.md)\s*$", text, re.M))
    pages = {str(p.relative_to(DOCS_DIR)) for p in DOCS_DIR.rglob("*.md")}
    assert nav == pages
    assert re.search(r"^site_url: (\S+)$", text, re.M)[1] == DOCS  # type: ignore[index]


def test_every_help_ends_with_its_page() -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["--help"]).output.rstrip().endswith(f"Docs: {DOCS}")
    for name in main.commands:
        out = runner.invoke(main, [name, "--help"]).output.rstrip()
        assert out.splitlines()[-1].strip() == f"Docs: {DOCS}commands/{name}/", name
        assert (DOCS_DIR / "commands" / f"{name}.md").is_file()


def test_nothing_the_old_readme_said_is_lost() -> None:
    old = (ROOT / "tests" / "data" / "readme-headings.txt").read_text(encoding="utf-8").splitlines()
    found = {h for page in DOCS_DIR.rglob("*.md") for h in _heading_texts(page.read_text(encoding="utf-8"))}
    assert [h for h in old if h not in found] == []


def test_the_readme_fits_on_a_few_screens_and_shows_each_task() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.split()) <= 2000
    headings = _heading_texts(readme)
    assert headings[:3] == ["kdump", "Set-up", "Install"]  # the two set-up commands first
    setup = readme[readme.index("## Set-up") : readme.index("## Install")]
    assert "pip install . && kdump fixtures/v2-headers.log" in setup
    assert "pip install -e '.[test]' && python -m pytest" in setup
    quick = readme[readme.index("## Quick start") : readme.index("## Documentation")]
    tasks = re.split(r"\n\*\*", quick)[1:]
    assert len(tasks) >= 10
    for task in tasks:
        assert "<!-- capture" in task, task.split("**", 1)[0]
    for link in re.findall(r"\]\(((?:docs/)[^)#]+)", readme):  # the site's pages, readable on GitHub too
        assert (ROOT / link).exists(), link
