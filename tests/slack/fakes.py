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


class FakeSessionNotFound(AdvisorError):
    code = "session_not_found"


def candidate(cloud: str, itype: str, gpu: str, count: int, hours: float, cost: float, **extra: Any) -> dict[str, Any]:
    return {"cloud": cloud, "instance_type": itype, "gpu": gpu, "gpu_count": float(count), "nodes": 1, "vcpus": 16,
            "memory_gib": 96.0, "strategy": {"label": "LoRA r8 + BF16"}, "memory_per_gpu_gib": 30.12,
            "gpu_memory_gib": 40.0, "training_hours": hours, "billing": "on_demand", "total_cost_cny": cost,
            "price": {"price_cny": 26.97, "unit": "hour", "source": "prices.md §2", "as_of": "2026-09-15",
                      "confidence": "third_party"},
            "quote_link": "https://buy.cloud.tencent.com/price/cvm/calculator", "within_budget": True,
            "warnings": [], **extra}


PRICE_WARNING = {"code": "price_third_party", "message": "Price from a third-party capture; confirm it.",
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
ANSWER_ZH = ("## 推荐配置：Qwen2-7B\n\n| 云 | 实例 |\n|---|---|\n| 腾讯云 | GT4.4XLARGE96 |\n\n"
             "每卡显存 **30.12 GiB**，可放下。")
ANSWER_EN = "## Recommendation: Qwen2-7B\n\nPer-GPU memory **30.12 GiB**, fits."
REQUEST_DOC = "# AI训练资源申请说明\n\n| 项 | 值 |\n|---|---|\n| GPU | A100 |\n"
BUNDLE = {"train.yaml": "model_name_or_path: Qwen/Qwen2-7B\n", "data/dataset_info.json": "{}\n",
          "launch.sh": "#!/bin/bash\nllamafactory-cli train train.yaml\n"}


@dataclass
class FakeAssistant:
    delay_s: float = 0.0
    fail_with: Exception | None = None
    answer_zh: str = ANSWER_ZH
    sessions: dict[str, int] = field(default_factory=dict)  # session id -> turns
    asked: list[tuple[str, str | None]] = field(default_factory=list)
    ratings: list[tuple[str, int, str, str, str]] = field(default_factory=list)  # (session, turn, rating, rater, src)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def ask(self, message: str, session_id: str | None = None) -> AskResult:
        with self._lock:
            self.asked.append((message, session_id))
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.fail_with is not None:
            raise self.fail_with
        if session_id is not None and session_id not in self.sessions:
            raise FakeSessionNotFound(f"Unknown session '{session_id}'.")
        sid = session_id or uuid.uuid4().hex
        self.sessions[sid] = self.sessions.get(sid, 0) + 1
        zh = bool(re.search(r"[\u4e00-\u9fff]", message))
        docs: dict[str, Any] = {}
        if re.search(r"申请说明|request document", message):
            docs["request_document"] = REQUEST_DOC
        if re.search(r"启动脚本|launch bundle", message):
            docs["launch_bundle"] = dict(BUNDLE)
        return AskResult(
            session_id=sid, answer_markdown=self.answer_zh if zh else ANSWER_EN, language="zh" if zh else "en",
            recommendation=PLAN, backend="fake", documents=docs,
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
