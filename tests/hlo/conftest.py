"""Fixtures of the reader's tests."""

from __future__ import annotations

import pytest

from hlo_index.hlo import loader
from hlo_index.report import split_targets


@pytest.fixture
def defer_all(monkeypatch):
    """Bodies deferred in modules of any size, however few; every module split, two processes."""
    monkeypatch.setattr(loader, "DEFER_MIN_CHARS", 0)
    monkeypatch.setattr(loader, "DEFER_MIN_SHARE", 0.0)
    monkeypatch.setattr(split_targets, "MIN_WORK_TO_SPLIT", 0)
    monkeypatch.setattr(split_targets, "usable_workers", lambda asked: asked)
