"""Prompts and answer phrases live in prompts/ and are loaded by name; a missing one is a clear error."""

from __future__ import annotations

import string
from functools import lru_cache
from pathlib import Path

from service.errors import AdvisorError
from service.lexicon import lexicon
from service.questions.phrases import Phrases
from service.yamlio import load_yaml


class PromptError(AdvisorError):
    code = "prompt_missing"


@lru_cache(maxsize=16)
def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PromptError(f"Prompt file {path} is missing.", "Restore it from the repository.") from exc


def render_prompt(prompts_dir: Path, name: str, **values: str) -> str:
    """Render prompts/<name>.md with $placeholders; every placeholder must get a value."""
    text = _read(prompts_dir / f"{name}.md")
    try:
        return string.Template(text).substitute(values)
    except KeyError as exc:
        raise PromptError(f"Prompt {name} needs a value for {exc}.", "Pass every placeholder.") from exc


@lru_cache(maxsize=4)
def phrases(prompts_dir: Path, lang: str) -> Phrases:
    """The answer phrases of one language, with the names of clouds, methods, billing modes, objectives, engines
    and question types from the lexicon (knowledge/lexicon.yaml), so every answer names them one way."""
    data = load_yaml(_read(prompts_dir / f"answer.{lang}.yaml"))
    if not isinstance(data, dict):
        raise PromptError(f"prompts/answer.{lang}.yaml must be a mapping.", "Check the file.")
    lex = lexicon()
    types = dict(lex.labels("question_types", lang))
    for path in sorted((prompts_dir / "questions").glob("*.yaml")):  # one file per question type: its phrases
        own = load_yaml(_read(path)) or {}
        if not isinstance(own, dict) or not isinstance(own.get(lang), dict):
            raise PromptError(f"prompts/questions/{path.name} needs a '{lang}' mapping.", "Add the phrases.")
        data = {**data, **own[lang]}
        label = (own.get("label") or {}).get(lang)
        if label:
            types[path.stem] = str(label)
    return Phrases({**data, "cloud_names": lex.labels("clouds", lang), "method_names": lex.labels("methods", lang),
                    "billing_names": lex.labels("billing", lang), "stage_names": lex.labels("stages", lang),
                    "engine_names": lex.labels("engines", lang), "type_names": types,
                    "weights_names": lex.labels("weights", lang), "objective_names": lex.labels("objectives", lang)},
                   lang)
