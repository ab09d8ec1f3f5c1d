"""The offline reader: chat message (Chinese or English) -> workload slots. Tiny alias maps built here."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.catalog.queries import normalize
from service.reader import MAX_CHARS, ParsedMessage, merge_slots, parse_message
from service.reader.numbers import parse_number, zh_number
from service.workload import Workload

_MODEL_NAMES = {
    "qwen2-7b": ["Qwen2-7B", "qwen2 7b", "千问2-7B", "通义千问2-7B"],
    "llama3-70b": ["Llama3-70B", "llama 3 70b", "Meta-Llama-3-70B"],
    "deepseek-r1-distill-qwen-7b": ["DeepSeek-R1-Distill-Qwen-7B"],
    "qwen-7b": ["Qwen-7B"],
    "chatglm3-6b": ["chatglm3-6b"],
    "bert-base": ["bert-base"],
    "resnet50": ["resnet50"],
    "yolov5s": ["yolov5s"],
    "sdxl": ["SDXL"],
}
MODELS = {normalize(alias): model for model, aliases in _MODEL_NAMES.items() for alias in aliases}
GPUS = {"a100": "A100-40G-SXM", "a10080g": "A100-80G-SXM", "v100": "V100-32G-SXM2", "4090": "RTX-4090", "t4": "T4",
        "h800": "H800-SXM", "a10": "A10"}
A100, A100_80, V100, RTX4090, T4, H800, A10 = (GPUS[k] for k in ("a100", "a10080g", "v100", "4090", "t4", "h800", "a10"))


def parse(text: str, rate: float | None = None) -> ParsedMessage:
    return parse_message(text, MODELS, GPUS, usd_cny_rate=rate)


SLOT_CASES = [
    # the reference example: model, samples, monthly budget from 月均
    ("用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000",
     {"model": "qwen2-7b", "samples": 100_000, "budget_cny": 3000.0, "budget_period": "month"}),
    # --- model names and aliases ---
    ("qwen2 7b lora", {"model": "qwen2-7b", "method": "lora"}),  # spaced alias
    ("Qwen2-7B-Instruct 做 SFT", {"model": "qwen2-7b", "stage": "sft"}),  # -Instruct falls back to the base model
    ("千问2-7B 微调", {"model": "qwen2-7b"}),  # Chinese family name
    ("通义千问2-7B", {"model": "qwen2-7b"}),  # long Chinese family name
    ("Llama3-70B", {"model": "llama3-70b"}),  # dashed
    ("train llama 3 70b", {"model": "llama3-70b"}),  # spaced, three tokens
    ("DeepSeek-R1-Distill-Qwen-7B 微调", {"model": "deepseek-r1-distill-qwen-7b"}),  # longest match beats Qwen-7B
    ("chatglm3-6b", {"model": "chatglm3-6b"}),  # lower case, no space
    ("bert-base classification", {"model": "bert-base"}),  # a size-less model name
    ("ResNet-50 1万张图片", {"model": "resnet50", "samples": 10_000}),  # vision model, images count as samples
    ("yolov5s detection", {"model": "yolov5s"}),  # single token
    ("SDXL LoRA", {"model": "sdxl", "method": "lora"}),  # all caps, no size
    ("Qwen5-9B lora", {"model": "Qwen5-9B", "method": "lora"}),  # unknown family+size kept raw for "did you mean"
    ("Qwen2.5-7B 全参", {"model": "Qwen2.5-7B", "method": "full"}),  # unknown decimal version kept raw
    # --- bare parameter counts ---
    ("7B的模型", {"params_b": 7.0}),  # B suffix with 的模型
    ("70亿参数", {"params_b": 7.0}),  # 亿 count with 参数
    ("130亿参数的模型", {"params_b": 13.0}),  # 130亿 -> 13B
    ("720亿的模型", {"params_b": 72.0}),  # 720亿 -> 72B
    ("a 13B model", {"params_b": 13.0}),  # English article + size
    ("a 1.5B model", {"params_b": 1.5}),  # decimal size
    ("1.8B", {"params_b": 1.8}),  # bare decimal size
    ("350M参数的模型", {"params_b": 0.35}),  # M means millions of parameters
    # --- methods ---
    ("全参微调 Qwen2-7B", {"model": "qwen2-7b", "method": "full"}),  # 全参
    ("全量微调 Qwen2-7B", {"model": "qwen2-7b", "method": "full"}),  # 全量微调
    ("full fine-tune Qwen2-7B", {"model": "qwen2-7b", "method": "full"}),  # English full fine-tune
    ("full-parameter training of Llama3-70B", {"model": "llama3-70b", "method": "full"}),  # full-parameter
    ("Qwen2-7B QLoRA", {"model": "qwen2-7b", "method": "qlora", "quant_bits": 4}),  # QLoRA defaults to 4 bits
    ("Qwen2-7B 8bit", {"model": "qwen2-7b", "method": "qlora", "quant_bits": 8}),  # a bit width implies QLoRA
    ("Qwen2-7B 4位量化", {"model": "qwen2-7b", "method": "qlora", "quant_bits": 4}),  # 位量化 implies QLoRA
    ("Llama3-70B QLoRA 3-bit", {"model": "llama3-70b", "method": "qlora"}),  # 3-bit: note, bits left unset
    ("16-bit mixed precision LoRA on Qwen2-7B", {"model": "qwen2-7b", "method": "lora"}),  # 16-bit is not quant
    ("继续预训练 Qwen2-7B", {"model": "qwen2-7b", "method": "pretrain"}),  # 继续预训练
    ("pre-training a 1.5B model", {"params_b": 1.5, "method": "pretrain"}),  # pre-training, hyphenated
    ("冻结底层 Qwen2-7B", {"model": "qwen2-7b", "method": "freeze"}),  # 冻结
    ("不用LoRA，用全参", {"method": "full"}),  # the negated method is skipped
    ("从LoRA换成全参", {"method": "full"}),  # 'from X to Y' takes Y
    ("LoRA rank 64 Qwen2-7B", {"model": "qwen2-7b", "method": "lora", "lora_rank": 64}),  # LoRA rank as an engine knob
    # --- dataset size: samples ---
    ("一万五千条 Qwen2-7B", {"model": "qwen2-7b", "samples": 15_000}),  # Chinese numerals with two units
    ("3千条", {"samples": 3000}),  # Arabic + 千
    ("1.5万条数据", {"samples": 15_000}),  # decimal + 万
    ("100k samples", {"samples": 100_000}),  # k suffix
    ("50,000 examples", {"samples": 50_000}),  # thousands commas
    ("1M rows", {"samples": 1_000_000}),  # M = million rows
    ("10w条", {"samples": 100_000}),  # 'w' is 万
    ("数据量10万", {"samples": 100_000}),  # a bare count after 数据量
    # --- dataset size: GB and tokens ---
    ("500GB dataset", {"dataset_gb": 500.0}),  # GB
    ("2TB corpus", {"dataset_gb": 2000.0}),  # TB -> 1000 GB each
    ("500G数据", {"dataset_gb": 500.0}),  # bare G needs data words
    ("80G显存够不够", {}),  # GPU memory, not data
    ("1亿token", {"tokens": 1e8}),  # 亿 tokens
    ("2T tokens", {"tokens": 2e12}),  # not 2 TB
    ("500M tokens", {"tokens": 5e8}),  # M tokens
    ("10B tokens", {"tokens": 1e10}),  # not a 10B model
    ("5000万tokens", {"tokens": 5e7}),  # 万 tokens
    # --- tokens per sample ---
    ("每条约800 token", {"avg_tokens_per_sample": 800}),  # 每条约 ... token
    ("平均512个token", {"avg_tokens_per_sample": 512}),  # 平均 ... 个token
    ("avg 300 tokens per sample", {"avg_tokens_per_sample": 300}),  # avg ... per sample
    # --- epochs ---
    ("3轮", {"epochs": 3.0}),  # 轮
    ("3个epoch", {"epochs": 3.0}),  # 个epoch
    ("2 epochs", {"epochs": 2.0}),  # English epochs
    ("训练两轮", {"epochs": 2.0}),  # Chinese numeral epochs
    ("多轮对话数据2万条", {"samples": 20_000}),  # 轮对话 is dialogue, not epochs
    # --- sequence length (k = 1024) ---
    ("4k上下文", {"seq_len": 4096}),  # k context is 1024-based
    ("seq 2048", {"seq_len": 2048}),  # seq N
    ("上下文长度8192", {"seq_len": 8192}),  # 上下文长度N
    ("32k context", {"seq_len": 32768}),  # 32k context
    ("cutoff 1024", {"seq_len": 1024}),  # cutoff N (LLaMA-Factory)
    # --- budget ---
    ("预算每月两万", {"budget_cny": 20_000.0, "budget_period": "month"}),  # 每月 + Chinese numerals
    ("月预算5千", {"budget_cny": 5000.0, "budget_period": "month"}),  # 月预算 + 千
    ("总预算20万", {"budget_cny": 200_000.0, "budget_period": "total"}),  # 总预算 -> total
    ("一共3万", {"budget_cny": 30_000.0, "budget_period": "total"}),  # 一共 -> total
    ("3000元/月", {"budget_cny": 3000.0, "budget_period": "month"}),  # 元/月
    ("budget of 5000 yuan per month", {"budget_cny": 5000.0, "budget_period": "month"}),  # English per month
    ("total budget ¥100k", {"budget_cny": 100_000.0, "budget_period": "total"}),  # k suffix and total
    ("预算3000", {"budget_cny": 3000.0}),  # no period word: left out (month for a new workload)
    ("预算3万，一周内训完", {"budget_cny": 30_000.0, "budget_period": "total", "deadline_hours": 168.0}),  # deadline
    ("$2000 budget, 按7.2汇率", {"budget_cny": 14_400.0}),  # rate in the message
    ("$2000 budget at 7.1 CNY/USD", {"budget_cny": 14_200.0}),  # rate as CNY/USD
    ("a 13B model, budget $2000", {"params_b": 13.0}),  # no rate: note, budget unset
    ("预算3000-5000元", {"budget_cny": 5000.0}),  # a range plans for its upper bound
    ("预算800块", {"budget_cny": 800.0}),  # 块 is yuan here, not a GPU count
    ("预算两万五", {"budget_cny": 25_000.0}),  # colloquial 两万五
    # --- deadline ---
    ("3天内", {"deadline_hours": 72.0}),  # 天内
    ("两周", {"deadline_hours": 336.0}),  # bare weeks
    ("半个月", {"deadline_hours": 360.0}),  # 半个月 = 15 days
    ("一周内", {"deadline_hours": 168.0}),  # 一周内
    ("within 1 week", {"deadline_hours": 168.0}),  # within N week
    ("in 48 hours", {"deadline_hours": 48.0}),  # in N hours
    ("10小时内", {"deadline_hours": 10.0}),  # 小时内
    ("一个月内", {"deadline_hours": 720.0}),  # 一个月内 = 30 days
    ("by 5 days", {"deadline_hours": 120.0}),  # by N days
    ("within a week", {"deadline_hours": 168.0}),  # English 'a'
    # --- clouds ---
    ("腾讯云上训练Qwen2-7B", {"model": "qwen2-7b", "clouds": ["tencent"]}),  # a cloud named in a request
    ("TencentCloud", {"clouds": ["tencent"]}),  # one-word English name
    ("JD Cloud and tencent", {"clouds": ["jdcloud", "tencent"]}),  # both clouds, in order named
    ("只看京东云", {"clouds": ["jdcloud"]}),  # 只看
    ("不要腾讯云", {"clouds": ["jdcloud"]}),  # excluding one cloud leaves the other
    ("jdcloud only", {"clouds": ["jdcloud"]}),  # English only after the name
    # --- GPU include / exclude ---
    ("只用A100", {"gpu_include": [A100]}),  # 只用
    ("不要V100", {"gpu_exclude": [V100]}),  # 不要
    ("不用V100", {"gpu_exclude": [V100]}),  # 不用
    ("exclude V100, T4", {"gpu_exclude": [V100, T4]}),  # list after an exclusion
    ("no T4", {"gpu_exclude": [T4]}),  # no X
    ("用4090", {"gpu_include": [RTX4090]}),  # 用 + a bare-number GPU name
    ("只用A100，不要V100和T4", {"gpu_include": [A100], "gpu_exclude": [V100, T4]}),  # include and exclude in one message
    ("用A100-80GB训练Qwen2-7B", {"model": "qwen2-7b", "gpu_include": [A100_80]}),  # memory variant
    ("A100 80G 训练 Llama3-70B", {"model": "llama3-70b"}),  # named but not phrased as a constraint
    ("4090 预算4090元", {"budget_cny": 4090.0}),  # the amount is not a GPU
    # --- GPU count ---
    ("一张卡", {"gpu_count": 1}),  # 一张卡
    ("单卡", {"gpu_count": 1}),  # 单卡
    ("train on one GPU", {"gpu_count": 1}),  # one GPU
    ("a single GPU", {"gpu_count": 1}),  # a single GPU
    ("8卡", {"gpu_count": 8}),  # N卡
    ("8张A100", {"gpu_count": 8, "gpu_include": [A100]}),  # N张 + GPU name
    ("8 GPUs", {"gpu_count": 8}),  # N GPUs
    ("两张", {"gpu_count": 2}),  # bare 两张
    ("8x H800", {"gpu_count": 8, "gpu_include": [H800]}),  # Nx GPU name
    ("2台8卡", {"gpu_count": 16}),  # machines x GPUs
    # --- billing ---
    ("按量付费", {"billing": "on_demand"}),  # 按量付费
    ("按小时计费", {"billing": "on_demand"}),  # 按小时
    ("pay-as-you-go", {"billing": "on_demand"}),  # pay-as-you-go
    ("on-demand", {"billing": "on_demand"}),  # on-demand
    ("包年包月", {"billing": "monthly"}),  # 包年包月
    ("monthly subscription", {"billing": "monthly"}),  # monthly subscription
    ("竞价实例", {"billing": "spot"}),  # 竞价
    ("抢占式", {"billing": "spot"}),  # 抢占式
    ("spot", {"billing": "spot"}),  # spot
    # --- objective ---
    ("最便宜", {"objective": "cheapest"}),  # 最便宜
    ("最省钱", {"objective": "cheapest"}),  # 最省钱
    ("cheapest", {"objective": "cheapest"}),  # cheapest
    ("lowest cost", {"objective": "cheapest"}),  # lowest cost
    ("越快越好", {"objective": "fastest"}),  # 越快越好
    ("as fast as possible", {"objective": "fastest"}),  # as fast as possible
    ("性价比最高", {"objective": "balanced"}),  # 性价比 wins over the 最 inside it
    ("balanced", {"objective": "balanced"}),  # balanced
    # --- follow-ups ---
    ("预算改成8000呢", {"budget_cny": 8000.0}),  # period left out: merge keeps the previous one
    ("换成全参微调", {"method": "full"}),  # method change
    ("what if I use QLoRA instead?", {"method": "qlora", "quant_bits": 4}),  # QLoRA instead, 4 bits by default
    ("改用8卡", {"gpu_count": 8}),  # GPU count change
    ("数据加到20万条", {"samples": 200_000}),  # more data
    ("deadline 2 days", {"deadline_hours": 48.0}),  # deadline in English
    ("用A100呢", {"gpu_include": [A100]}),  # 呢 marks a follow-up, not a pure question
    # --- questions and garbage: no slots ---
    ("FP8是什么？A10支持吗", {}),  # a GPU named in a question is not a constraint
    ("why does ZeRO-3 save memory?", {}),  # a concept question
    ("Can I use A10?", {}),  # a GPU in a plain question is not a constraint
    ("腾讯云有H800吗", {}),  # availability question
    ("A100和H800哪个快？", {}),  # comparison question
    ("A100 30元/小时太贵了", {}),  # a price, not a budget
    ("asdfgh", {}),  # garbage
    ("", {}),  # empty
    ("🙂🙂", {}),  # emoji only
    # --- everything at once ---
    # a full Chinese request
    ("Qwen2-7B, 10万条, 每条约800 token, 3轮, 4k上下文, 8卡A100, 按量, 预算月均¥3000, 最便宜",
     {"model": "qwen2-7b", "samples": 100_000, "avg_tokens_per_sample": 800, "epochs": 3.0, "seq_len": 4096,
      "gpu_count": 8, "gpu_include": [A100], "billing": "on_demand", "budget_cny": 3000.0, "budget_period": "month",
      "objective": "cheapest"}),
    # a full English request; 'at 7.2' is the rate because the budget is in dollars
    ("Fine-tune Llama3-70B with QLoRA 8-bit on 8x A100 80GB, 50k examples, 3 epochs, seq 4096, "
     "budget $5000 total at 7.2, JD Cloud only, on-demand",
     {"model": "llama3-70b", "method": "qlora", "quant_bits": 8, "gpu_count": 8, "gpu_include": [A100_80],
      "samples": 50_000, "epochs": 3.0, "seq_len": 4096, "budget_cny": 36_000.0, "budget_period": "total",
      "clouds": ["jdcloud"], "billing": "on_demand"}),
    # pretraining: tokens, deadline, total budget; 10B tokens is not a 10B model
    ("Pretrain a 1.5B model on 10B tokens within 2 weeks, total budget ¥200k",
     {"params_b": 1.5, "method": "pretrain", "tokens": 1e10, "deadline_hours": 336.0, "budget_cny": 200_000.0,
      "budget_period": "total"}),
]


@pytest.mark.parametrize(("text", "expected"), SLOT_CASES, ids=[c[0][:40] or "<empty>" for c in SLOT_CASES])
def test_slots(text: str, expected: dict[str, object]) -> None:
    parsed = parse(text)
    assert parsed.slots == expected
    assert parsed.has_workload == bool(expected)


@pytest.mark.parametrize(
    ("text", "has_workload", "follow_up_only"),
    [
        ("用Qwen2-7B做问答微调，数据集10万条", True, False),  # a full request
        ("7B的模型，LoRA", True, False),  # a size counts as naming the model
        ("预算改成8000呢", True, True),  # changes a slot only
        ("what if I use QLoRA instead?", True, True),
        ("FP8是什么？A10支持吗", False, False),  # a pure question
        ("帮我写申请说明", False, False),  # a document request alone is not a workload
    ],
)
def test_workload_flags(text: str, has_workload: bool, follow_up_only: bool) -> None:
    parsed = parse(text)
    assert (parsed.has_workload, parsed.is_follow_up_only) == (has_workload, follow_up_only)


@pytest.mark.parametrize(
    ("text", "language"),
    [("用Qwen2-7B微调", "zh"), ("fine-tune Qwen2-7B", "en"), ("", "en"), ("🙂", "en"), ("千问", "zh")],
)
def test_language(text: str, language: str) -> None:
    assert parse(text).language == language


@pytest.mark.parametrize(
    ("text", "documents"),
    [
        ("帮我写申请说明和启动脚本", ["request_document", "launch_bundle"]),
        ("资源申请怎么写", ["request_document"]),
        ("give me the request document", ["request_document"]),
        ("and the launch script / yaml", ["launch_bundle"]),
        ("Qwen2-7B LoRA", []),
    ],
)
def test_wants_documents(text: str, documents: list[str]) -> None:
    assert parse(text).wants_documents == documents


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("Llama3-70B QLoRA 3-bit", "QLoRA 3-bit is not supported (use 4 or 8)"),
        ("a 13B model, budget $2000", "USD to CNY rate"),  # no rate anywhere
        ("预算$2000", "汇率"),  # the note follows the message language
        ("阿里云能用吗", "阿里云"),  # a cloud we do not cover
        ("Qwen2-7B和Llama3-70B", "qwen2-7b"),  # several models: which one was taken
        ("用H20训练", "H20"),  # a GPU constraint on a name the catalog lacks
    ],
)
def test_notes(text: str, fragment: str) -> None:
    assert any(fragment in note for note in parse(text).unparsed_notes)


def test_usd_rate_passed_in() -> None:
    parsed = parse("budget $2000 per month", rate=7.0)
    assert parsed.slots == {"budget_cny": 14_000.0, "budget_period": "month"}
    assert parsed.unparsed_notes == []


def test_rate_in_message_beats_rate_passed_in() -> None:
    assert parse("$1000 budget, 汇率7.2", rate=7.0).slots["budget_cny"] == 7200.0


def test_only_first_4000_chars_are_read() -> None:
    assert parse("x" * MAX_CHARS + " Qwen2-7B").slots == {}
    assert parse("x" * (MAX_CHARS - 20) + " Qwen2-7B").slots == {"model": "qwen2-7b"}


# --- Chinese and mixed numerals -----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("十", 10), ("十五", 15), ("二十五", 25), ("一百零五", 105), ("一百五", 150),  # colloquial tail
        ("三千", 3000), ("3千", 3000), ("两万", 20_000), ("两万五", 25_000), ("一万五千", 15_000),
        ("十万", 100_000), ("1.5万", 15_000), ("1万5", 15_000), ("1万5000", 15_000), ("5000万", 5e7),
        ("两千五百万", 2.5e7), ("1亿", 1e8), ("一亿五千万", 1.5e8), ("720亿", 7.2e10), ("130亿", 1.3e10),
        ("半", 0.5), ("50,000", 50_000), ("3", 3), ("贰仟", 2000),
    ],
)
def test_zh_number(text: str, value: float) -> None:
    assert zh_number(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["", "abc", "3个", "万a"])
def test_zh_number_rejects(text: str) -> None:
    assert zh_number(text) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [("100k", 1e5), ("2T", 2e12), ("3w", 3e4), ("1.5M", 1.5e6), ("10B", 1e10), ("2 million", 2e6), ("two", 2)],
)
def test_parse_number_suffixes(text: str, value: float) -> None:
    assert parse_number(text) == pytest.approx(value)


# --- multi-turn merge -----------------------------------------------------------------------------------------

def _turns(*messages: str) -> Workload:
    workload: Workload | None = None
    for message in messages:
        workload = Workload.model_validate(merge_slots(workload, parse(message)))
    assert workload is not None
    return workload


def test_merge_follow_ups_change_only_what_they_mention() -> None:
    w = _turns("用Qwen2-7B做问答微调，数据集10万条，总预算5万", "预算改成8000呢")
    assert (w.model, w.samples, w.budget_cny, w.budget_period) == ("qwen2-7b", 100_000, 8000.0, "total")


def test_merge_method_away_from_qlora_clears_bits() -> None:
    w = _turns("Qwen2-7B QLoRA 8bit", "换成全参微调")
    assert (w.method, w.quant_bits) == ("full", None)


def test_merge_switch_to_qlora_defaults_to_4_bits() -> None:
    w = _turns("Qwen2-7B full fine-tune", "what if I use QLoRA instead?")
    assert (w.method, w.effective_quant_bits) == ("qlora", 4)


def test_merge_lists_are_replaced_not_appended() -> None:
    w = _turns("Qwen2-7B，只用A100，腾讯云", "只看京东云", "只用4090")
    assert (w.clouds, w.gpu_include) == (["jdcloud"], [RTX4090])


def test_merge_new_dataset_size_drops_the_other_units() -> None:
    w = _turns("Qwen2-7B 继续预训练 1亿token", "数据加到20万条")
    assert (w.samples, w.tokens) == (200_000, None)


def test_merge_model_replaces_bare_size() -> None:
    w = _turns("7B的模型 LoRA 3轮", "换成Llama3-70B")
    assert (w.model, w.params_b, w.epochs) == ("llama3-70b", None, 3.0)


def test_merge_several_turns() -> None:
    w = _turns("用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000", "改用8卡", "deadline 2 days", "只看京东云")
    assert (w.gpu_count, w.deadline_hours, w.clouds, w.budget_cny) == (8, 48.0, ["jdcloud"], 3000.0)


def test_merge_without_previous_is_just_the_slots() -> None:
    assert merge_slots(None, parse("Qwen2-7B 3轮")) == {"model": "qwen2-7b", "epochs": 3.0}


def test_merge_does_not_share_lists_with_the_message() -> None:
    parsed = parse("只用A100")
    merged = merge_slots(None, parsed)
    assert isinstance(merged["gpu_include"], list)
    merged["gpu_include"].append("X")
    assert parsed.slots["gpu_include"] == [A100]


# --- robustness -----------------------------------------------------------------------------------------------

_FRAGMENTS = [
    "Qwen2-7B", "千问2-7B", "7B", "70亿参数", "全参", "QLoRA", "3-bit", "4bit", "10万条", "一万五千", "500GB", "2T",
    "tokens", "每条约800 token", "3轮", "4k上下文", "预算", "月均¥3000", "$2000", "总", "3天内", "半个月", "腾讯云",
    "京东云", "不要", "只用", "A100", "V100", "4090", "8卡", "两张", "按量", "包月", "spot", "最便宜", "越快越好",
    "?", "吗", "，", " ", "-", ".", "1", "万", "亿", "k", "x", "×", "呢", "instead", "within", "2 days", "1,000",
]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_never_raises_on_arbitrary_text(text: str) -> None:
    parsed = parse(text)
    assert parsed.has_workload == bool(parsed.slots)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=25).map("".join))
def test_slots_always_fit_the_schema(text: str) -> None:
    parsed = parse(text, rate=7.2)
    merged = merge_slots(None, parsed)
    merged.setdefault("params_b", 7.0)  # the schema needs a model or a size; the slots may name neither
    Workload.model_validate(merged)


# Regressions found by the eval suite (evals/scenarios.yaml), each naming the bug.
READER_REGRESSIONS = [
    # 一共 after 预算 was read as a budget of ¥1 (the 一 of 一共)
    ("Qwen2.5-7B QLoRA，2万条，预算一共两万元", {"budget_cny": 20000.0, "budget_period": "total"}),
    # 'eight' lost its final 't' to the trillion suffix, so it never parsed as a count
    ("Full fine-tune Qwen2.5-7B on eight A100s, 20k samples", {"gpu_count": 8, "gpu_include": ["A100-40G-SXM"]}),
    ("train for eight epochs on Qwen2-7B", {"epochs": 8.0}),
    # "can't use" was read as 'use' -> include, the opposite of what the user said
    ("Baichuan2-13B LoRA, 10k samples, we can't use V100 or T4", {"gpu_exclude": ["V100-32G-SXM2", "T4"]}),
    ("Qwen2-7B LoRA, we cannot use T4", {"gpu_exclude": ["T4"]}),
    # English number words before a GPU name set the count and the include
    ("using two A100s for Qwen2-7B LoRA", {"gpu_count": 2, "gpu_include": ["A100-40G-SXM"]}),
]


@pytest.mark.parametrize(("text", "expected"), READER_REGRESSIONS)
def test_reader_regressions(text: str, expected: dict[str, object]) -> None:
    slots = parse_message(text, MODELS, GPUS).slots
    for key, value in expected.items():
        assert slots.get(key) == value, (key, slots)


@pytest.mark.parametrize("question", ["LoRA和QLoRA有什么区别？", "What is the difference between LoRA and QLoRA?"])
def test_method_named_in_a_pure_question_is_not_a_workload(question: str) -> None:
    # the LoRA-vs-QLoRA question used to become a workload without a model, so nothing was cited
    assert not parse_message(question, MODELS, GPUS).has_workload


@pytest.mark.parametrize(("text", "dropped"), [
    ("预算-500，用Qwen2-7B微调", "budget_cny"),  # the sign used to be dropped: a budget of ¥500
    ("budget -500 yuan, qwen2 7b LoRA", "budget_cny"),
    ("qwen2 7b LoRA with -5 epochs", "epochs"),
])
def test_negative_numbers_are_reported_not_flipped(text: str, dropped: str) -> None:
    parsed = parse_message(text, MODELS, GPUS)
    assert dropped not in parsed.slots
    assert any("-5" in n or "负数" in n for n in parsed.unparsed_notes)


@pytest.mark.parametrize(("text", "slot", "value"), [
    ("Qwen2-7B LoRA，预算3000-5000元", "budget_cny", 5000.0),  # a range, not a negative number
    ("qwen2 7b QLoRA 4-bit", "quant_bits", 4),
])
def test_dashes_in_ranges_and_names_are_not_negative(text: str, slot: str, value: object) -> None:
    parsed = parse_message(text, MODELS, GPUS)
    assert parsed.slots.get(slot) == value and not parsed.unparsed_notes
