"""Shared fixtures: the real, shipped catalog (loaded once per session) and small lookups into it."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.catalog.loader import Catalog, load_catalog
from service.catalog.queries import resolve_gpu, resolve_model
from service.catalog.schema import GpuSpec, ModelSpec

REPO_ROOT = Path(__file__).resolve().parent.parent
KNOWLEDGE_DIR = REPO_ROOT / "knowledge"


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    """knowledge/ as shipped: no synced overlay, no user price sheet."""
    return load_catalog(KNOWLEDGE_DIR)


@pytest.fixture(scope="session")
def model(catalog: Catalog):
    """model("Qwen2-7B") -> the catalog's ModelSpec."""

    def get(name: str) -> ModelSpec:
        return resolve_model(name, catalog.models)

    return get


@pytest.fixture(scope="session")
def gpu(catalog: Catalog):
    """gpu("A100 80G") -> the catalog's GpuSpec (ambiguous names resolve as the CLI resolves them)."""

    def get(name: str) -> GpuSpec:
        return resolve_gpu(name, catalog.gpus)[0]

    return get


# Tiers by what a test needs (pyproject markers): a test that takes one of these fixtures gets its marker.
_NEEDS = {"embedder": "model", "minilm": "model", "shared_embedder": "model", "browser": "browser",
          "open_page": "browser"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for name in {_NEEDS[f] for f in getattr(item, "fixturenames", ()) if f in _NEEDS}:
            item.add_marker(getattr(pytest.mark, name))
