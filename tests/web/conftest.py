"""Browser fixtures: a live uvicorn on 127.0.0.1 serving the page, and Debian's chromium driven by Playwright.

The browser is the system one (`make browser` installs it with apt); Playwright's own browser download is never
used. Without Playwright or chromium the web tests skip and say why. Screenshots go to artifacts/web/ (ignored).
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from service.app import create_app
from service.assistant.types import AskResult, Citation, StreamEvent
from service.catalog.loader import Catalog
from service.retrieval.chunking import chunk_document
from service.retrieval.types import Passage
from tests.api.conftest import free_socket, make_settings, wait_for
from tests.api.fakes import FakeAssistant

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "artifacts" / "web"
QUESTION = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"


def example_pick(catalog: Catalog, cloud: str = "tencent") -> Any:
    """The engine's pick for QUESTION on a cloud, as the planner makes it (the tests follow the engine, which
    the validation matrix calibrates, rather than a hard-coded instance)."""
    from service.planner.plan import plan
    from service.workload import Workload

    return plan(Workload(model="Qwen2-7B", samples=100_000, budget_cny=3000), catalog).picks()[cloud]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def chromium_path() -> str | None:
    explicit = os.environ.get("GPU_ADVISOR_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).exists() else None
    return shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


@dataclass
class Live:
    base_url: str
    app: FastAPI


class GuideRetriever:
    """Real guide sections (ids and refs from the chunker) without an index: the FP8 and LoRA sections, in the
    question's language. Building the real index takes minutes; the browser tests only need real citations."""

    def __init__(self, knowledge_dir: Path) -> None:
        self.warnings: list[str] = []
        self.chunks = []
        for name in ("03-gpu-specs-precision", "04-training-memory"):
            for lang in ("zh", "en"):
                rel = f"guide/{name}.{lang}.md"
                self.chunks += chunk_document((knowledge_dir / rel).read_text(encoding="utf-8"), rel)

    def search(self, query: str, k: int = 5, lang: str | None = None, cloud: str | None = None,
               topic: str | None = None) -> list[Passage]:
        wanted = [c for c in self.chunks if (lang is None or c.lang == lang)
                  and (c.section.startswith("FP8") or c.section.startswith("LoRA"))]
        return [Passage(id=c.id, source=c.source, title=c.title, section=c.section, text=c.text, score=1.0 / (i + 1),
                        dense_rank=i + 1, bm25_rank=i + 1, lang=c.lang, ref=c.ref) for i, c in enumerate(wanted[:k])]


# A model answer and a knowledge page that try every way to run a script; none may work.
HOSTILE_TOKENS = [
    "## 答案\n\n第一段 <img src=x onerror=\"window.__xss=1\">\n\n",
    "<script>window.__xss=2</script>\n\n[点我](javascript:window.__xss=3) "
    "<a data-i18n=\"window.__xss=12\" data-i18n-attr=\"onclick\">i18n</a> "
    "<a href=\"#\" onclick=\"window.__xss=13\">onclick</a>\n\n",
    "```bash\necho hi\n```\n\n参考 [guide/evil.zh.md#目标节]\n",
]
HOSTILE_PAGE = """---
id: evil.zh
title: 恶意页面 <img src=x onerror="window.__xss=4">
lang: zh
---
# 恶意 <script>window.__xss=5</script>

## 第一节
<img src=x onerror="window.__xss=6">
<script>window.__xss=7</script>

[js link](javascript:window.__xss=8)

<iframe srcdoc="<script>parent.__xss=9</script>"></iframe>
<svg><script>window.__xss=10</script></svg>
<a href="#" onclick="window.__xss=11">onclick link</a>

## 目标节
目标正文。
"""


class HostileAssistant(FakeAssistant):
    """Streams HOSTILE_TOKENS slowly (so a test can see the answer grow) and cites the hostile page."""

    def _result(self, sid: str) -> AskResult:
        return AskResult(session_id=sid, answer_markdown="".join(self.tokens), language="zh", backend="fake",
                         citations=[Citation(id="guide/evil.zh.md#目标节", title="恶意页面 <b>bold</b>",
                                             source="guide/evil.zh.md", url="guide/evil.zh.md#目标节")])

    def stream(self, message: str, session_id: str | None = None, *, create: bool = False,
               **kwargs: object) -> Iterator[StreamEvent]:
        sid = self._turn(message, session_id, create, **kwargs)  # type: ignore[arg-type]
        yield StreamEvent(type="tool", name="search_knowledge", data={"args": {"query": message}})
        for tok in self.tokens:
            time.sleep(0.4)
            yield StreamEvent(type="token", text=tok)
        yield StreamEvent(type="final", data=self._result(sid).model_dump())


def _serve(app: FastAPI) -> Iterator[Live]:
    import uvicorn

    sock = free_socket()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    wait_for(f"{base}/healthz")
    yield Live(base, app)
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def live(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[Live]:
    """The real offline assistant, the real catalog, real guide citations, on a fresh data dir."""
    settings = make_settings(tmp_path_factory.mktemp("web-data"))
    app = create_app(settings, catalog=catalog, retriever=GuideRetriever(settings.knowledge_dir))
    yield from _serve(app)


@pytest.fixture(scope="session")
def hostile(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[Live]:
    """A slow, hostile fake assistant and a knowledge dir holding one hostile guide page."""
    root = tmp_path_factory.mktemp("hostile")
    (root / "knowledge" / "guide").mkdir(parents=True)
    (root / "knowledge" / "guide" / "evil.zh.md").write_text(HOSTILE_PAGE, encoding="utf-8")
    settings = make_settings(root / "data", knowledge_dir=root / "knowledge")
    app = create_app(settings, HostileAssistant(tokens=list(HOSTILE_TOKENS)), catalog=catalog,
                     retriever=GuideRetriever(make_settings(root).knowledge_dir))
    yield from _serve(app)


@pytest.fixture(scope="session")
def keyed(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[Live]:
    """A server that requires `Authorization: Bearer web-key` on /v1."""
    settings = make_settings(tmp_path_factory.mktemp("keyed"), api_key="web-key")
    retriever = GuideRetriever(settings.knowledge_dir)
    yield from _serve(create_app(settings, FakeAssistant(), catalog=catalog, retriever=retriever))


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install -e '.[dev]'")
    path = chromium_path()
    if path is None:
        pytest.skip("chromium not found (looked for GPU_ADVISOR_CHROMIUM, `chromium` on PATH, /usr/bin/chromium): "
                    "run `make browser` or `apt-get install -y chromium`")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=path)
        yield launched
        launched.close()


def expected_console_error(text: str, url: str) -> bool:
    """Console errors that are not faults of the page:
    - an API error response (4xx) that the page shows to the user as an error (a test provoked it);
    - the hostile `<img src=x>` (sanitised to a plain image that 404s);
    - Chrome's CSP report when DOMPurify parses a hostile `on...=` attribute in its inert document: the policy is
      checked as the attribute is parsed, the attribute is then removed, and nothing runs (window.__xss proves it).
    """
    path = url.split("://", 1)[-1].partition("/")[2]
    return (("status of 4" in text and (path.startswith("v1/") or path == "x"))
            or ("inline event handler" in text and path == "static/vendor/purify.min.js"))


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    """open_page(live, locale="zh-CN", viewport=DESKTOP) → a page on `/`; script errors on the page fail the test."""
    contexts: list[Any] = []
    errors: list[str] = []

    def open_(server: Live, locale: str = "zh-CN", viewport: dict[str, int] | None = None,
              wait_for_models: bool = True) -> Any:
        context = browser.new_context(locale=locale, viewport=viewport or DESKTOP, accept_downloads=True,
                                      base_url=server.base_url)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(f"{msg.text} ({msg.location.get('url')})")
                if msg.type == "error" and not expected_console_error(msg.text, msg.location.get("url", "")) else None)
        page.goto("/")
        if wait_for_models:  # the page has loaded its model list: every module ran
            page.wait_for_selector("#model-options option", state="attached")
        return page

    yield open_
    for context in contexts:
        context.close()
    assert errors == [], errors


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def wait_until(page: Any, function: str, timeout_s: float = 5.0) -> bool:
    """Polls a JS function (a string) until it returns a truthy value; True if it did within the time.

    Not page.wait_for_function: its polling evaluates the string inside the page, which the page's CSP (script-src
    'self', no 'unsafe-eval') refuses once the first check is false; page.evaluate runs outside the page's CSP.
    """
    end = time.monotonic() + timeout_s
    while True:
        if page.evaluate(function):
            return True
        if time.monotonic() >= end:
            return False
        page.wait_for_timeout(50)
