"""The OpenAI routes for clients that show text as it is (llm, the SDKs printing `content`, curl): no
`<!-- gpu-advisor:... -->` comments and absolute knowledge links (GPU_ADVISOR_PUBLIC_URL, else the request's own
URL); Markdown chat UIs keep the comments. `max_tokens` shortens the answer and the reply says so.

Regressions: plain-text clients showed the raw comments and relative `/knowledge/...` links they cannot open, and
`max_tokens` was ignored."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from service.api.compat_text import approx_tokens
from service.app import create_app
from service.catalog.loader import Catalog
from service.settings import Settings
from tests.api.fakes import FakeRetriever

QUESTION = "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000。A10 支持 FP8 吗？"
PUBLIC = "https://advisor.example.com"
BROWSER = {"User-Agent": "Mozilla/5.0 (Macintosh) Chatbox/1.9"}


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Iterator[TestClient]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("plain"), llm="offline", api_key="", chroma_host="",
                        public_url=PUBLIC)
    with TestClient(create_app(settings, catalog=catalog, retriever=FakeRetriever())) as c:
        yield c


def completion(client: TestClient, headers: dict[str, str] | None = None, **extra: object) -> dict[str, object]:
    r = client.post("/v1/chat/completions", headers=headers or {}, json={
        "model": "gpu-advisor", "messages": [{"role": "user", "content": QUESTION}], **extra})
    assert r.status_code == 200, r.text
    choice: dict[str, object] = r.json()["choices"][0]
    return choice


def test_a_plain_text_client_gets_clean_text_and_absolute_links(real: TestClient) -> None:
    text = str(completion(real)["message"]["content"])  # type: ignore[index]
    assert "<!--" not in text and "gpu-advisor:" not in text
    assert "](/knowledge/" not in text and f"]({PUBLIC}/knowledge/guide/" in text


def test_a_markdown_chat_ui_keeps_the_invisible_comments(real: TestClient) -> None:
    text = str(completion(real, BROWSER)["message"]["content"])  # type: ignore[index]
    assert "<!-- gpu-advisor:workload " in text and f"]({PUBLIC}/knowledge/" in text
    said = str(completion(real, {**BROWSER, "X-Answer-Format": "text"})["message"]["content"])  # type: ignore[index]
    assert "<!--" not in said  # the header decides over the User-Agent


def test_links_use_the_request_url_without_a_public_url(settings: Settings, catalog: Catalog) -> None:
    with TestClient(create_app(settings, catalog=catalog, retriever=FakeRetriever())) as c:
        text = str(completion(c)["message"]["content"])  # type: ignore[index]
    assert "](http://testserver/knowledge/guide/" in text


def test_max_tokens_shortens_the_answer_and_says_so(real: TestClient) -> None:
    full = str(completion(real)["message"]["content"])  # type: ignore[index]
    short = completion(real, max_tokens=80)
    text = str(short["message"]["content"])  # type: ignore[index]
    assert short["finish_reason"] == "length"
    assert "max_tokens=80" in text and "截短" in text and approx_tokens(text) <= 80 + 40 < approx_tokens(full)
    assert text.splitlines()[0] == full.splitlines()[0]  # cut at a line: the answer's first line kept
    assert completion(real, max_tokens=100_000)["finish_reason"] == "stop"


def test_max_tokens_when_streamed_and_on_responses(real: TestClient) -> None:
    r = real.post("/v1/chat/completions", json={"model": "gpu-advisor", "stream": True, "max_completion_tokens": 80,
                                               "messages": [{"role": "user", "content": QUESTION}]})
    chunks = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: {")]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert "max_tokens=80" in text and chunks[-1]["choices"][0]["finish_reason"] == "length"
    resp = real.post("/v1/responses", json={"model": "gpu-advisor", "input": QUESTION, "max_output_tokens": 80}).json()
    assert resp["status"] == "incomplete" and resp["incomplete_details"] == {"reason": "max_output_tokens"}
    assert "max_tokens=80" in resp["output"][0]["content"][0]["text"]


def test_a_plain_client_s_follow_ups_keep_the_subject_and_the_load(real: TestClient) -> None:
    # a client that resends the whole conversation as plain text (no hidden comments): '换成H20呢' and '那fp8呢'
    # keep Qwen2.5-14B, one card and the stated 40 concurrent requests; each first line answers the load asked
    messages: list[dict[str, str]] = []
    firsts = []
    for q in ["Qwen2.5-14B 单卡L20 部署 40并发 能扛住吗", "换成H20呢", "那fp8呢"]:
        messages.append({"role": "user", "content": q})
        r = real.post("/v1/chat/completions", json={"model": "gpu-advisor", "messages": messages})
        assert r.status_code == 200, r.text
        text = str(r.json()["choices"][0]["message"]["content"])
        assert "<!--" not in text
        lines = [ln for ln in text.splitlines() if ln.strip()]
        firsts.append([lines[0], " ".join(lines[1:4])])  # the answer, then what was carried and the arithmetic
        messages.append({"role": "assistant", "content": text})
    assert all(f[0].startswith("能扛住 40 并发") for f in firsts), firsts
    assert "L20" in firsts[0][0] and "H20" in firsts[1][0] and "H20" in firsts[2][0]
    assert all("Qwen2.5-14B" in f[1] for f in firsts) and "FP8" in firsts[2][1] and "BF16" in firsts[1][1]
