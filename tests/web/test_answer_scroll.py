"""Each new answer's top scrolls into view, on a desktop (1280 px) and a phone (390 px), for the first message and
for every follow-up (issue 40 item 5: a follow-up's answer started below the fold, its top at 708 px with the input
box at 775 px, and nothing scrolled to it)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import DESKTOP, PHONE, QUESTION, Live, wait_until
from tests.web.test_page import ask

pytestmark = pytest.mark.integration

# Where the latest answer sits against the chat log's visible box (the log scrolls, never the page): the box runs
# from the log's top to the input box.
WHERE = """() => { const answer = [...document.querySelectorAll('article.message.assistant')].pop().getBoundingClientRect();
    const log = document.getElementById('chat-log').getBoundingClientRect();
    const input = document.getElementById('composer').getBoundingClientRect();
    return {top: answer.top, bottom: answer.bottom, logTop: log.top, logBottom: Math.min(log.bottom, input.top),
            input: input.top}; }"""
# In view: the answer's top in the upper 40 % of the visible log, or (a short answer the log cannot scroll further
# for) the whole answer visible.
IN_VIEW = f"""() => {{ const w = ({WHERE})();
    return w.top >= w.logTop - 1 && (w.top <= w.logTop + 0.4 * (w.logBottom - w.logTop) || w.bottom <= w.logBottom);
}}"""
# Resolves once the log has not moved for 10 frames (a smooth scroll has ended), at most 3 s.
SETTLED = """() => new Promise((done) => { const log = document.getElementById('chat-log');
    let last = -1, still = 0; const start = performance.now();
    const tick = () => { still = log.scrollTop === last ? still + 1 : 0; last = log.scrollTop;
        if (still >= 10 || performance.now() - start > 3000) done(true); else requestAnimationFrame(tick); };
    requestAnimationFrame(tick); })"""
FOLLOW_UPS = ("那京东云呢", "如果预算改成每月¥1000呢")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_each_new_answers_top_scrolls_into_view(live: Live, open_page: Any, viewport: dict[str, int]) -> None:
    page = open_page(live, viewport=viewport)
    seen = []
    for n, message in enumerate((QUESTION, *FOLLOW_UPS)):
        ask(page, message)
        # the log scrolls smoothly: give it the time to get there (the assertion below says where it sat)
        wait_until(page, IN_VIEW)
        page.evaluate(SETTLED)
        seen.append(page.evaluate(WHERE))
        assert page.evaluate(IN_VIEW), (n, message, seen)
    print(f"{viewport['width']} px: answer tops " + ", ".join(f"{w['top']:.0f}" for w in seen)
          + f" (the log's view from {seen[0]['logTop']:.0f} px, the input box at {seen[0]['input']:.0f} px)")
