"""Builds the optional compiled twins: the decoder's hot loops (_speedups.c) and the encoder's (_encoder.c).

Everything else is in pyproject.toml. Without a working C compiler the build prints one line and
kdump installs with its pure-Python decoder, which gives the same results, only slower.
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
        print(f"kdump: compiled decoder not built ({first}); using the pure-Python decoder", file=sys.stderr)


setup(
    ext_modules=[
        Extension(
            "kafka_dump.format._speedups",
            sources=["kafka_dump/format/_speedups.c"],
            depends=["kafka_dump/format/_layout.h"],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"],
        ),
        Extension("kafka_dump.format._walk", sources=["kafka_dump/format/_walk.c"], extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"]),
        Extension("kafka_dump.format._recheck", sources=["kafka_dump/format/_recheck.c"], extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"]),
        Extension(
            "kafka_dump.format._encoder",
            sources=["kafka_dump/format/_encoder.c"],
            depends=["kafka_dump/format/_layout.h"],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"],
        ),
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
