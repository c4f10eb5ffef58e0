"""Shared test paths: the project root, its fixtures, and ../shared (optional)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SHARED_REAL = ROOT.parent / "shared" / "fixtures-real"


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from the project root, so that paths in outputs are the short relative ones."""
    monkeypatch.chdir(ROOT)
    return ROOT


def reference_module(module: ModuleType) -> ModuleType:
    """``module`` with each name it binds (``kafka_dump.native.bind``) holding its pure function: the
    reference twin, whichever function the module itself holds."""
    from kafka_dump.native import REFERENCES

    ref = ModuleType(f"{module.__name__}.reference")
    ref.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    for name, fn in REFERENCES.items():
        if fn.__module__ == module.__name__:
            setattr(ref, name, fn)
    return ref
