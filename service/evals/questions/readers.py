"""Who reads each labelled question in an eval run: reading and answering measured apart.

    offline   the offline reader (the default, no key)
    llm       the LLM reader over the configured provider (GPU_ADVISOR_LLM_BASE_URL, _MODEL, _API_KEY)
    stored    the LLM reader, its provider a stand-in on 127.0.0.1 that serves the frames an LLM wrote for each
              message beforehand (evals/questions/frames): today's LLMs as readers, with no provider reachable
    gold      the same stand-in serving each question's frame with its label applied (frames.gold_draft): the
              answer layer's ceiling

    with reader_target(settings, catalog, reader, splits) as target: ...
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from service.catalog.loader import Catalog
from service.evals.questions.dataset import Split, load_split
from service.evals.questions.frame_server import FrameServer, keyed_frames
from service.evals.questions.frames import gold_frames, load_frames
from service.evals.targets import Target
from service.reader.llm_schema import FrameDraft
from service.settings import Settings

ReaderChoice = Literal["offline", "llm", "stored", "gold"]
READERS: tuple[str, ...] = ("offline", "llm", "stored", "gold")


def reader_settings(settings: Settings, reader: ReaderChoice, base_url: str = "") -> Settings:
    """The settings an eval run's assistant is built with: `llm` is the LLM reader over the configured provider,
    `stored` / `gold` the LLM reader over the stand-in at `base_url`, `offline` the offline reader whatever the
    environment."""
    if reader == "llm":
        return settings.model_copy(update={"llm": "openai", "llm_mode": "reader"})
    if reader in ("stored", "gold"):
        return settings.model_copy(update={
            "llm": "openai", "llm_mode": "reader", "llm_base_url": base_url, "llm_model": f"{reader}-frames",
            "llm_api_key": "stand-in", "llm_structured": "function_calling", "llm_timeout_s": 10.0})
    return settings.model_copy(update={"llm": "offline"})


def served_frames(reader: ReaderChoice, catalog: Catalog, splits: tuple[Split, ...]) -> dict[str, str]:
    """The stand-in's frames for every question of the splits (prompt key -> frame JSON)."""
    from service.questions.registry import decide as question_type
    from service.questions.turn import Names
    from service.reader.from_frame import Names as DraftNames
    from service.reader.from_frame import reading_from_draft

    names = Names(catalog)
    draft_names = DraftNames(names.reader.model_aliases, names.reader.gpu_aliases)

    def type_of(draft: FrameDraft) -> str:
        return reading_from_draft(draft, "", draft_names, question_type).type

    out: dict[str, str] = {}
    for split in splits:
        questions = load_split(split)
        stored = load_frames(split)
        frames = gold_frames(questions, stored, type_of) if reader == "gold" else stored
        out.update(keyed_frames(([*q.turns, q.text], frames[q.id]) for q in questions if q.id in frames))
    return out


@contextmanager
def reader_target(settings: Settings, catalog: Catalog, reader: ReaderChoice,
                  splits: tuple[Split, ...]) -> Iterator[Target]:
    """The in-process assistant reading with `reader` (a stand-in provider runs while the target is in use)."""
    from service.evals.runner import assistant_target

    if reader not in ("stored", "gold"):
        target = assistant_target(reader_settings(settings, reader), catalog, retriever="bm25")
        try:
            yield target
        finally:
            target.close()
        return
    with FrameServer(served_frames(reader, catalog, splits)) as server:
        target = assistant_target(reader_settings(settings, reader, server.url), catalog, retriever="bm25")
        try:
            yield target
        finally:
            target.close()
