"""Every capture of kdump's output in README.md and docs/ is one that ``tools/screenshots.py`` makes
from the bundled fixtures (``--check`` in CI proves each is current); here: the markers' form, what
the generator shows, and that a stale capture is caught."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from tools import screenshots


def _blocks() -> list[tuple[Path, re.Match[str]]]:
    return [
        (p, m) for p in screenshots.pages() for m in screenshots.BLOCK.finditer(p.read_text(encoding="utf-8"))
    ]


def test_every_capture_is_the_command_it_names_at_100_columns() -> None:
    blocks = _blocks()
    assert len(blocks) >= 20
    for path, m in blocks:
        attrs = dict(screenshots.ATTR.findall(m["attrs"]))
        if "svg" in attrs:
            image = path.parent / re.search(r"\]\(([^)]+\.svg)\)", m["body"])[1]  # type: ignore[index]
            assert image.resolve() == screenshots.CAPTURES / f"{attrs['svg']}.svg", path
            assert image.read_text(encoding="utf-8").startswith("<svg"), image
        else:
            assert m["body"].startswith(f"```text\n$ {m['command']}\n"), (path, m["command"])
            rows = [line for line in m["body"].splitlines() if line[:1] in "┏┃┡│├└┌"]
            assert all(cell_len(line) <= 100 for line in rows), (path, m["command"])
    names = [dict(screenshots.ATTR.findall(m["attrs"])).get("svg") for _, m in blocks]
    svgs = [n for n in names if n]
    assert len(svgs) == len(set(svgs))  # one capture a picture
    assert {p.stem for p in screenshots.CAPTURES.glob("*.svg")} == set(svgs)  # none left behind


@pytest.fixture(scope="module")
def top(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("captures")
    screenshots._shim(top)
    screenshots.make_data(top)
    return top


def test_the_generator_shows_each_view_from_the_fixtures(top: Path) -> None:
    table = screenshots.text_capture("kdump events-0/00000000000000000000.log", None, top)
    assert "│      0 │ 2023-11-14T22:13:20.000Z │ key-0  │" in table
    verify = screenshots.text_capture("kdump verify-crc data/", None, top).splitlines()
    assert verify[2].startswith("data/orders-0/00000000000000000013.log: byte 156, offset 15 (104 bytes) ")
    assert verify[-2] == "1 of 4 files damaged · exit 1"
    compare = screenshots.text_capture("kdump stats --compare --no-charts old-0/00000000000000000000.log",
                                       "Size in every format", top)  # fmt: skip
    assert compare.startswith("```text\n$ kdump stats --compare") and "\n...\nSize in every format" in compare
    piped = screenshots.text_capture(
        "cat events-0/00000000000000000000.log | kdump dump --format json - | wc -l", None, top
    )
    assert piped.splitlines()[2] == "2"  # two batches, through sh and the checkout's kdump
    svg = screenshots.svg_capture("kdump verify-crc data/", None, top)
    assert svg.startswith("<svg") and "crc-mismatch" in svg


def test_a_stale_capture_is_rewritten_and_a_bad_marker_refused(top: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# x\n\n<!-- capture: kdump ls data/events-0 -->\n```text\nold\n```\n<!-- /capture -->\n")
    texts, svgs = screenshots.regenerate([page], top)
    assert "old" not in texts[page] and "$ kdump ls data/events-0\nListing data/events-0" in texts[page]
    assert svgs == {}
    again, _ = screenshots.regenerate([page], top)
    page.write_text(texts[page])
    assert screenshots.regenerate([page], top)[0][page] == texts[page] == again[page]  # fixed point
    page.write_text('<!-- capture size="9": kdump ls data/ -->\n<!-- /capture -->\n')
    with pytest.raises(SystemExit):
        screenshots.regenerate([page], top)


def test_the_speed_chart_comes_from_the_benchmarks_results() -> None:
    import json

    results = json.loads(screenshots.SPEED_JSON.read_text(encoding="utf-8"))
    svg = screenshots.chart(results)
    assert svg == screenshots.SPEED_SVG.read_text(encoding="utf-8")
    first = next(iter(results["cases"].values()))["tables"][0]["lines"][0]
    assert first["label"] in svg and f"{first['records_per_s'] / 1e6:.2f}M/s" in svg
