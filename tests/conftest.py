"""Shared test paths: the project root, its fixtures, and ../shared (optional)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SHARED_REAL = ROOT.parent / "shared" / "fixtures-real"


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from the project root, so that paths in outputs are the short relative ones."""
    monkeypatch.chdir(ROOT)
    return ROOT
