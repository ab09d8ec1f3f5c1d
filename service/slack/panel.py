"""Slack's AI app panel (the assistant side view): suggested prompts and a greeting in the user's language when a
thread starts, and the thread's title once the first question is answered. Pure pieces; handlers.py calls Slack.

    user_lang(client, "U1", cache)     # "zh" for a zh-* Slack locale (users.info include_locale), else "en"
    SUGGESTED["zh"]                    # four prompts, one per question type people ask most
    thread_title(result, question)     # "Qwen2-7B · LoRA 训练配置" / "Qwen2-7B · LoRA training plan"
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from service.assistant.types import AskResult
from service.slack.cards import training_plan
from service.slack.kit import METHODS, Lang, tr
from service.slack.mrkdwn import truncate

log = logging.getLogger(__name__)
MAX_TITLE = 60
MAX_CACHED_USERS = 5000
DEFAULT_LANG: Lang = "zh"  # when Slack does not say: the people this app serves mostly write Chinese

# (title shown on the chip, message sent when clicked): a plan, a feasibility check, a comparison, billing
SUGGESTED: dict[Lang, list[dict[str, str]]] = {
    "zh": [{"title": "规划一次微调", "message": "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000"},
           {"title": "这张卡跑得动吗", "message": "单卡4090能跑14B的LoRA吗"},
           {"title": "哪个更划算", "message": "70B做QLoRA，A800和H800哪个划算"},
           {"title": "包月还是按量", "message": "训练20小时的任务，包月和按量怎么选"}],
    "en": [{"title": "Plan a fine-tune", "message": "LoRA fine-tune Qwen2-7B on 100k QA pairs, budget ¥3000 a month"},
           {"title": "Will it fit?", "message": "Can a single 4090 run 14B LoRA?"},
           {"title": "Which is cheaper?", "message": "70B QLoRA: A800 or H800, which is cheaper?"},
           {"title": "Monthly or on-demand?", "message": "For a 20-hour training job, monthly or on-demand billing?"}],
}


def prompts_title(lang: Lang) -> str:
    return tr(lang, "可以这样问：", "Try asking:")


def greeting(lang: Lang) -> str:
    return tr(lang, "你好！告诉我你的训练任务（模型、方法、数据量、预算、期限），我给出腾讯云和京东云上的配置、时长和费用，"
              "每个数字都来自规划引擎并注明来源。",
              "Hi! Describe your training job (model, method, data size, budget, deadline) and I will give you the "
              "Tencent Cloud and JD Cloud configuration, time and cost, every figure from the planning engine with "
              "its source.")


def user_lang(client: WebClient, user_id: str, cache: MutableMapping[str, Lang]) -> Lang:
    """The user's language from their Slack locale (needs users:read); DEFAULT_LANG when Slack does not say."""
    if not user_id:
        return DEFAULT_LANG
    if user_id in cache:
        return cache[user_id]
    try:
        user: Any = client.users_info(user=user_id, include_locale=True).get("user") or {}
    except SlackApiError as exc:  # no users:read scope (an app installed from an older manifest)
        log.info("no locale for %s: %s", user_id, exc.response.get("error"))
        return DEFAULT_LANG
    locale = str(user.get("locale") or "")
    lang: Lang = DEFAULT_LANG if not locale else "zh" if locale.lower().startswith("zh") else "en"
    if len(cache) >= MAX_CACHED_USERS:
        cache.clear()
    cache[user_id] = lang
    return lang


def thread_title(result: AskResult | None, question: str) -> str:
    """The job the thread plans ("Qwen2-7B · LoRA 训练配置"), else the first question, cut to MAX_TITLE."""
    plan = training_plan(result)
    model, job = plan.get("model"), plan.get("job")
    name = str(model.get("name") or model.get("id") or "") if isinstance(model, dict) else ""
    if result is not None and name:
        lang: Lang = result.language
        pair = METHODS.get(str(job.get("method") or "")) if isinstance(job, dict) else None
        method = f" · {tr(lang, *pair)}" if pair else ""
        return truncate(f"{name}{method} " + tr(lang, "训练配置", "training plan"), MAX_TITLE)
    return truncate(" ".join(question.split()), MAX_TITLE)
