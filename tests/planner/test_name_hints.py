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
    ("Foo-235B-A22B", "decoder", 235.0, False),  # the active size is not the parameter count
    ("ERNIE-4.5-21B-A3B", "decoder", 21.0, False),  # ERNIE 4.5 is a decoder, not the ERNIE encoders
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


def test_the_engine_estimates_a_stated_size_and_refuses_a_bare_name(catalog: Catalog) -> None:
    # The plan API and the CLI size 'acme-llm-9b' by its 9B, labelled estimated (was: refused, issue "Every model
    # people ask about"); a name that states no size is still refused with "did you mean".
    job = resolve_job(Workload(model="acme-llm-9b"), catalog.models)
    assert job.model.params_published_b == 9.0 and any("estimated" in a for a in job.assumptions)
    with pytest.raises(UnknownModelError):
        resolve_job(Workload(model="acme-llm"), catalog.models)
