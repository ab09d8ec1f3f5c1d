"""A phrase table (and a knowledge table) names each key once: YAML keeps the last of two equal keys without a word, so a new phrase that
reuses an existing key ('srv_machines') silently replaced the old one and broke every answer that used it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
TABLES = sorted((ROOT / "prompts").rglob("*.yaml")) + sorted((ROOT / "knowledge").rglob("*.yaml"))


class _Strict(yaml.SafeLoader):
    pass


def _no_duplicates(loader: _Strict, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


@pytest.mark.parametrize("path", TABLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_phrase_key_is_written_once(path: Path) -> None:
    yaml.load(path.read_text(encoding="utf-8"), Loader=_Strict)  # noqa: S506 - a SafeLoader subclass


def test_the_check_catches_a_repeated_key() -> None:
    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate key 'a'"):
        yaml.load("a: 1\nb: 2\na: 3\n", Loader=_Strict)  # noqa: S506
