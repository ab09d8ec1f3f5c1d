"""Asking: one session per scenario, in process or over HTTP (the real app behind FastAPI's TestClient)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.catalog.loader import Catalog
from service.errors import DependencyUnavailableError
from service.evals.bm25_retriever import Bm25Retriever
from service.evals.dataset import load_scenarios, select
from service.evals.runner import run_scenarios
from service.evals.targets import AssistantTarget, HttpTarget, converse
from service.retrieval.config import RetrievalConfig
from service.settings import Settings


class ScriptedTarget:
    label = "scripted"

    def __init__(self, fail_on: int | None = None) -> None:
        self.asked: list[tuple[str, str | None]] = []
        self.fail_on = fail_on

    def ask(self, message: str, session_id: str | None) -> dict[str, Any]:
        self.asked.append((message, session_id))
        if self.fail_on == len(self.asked):
            raise ValueError("boom")
        return {"session_id": "sid-1", "backend": "offline", "answer_markdown": message}

    def close(self) -> None:
        return None


def test_turns_share_the_first_session() -> None:
    t = ScriptedTarget()
    conv = converse(t, ["a", "b", "c"])
    assert t.asked == [("a", None), ("b", "sid-1"), ("c", "sid-1")]
    assert conv.final is not None and conv.final["answer_markdown"] == "c"
    assert len(conv.latencies_s) == 3


def test_a_failing_turn_stops_the_scenario() -> None:
    conv = converse(ScriptedTarget(fail_on=2), ["a", "b", "c"])
    assert conv.final is None
    assert conv.error == "turn 2: ValueError: boom"


@pytest.fixture(scope="module")
def http_target(eval_settings: Settings, eval_target: AssistantTarget, catalog: Catalog) -> Iterator[HttpTarget]:
    # The app gets the same BM25 search the assistant uses: its warm-up must not build the embedding index here
    # (a build still running at interpreter exit aborted the whole test run).
    retriever = Bm25Retriever(RetrievalConfig.from_settings(eval_settings))
    app = create_app(eval_settings, eval_target.assistant, catalog=catalog, retriever=retriever)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield HttpTarget("http://127.0.0.1", client=client)


@pytest.mark.slow  # three scenarios, twice
def test_http_target_scores_like_the_assistant(http_target: HttpTarget, eval_target: AssistantTarget,
                                               eval_settings: Settings, catalog: Catalog) -> None:
    scenarios = select(load_scenarios(), ("zh-multi-cloud-then-deadline", "en-ask-zero3",
                                          "en-llama2-13b-budget-deadline"))
    over_http = run_scenarios(http_target, scenarios, catalog, eval_settings)
    in_process = run_scenarios(eval_target, scenarios, catalog, eval_settings)
    assert [r.passed for r in over_http] == [r.passed for r in in_process] == [True, True, True]
    assert over_http[0].got_top == in_process[0].got_top  # three turns, one session


def test_http_errors_fail_the_scenario(http_target: HttpTarget) -> None:
    conv = converse(http_target, ["hello", "more"])
    assert conv.final is not None
    bad = converse(http_target, [" "])  # the API refuses an empty message
    assert bad.final is None and "HTTP 4" in bad.error


def test_an_unreachable_api_stops_the_run() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = httpx.Client(base_url="http://127.0.0.1:9", transport=httpx.MockTransport(refuse))
    with pytest.raises(DependencyUnavailableError, match="unreachable"):
        converse(HttpTarget("http://127.0.0.1:9", client=client), ["hi"])
