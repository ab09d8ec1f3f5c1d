"""The web page in a real browser (Debian's chromium via Playwright) against a live uvicorn.

Chat with the real offline assistant (streamed answer, comparison table, chart, citations, downloads), the
language switch, the form, sessions, and scripts smuggled in a message, an answer or a knowledge page.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.web.conftest import PHONE, QUESTION, Live, example_pick, shot, wait_until

pytestmark = pytest.mark.integration
SCROLL_TO_TOP = """el => { const log = el.closest('.chat-log');
    log.scrollTop += el.getBoundingClientRect().top - log.getBoundingClientRect().top - 8; }"""
PAGE_FITS = "document.scrollingElement.scrollHeight <= innerHeight"
XSS = '<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script>'


def ask(page: Any, message: str) -> Any:
    """Type `message`, press Enter, wait for the answer to finish; returns the assistant's message."""
    page.fill("#composer-input", message)
    page.press("#composer-input", "Enter")
    answer = page.locator("article.message.assistant").last
    answer.locator(".backend").wait_for()  # the final event arrived
    # the stream closes just after the final event: aria-busy flips then (it raced the assertion under load)
    page.locator("article.message.assistant").last.and_(page.locator("[aria-busy='false']")).wait_for()
    return answer


def test_example_question_streams_the_answer_and_shows_the_table(live: Live, open_page: Any, catalog: Any) -> None:
    page = open_page(live)
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    with page.expect_response(lambda r: "/v1/chat?stream=true" in r.url) as chat:
        answer = ask(page, QUESTION)
    assert chat.value.headers["content-type"].startswith("text/event-stream")
    assert page.locator("article.message.user .plain").last.inner_text() == QUESTION
    # one answer: the verdict from the streamed Markdown (its table is the plan card's job), then the card
    assert "推荐配置" in answer.locator(".answer h2").first.inner_text()
    assert answer.locator(".answer table").count() == 0 and "预算判断" in answer.locator(".answer").inner_text()
    # the recommendation: one table per cloud, the picks marked, a cost and a time chart
    tencent = answer.locator("table.plan-table[data-cloud=tencent]")
    pick = example_pick(catalog).inst.instance_type
    assert tencent.locator("tr.is-pick th").first.inner_text().startswith(pick)
    assert answer.locator("table.plan-table[data-cloud=jdcloud] tr.is-pick").count() == 1
    assert answer.locator("figure.chart svg[role=img] rect.bar").count() >= 4
    assert answer.locator("details.warnings li.sev-warning").count() >= 1
    assert "在预算内" in tencent.locator("tr.is-pick").inner_text()
    assert page.evaluate(PAGE_FITS), "only the chat log scrolls, never the page"
    answer.evaluate(SCROLL_TO_TOP)
    shot(page, "desktop-answer-zh")
    page.locator("table.plan-table").first.scroll_into_view_if_needed()
    shot(page, "desktop-table-zh")
    answer.locator("figure.chart").first.scroll_into_view_if_needed()
    shot(page, "desktop-chart-zh")

    # downloads for this recommendation: the request document (Markdown, DOCX) and the launch bundle
    with page.expect_download() as md:
        answer.locator("button[data-download=md]").click()
    text = Path(md.value.path()).read_text(encoding="utf-8")
    assert md.value.suggested_filename.endswith(".zh.md") and text.startswith("# AI训练资源申请说明")
    assert pick in text
    with page.expect_download() as docx:
        answer.locator("button[data-download=docx]").click()
    assert docx.value.suggested_filename.endswith(".docx")
    assert "word/document.xml" in zipfile.ZipFile(docx.value.path()).namelist()
    with page.expect_download() as bundle:
        answer.locator("button[data-download=zip]").click()
    names = zipfile.ZipFile(bundle.value.path()).namelist()
    assert bundle.value.suggested_filename.endswith(".zip") and any(n.endswith("/train.yaml") for n in names)

    # a citation (folded under the answer) opens the cited section of the guide in the panel
    answer.locator("details.sources > summary").click()
    cite = answer.locator(".citations a.cite").first
    assert cite.get_attribute("href").startswith("/knowledge/guide/")
    cite.click()
    dialog = page.locator("dialog#knowledge")
    target = dialog.locator(".target")
    target.wait_for()
    assert target.evaluate("el => el.tagName") == "H2" and target.is_visible()
    shot(page, "desktop-knowledge-zh")
    page.keyboard.press("Escape")
    assert not dialog.is_visible()


def test_language_switch_is_remembered(live: Live, open_page: Any) -> None:
    page = open_page(live, locale="en-US")
    assert page.locator("#tab-chat").inner_text() == "Chat"
    assert page.evaluate("document.documentElement.lang") == "en"
    page.click("#lang-switch")
    assert page.locator("#tab-chat").inner_text() == "对话"
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    page.reload()
    assert page.locator("#tab-chat").inner_text() == "对话"  # localStorage beats navigator.language
    page.click("#lang-switch")
    assert page.locator("#send").inner_text() == "Send"


def test_form_plans_and_explains_in_the_chat(live: Live, open_page: Any) -> None:
    page = open_page(live, locale="en-US")
    page.focus("#tab-chat")
    page.keyboard.press("ArrowRight")  # tabs work from the keyboard
    assert page.locator("#tab-form").get_attribute("aria-selected") == "true"
    assert page.locator("#model-options option").count() >= 20
    page.fill("#f-model", "qwen2-7b")
    page.fill("#f-size", "100000")
    page.fill("#f-budget", "3000")
    page.uncheck("input[name=clouds][value=jdcloud]")
    page.click("#plan-submit")
    result = page.locator("#form-result")
    result.locator("table.plan-table[data-cloud=tencent]").wait_for()
    assert result.locator("table.plan-table[data-cloud=jdcloud]").count() == 0
    assert result.locator("figure.chart").count() == 2
    assert page.evaluate(PAGE_FITS), "only the chat log and the form panel scroll, never the page"
    shot(page, "desktop-form-en")
    # the language switch redraws the plan in place
    page.click("#lang-switch")
    assert "推荐配置" in result.locator(".plan h3").inner_text()
    page.click("#lang-switch")

    with page.expect_request(lambda r: "/v1/chat?stream=true" in r.url) as sent:
        page.click("#plan-explain")
    # the form's workload travels as itself; the sentence is only what the chat shows (nothing re-read from prose)
    body = sent.value.post_data_json
    assert body["workload"]["samples"] == 100000 and body["workload"]["clouds"] == ["tencent"]
    assert page.locator("#tab-chat").get_attribute("aria-selected") == "true"
    answer = page.locator("article.message.assistant").last
    answer.locator(".backend").wait_for()
    message = page.locator("article.message.user .plain").last.inner_text()
    assert message == "LoRA fine-tuning of qwen2-7b on 100000 samples, budget ¥3000 per month, Tencent Cloud only, cheapest."
    assert answer.locator("table.plan-table[data-cloud=tencent]").count() == 1
    assert answer.locator("table.plan-table[data-cloud=jdcloud]").count() == 0


def test_a_form_error_names_the_field(live: Live, open_page: Any) -> None:
    page = open_page(live, locale="en-US")
    page.click("#tab-form")
    page.fill("#f-model", "Qwen9")  # no size to size it by: unknown, with suggestions
    page.fill("#f-size", "1000")
    page.click("#plan-submit")
    alert = page.locator("#form-result [role=alert]")
    alert.wait_for()
    assert "Did you mean" in alert.inner_text()  # the server's message and fix, shown as given
    page.fill("#f-size", "")
    page.click("#plan-submit")
    assert page.locator("#form-error").inner_text() == "Enter the dataset size (above 0)."
    assert page.evaluate("document.activeElement.id") == "f-size"


def test_a_script_in_a_message_is_shown_as_text(live: Live, open_page: Any) -> None:
    page = open_page(live)
    ask(page, XSS)
    assert page.locator("article.message.user .plain").last.inner_text() == XSS
    assert page.evaluate("window.__xss") is None
    assert page.locator("img[onerror], #chat-log script").count() == 0


def test_no_script_runs_from_an_answer_or_a_knowledge_page(hostile: Live, open_page: Any) -> None:
    page = open_page(hostile)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.fill("#composer-input", "hi")
    page.press("#composer-input", "Enter")
    answer = page.locator("article.message.assistant").last
    # the answer grows while it streams: the first paragraph shows before the rest has arrived
    answer.locator(".answer", has_text="第一段").wait_for()
    assert answer.get_attribute("aria-busy") == "true" and answer.locator("pre").count() == 0
    answer.locator(".backend").wait_for()
    for link in ("点我", "i18n", "onclick"):
        answer.locator(".answer a", has_text=link).click()
    assert page.evaluate("window.__xss") is None
    assert page.locator("#chat-log script, #chat-log img[onerror], #chat-log [onclick]").count() == 0
    # copy buttons on code blocks
    answer.locator(".code-block button.copy").click()
    assert page.evaluate("navigator.clipboard.readText()").strip() == "echo hi"
    # the knowledge reference in the text and the citation both open the hostile page; nothing in it runs
    answer.locator(".answer a.cite").click()
    dialog = page.locator("dialog#knowledge")
    dialog.locator(".target", has_text="目标节").wait_for()
    assert "<img" in dialog.locator("#knowledge-title").inner_text()  # the title is text, not markup
    for link in ("js link", "onclick link"):
        dialog.locator("a", has_text=link).click()
    assert page.evaluate("window.__xss") is None
    assert dialog.locator("script, iframe, [onerror], [onclick]").count() == 0
    page.keyboard.press("Escape")
    assert page.evaluate("window.__xss") is None


def test_sessions_rename_select_and_delete(live: Live, open_page: Any) -> None:
    page = open_page(live)
    page.on("dialog", lambda d: d.accept())
    ask(page, "用Qwen2-7B做LoRA微调，数据集5000条样本，预算每月¥500")
    # sessions are the page's own: read them with the owner cookie the page received
    jar = {c["name"]: c["value"] for c in page.context.cookies()}
    assert "gpu_advisor_client" in jar
    assert httpx.get(f"{live.base_url}/v1/sessions").json() == []  # another caller sees none of them
    sid = httpx.get(f"{live.base_url}/v1/sessions", cookies=jar).json()
    current = page.locator(".session.current")
    current.wait_for()
    session_id = current.get_attribute("data-session-id")
    assert session_id in {s["session_id"] for s in sid}
    current.get_by_role("button", name=re.compile("^重命名")).click()
    page.keyboard.press("Control+A")
    page.keyboard.type("七十亿 LoRA")
    page.keyboard.press("Enter")
    item = page.locator(f'.session[data-session-id="{session_id}"]')
    item.locator(".session-title", has_text="七十亿 LoRA").wait_for()
    titles = {s["session_id"]: s["title"] for s in httpx.get(f"{live.base_url}/v1/sessions", cookies=jar).json()}
    assert titles[session_id] == "七十亿 LoRA"

    page.click("#new-chat")
    assert page.locator("#welcome").is_visible() and page.locator(".session.current").count() == 0
    item.locator(".session-select").click()
    assert "七十亿 LoRA" in page.locator("#session-banner").inner_text()
    follow = ask(page, "预算改成每月¥800呢？")
    assert follow.locator("table.plan-table").count() >= 1
    turns = {s["session_id"]: s["turns"] for s in httpx.get(f"{live.base_url}/v1/sessions", cookies=jar).json()}
    assert turns[session_id] == 2

    item.get_by_role("button", name=re.compile("^删除")).click()
    item.wait_for(state="detached")
    assert session_id not in {s["session_id"] for s in httpx.get(f"{live.base_url}/v1/sessions", cookies=jar).json()}
    assert page.locator("#welcome").is_visible()


def test_phone_width(live: Live, open_page: Any) -> None:
    page = open_page(live, viewport=PHONE)
    assert page.locator("#sidebar").is_hidden()
    page.click("#sidebar-toggle")
    assert page.locator("#new-chat").is_visible()
    shot(page, "phone-sessions-zh")
    page.keyboard.press("Escape")
    assert page.locator("#sidebar").is_hidden()
    answer = ask(page, QUESTION)
    # nothing wider than the screen except inside the scrollable table regions
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert page.evaluate(PAGE_FITS)
    answer.locator(".plan").evaluate(SCROLL_TO_TOP)
    shot(page, "phone-chat-zh")
    page.click("#tab-form")
    assert page.locator("#f-model").bounding_box()["width"] > 300
    shot(page, "phone-form-zh")


def test_every_control_has_a_label(live: Live, open_page: Any) -> None:
    page = open_page(live)
    unlabelled = page.evaluate("""() => [...document.querySelectorAll('input, select, textarea, button')]
        .filter(el => !el.closest('[hidden]') && el.type !== 'hidden')
        .filter(el => !((el.labels && el.labels.length) || el.getAttribute('aria-label') || el.textContent.trim()))
        .map(el => el.outerHTML)""")
    assert unlabelled == []
    assert page.locator("#chat-log").get_attribute("aria-live") == "polite"


def test_the_page_asks_for_the_api_key_when_the_server_needs_one(keyed: Live, open_page: Any) -> None:
    page = open_page(keyed, wait_for_models=False)
    key = page.locator("#api-key-input")
    key.wait_for()  # the 401 opened the API key field
    assert page.evaluate("document.activeElement.id") == "api-key-input"
    key.fill("web-key")
    key.press("Enter")
    page.wait_for_selector("#model-options option", state="attached")
    answer = ask(page, "用Qwen2-7B做LoRA")
    assert answer.locator(".answer").inner_text() == "需要 2×H100。"
    page.locator(".session").first.wait_for()  # the session list is refreshed after the answer (a race under load)
    assert page.locator(".session").count() == 1


def test_a_server_with_a_key_asks_for_it_in_chinese_by_the_key_box(keyed: Live, open_page: Any) -> None:
    # Regression: the page opened on a red English HTTP error ("出错了：Missing API key.") in the session list
    page = open_page(keyed, wait_for_models=False)
    prompt = page.locator(".api-key #api-key-prompt")
    prompt.wait_for()
    assert "需要 API 密钥" in prompt.inner_text()
    assert page.locator(".alert.error").count() == 0
    assert "Missing API key" not in page.locator("body").inner_text()
    page.fill("#api-key-input", "wrong-key")
    page.press("#api-key-input", "Enter")
    assert wait_until(page, "() => document.getElementById('api-key-prompt').textContent.includes('密钥不对')")
    assert page.locator(".alert.error").count() == 0
    page.click("#lang-switch")
    assert "not accepted" in prompt.inner_text()  # follows the language switch
    page.fill("#api-key-input", "web-key")
    page.press("#api-key-input", "Enter")
    page.wait_for_selector("#model-options option", state="attached")
    assert prompt.is_hidden()


@pytest.mark.parametrize(("tab", "fill", "submit", "result"), [
    ("#tab-form", {"#f-model": "qwen2-7b", "#f-size": "100000"}, "#plan-submit", "#form-result"),
    ("#tab-serving", {"#s-model": "Qwen2.5-7B"}, "#serving-submit", "#serving-result"),
])
def test_on_a_phone_the_forms_result_scrolls_into_view(live: Live, open_page: Any, tab: str,
                                                        fill: dict[str, str], submit: str, result: str) -> None:
    # Regression: on a phone the result appeared below the form, out of sight, and nothing scrolled to it
    page = open_page(live, viewport=PHONE)
    page.click(tab)
    for selector, value in fill.items():
        page.fill(selector, value)
    page.click(submit)
    page.locator(f"{result} table").first.wait_for()
    assert wait_until(page, f"""() => {{ const top = document.querySelector('{result}').getBoundingClientRect().top;
        return top >= 0 && top < innerHeight / 2; }}""")


HUE = """el => { const [r, g, b] = getComputedStyle(el).fill.match(/\\d+/g).map(Number).map(v => v / 255);
    const max = Math.max(r, g, b), min = Math.min(r, g, b), d = max - min;
    if (!d) return -1;
    const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
    return (h * 60 + 360) % 360; }"""


def test_the_chart_has_a_legend_and_jd_bars_are_not_the_over_budget_red(live: Live, open_page: Any) -> None:
    # Regression: JD Cloud's bars were the red of 超预算 (over budget), and nothing said what the colours meant
    page = open_page(live)
    page.click("#tab-form")
    page.fill("#f-model", "qwen2-7b")
    page.fill("#f-size", "100000")
    page.fill("#f-budget", "300")  # some candidates over budget
    page.click("#plan-submit")
    chart = page.locator("#form-result figure.chart").first
    chart.wait_for()
    legend = chart.locator(".chart-legend").inner_text()
    for word in ("腾讯云", "京东云", "推荐", "超预算"):
        assert word in legend, legend
    jd = chart.locator("rect.bar.jdcloud").first.evaluate(HUE)
    tencent = chart.locator("rect.bar.tencent").first.evaluate(HUE)
    assert 20 <= jd <= 330, jd  # not a red
    assert abs(jd - tencent) > 60, (jd, tencent)
    swatch = chart.locator(".chart-legend .swatch.jdcloud").evaluate("el => getComputedStyle(el).backgroundColor")
    bar = chart.locator("rect.bar.jdcloud").first.evaluate("el => getComputedStyle(el).fill")
    assert swatch == bar  # the legend shows the bars' own colour
