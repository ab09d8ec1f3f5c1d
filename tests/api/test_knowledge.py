"""GET /knowledge/{path}: guide and generated catalog pages only; no path traversal."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from service.settings import Settings


def test_serves_a_guide_page_as_markdown(client: TestClient, settings: Settings) -> None:
    r = client.get("/knowledge/guide/03-gpu-specs-precision.en.md")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/markdown")
    expected = (settings.knowledge_dir / "guide" / "03-gpu-specs-precision.en.md").read_text(encoding="utf-8")
    assert r.text == expected


def test_serves_a_generated_catalog_page(client: TestClient, settings: Settings) -> None:
    docs = settings.data_dir / "catalog_docs"
    docs.mkdir(parents=True)
    (docs / "tencent-gn7.zh.md").write_text("# GN7\n", encoding="utf-8")
    r = client.get("/knowledge/catalog/tencent-gn7.zh.md")
    assert r.status_code == 200 and r.text == "# GN7\n"


def test_no_auth_needed_even_with_a_key(client: TestClient, settings: Settings) -> None:
    settings.api_key = "k"
    assert client.get("/knowledge/guide/01-core-principles.en.md").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "guide/../../pyproject.toml",  # climbs out of the knowledge dir
        "guide/..%2F..%2Fpyproject.toml",  # encoded slashes
        "guide/%2e%2e/catalog/prices.csv",  # encoded dots, not Markdown
        "guide/../models.yaml",  # a knowledge file, but not a guide page
        "catalog/../../../etc/passwd",  # climbs out of the data dir
        "catalog/prices.csv",  # not Markdown
        "models.yaml",  # outside the two folders
        "guide/",  # no file
        "guide/missing.md",  # does not exist
        "guide/..\\..\\pyproject.toml",  # Windows separators
        "/etc/passwd.md",  # absolute
    ],
)
def test_anything_else_is_404(client: TestClient, path: str) -> None:
    r = client.get(f"/knowledge/{path}")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "not_found"


def test_a_symlink_out_of_the_folder_is_refused(client: TestClient, settings: Settings) -> None:
    docs = settings.data_dir / "catalog_docs"
    docs.mkdir(parents=True)
    secret = settings.data_dir / "secret.md"
    secret.write_text("secret", encoding="utf-8")
    (docs / "link.md").symlink_to(secret)
    assert client.get("/knowledge/catalog/link.md").status_code == 404
