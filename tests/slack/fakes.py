"""A scripted assistant implementing AssistantProtocol, and a tiny synthetic plan in the plan_to_dict shape."""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from service.assistant.types import AskResult, Citation, SessionInfo, SessionMessage, StreamEvent
from service.errors import AdvisorError
from tests.answers import plan_answer


class FakeSessionNotFound(AdvisorError):
    code = "session_not_found"


class FakeSessionFull(AdvisorError):
    code = "session_full"


def candidate(cloud: str, itype: str, gpu: str, count: int, hours: float, cost: float, **extra: Any) -> dict[str, Any]:
    return {"cloud": cloud, "instance_type": itype, "gpu": gpu, "gpu_count": float(count), "nodes": 1, "vcpus": 16,
            "memory_gib": 96.0, "strategy": {"label": "LoRA r8 + BF16"}, "memory_per_gpu_gib": 30.12,
            "gpu_memory_gib": 40.0, "training_hours": hours, "billing": "on_demand", "total_cost_cny": cost,
            "price": {"price_cny": 26.97, "unit": "hour", "source": "prices.md §2", "as_of": "2026-09-15",
                      "confidence": "third_party"},
            "quote_link": "https://buy.cloud.tencent.com/price/cvm/calculator", "within_budget": True,
            "warnings": [], **extra}


PRICE_WARNING = {"code": "price_third_party", "severity": "warning", "message": "Price from a third-party capture; confirm it.",
                 "message_zh": "价格来自第三方采集，请确认。"}
PLAN: dict[str, Any] = {
    "model": {"id": "Qwen2-7B", "name": "Qwen2-7B"},
    "job": {"method": "lora"},
    "candidates": [
        candidate("tencent", "GT4.4XLARGE96", "A100-40G-SXM", 1, 11.9, 321.07, warnings=[PRICE_WARNING]),
        candidate("tencent", "GT4.41XLARGE948", "A100-40G-SXM", 8, 1.5, 369.0),
        candidate("jdcloud", "p.n1v100.2xlarge", "V100-32G-SXM2", 1, 53.4, 1106.0, within_budget=False),
    ],
    "picks": {"tencent": "GT4.4XLARGE96", "jdcloud": "p.n1v100.2xlarge"},
    "alternatives": {"faster": "GT4.41XLARGE948"},
    "notes": [],
}
GATE_S = 30.0  # a gated answer waits this long at most: far beyond any acknowledgement, so one that waited shows

ANSWER_ZH = ("## 推荐配置：Qwen2-7B\n\n| 云 | 实例 |\n|---|---|\n| 腾讯云 | GT4.4XLARGE96 |\n\n"
             "每卡显存 **30.12 GiB**，可放下。")
ANSWER_EN = "## Recommendation: Qwen2-7B\n\nPer-GPU memory **30.12 GiB**, fits."
REQUEST_DOC = "# AI训练资源申请说明\n\n| 项 | 值 |\n|---|---|\n| GPU | A100 |\n"
BUNDLE = {"train.yaml": "model_name_or_path: Qwen/Qwen2-7B\n", "data/dataset_info.json": "{}\n",
          "launch.sh": "#!/bin/bash\nllamafactory-cli train train.yaml\n"}


# A serving answer as the offline model writes it (prompts/answer.zh.yaml srv_*): the count, the figures, where to
# rent it, the launch command, the assumptions.
SERVING_ZH = ("需要 **2 张 NVIDIA L20 48GB**（每个副本 1 张 × 2 个副本）：用 vLLM 部署 Qwen2.5-14B（BF16 权重）。\n"
              "每卡权重 27.5 GiB，KV 缓存每卡 12.0 GiB = 65,536 tokens。\n\n"
              "### 租用方案（24×7 运行）\n- 腾讯云 PNV5b.8XLARGE96（1 × L20）× 2 台：¥20.00/小时\n\n"
              "### 启动命令\n```bash\nvllm serve Qwen/Qwen2.5-14B \\\n  --port 8000\n```\n\n"
              "### 估算假设\n- 请求长度假设为输入 1024 + 输出 256 tokens，可按实际流量提供。")


@dataclass
class FakeAssistant:
    delay_s: float = 0.0
    gate: threading.Event | None = None  # set: ask() waits for it (at most GATE_S), an answer that is not ready yet
    fail_with: Exception | None = None
    answer_zh: str = ANSWER_ZH
    serving: Any = None  # a ServingAnswer: every answer is this serving answer (SERVING_ZH's text)
    sessions: dict[str, int] = field(default_factory=dict)  # session id -> turns
    max_turns: int = 0  # a session holding this many turns refuses the next (0: no cap)
    asked: list[tuple[str, str | None]] = field(default_factory=list)
    ratings: list[tuple[str, int, str, str, str]] = field(default_factory=list)  # (session, turn, rating, rater, src)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def ask(self, message: str, session_id: str | None = None) -> AskResult:
        with self._lock:
            self.asked.append((message, session_id))
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.gate is not None:
            self.gate.wait(GATE_S)
        if self.fail_with is not None:
            raise self.fail_with
        if session_id is not None and session_id not in self.sessions:
            raise FakeSessionNotFound(f"Unknown session '{session_id}'.")
        if session_id is not None and self.max_turns and self.sessions[session_id] >= self.max_turns:
            raise FakeSessionFull(f"Session '{session_id}' has {self.max_turns} turns.", "Start a new chat.")
        sid = session_id or uuid.uuid4().hex
        self.sessions[sid] = self.sessions.get(sid, 0) + 1
        zh = bool(re.search(r"[\u4e00-\u9fff]", message))
        docs: dict[str, Any] = {}
        if re.search(r"申请说明|request document", message):
            docs["request_document"] = REQUEST_DOC
        if re.search(r"启动脚本|launch bundle", message):
            docs["launch_bundle"] = dict(BUNDLE)
        if self.serving is not None:
            return AskResult(session_id=sid, answer_markdown=SERVING_ZH, language="zh", intent="serving",
                             answer=self.serving, backend="fake")
        return AskResult(
            session_id=sid, answer_markdown=self.answer_zh if zh else ANSWER_EN, language="zh" if zh else "en",
            intent="plan", answer=plan_answer(PLAN), backend="fake", documents=docs,
            citations=[Citation(id="guide/04.zh.md#lora", title="LoRA 显存", source="guide/04.zh.md"),
                       Citation(id="web", title="Tencent GPU <types>", source="cloud.tencent.com",
                                url="https://cloud.tencent.com/document/product/560/19700")],
        )

    def stream(self, message: str, session_id: str | None = None) -> Iterator[StreamEvent]:
        yield StreamEvent(type="final", data=self.ask(message, session_id).model_dump())

    def has_session(self, session_id: str) -> bool:
        return session_id in self.sessions

    def list_sessions(self) -> list[SessionInfo]:
        return []

    def session_messages(self, session_id: str, owner: str | None = None) -> list[SessionMessage]:
        if session_id not in self.sessions:
            raise FakeSessionNotFound(f"Unknown session '{session_id}'.")
        return [SessionMessage(role=role, content="…", turn=n, created_at="t")
                for n in range(1, self.sessions[session_id] + 1) for role in ("user", "assistant")]

    def rate_turn(self, session_id: str, turn: int, rating: str, *, rater: str = "", source: str = "") -> None:
        if not 1 <= turn <= self.sessions.get(session_id, 0):
            raise FakeSessionNotFound(f"Session '{session_id}' has no turn {turn}.")
        self.ratings.append((session_id, turn, rating, rater, source))

    def rename_session(self, session_id: str, title: str) -> SessionInfo:
        raise NotImplementedError

    def delete_session(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)
