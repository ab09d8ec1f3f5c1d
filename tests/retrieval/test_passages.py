"""How an answer quotes a passage: its body without the title line, its first sentence without Markdown."""

from __future__ import annotations

import pytest

from service.retrieval.passages import first_sentence, passage_body


def test_the_title_line_is_dropped_once() -> None:
    assert passage_body("GPU specs — FP8\nFP8 needs Ada or Hopper.", "GPU specs — FP8") == "FP8 needs Ada or Hopper."
    assert passage_body("FP8\nFP8 needs Ada.", "GPU specs — FP8") == "FP8 needs Ada."  # a heading inside the title
    assert passage_body("FP8 needs Ada.\nMore.", "Billing") == "FP8 needs Ada.\nMore."  # no title line: as it is


@pytest.mark.parametrize(("text", "first"), [
    ("## FP8\n**FP8** needs [Ada](https://x.y/ada) or Hopper. The A10 has none.", "FP8 needs Ada or Hopper."),
    ("| a | b |\n|---|---|\n包月适合长期任务。\n按量适合短任务。", "包月适合长期任务。"),  # a table is no sentence
    ("- Spot instances can be reclaimed at any time. Save checkpoints.", "Spot instances can be reclaimed at any time."),
    ("1. Estimate the memory first!\n2. Then pick the card.", "Estimate the memory first!"),
    ("1. 先估算训练显存！\n2. 再选卡。", "先估算训练显存！"),
    ("No sentence end here\nsecond line", "No sentence end here"),
    # a list item wrapped onto an indented line reads as one line, one space at the wrap
    ("- SGLang `--mem-fraction-static`: the share that holds weights and KV cache; the rest\n  is for activations.",
     "SGLang --mem-fraction-static: the share that holds weights and KV cache; the rest is for activations."),
])
def test_the_first_sentence_without_markdown(text: str, first: str) -> None:
    assert first_sentence(text) == first


def test_a_long_sentence_is_cut_with_an_ellipsis() -> None:
    out = first_sentence("x" * 300 + ".", limit=40)
    assert len(out) == 40 and out.endswith("…")
