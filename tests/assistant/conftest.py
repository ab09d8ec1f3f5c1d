"""The offline assistant on the shipped catalog and guide, one per test module (no network, no index build)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service.assistant.service import build_assistant
from tests.api.conftest import make_settings
from tests.web.conftest import GuideRetriever


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> Any:
    settings = make_settings(Path(tmp_path_factory.mktemp("assistant")))
    return build_assistant(settings, retriever_factory=lambda: GuideRetriever(settings.knowledge_dir))
