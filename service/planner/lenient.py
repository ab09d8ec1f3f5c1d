"""The chat's leniency about model names: a model outside models.yaml that the name sizes ('minicpm-2b',
'bge-small-en', 'Llama-3.2-11B-Vision') is added to a copy of the catalog for this call, with the assumption
stated, instead of the strict 'unknown model' error the plan API and the CLI give."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from service.catalog.loader import Catalog
from service.catalog.queries import parse_param_count, resolve_model
from service.errors import UnknownModelError
from service.planner.generic import estimate_from_name, generic_decoder
from service.planner.name_hints import model_from_name
from service.workload import Workload

Assumption = tuple[str, str]  # (English, Chinese)


def catalog_for(cat: Catalog, w: Workload) -> tuple[Catalog, list[Assumption]]:
    """`cat`, or a copy that knows the workload's unknown-but-sizable model; the assumption to state. Raises the
    catalog's UnknownModelError (with its suggestions) when the name says too little."""
    name = w.model
    if not name or parse_param_count(name) is not None or (name.endswith(".json") and Path(name).is_file()):
        return cat, []
    try:
        resolve_model(name, cat.models)
        return cat, []
    except UnknownModelError as exc:
        # a decoder whose name states its size: the engine's own estimate, labelled the same on every surface
        estimated = estimate_from_name(name, cat.models, exc.suggestions)
        if estimated is not None:
            return replace(cat, models=(*cat.models, estimated[0])), [estimated[1]]
        guessed = model_from_name(name, cat.models, generic_decoder)  # an encoder or diffusion family by name
        if guessed is None:
            raise
        spec, (en, zh) = guessed
        if exc.suggestions:
            en += f" Did you mean: {', '.join(exc.suggestions)}?"
            zh += f" 是否是指：{'、'.join(exc.suggestions)}？"
        named = spec.model_copy(update={"id": name, "name": name, "aliases": [],
                                        "source": f"sized from the name: {spec.source}"})
        return replace(cat, models=(*cat.models, named)), [(en, zh)]


def with_assumptions(art: dict[str, object], said: list[Assumption]) -> dict[str, object]:
    """The artifact with the name assumptions first in its assumptions (both languages)."""
    if not said:
        return art
    for key, pick in (("assumptions", 0), ("assumptions_zh", 1)):
        have = art.get(key)
        art[key] = [s[pick] for s in said] + (list(have) if isinstance(have, list) else [])
    return art
