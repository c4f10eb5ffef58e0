"""The benchmark must not rot: `benchmarks/bench.py` runs every case end to end on 2,000 records, once.

No figure is checked (timings have no place in tests): only that each case either measures every
line it declares, with no failure, or skips itself with one line saying why, and that the JSON report
holds it all. A kdump command that lands but fails on the benchmark's clean files fails this test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES = {
    "jbod",
    "tiered",
    "decode",
    "dump-formats",
    "startup",
    "verify",
    "stats",
    "encode",
    "convert",
    "many-segments",
    "search",
    "ls",
    "diff",
    "state",
    "redact",
}
ON_MAIN = {"decode", "dump-formats", "startup", "search"}  # their kdump pieces exist: they must not skip

pytest.importorskip("kafka.record.default_records", reason="kafka-python writes the benchmark's segments")


@pytest.fixture(scope="module")
def bench(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("bench")
    out = tmp / "bench.json"
    argv = [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--records", "2000", "--repeat", "1"]
    argv += ["--only", "v1-gzip", "--cache", str(tmp / "cache"), "--json", str(out)]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    return run, json.loads(out.read_text())


def test_every_case_is_reported(bench: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    run, report = bench
    assert set(report["cases"]) == CASES
    assert report["settings"]["records"] == 2000
    for name, result in report["cases"].items():
        assert f"== {name}" in run.stdout
        if "skipped" in result:
            assert name not in ON_MAIN, result["skipped"]
            assert result["skipped"].strip() and "\n" not in result["skipped"]
            assert f"== {name}: skipped, {result['skipped']}" in run.stdout


def test_every_line_measured(bench: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    _, report = bench
    for name, result in report["cases"].items():
        for table in result.get("tables", []):
            assert table["lines"], (name, table["title"])
            for line in table["lines"]:
                assert line["note"] is None, (name, line["label"], line["note"])
                assert len(line["times_s"]) == 1 and line["median_s"] == line["times_s"][0]
                if line["how"] == "process":
                    assert line["peak_rss_kib"] > 0, (name, line["label"])
            for check in table["checks"]:
                assert check["value"] is not None, (name, check["text"])
                assert (check["met"] is None) == (check["target"] == "no target"), (name, check)


def test_ratios_come_from_declared_baselines(
    bench: tuple[subprocess.CompletedProcess[str], dict[str, Any]],
) -> None:
    _, report = bench
    decode = report["cases"]["decode"]["tables"]
    assert [t["file"] for t in decode] == ["v1-gzip"]
    labels = {line["label"] for line in decode[0]["lines"]}
    assert {"read file only", "kdump read_segment", "kdump decoder (process)"} <= labels
    startup = report["cases"]["startup"]["tables"][0]
    (check,) = startup["checks"]
    times = {line["label"]: line["median_s"] for line in startup["lines"]}
    assert check["value"] == pytest.approx(times["kdump --version"] / times["python -c pass"])
    (search,) = report["cases"]["search"]["tables"]
    floor = "gzip inflate of every wrapper's payload alone (in-process)"
    assert floor in {line["label"] for line in search["lines"]}
    assert any(c["baseline"] == floor for c in search["checks"]) and "3x target" in " ".join(search["notes"])


def test_old_checkout_side_by_side(tmp_path: Path) -> None:
    """--old with this checkout as its own old one: every kdump line gets an [old] twin and a new/old
    ratio in time and peak RSS; in-process kdump lines run as self-timed children on both sides."""
    out = tmp_path / "bench.json"
    argv = [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--records", "2000", "--repeat", "1"]
    argv += ["--only", "v1-gzip", "--cases", "decode,startup", "--skip-peers", "--old", str(ROOT)]
    argv += ["--cache", str(tmp_path / "cache"), "--json", str(out)]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "== new / old" in run.stdout
    report = json.loads(out.read_text())
    tables = [t for case in report["cases"].values() for t in case["tables"]]
    assert len(tables) == 2
    for table in tables:
        lines = {line["label"]: line for line in table["lines"]}
        kdump = [
            label for label, line in lines.items() if line["side"] == "kdump" and not label.endswith(" [old]")
        ]
        assert kdump
        for label in kdump:
            new, old = lines[label], lines[f"{label} [old]"]
            for line in (new, old):
                assert line["note"] is None and line["median_s"] is not None and line["peak_rss_kib"] > 0
                assert line["how"] != "in-process", label
            checks = {c["old"]: c for c in table["checks"] if c["old"] and c["subject"] == label}
            assert set(checks) == {"time", "peak RSS"}
            assert checks["time"]["value"] == pytest.approx(new["median_s"] / old["median_s"])
            assert checks["time"]["met"] is not None
