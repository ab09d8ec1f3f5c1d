"""Numbers read as written, never silently as something else (issue 31, item 2): an exponent is the number it
writes ('10^6' is a million, never 6), a figure out of its slot's range is refused with a note saying what was read
and the range, a price quoted per card-hour is the user's price (never a budget), and a price asked is not a
deadline. Each row names the misreading it guards against."""

from __future__ import annotations

import pytest

from service.catalog.queries import normalize
from service.reader import ParsedMessage, parse_message
from service.reader.numbers import halfwidth, parse_number

MODELS = {normalize("Qwen2-7B"): "qwen2-7b", normalize("qwen2 7b"): "qwen2-7b"}
GPUS = {"a100": "A100-40G-SXM", "a800": "A800-80G-SXM", "h800": "H800-SXM", "h100": "H100-SXM"}


def parse(text: str) -> ParsedMessage:
    return parse_message(text, MODELS, GPUS)


@pytest.mark.parametrize(("text", "value"), [
    ("1e5", 1e5),
    ("1.5e6", 1.5e6),
    ("1E-3", 1e-3),
    ("10^6", 1e6),  # was 6: the finders read the exponent alone
    ("10**6", 1e6),
    ("2×10^9", 2e9),
    ("2 x 10^9", 2e9),
    ("1e308", 1e308),
    ("1e999", float("inf")),  # beyond a float: infinite, so a range check refuses it
])
def test_exponents_are_the_number_written(text: str, value: float) -> None:
    assert parse_number(text) == value


def test_full_width_digits_are_digits_position_for_position() -> None:
    assert halfwidth("１０万条，Ａ１００") == "10万条，A100"


@pytest.mark.parametrize(("text", "slot", "value"), [
    ("Qwen2-7B LoRA 训练2×10^9 tokens", "tokens", 2e9),
    ("Qwen2-7B LoRA 1e10 tokens", "tokens", 1e10),
    ("Qwen2-7B LoRA 5k samples, budget 1e4 yuan", "budget_cny", 1e4),
    ("Qwen2-7B LoRA 5k samples", "samples", 5000),
    ("Qwen2-7B 用１０万条数据", "samples", 100_000),  # full-width digits
    ("Qwen2-7B 1.5万条 2亿token", "tokens", 2e8),
    ("Qwen2-7B LoRA 用8张A100", "gpu_count", 8),
])
def test_figures_in_range_are_read_as_written(text: str, slot: str, value: float) -> None:
    p = parse(text)
    assert p.slots.get(slot) == value and not p.unparsed_notes


@pytest.mark.parametrize(("text", "slot", "note"), [
    # '10^6 GPUs' was read as 6 GPUs
    ("Qwen2-7B LoRA on 10^6 GPUs", "gpu_count", "'10^6 GPUs' is beyond what can be planned (at most 64 nodes, 512 GPUs)"),
    # '1e308 tokens' was read as 308 tokens per sample
    ("Qwen2-7B 微调 1e308 tokens", "tokens", "“1e308 tokens”超出可规划范围（最多 10^15 tokens）"),
    # '用0张A100' was dropped without a word
    ("用0张A100跑Qwen2-7B LoRA", "gpu_count", "“0张”低于可规划范围（至少 1 张）"),
    # '1000000张H800' was dropped without a word
    ("1000000张H800训练Qwen2-7B", "gpu_count", "“1000000张”超出可规划范围（最多 64 节点，512 张）"),
    # '1e-300 tokens' and '1e-300 epochs' planned as nothing: ¥0.00 in 0 h
    ("Qwen2-7B LoRA 1e-300 tokens", "tokens", "'1e-300 tokens' is below what can be planned (at least 1 token)"),
    ("Qwen2-7B LoRA 10万条 1e-300 epochs", "epochs", "“1e-300 epochs”低于可规划范围（至少 0.01 轮）"),
    ("Qwen2-7B LoRA 1.5张A100", "gpu_count", "“1.5张”不是整数"),
])
def test_a_figure_out_of_range_is_refused_with_a_range_note(text: str, slot: str, note: str) -> None:
    p = parse(text)
    assert slot not in p.slots
    assert "avg_tokens_per_sample" not in p.slots  # never a piece of the figure read as another slot
    assert any(note in n for n in p.unparsed_notes), p.unparsed_notes


def test_a_negative_budget_is_said_not_flipped() -> None:
    p = parse("Qwen2-7B LoRA 预算-500元")
    assert "budget_cny" not in p.slots
    assert any("“-500”是负数" in n for n in p.unparsed_notes)


@pytest.mark.parametrize("text", [
    "-1e4 budget for qwen2 7b lora",  # an exponent after the sign is still negative
    "qwen2 7b lora, budget = -3000",
])
def test_negative_figures_with_exponents_are_noted(text: str) -> None:
    p = parse(text)
    assert "budget_cny" not in p.slots and any("negative" in n for n in p.unparsed_notes), p.unparsed_notes


def test_a_price_per_card_hour_is_the_users_price_not_a_budget() -> None:
    # '京东云的A800每卡每小时只要8元' was a monthly budget of ¥8
    p = parse("京东云的A800每卡每小时只要8元，Qwen2-7B LoRA 10万条")
    assert "budget_cny" not in p.slots
    assert p.user_price is not None
    assert (p.user_price.gpu, p.user_price.cloud, p.user_price.cny_per_gpu_hour) == ("A800-80G-SXM", "jdcloud", 8.0)


def test_a_price_names_the_gpu_named_before_it() -> None:
    p = parse("A100每小时2元，H800每小时5元的话 Qwen2-7B LoRA")
    assert p.user_price is not None and p.user_price.gpu == "A100-40G-SXM" and p.user_price.cloud is None


def test_a_dollar_price_needs_a_rate() -> None:
    without = parse_message("we were quoted $2/hr for an A100, lora qwen2 7b", MODELS, GPUS)
    assert without.user_price is None and any("$2" in n for n in without.unparsed_notes)
    priced = parse_message("we were quoted $2/hr for an A100, lora qwen2 7b", MODELS, GPUS, usd_cny_rate=7.2)
    assert priced.user_price is not None and priced.user_price.cny_per_gpu_hour == pytest.approx(14.4)


@pytest.mark.parametrize("text", [
    "H100多少钱一小时",  # was a one-hour deadline
    "H100 一小时多少钱",
    "what does an H100 cost an hour",  # 'an H100' was a deadline of 1 h ('an' + 'H')
    "how much is an H100 per hour",
])
def test_a_price_asked_is_not_a_deadline(text: str) -> None:
    assert "deadline_hours" not in parse(text).slots


@pytest.mark.parametrize(("text", "hours"), [
    ("Qwen2-7B LoRA 一小时内跑完", 1.0),
    ("Qwen2-7B LoRA 3天内", 72.0),
    ("qwen2 7b lora within 1 week", 168.0),
])
def test_deadlines_still_read(text: str, hours: float) -> None:
    assert parse(text).slots.get("deadline_hours") == hours


@pytest.mark.parametrize(("text", "avg", "seq"), [
    # issue 38: 'avg 2k tokens' was read as a 2k context, the sample length dropped to the 512 default
    ("Qwen2-7B lora, 50k samples, avg 2k tokens, how long on A100?", 2000, None),
    ("Qwen2-7B lora 5万条 平均1.5k token 要多久", 1500, None),
    ("each sample is 2k tokens, Qwen2-7B lora", 2000, None),
    # characters at DeepSeek's published ratio: 1 Chinese character ≈ 0.6 token, 1 English character ≈ 0.3
    ("Qwen2-7B lora 10万条 每条约800字 A10 要多久", 480, None),
    ("Qwen2-7B lora 每条数据大概1200个汉字", 720, None),
    ("Qwen2-7B lora, avg 3000 characters per sample", 900, None),
    # the context stays a context
    ("Qwen2-7B lora 32k上下文 平均2k token", 2000, 32768),
])
def test_a_sample_length_is_kept_in_any_language_or_unit(text: str, avg: int, seq: int | None) -> None:
    p = parse(text)
    assert p.slots.get("avg_tokens_per_sample") == avg
    assert p.slots.get("seq_len") == seq


def test_a_length_in_characters_states_its_ratio() -> None:
    from service.reader.quantities import char_ratio_note, find_avg_chars

    got = find_avg_chars("每条约800字")
    assert got == (800.0, 0.6)
    assert char_ratio_note(*got)[1] == "每条 800 字按 1 字 ≈ 0.6 token（DeepSeek 公布的换算比例）折算约 480 tokens。"
