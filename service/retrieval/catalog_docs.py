"""Markdown documents generated from the catalog, one per instance family and language, for retrieval.

They are build output under the data dir (never committed), regenerated when an input file's bytes change.
Every figure is rendered from the validated tables, so the documents cannot drift from what the planner uses.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Sequence
from pathlib import Path

from service.catalog.loader import (
    GPUS_FILE,
    INSTANCES_FILE,
    MODELS_FILE,
    PRICES_FILE,
    Catalog,
    check_references,
    load_catalog,
    read_csv_rows,
    read_yaml_rows,
)
from service.catalog.schema import GpuSpec, InstanceRow, PriceRow
from service.retrieval.catalog_render import QUOTE_LINKS, family_documents

__all__ = ["QUOTE_LINKS", "ensure_catalog_docs", "family_documents"]

GENERATOR_VERSION = "4"  # bump when the rendering changes, so documents are regenerated
HASH_FILE = ".inputs.sha256"


def input_files(knowledge_dir: Path, overlay_dir: Path | None, prices_file: Path | None) -> list[Path]:
    files = [knowledge_dir / GPUS_FILE, knowledge_dir / INSTANCES_FILE, knowledge_dir / PRICES_FILE]
    if overlay_dir is not None:
        files += [overlay_dir / "instances.csv", overlay_dir / "prices.csv"]
    if prices_file is not None:
        files.append(prices_file)
    return [f for f in files if f.is_file()]


def inputs_hash(files: Sequence[Path]) -> str:
    digest = hashlib.sha256(GENERATOR_VERSION.encode())
    for f in files:
        digest.update(f.name.encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()


def _load(knowledge_dir: Path, overlay_dir: Path | None, prices_file: Path | None) -> Catalog:
    """The planner's catalog; without models.yaml (not needed here) the three tables alone."""
    if (knowledge_dir / MODELS_FILE).is_file():
        return load_catalog(knowledge_dir, overlay_dir, prices_file)
    prices_path = knowledge_dir / PRICES_FILE
    catalog = Catalog(
        tuple(read_yaml_rows(knowledge_dir / GPUS_FILE, GpuSpec)),
        tuple(read_csv_rows(knowledge_dir / INSTANCES_FILE, InstanceRow)),
        tuple(read_csv_rows(prices_path, PriceRow)) if prices_path.is_file() else (),
        (),
    )
    check_references(catalog)
    return catalog


def ensure_catalog_docs(
    knowledge_dir: Path, out_dir: Path, overlay_dir: Path | None = None, prices_file: Path | None = None
) -> bool:
    """(Re)generate the documents when the catalog inputs changed; True when files were written.

    Without catalog files (a guide-only knowledge dir) the output folder is emptied: no documents, no chunks.
    """
    files = input_files(knowledge_dir, overlay_dir, prices_file)
    if not (knowledge_dir / GPUS_FILE).is_file() or not (knowledge_dir / INSTANCES_FILE).is_file():
        if out_dir.exists():
            shutil.rmtree(out_dir)
        return False
    stamp = inputs_hash(files)
    hash_path = out_dir / HASH_FILE
    if hash_path.is_file() and hash_path.read_text().strip() == stamp:
        return False
    docs = family_documents(_load(knowledge_dir, overlay_dir, prices_file))
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    for name, text in docs.items():
        (out_dir / name).write_text(text, encoding="utf-8")
    hash_path.write_text(stamp + "\n")
    return True
