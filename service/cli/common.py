"""Shared CLI plumbing: catalog loading, one-line errors (exit 2), JSON output."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import typer
from pydantic import ValidationError

from service.catalog.loader import Catalog, load_catalog
from service.errors import AdvisorError, validation_line
from service.settings import get_settings

F = TypeVar("F", bound=Callable[..., Any])


def load(prices: Path | None = None) -> Catalog:
    s = get_settings()
    return load_catalog(s.knowledge_dir, s.catalog_overlay_dir, prices or s.prices_file)


def fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def guarded(fn: F) -> F:
    """Turn user-facing errors into one clear line and exit code 2, never a traceback."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AdvisorError as exc:
            fail(str(exc))
        except ValidationError as exc:
            fail(validation_line(exc))

    return wrapper  # type: ignore[return-value]


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n")
