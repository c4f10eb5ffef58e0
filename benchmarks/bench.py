#!/usr/bin/env python3
"""Benchmark kdump against kafka-python and aiokafka on large generated segments.

    python benchmarks/bench.py --help

The pieces: `gen` (segment files, generated once and cached), `harness` (round-robin timing, medians,
peak RSS of each child, declared ratios), `peers` (kafka-python and aiokafka adapters), `kdump_side`
(what kdump offers yet), `child` (peers and baselines as whole processes), `cases/` (one module per
case) and `report`. The kdump measured is this checkout's: its root goes first on ``sys.path`` and on
the children's ``PYTHONPATH``. ``--old CHECKOUT`` times every kdump line of a second checkout too, in
the same rounds, with its root first on ``PYTHONPATH`` instead.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
os.environ["PYTHONSAFEPATH"] = "1"  # `python -m` and `-c` children: the working directory never shadows it

from benchmarks import gen, harness, kdump_side, peers, report  # noqa: E402
from benchmarks.cases import Context, registry  # noqa: E402
from benchmarks.harness import Table, log  # noqa: E402


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cases = registry()
    p = argparse.ArgumentParser(
        description="Time kdump against kafka-python and aiokafka on generated Kafka log segments.",
    )
    p.add_argument(
        "--cache", type=Path, default=gen.DEFAULT_CACHE, help="generated segments (default: %(default)s)"
    )
    p.add_argument("--records", type=int, default=1_000_000, help="records per file (default: %(default)s)")
    p.add_argument(
        "--repeat", type=int, default=5, help="runs per measurement, median reported (default: %(default)s)"
    )
    p.add_argument("--seed", type=int, default=gen.DEFAULT_SEED, help="generator seed (default: %(default)s)")
    p.add_argument(
        "--big", action="store_true", help="add the ~100 MB and ~1 GiB v2 lz4 files where a case takes them"
    )
    p.add_argument("--only", metavar="FILE[,FILE]", help=f"only these files, of: {', '.join(gen.SPECS)}")
    p.add_argument("--cases", metavar="CASE[,CASE]", help=f"only these cases, of: {', '.join(cases)}")
    p.add_argument(
        "--timeout",
        type=float,
        default=1800,
        help="seconds a process run may take before it is killed and marked failed (default: %(default)s)",
    )
    p.add_argument("--skip-peers", action="store_true", help="do not time kafka-python and aiokafka")
    p.add_argument("--skip-kdump", action="store_true", help="do not time kdump")
    p.add_argument(
        "--skip-compare", action="store_true", help="stats: leave out `stats --compare` (minutes a file)"
    )
    p.add_argument("--generate-only", action="store_true", help="make sure the files exist, then stop")
    p.add_argument("--json", type=Path, metavar="OUT", help="also write every raw figure to this JSON file")
    p.add_argument(
        "--old",
        "--baseline",
        type=Path,
        metavar="CHECKOUT",
        help="also time every kdump line with this checkout's kafka_dump, in the same rounds, and give new / old",
    )
    args = p.parse_args(argv)
    if args.old is not None and not (args.old / "kafka_dump" / "__init__.py").is_file():
        p.error(f"--old {args.old}: no kafka_dump/ in it")
    if args.records < 1 or args.repeat < 1 or args.timeout <= 0:
        p.error("--records and --repeat must be at least 1, --timeout above 0")
    args.files = None
    if args.only:
        args.files = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in args.files if n not in gen.SPECS]
        if unknown:
            p.error(f"unknown file(s) {', '.join(unknown)}; known: {', '.join(gen.SPECS)}")
    args.case_names = list(cases)
    if args.cases:
        args.case_names = [n.strip() for n in args.cases.split(",") if n.strip()]
        unknown = [n for n in args.case_names if n not in cases]
        if unknown:
            p.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(cases)}")
    return args


def files_of(ctx: Context, case: ModuleType) -> list[str]:
    """The files a case will use: those it measures (narrowed by --only), and its workload's source."""
    measured = ctx.files(getattr(case, "FILES", ()), getattr(case, "BIG", ()))
    source = getattr(case, "SOURCE", None)
    return [*measured, source] if source else measured


def old_env(checkout: Path) -> dict[str, str]:
    """The children's environment for the old checkout: its root first on PYTHONPATH, after a
    directory holding only this checkout's `benchmarks` (so `python -m benchmarks.child` still runs
    this harness, with the old kafka_dump)."""
    shim = Path(tempfile.mkdtemp(prefix="kdump-bench-old-"))
    atexit.register(shutil.rmtree, shim, ignore_errors=True)
    (shim / "benchmarks").symlink_to(ROOT / "benchmarks", target_is_directory=True)
    rest = os.environ.get("PYTHONPATH", "").split(os.pathsep)[1:]  # what was there before ROOT
    path = os.pathsep.join([str(shim), str(checkout.resolve()), *rest])
    return {**os.environ, "PYTHONPATH": path}


def commit_of(checkout: Path) -> str:
    """The checkout's commit, and whether its files differ from it (the figures' provenance)."""
    import subprocess

    def git(*args: str) -> str:
        run = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True, check=False)
        return run.stdout.strip() if run.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD") or "not a git checkout"
    return f"{head} + uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else head


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        importlib.import_module("kafka.record.default_records")
    except Exception as e:
        log(f"kafka-python is needed to generate the segments: {e}\n  pip install -e '.[bench]'")
        return 2
    harness.TIMEOUT_S = args.timeout
    ctx = Context(
        args.cache,
        args.records,
        args.repeat,
        args.seed,
        args.files,
        args.big,
        args.skip_peers,
        args.skip_kdump,
        args.skip_compare,
        old_env(args.old) if args.old is not None and not args.skip_kdump else None,
    )
    cases = {name: registry()[name] for name in args.case_names}
    if args.generate_only:
        for name in dict.fromkeys(n for case in cases.values() for n in files_of(ctx, case)):
            info = ctx.segment(name)
            print(f"{info.name}: {info.path} ({info.bytes:,} bytes, {info.records:,} records)")
        return 0

    kdump_side.precompile()
    old = {}
    if ctx.old_env is not None and args.old is not None:
        kdump_side.precompile(ctx.old_env)
        old = {
            "old kdump (--old), lines marked [old]": kdump_side.under_test(ctx.old_env),
            "old commit": commit_of(args.old),
        }
    env = report.environment(
        {
            "kdump under test": kdump_side.under_test(),
            "commit": commit_of(ROOT),
            **old,
            "kdump command": " ".join(kdump_side.command()),
            "kafka-python": peers.kafka_python()[1],
            "aiokafka": peers.aiokafka()[1],
        }
    )
    skipped = ["peers: skipped (--skip-peers)"] * args.skip_peers + [
        "kdump: skipped (--skip-kdump)"
    ] * args.skip_kdump
    report.print_header(env, args.repeat, skipped)
    results: dict[str, list[Table] | str] = {}
    for name, case in cases.items():
        if getattr(case, "FILES", ()) and not ctx.files(case.FILES, getattr(case, "BIG", ())):
            results[name] = f"none of its files ({', '.join(case.FILES)}) is in --only"
        else:
            log(f"case {name}: {case.ABOUT}")
            results[name] = case.run(ctx)
        outcome = results[name]
        if isinstance(outcome, str):
            print(f"\n== {name}: skipped, {outcome}")
        else:
            for table in outcome:
                report.print_table(table)
    tables = [t for r in results.values() if not isinstance(r, str) for t in r]
    report.print_summary(tables)
    report.print_old(tables)
    if args.json:
        meta = {
            "environment": env,
            "settings": {
                "records": args.records,
                "repeat": args.repeat,
                "seed": args.seed,
                "gen_version": gen.GEN_VERSION,
            },
            "skipped": skipped,
        }
        report.write_json(args.json, meta, results)
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
