"""``python -m tests.fuzz``: the fuzzing budget, on every core.

    python -m tests.fuzz                   # CI: 20,000 inputs in all, split across the cores
    python -m tests.fuzz --minutes 30      # a longer search
    python -m tests.fuzz --inputs 2000 --cases dump-json,verify-crc

Each worker runs Hypothesis rounds of ``--round`` inputs with its own seeds. Each input goes through
``dump --format json`` and through one more case in turn (every case gets an equal share), so the
budget stays within minutes. A failure is shrunk by Hypothesis, its smallest input saved in
``--crash-dir`` (then to be added to ``fixtures/bad/`` with a test), and the exit code is 1.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path


def _worker(job: tuple[int, int, float, list[str], int, str]) -> tuple[int, list[str]]:
    """Run rounds until ``inputs`` are done or ``deadline`` passes; returns (inputs run, failures)."""
    from hypothesis import HealthCheck, given, seed, settings

    from tests.fuzz.harness import check
    from tests.fuzz.mutate import fuzz_input

    worker, inputs, deadline, cases, per_round, crash_dir = job
    work = Path(tempfile.mkdtemp(prefix=f"kdump-fuzz-{worker}-"))
    extra = [c for c in cases if c != "dump-json"] or ["dump-json"]
    done = 0
    failures: list[str] = []
    round_no = 0
    while done < inputs and time.time() < deadline:
        n = min(per_round, inputs - done)

        @seed(worker * 1_000_003 + round_no)
        @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(fuzz_input())
        def one(inp: tuple[str, bytes]) -> None:
            nonlocal done
            description, data = inp
            done += 1
            which = (
                ["dump-json", extra[done % len(extra)]]
                if "dump-json" in cases
                else [extra[done % len(extra)]]
            )
            found = check(data, work, which)
            if found:
                name = hashlib.sha1(data).hexdigest()[:12]
                Path(crash_dir, f"crash-{name}.log").write_bytes(data)
                raise AssertionError(f"{description} (saved as crash-{name}.log): {found}")

        try:
            one()
        except AssertionError as exc:
            failures.append(str(exc).splitlines()[0][:2000])
        round_no += 1
    return done, failures


def main() -> int:
    from tests.fuzz.harness import available_cases

    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", type=int, default=20_000, help="inputs in all (default 20,000)")
    ap.add_argument("--minutes", type=float, help="run until this many minutes have passed instead")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cases", help="comma-separated cases (default: every available one)")
    ap.add_argument("--round", type=int, default=500, help="inputs per Hypothesis round")
    ap.add_argument("--crash-dir", default=".", help="where a failing input is saved")
    args = ap.parse_args()

    cases = args.cases.split(",") if args.cases else available_cases()
    inputs = 10**12 if args.minutes else args.inputs
    deadline = time.time() + (args.minutes * 60 if args.minutes else 10**9)
    per_worker = [inputs // args.workers + (i < inputs % args.workers) for i in range(args.workers)]
    jobs = [(i, n, deadline, cases, args.round, args.crash_dir) for i, n in enumerate(per_worker)]
    start = time.time()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(args.workers) as pool:
        results = pool.map(_worker, jobs)
    total = sum(n for n, _ in results)
    failures = [f for _, fs in results for f in fs]
    took = time.time() - start
    print(f"fuzz: {total} inputs through {', '.join(cases)} in {took:.0f} s on {args.workers} workers")
    for f in failures:
        print(f"fuzz: FAILED {f}", file=sys.stderr)
    print(f"{total - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
