"""One language's answer phrases, read typed: prompts/answer.<lang>.yaml, the question types' prompts/questions/
*.yaml and the lexicon's names (service/assistant/prompts.py builds them). A phrase is a template (`text`), a name
in a table (`name`: cloud_names, method_names, billing_names ...) or a group of phrases under one key (`group`:
fact, feas_changes, period_names ...).

Indexing (`ph["key"]`) is the raw YAML value, for the renderers that have not moved to the typed reads yet (the
diagnosis's, the turn's asking back); every other renderer reads `text`, `name` and `group`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class Phrases(Mapping[str, Any]):
    """The phrases of one language (`lang`: zh or en)."""

    def __init__(self, data: Mapping[str, object], lang: str) -> None:
        self._data = dict(data)
        self.lang = lang

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    @property
    def zh(self) -> bool:
        return self.lang == "zh"

    def text(self, key: str, **fields: object) -> str:
        """The phrase `key`, its placeholders filled from `fields` (as written when none are given)."""
        template = str(self._data[key])
        return template.format(**fields) if fields else template

    def name(self, table: str, code: object, default: str | None = None) -> str:
        """`code`'s name in the table `table` (cloud_names, method_names ...); `default`, else the code itself,
        when the table has none."""
        names = self._data.get(table)
        found = names.get(code) if isinstance(names, Mapping) else None
        return str(found if found is not None else (code if default is None else default))

    def group(self, key: str) -> Phrases:
        """The phrases under `key` (a mapping in the YAML), in the same language."""
        inner = self._data[key]
        if not isinstance(inner, Mapping):
            raise TypeError(f"phrase {key!r} is not a group of phrases")
        return Phrases(inner, self.lang)
