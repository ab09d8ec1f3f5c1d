"""Models outside models.yaml sized from their names, with the assumption stated (issue 11: unknown models got
nothing)."""

from __future__ import annotations

import pytest

from service.catalog.loader import Catalog
from service.errors import UnknownModelError
from service.planner.name_hints import guess_from_name
from service.planner.resolve import resolve_job
from service.workload import Workload


@pytest.mark.parametrize(("name", "kind", "size", "vision"), [
    ("gemma-4-9b", "decoder", 9.0, False),
    ("yi-1.5-9b", "decoder", 9.0, False),  # the last size is the parameter count, not the version
    ("xxx-1.5b", "decoder", 1.5, False),
    ("Llama-3.2-11B-Vision", "decoder", 11.0, True),
    ("bge-small-en", "encoder", None, False),
    ("sdxl-turbo", "diffusion", None, False),
    ("someorg/awesome-llm", None, None, False),  # nothing to size from
])
def test_guess_from_name(name: str, kind: str | None, size: float | None, vision: bool) -> None:
    g = guess_from_name(name)
    if kind is None:
        assert g is None
        return
    assert g is not None and (g.kind, g.params_b, g.vision) == (kind, size, vision)


def test_the_engine_stays_strict_about_names(catalog: Catalog) -> None:
    with pytest.raises(UnknownModelError):  # the plan API and the CLI: 400 / exit 2 with "did you mean"
        resolve_job(Workload(model="internlm3-8b"), catalog.models)
