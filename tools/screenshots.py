"""Regenerate the README's captures: kdump's output at 100 columns, as text, from the bundled fixtures.

    python tools/screenshots.py            # rewrite the captures in README.md
    python tools/screenshots.py --check    # exit 1 when a capture is not what kdump prints today

Each capture sits between ``<!-- capture: NAME -->`` and ``<!-- /capture -->`` in README.md. The
commands run in a temporary directory holding a small log dir made of fixtures, ``data/``: a healthy
partition ``events-0`` and a partition ``orders-0`` one of whose segments has a byte flipped (in the
copy; the fixtures are only read).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
README = ROOT / "README.md"
COLUMNS = 100
DAMAGED_AT = 200  # a byte inside the last batch (offsets 15..16) of orders-0's second segment

# name: (the command line shown, after "kdump"; the line an excerpt starts at, after "...", or None)
CAPTURES = {
    "table": ("events-0/00000000000000000000.log", None),
    "expanded": ("dump -x --limit 2 events-0/00000000000000000000.log", None),
    "verify": ("verify-crc data/", None),
    "ls": ("ls data/", None),
    "stats": ("stats old-0/00000000000000000000.log", None),
    "compare": ("stats --compare --no-charts old-0/00000000000000000000.log", "Size in every format"),
    "convert": ("convert old-0/00000000000000000000.log -o new.log", None),
}
_BLOCK = re.compile(r"(<!-- capture: (\S+) -->\n)(.*?)(<!-- /capture -->)", re.S)


def make_data(top: Path) -> None:
    """``data/``: ``events-0`` (a v2 segment with headers), ``orders-0`` (two transactional segments
    with their indexes, one damaged); ``old-0`` (a v1 uncompressed segment) beside it."""
    data = top / "data"
    (data / "events-0").mkdir(parents=True)
    shutil.copy(FIXTURES / "v2-headers.log", data / "events-0" / "00000000000000000000.log")
    shutil.copytree(FIXTURES / "txn-aborted", data / "orders-0", ignore=shutil.ignore_patterns("*.py"))
    damaged = data / "orders-0" / "00000000000000000013.log"
    raw = bytearray(damaged.read_bytes())
    raw[DAMAGED_AT] ^= 0xFF
    damaged.write_bytes(bytes(raw))
    (top / "old-0").mkdir()
    shutil.copy(FIXTURES / "v1-none.log", top / "old-0" / "00000000000000000000.log")
    os.symlink("data/events-0", top / "events-0")


def capture(command: str, start: str | None, top: Path) -> str:
    """``$ kdump COMMAND`` and what it prints (stdout, then stderr), at ``COLUMNS`` without colour;
    from the line that starts with ``start`` on, if given."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "KDUMP_PURE")}
    env.update(COLUMNS=str(COLUMNS), NO_COLOR="1", PYTHONPATH=str(ROOT), TERM="dumb")
    run = subprocess.run(
        [sys.executable, "-m", "kafka_dump", *command.split()],
        cwd=top,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = f"{run.stdout}{run.stderr}".rstrip("\n").split("\n")
    if start is not None:
        lines = ["...", *lines[next(i for i, line in enumerate(lines) if line.startswith(start)) :]]
    return "".join(f"{line}\n" for line in [f"$ kdump {command}", *lines])


def captures() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        make_data(top)
        return {name: capture(command, start, top) for name, (command, start) in CAPTURES.items()}


def rewritten(readme: str, shots: dict[str, str]) -> str:
    def block(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in shots:
            raise SystemExit(f"README.md: no capture named {name!r}")
        return f"{match.group(1)}```text\n{shots[name]}```\n{match.group(4)}"

    return _BLOCK.sub(block, readme)


def main(argv: list[str]) -> int:
    readme = README.read_text(encoding="utf-8")
    new = rewritten(readme, captures())
    if argv[1:] == ["--check"]:
        if new != readme:
            print("README.md: captures differ from kdump's output; run python tools/screenshots.py")
            return 1
        return 0
    if new != readme:
        tmp = README.with_name(README.name + ".tmp")
        tmp.write_text(new, encoding="utf-8")
        tmp.replace(README)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
