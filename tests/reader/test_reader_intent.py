"""The reader's question type (the scored classifier, service/reader/read.py) and the subject the slot finders
return: a GPU named in any phrasing (with its count), several as a comparison's options, a change with a before
and an after. These are the phrasings of earlier issues; the real-question eval (evals/questions) measures the
phrasings nobody wrote for the reader."""

from __future__ import annotations

import pytest

from service.questions.registry import decide as question_type
from service.reader.read import Reader, Reading
from tests.reader.test_reader import GPUS, MODELS

GPUS_MORE = {**GPUS, "3090": "RTX-3090", "l20": "L20", "h20": "H20", "l40s": "L40S", "a10": "A10"}
READER = Reader(MODELS, GPUS_MORE, question_type)


def read(text: str, prev: str | None = None) -> Reading:
    return READER.read(text, prev_type=prev)


@pytest.mark.parametrize(("text", "qtype", "gpus", "count"), [
    ("4090能跑qwen2 7b lora吗", "feasibility", ("RTX-4090",), None),  # issue: the 4090 was never mentioned
    ("单卡A100 80G够不够 qwen2 7b lora", "feasibility", ("A100-80G-SXM",), 1),  # '单卡 ... 够不够'
    ("两张4090跑得动qwen2 7b lora不", "feasibility", ("RTX-4090",), 2),  # Chinese count word, trailing 不
    ("is 2x 3090 enough for qwen2 7b lora", "feasibility", ("RTX-3090",), 2),
    ("qwen2-7b lora on a single L20 48G?", "feasibility", ("L20",), 1),  # 'on a single L20 48G'
    ("需要几张a100 全参qwen2 7b", "min_gpus", ("A100-40G-SXM",), None),
    ("min number of 4090s for llama 3 70b lora", "min_gpus", ("RTX-4090",), None),
    ("mixtral qlora最少要多大显存", "min_gpus", (), None),  # least memory, no GPU
    ("A100 vs H800 for qwen2 7b full fine-tune", "compare", ("A100-40G-SXM", "H800-SXM"), None),
    ("14b lora用A10还是L20 哪个便宜", "compare", ("A10", "L20"), None),
    ("8张A100全参微调qwen2 7b 10万条", "plan", ("A100-40G-SXM",), 8),  # a statement: a plan constraint
])
def test_question_type_and_subject(text: str, qtype: str, gpus: tuple[str, ...], count: int | None) -> None:
    r = read(text)
    assert r.type == qtype, r.scores
    assert r.parsed.subject.gpus == gpus
    assert r.own_slots.get("gpu_count") == count


def test_a_follow_up_without_type_words_keeps_the_previous_type() -> None:
    assert read("那京东云呢", prev="feasibility").type == "feasibility"
    assert read("两张呢", prev="serving").type == "serving"


@pytest.mark.parametrize(("text", "before", "after"), [
    ("72B的lora改成全参要贵多少", "lora", "full"),  # from LoRA to full
    ("how much more does a full finetune of 72B cost vs lora", "lora", "full"),  # 'vs lora' is the base
    ("switching from full fine-tune to LoRA, how much does that save", "full", "lora"),
])
def test_savings_in_one_message_has_a_before_and_an_after(text: str, before: str, after: str) -> None:
    r = read(text)
    assert r.type == "savings", r.scores
    assert r.parsed.subject.before == {"method": before}
    assert r.parsed.subject.after == {"method": after}


@pytest.mark.parametrize(("text", "kind", "options"), [
    ("腾讯云和京东云哪个便宜 qwen2 7b lora", "cloud", ("tencent", "jdcloud")),
    ("qwen2 7b lora和qlora哪个更省钱", "method", ("lora", "qlora")),
    ("spot vs on-demand for qwen2 7b lora, which costs less", "billing", ("spot", "on_demand")),
])
def test_comparisons_of_clouds_methods_and_billing(text: str, kind: str, options: tuple[str, ...]) -> None:
    r = read(text)
    assert (r.type, r.parsed.subject.compare_kind, r.parsed.subject.options) == ("compare", kind, options)


@pytest.mark.parametrize(("text", "before", "after"), [
    ("V100换成A100能快多少 qwen2 7b lora", {"gpu_include": ["V100-32G-SXM2"]}, {"gpu_include": ["A100-40G-SXM"]}),
    ("how much do i save if i go monthly instead of pay as you go", {"billing": "on_demand"},
     {"billing": "monthly"}),  # 'instead of' names the base
])
def test_changes_named_in_one_message(text: str, before: dict[str, object], after: dict[str, object]) -> None:
    r = read(text)
    # both ask what a change saves: a billing change with no job is answered from the instances' prices (the
    # catalog's break-even, service/questions/savings.py), still the savings type
    assert r.type == "savings", r.scores
    assert (r.parsed.subject.before, r.parsed.subject.after) == (before, after)


@pytest.mark.parametrize(("text", "qtype"), [
    ("24G显存能微调qwen2 7b吗", "feasibility"),  # a memory size as the GPU asked about
    ("What GPU do I need for qwen2 7b QLoRA?", "min_gpus"),
    ("上线一个Llama-3-70B的对话服务 需要几张卡", "serving"),  # issue 20: was LoRA memory
    ("A10支持FP8吗", "knowledge"),  # issue 20: was 'can your job run on an A10'
    ("京东云上有A100吗", "knowledge"),  # a fact of the catalog's own tables: the catalog question type
    ("训一个epoch要20小时正常吗 qwen2 7b lora 单卡A10", "diagnose"),
    ("8*H800能训多大的模型", "capacity"),
    ("今天天气怎么样", "out_of_scope"),
    ("从头预训一个3B 数据300B token 两周训完 最少几张H800", "min_gpus"),
    # deploying something that is not a model, or only another cloud's console: out of scope, not a serving plan
    ("帮我部署一个wordpress博客", "out_of_scope"),
    ("how do I deploy a website on AWS", "out_of_scope"),
    ("阿里云控制台怎么创建ECS实例", "out_of_scope"),
    ("部署qwen2 7b要几张4090", "serving"),
    ("上线一个Llama-3-70B的对话服务", "serving"),
])
def test_question_types_of_the_issue(text: str, qtype: str) -> None:
    assert read(text).type == qtype, read(text).scores


def test_the_reading_says_how_sure_it_is() -> None:
    sure = read("4090能跑qwen2 7b lora吗")
    assert sure.confidence == "sure" and sure.scores[sure.type] >= 0.6
    assert abs(sum(sure.scores.values()) - 1.0) < 1e-6


@pytest.mark.parametrize(("text", "qtype"), [
    # what a server did, asked whether it is normal or why: its cause, not a new deployment
    ("用vllm部署qwen2 7b后，8 并发时显存占用涨到 70G，这符合预期么", "diagnose"),
    ("a10 上 vllm 部署 qwen2 7b，一次请求要 20 秒，这是正常的吗", "diagnose"),
    ("serving qwen2 7b with vllm on an a10, it hangs at 20 concurrent requests. why?", "diagnose"),
    # a deployment asked about, with a 'why' of its own: still sized as a deployment, a target or a budget is no
    # sighting ('2 秒以内', '达到 100', '只有 5000')
    ("部署qwen2 7b要几张a10，为什么", "serving"),
    ("首字延迟要求 2 秒以内，部署 qwen2 7b 要几张 a10？为什么", "serving"),
    ("目标并发达到 100，部署 qwen2 7b 要几张 a10，为什么", "serving"),
    ("我想问一下为什么zero3比zero2慢", "knowledge"),  # asking, not their run
    # their own training run's figure, asked why: a diagnosis; the same why asked in general stays knowledge
    ("我用8张3090 zero3 lora训qwen2 7b，显存占用也在17G左右，这是什么原因", "diagnose"),
    ("为什么zero3比zero2慢", "knowledge"),
])
def test_a_servers_observation_asked_why_is_a_diagnosis(text: str, qtype: str) -> None:
    r = read(text)
    assert r.type == qtype, (r.scores, r.frame.task, r.frame.asked)


@pytest.mark.parametrize(("text", "qtype"), [
    # what a card supports, asked outright with a job beside it: the fact first (the job is sized below it)
    ("a100 支持 fp8 吗？想训 qwen2 7b lora", "knowledge"),
    ("v100上能用bf16训qwen2 7b吗", "knowledge"),
    ("can i use bf16 on a 3090 for qwen2 7b lora?", "knowledge"),
    # a fit asked, the precision only a setting: still the fit; a count or a server beside the support question
    # stays the count or the server
    ("4090能跑qwen2 7b lora吗", "feasibility"),
    ("h800 支持 fp8 吗 全参训练 qwen2 72b 需要多少张卡", "min_gpus"),
    ("l20 支持 fp8 吗，部署 qwen2 72b 要几张", "serving"),
])
def test_a_support_question_with_a_job_beside_it_is_answered_first(text: str, qtype: str) -> None:
    r = read(text)
    assert r.type == qtype, (r.scores, r.frame.task, r.frame.asked, r.frame.fact)
