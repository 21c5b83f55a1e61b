from __future__ import annotations

import pytest

from hlo_index.fusion import clear_cache


@pytest.fixture(autouse=True)
def _fresh_fusion_cache():
    clear_cache()
    yield
