"""The serving form and card in Chromium (issue 21): the form posts to POST /v1/plan/serving (and, with a GPU x count
pinned, to POST /v1/inference beside it) and draws the card: the count first, the KV pool and concurrency, tokens/s,
TTFT/TPOT, per cloud the instance with ¥/hour, ¥/month, ¥ per million output tokens and the price's source, the
launch commands with a copy button, warnings and assumptions. A chat answer of the serving type draws the same card
from its typed answer (kind serving). Chinese for a Chinese question or page (names, units and commands aside),
English for English, at 1280 and 390 px. Every figure checked here is the API's own, never one written in the test."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import DESKTOP, PHONE, Live
from tests.web.test_one_language import english_words, full_shot, shots_dir
from tests.web.test_page import ask

pytestmark = pytest.mark.integration
SIZES = {"1280": DESKTOP, "390": PHONE}
OPEN_ALL = "root => root.querySelectorAll('details').forEach(d => { d.open = true; })"
# The card's text less its commands (shell lines are identifiers, not prose).
PROSE = "el => { const c = el.cloneNode(true); c.querySelectorAll('pre, .copy').forEach(p => p.remove()); " \
        "document.body.append(c); const text = c.innerText; c.remove(); return text; }"
# A table that scrolls sideways at desktop width (at 390 px the rows are cards).
SCROLLED = "el => [...el.querySelectorAll('.table-scroll')].filter(b => b.scrollWidth > b.clientWidth + 1).length"
# Anything in the card wider than the screen, outside a box that scrolls on purpose (tables, code).
PAST_EDGE = """el => [...el.querySelectorAll('*')].filter(e => !e.closest('.table-scroll, pre') &&
  e.getBoundingClientRect().right > innerWidth + 1).map(e => e.className + ': ' + e.textContent.slice(0, 40))"""
CHAT_ZH = "上线一个Qwen2.5-14B的对话服务要几张卡，并发20"
CHAT_EN = "How many GPUs to serve Qwen2.5-14B at 20 concurrent requests?"


def cny(value: float, digits: int) -> str:
    """¥ as the page writes it (toLocaleString rounds halves up: 12,422.5 -> ¥12,423)."""
    q = Decimal(str(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"¥{q:,}"


def fill_serving(page: Any, model: str, load: str | None = None, gpu: str | None = None,
                 gpus: str | None = None) -> None:
    page.click("#tab-serving")
    page.fill("#s-model", model)
    if load:
        page.fill("#s-load", load)
    if gpu:
        page.fill("#s-gpu", gpu)
    if gpus:
        page.fill("#s-gpus", gpus)


def submit(page: Any, route: str = "/v1/plan/serving") -> tuple[Any, dict[str, Any]]:
    """Submit the serving form; (the card, the JSON the API answered on `route`)."""
    with page.expect_response(lambda r: route in r.url) as response:
        page.click("#serving-submit")
    card = page.locator("#serving-result .plan.serving")
    card.wait_for()
    return card, response.value.json()


def check_one_language(*parts: Any, lang: str) -> str:
    for part in parts:
        part.evaluate(OPEN_ALL)
    text = "\n".join(part.evaluate(PROSE) for part in parts)
    if lang == "zh":
        assert english_words(text) == [], text
    else:
        assert "腾讯云" not in text and "每小时" not in text
    return text


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("size", ["1280", "390"])
def test_the_form_plans_serving_and_draws_the_card(live: Live, open_page: Any, tmp_path: Path, lang: str,
                                                   size: str) -> None:
    page = open_page(live, locale="zh-CN" if lang == "zh" else "en-US", viewport=SIZES[size])
    fill_serving(page, "Qwen2.5-14B", load="20")
    card, plan = submit(page)
    assert plan["workload"]["concurrency"] == 20 and set(plan["picks"]) == {"tencent", "jdcloud"}
    top = plan["candidates"][0]
    s = top["sizing"]
    # the count first
    count = card.locator(".serving-count").inner_text()
    if lang == "zh":
        assert count.startswith(f"共 {s['total_gpus']} 张 {s['gpu_name']}") and f"每个副本 {s['gpus_per_replica']} 张" in count
    else:
        assert count.startswith(f"{s['total_gpus']} × {s['gpu_name']} in all")
    figures = card.locator(".serving-figures").inner_text()
    assert f"{s['kv_capacity_tokens']:,}" in figures and f"{s['output_tokens_per_s']:,.0f} tokens/s" in figures
    # per cloud: its pick first, with the engine's cost per month and yuan per million output tokens
    for cloud, itype in plan["picks"].items():
        row = card.locator(f"table.serving-table[data-cloud={cloud}] tbody tr").first
        assert row.get_attribute("data-instance") == itype and "is-pick" in (row.get_attribute("class") or "")
        c = next(x for x in plan["candidates"] if x["instance_type"] == itype)
        text = row.inner_text()
        assert cny(c["cost_per_month_cny"], 0) in text and cny(c["cny_per_million_output_tokens"], 2) in text
        # the source's date, or for an undated page when it was captured (the page's language)
        assert (c["price"]["as_of"] or c["price"]["captured"]) in text
        assert row.locator("details.source").count() == 1
    # the launch commands, copyable
    launch = card.locator(".launch")
    assert launch.locator("pre").first.inner_text() == top["launch"]["vllm"]
    assert launch.locator("button.copy").count() == launch.locator("pre").count() >= 1
    check_one_language(card, lang=lang)
    assert card.evaluate(PAST_EDGE) == [] and card.evaluate(SCROLLED) == 0
    assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
    full_shot(page, shots_dir(tmp_path) / f"serving-form-{lang}-{size}.png")


def test_a_pinned_gpu_and_count_ask_the_inference_route(live: Live, open_page: Any) -> None:
    page = open_page(live)
    fill_serving(page, "Qwen2.5-14B", load="8", gpu="L20", gpus="1")
    card, inference = submit(page, "/v1/inference")
    assert inference["gpu"] == "L20" and inference["gpus"] == 1 and inference["starts"] is True
    s = inference["sizing"]
    assert card.locator(".serving-count").inner_text().startswith(f"共 {s['total_gpus']} 张 {inference['gpu_name']}")
    rows = card.locator("table.serving-table tbody tr")
    assert rows.count() >= 1 and all("L20" in r for r in rows.all_inner_texts())  # rent options of that GPU
    assert card.locator(".launch pre").first.inner_text() == inference["launch"]["vllm"]
    check_one_language(card, lang="zh")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_pinned_gpus_that_do_not_start_say_why_in_the_page_language(live: Live, open_page: Any, lang: str) -> None:
    page = open_page(live, locale="zh-CN" if lang == "zh" else "en-US", viewport=PHONE)
    fill_serving(page, "Qwen2.5-72B", gpu="RTX 4090", gpus="1")  # bf16 weights: 135 GiB on one 24 GiB card
    card, inference = submit(page, "/v1/inference")
    assert inference["starts"] is False
    alert = card.locator(".serving-count.alert.error").inner_text()
    if lang == "zh":
        assert "1 张 NVIDIA GeForce RTX 4090 24GB 起不来" in alert and "加载时显存不足" in alert
        assert "腾讯云和京东云都不出租" in card.inner_text()
    else:
        assert "does not start" in alert and inference["starts_reason"] in alert
    assert card.locator("table").count() == 0
    check_one_language(card, lang=lang)


def test_a_form_error_names_the_serving_field(live: Live, open_page: Any) -> None:
    page = open_page(live)
    fill_serving(page, "Qwen2.5-14B", gpu="RTX 9090", gpus="1")
    page.click("#serving-submit")
    error = page.locator("#serving-result .alert.error")
    error.wait_for()
    assert "未知 GPU“RTX 9090”" in error.inner_text() and "Unknown" not in error.inner_text()
    assert page.locator("#s-gpu").get_attribute("aria-invalid") == "true"
    page.fill("#s-gpu", "")
    page.fill("#s-model", "")
    page.click("#serving-submit")
    assert page.locator("#serving-error").inner_text() == "请填写模型。"


def test_the_language_switch_redraws_the_serving_card(live: Live, open_page: Any) -> None:
    page = open_page(live, locale="en-US")
    fill_serving(page, "Qwen2.5-7B", load="8")
    card, _ = submit(page)
    assert "in all" in card.locator(".serving-count").inner_text()
    page.click("#lang-switch")
    assert "共 " in page.locator("#serving-result .serving-count").inner_text()
    check_one_language(page.locator("#serving-result .plan.serving"), lang="zh")


@pytest.mark.parametrize(("question", "lang"), [(CHAT_ZH, "zh"), (CHAT_EN, "en")])
@pytest.mark.parametrize("size", ["1280", "390"])
def test_a_serving_answer_draws_its_card_in_the_chat(live: Live, open_page: Any, tmp_path: Path, question: str,
                                                     lang: str, size: str) -> None:
    page = open_page(live, locale="en-US" if lang == "zh" else "zh-CN", viewport=SIZES[size])  # the other chrome
    with page.expect_response(lambda r: "/v1/chat" in r.url):
        answer = ask(page, question)
    card = answer.locator(".plan.serving")
    card.wait_for()
    # the answer opens with the count; the rent options, the command and the assumptions are the card's
    verdict = answer.locator(".answer").inner_text()
    assert verdict.startswith("需要 " if lang == "zh" else "You need ")
    assert answer.locator(".answer pre").count() == 0 and "租用方案" not in verdict and "Where to rent" not in verdict
    count = card.locator(".serving-count").inner_text()
    total = verdict.split("张" if lang == "zh" else "x ", 1)[0].split()[-1]  # the prose's count is the card's
    assert (f"共 {total} 张" if lang == "zh" else f"{total} × ") in count
    assert card.locator("table.serving-table tr.is-pick").count() >= 1
    assert card.locator(".launch pre").first.inner_text().startswith("vllm serve ")
    assert answer.locator("details.sources").count() <= 1
    # the whole answer: its text, the card, the folds, the sources
    text = check_one_language(answer.locator(".answer"), answer.locator(".extras"), lang=lang)
    assert answer.locator(".alert.warn").count() == 0  # no figure of the prose is missing from the artifact
    if lang == "zh":
        assert "每百万输出 token" in text
    assert card.evaluate(PAST_EDGE) == [] and card.evaluate(SCROLLED) == 0
    full_shot(page, shots_dir(tmp_path) / f"serving-chat-{lang}-{size}.png")


def test_a_reopened_serving_session_draws_its_card(live: Live, open_page: Any) -> None:
    page = open_page(live)
    first = ask(page, CHAT_ZH)
    first.locator(".plan.serving").wait_for()
    ask(page, "换成H20呢")
    page.click("#new-chat")
    page.locator("#session-list .session-select").first.click()
    page.locator("article.message.assistant .plan.serving").nth(1).wait_for()
    cards = page.locator("article.message.assistant .plan.serving")
    assert cards.count() == 2
    assert "H20" in cards.nth(1).locator(".serving-count").inner_text()
