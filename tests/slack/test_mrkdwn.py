"""Markdown -> Slack mrkdwn, text splitting, and reading a user's Slack text."""

from __future__ import annotations

import pytest

from service.slack.mrkdwn import ZWSP, markdown_to_mrkdwn, slack_text_to_plain, split_text, truncate


@pytest.mark.parametrize("md, expected", [
    ("**粗体**", f"{ZWSP}*粗体*{ZWSP}"),                                   # bold, guarded for CJK neighbours
    ("显存**30 GiB**可放下", f"显存{ZWSP}*30 GiB*{ZWSP}可放下"),
    ("__bold__ and *it*", f"{ZWSP}*bold*{ZWSP} and _it_"),                 # underscores bold, single star italic
    ("## 训练时间", f"{ZWSP}*训练时间*{ZWSP}"),                              # headings become bold lines
    ("### **Cost** `x`", f"{ZWSP}*Cost x*{ZWSP}"),                         # emphasis inside a heading is flattened
    ("- one\n* two", "• one\n• two"),                                     # bullets
    ("[官方报价](https://buy.cloud.tencent.com/x?a=1&b=2)",               # links; & escaped
     "<https://buy.cloud.tencent.com/x?a=1&amp;b=2|官方报价>"),
    ("a < b > c & d", "a &lt; b &gt; c &amp; d"),                          # Slack's reserved characters
    ("`**not bold**`", "`**not bold**`"),                                 # inline code stays literal
    ("~~old~~", "~old~"),
    ("```python\nx = a<b\n```", "```\nx = a&lt;b\n```"),                  # fences lose the language tag
    ("2 * 3 * 4", "2 * 3 * 4"),                                           # spaced stars are not italics
    ("---", ""),                                                          # rules vanish
])
def test_markdown_to_mrkdwn(md: str, expected: str) -> None:
    assert markdown_to_mrkdwn(md) == expected


TABLE = "before\n\n| 云 | **费用** |\n|---|---:|\n| 腾讯云 | ¥321 |\n\nafter"


def test_tables_become_preformatted_text() -> None:
    assert markdown_to_mrkdwn(TABLE) == "before\n\n```\n云 | 费用\n腾讯云 | ¥321\n```\n\nafter"


def test_tables_can_be_dropped() -> None:
    assert markdown_to_mrkdwn(TABLE, drop_tables=True) == "before\n\nafter"


def test_unclosed_fence_is_closed() -> None:
    assert markdown_to_mrkdwn("```\ncode").endswith("```")


def test_split_text_respects_the_limit_and_reopens_fences() -> None:
    text = "intro\n```\n" + "\n".join(f"row {i}" for i in range(400)) + "\n```\nend"
    chunks = split_text(text, 500)
    assert all(len(c) <= 500 for c in chunks)
    assert all(c.count("```") % 2 == 0 for c in chunks)
    assert "".join(chunks).count("row 399") == 1 and chunks[-1].endswith("end")


def test_split_text_hard_cuts_a_very_long_line() -> None:
    chunks = split_text("y" * 7000, 3000)
    assert all(len(c) <= 3000 for c in chunks) and sum(len(c) for c in chunks) == 7000


def test_truncate() -> None:
    assert truncate("abcdef", 4) == "abc…" and truncate("abc", 4) == "abc"


@pytest.mark.parametrize("slack, plain", [
    ("<@UBOT> 用Qwen2-7B做微调", "用Qwen2-7B做微调"),                        # the mention is removed
    ("<@UBOT|gpu-advisor>  budget &lt; ¥3000 &amp; fast", "budget < ¥3000 & fast"),
    ("see <https://hf.co/Qwen/Qwen2-7B|Qwen2-7B> <https://x.io>", "see Qwen2-7B https://x.io"),
    ("<#C123|general> <!here> hi", "hi"),
    ("<@UBOT>", ""),
])
def test_slack_text_to_plain(slack: str, plain: str) -> None:
    assert slack_text_to_plain(slack) == plain
