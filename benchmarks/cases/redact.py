"""Redact: `kdump redact` of a 1M-record v2 lz4 segment against `kdump convert` of the same file (to v2,
each batch keeping its codec): issue 37 wants redact at least as fast as convert. Both write a new
segment through a temporary file, fsynced and renamed; redact also computes a pseudonym (HMAC-SHA256)
for every key, value and header value, and compresses every batch again.
"""

from __future__ import annotations

from benchmarks import kdump_side
from benchmarks.cases import Context
from benchmarks.harness import Contender, Ratio, Table, Target, measure

NAME = "redact"
ABOUT = "kdump redact of a v2 lz4 segment vs kdump convert of the same file"
FILES = ("v2-lz4",)

REDACT = "kdump redact --secret-file S"
CONVERT = "kdump convert (v2, codecs kept)"


def run(ctx: Context) -> list[Table] | str:
    why = kdump_side.missing("redact", "--secret-file")
    if why is not None and not ctx.skip_kdump:
        return why
    tables = []
    for name in ctx.files(FILES):
        info = ctx.segment(name)
        work = ctx.scratch() / f"redact-{name}"
        work.mkdir(exist_ok=True)
        secret = work / "secret"
        secret.write_text("benchmark secret\n")
        out_dir = work / "out"
        out_dir.mkdir(exist_ok=True)
        out = str(out_dir / "00000000000000000000.log")
        redact = [*kdump_side.command(), "redact", "--secret-file", str(secret), info.path, "-o", out]
        convert = [*kdump_side.command(), "convert", info.path, "-o", out, "--no-index"]
        contenders = [
            Contender(REDACT, "kdump", argv=redact, cleanup=ctx.wipe(out_dir)),
            Contender(CONVERT, "kdump", argv=convert, cleanup=ctx.wipe(out_dir)),
        ]
        ratios = [Ratio(REDACT, CONVERT, at_most=1.0, source="issue 37: at least as fast as convert")]
        targets = [Target(REDACT, max_rss_mib=200, source="streaming")]
        tables.append(measure(ctx.table(NAME, name), ctx.keep(contenders), ctx.repeat, ratios, targets))
    return tables
