"""YAML as every reader of our data loads it: libyaml's safe loader when present (about 10x faster than the
pure-Python one on models.yaml and the eval corpus), the pure-Python safe loader otherwise."""

from __future__ import annotations

from typing import Any

import yaml


def load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
