"""The page's serving, without a browser: routes, security headers, every asset local, the models list."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog
from service.web import STATIC_DIR
from tests.api.conftest import make_settings
from tests.api.fakes import FakeAssistant, FakeRetriever

IMPORT = re.compile(r"""^import\s[^"']*["'](\.[^"']+)["']""", re.MULTILINE)


@pytest.fixture
def client(tmp_path: Path, catalog: Catalog) -> Iterator[TestClient]:
    app = create_app(make_settings(tmp_path), FakeAssistant(), catalog=catalog, retriever=FakeRetriever())
    with TestClient(app) as c:
        yield c


def test_the_page_is_served_with_a_strict_policy(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    policy = r.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert client.head("/").status_code == 200


def test_every_asset_is_local_and_served(client: TestClient) -> None:
    page = client.get("/").text
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page)
    assert {"/static/vendor/marked.umd.js", "/static/vendor/purify.min.js", "/static/js/main.js"} <= set(assets)
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page)  # no CDN
    for asset in assets:
        assert client.get(asset).status_code == 200, asset
    for module in (STATIC_DIR / "js").glob("*.js"):
        text = module.read_text(encoding="utf-8")
        assert "https://cdn" not in text and not re.search(r"""^import\s.*["']https?:""", text, re.MULTILINE)
        for target in IMPORT.findall(text):  # every relative import resolves to a file that is served
            assert (module.parent / target).resolve().is_file(), f"{module.name} imports {target}"


def test_vendored_libraries_carry_their_licenses() -> None:
    vendor = STATIC_DIR / "vendor"
    assert {"LICENSE.marked", "LICENSE.dompurify", "LICENSE-MPL.dompurify"} <= {p.name for p in vendor.iterdir()}


def test_api_errors_keep_their_shape_next_to_the_page(client: TestClient) -> None:
    r = client.get("/no-such-page")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert client.get("/static/no-such-file.js").status_code == 404


def test_models_catalog_lists_names_and_aliases(client: TestClient) -> None:
    rows = client.get("/v1/catalog/models").json()
    qwen = next(m for m in rows if m["id"] == "Qwen2-7B")
    assert qwen["kind"] == "decoder" and qwen["params_b"] > 7 and qwen["aliases"]
