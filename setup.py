"""Builds kdump's optional compiled extension module, ``kafka_dump.native._native``, from every C file.

Everything else is in pyproject.toml. Without a working C compiler the build prints one line and
kdump installs with its pure-Python functions, which give the same results, only slower.
KDUMP_REQUIRE_COMPILED=1 makes a failed build an error instead (CI sets it).
"""

from __future__ import annotations

import glob
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """Build the extension if possible; never fail the install for want of a compiler."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 (any build failure means: install the pure functions)
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
        print(f"kdump: the compiled module was not built ({first}); using the pure-Python functions", file=sys.stderr)


_WARNINGS = ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
_NATIVE = "kafka_dump/native/"

setup(
    ext_modules=[
        Extension(
            "kafka_dump.native._native",
            sources=sorted(glob.glob(f"{_NATIVE}*.c")),
            depends=sorted(glob.glob(f"{_NATIVE}*.h")),
            include_dirs=[_NATIVE],
            extra_compile_args=[*_WARNINGS, "-fvisibility=hidden"],  # only PyInit__native is exported
            # zlib: gzip inflated by convert's fast path and the inflate-ahead engine; POSIX threads: the
            # engine's, which never takes the GIL.
            libraries=["z", "pthread"],
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
