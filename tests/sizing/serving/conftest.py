"""The shipped catalog, loaded once for the serving engine tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.catalog.loader import Catalog, load_catalog
from service.catalog.schema import GpuSpec, ModelSpec

KNOWLEDGE = Path(__file__).resolve().parents[3] / "knowledge"


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog(KNOWLEDGE)


@pytest.fixture(scope="session")
def catalog_models(catalog: Catalog) -> dict[str, ModelSpec]:
    return {m.id: m for m in catalog.models}


@pytest.fixture(scope="session")
def gpus(catalog: Catalog) -> dict[str, GpuSpec]:
    return {g.id: g for g in catalog.gpus}
