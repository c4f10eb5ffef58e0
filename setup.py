"""Builds kdump's optional compiled twins: one C extension module each, one line each below.

Everything else is in pyproject.toml. Without a working C compiler the build prints one line and
kdump installs with its pure-Python twins, which give the same results, only slower.
KDUMP_REQUIRE_COMPILED=1 makes a failed build an error instead (CI sets it).
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """Build the extension if possible; never fail the install for want of a compiler."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 (any build failure means: install the pure twin)
            self._notice(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            self._notice(exc)

    @staticmethod
    def _notice(exc: Exception) -> None:
        if os.environ.get("KDUMP_REQUIRE_COMPILED") == "1":
            raise exc
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"kdump: a compiled twin was not built ({first}); using the pure-Python one", file=sys.stderr)


_WARNINGS = ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
_SHARED = ["kafka_dump/native/_layout.h", "kafka_dump/native/_model.h", "kafka_dump/native/_wire.h"]


def compiled_twin(name: str, source: str, libraries: list[str] | None = None) -> Extension:
    """One optional extension module: its C file, built against the shared headers in format/."""
    return Extension(
        name,
        sources=[source],
        depends=_SHARED,
        include_dirs=["kafka_dump/native"],
        extra_compile_args=_WARNINGS,
        libraries=libraries or [],
    )


setup(
    ext_modules=[
        compiled_twin("kafka_dump.native._speedups", "kafka_dump/native/_speedups.c"),
        compiled_twin("kafka_dump.native._walk", "kafka_dump/native/_walk.c"),
        compiled_twin("kafka_dump.native._jsonfast", "kafka_dump/native/_jsonfast.c"),
        compiled_twin("kafka_dump.native._encoder", "kafka_dump/native/_encoder.c"),
        compiled_twin("kafka_dump.native._gather", "kafka_dump/native/_gather.c"),
        compiled_twin("kafka_dump.native._recheck", "kafka_dump/native/_recheck.c"),
        # zlib: the gzip wrappers convert's fast path (and deep verify) inflates.
        compiled_twin("kafka_dump.native._transcode", "kafka_dump/native/_transcode.c", ["z"]),
        # zlib and POSIX threads: gzip inflated ahead, on a thread that never takes the GIL.
        compiled_twin("kafka_dump.native._ahead", "kafka_dump/native/_ahead.c", ["z"]),
        compiled_twin("kafka_dump.native._tablefast", "kafka_dump/native/_tablefast.c"),
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
