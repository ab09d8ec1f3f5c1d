"""Names people ask about resolve to the rows added for them, and those rows weigh what the models weigh."""

from __future__ import annotations

import pytest

from service.catalog.queries import resolve_model
from service.errors import UnknownModelError
from service.sizing.params import count_params

# name as typed -> catalog row id
ADDED = {
    "ERNIE-4.5-300B-A47B": "ERNIE-4.5-300B-A47B",
    "baidu/ERNIE-4.5-300B-A47B-PT": "ERNIE-4.5-300B-A47B",
    "文心4.5-300B": "ERNIE-4.5-300B-A47B",
    "文心4.5-300B-A47B": "ERNIE-4.5-300B-A47B",
    "Command-R+": "Command-R-Plus-104B",
    "CohereForAI/c4ai-command-r-plus": "Command-R-Plus-104B",
    "c4ai-command-r-plus": "Command-R-Plus-104B",
    "command r plus": "Command-R-Plus-104B",
}


@pytest.mark.parametrize(("name", "row_id"), sorted(ADDED.items()))
def test_added_name_resolves_to_its_row(catalog, name: str, row_id: str) -> None:
    assert resolve_model(name, catalog.models).id == row_id


@pytest.mark.parametrize("row_id", sorted(set(ADDED.values())))
def test_added_row_weighs_its_published_count(catalog, row_id: str) -> None:
    # BF16 weights (2 bytes a parameter) counted from the row's dimensions, within 8 % of the published count.
    m = next(r for r in catalog.models if r.id == row_id)
    counted_gb = 2 * (count_params(m).total / 1e9 + (m.vision_params_b or 0.0))
    published_gb = 2 * m.params_published_b
    assert abs(counted_gb - published_gb) <= 0.08 * published_gb, (row_id, counted_gb, published_gb)


def test_bare_wenxin_45_suggests_every_ernie_45_size(catalog) -> None:
    with pytest.raises(UnknownModelError) as exc:
        resolve_model("文心4.5", catalog.models)
    for row_id in ("ERNIE-4.5-0.3B", "ERNIE-4.5-21B-A3B", "ERNIE-4.5-300B-A47B"):
        assert row_id in str(exc.value)
