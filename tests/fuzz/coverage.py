"""``python -m tests.fuzz.coverage``: coverage-guided fuzzing with atheris (libFuzzer), where it installs.

    pip install atheris
    KDUMP_PURE=1 python -m tests.fuzz.coverage --minutes 10

libFuzzer mutates the bytes of every fixture, keeping the inputs that reach new lines of
``kafka_dump`` (instrumented as it is imported; the compiled twins are not, hence ``KDUMP_PURE=1``,
whose decoders are the reference). Each input goes through ``dump --format json`` and one more case in
turn, and the same promise is checked as by ``python -m tests.fuzz``. A broken promise stops the run
and libFuzzer saves the input as ``crash-<sha1>`` in the current directory: make it a fixture of
``fixtures/bad/`` with a test. Optional: atheris is not a test dependency, and CI does not run this.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path


def main() -> None:
    try:
        import atheris
    except ImportError:
        sys.exit("python -m tests.fuzz.coverage needs atheris: pip install atheris")
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz.coverage", description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--cases", help="comma-separated cases (default: every available one)")
    args, rest = ap.parse_known_args()

    with atheris.instrument_imports(include=["kafka_dump"]):
        import kafka_dump.cli  # noqa: F401  (instrumented here, before the harness imports it)
    from tests.fuzz.harness import available_cases, check, work_dir
    from tests.fuzz.mutate import seeds

    cases = args.cases.split(",") if args.cases else available_cases()
    extra = [c for c in cases if c != "dump-json"] or ["dump-json"]
    corpus = Path(tempfile.mkdtemp(prefix="kdump-atheris-corpus-"))
    for name, data in seeds():
        (corpus / name).write_bytes(data)
    work = work_dir("kdump-atheris-")
    runs = 0

    def one(data: bytes) -> None:
        nonlocal runs
        runs += 1
        found = check(data, work, ["dump-json", extra[runs % len(extra)]])
        if found:
            raise AssertionError("; ".join(found))

    limits = [f"-max_total_time={int(args.minutes * 60)}", "-max_len=65536", "-timeout=60"]
    atheris.Setup([sys.argv[0], *limits, *rest, str(corpus)], one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
