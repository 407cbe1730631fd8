"""The agent loop tests reach the fixture servers in memory: their subject is neither the process nor the wire."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Home


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home.at(tmp_path, in_memory=True)
