"""Values that land in a generated file: checked first, then written for that file's format, never as code.

The rule for a model name or path (`model_id`): ASCII letters and digits, `.`, `_`, `-` and `/`, at most
MODEL_ID_MAX characters; segments between slashes start with a letter, a digit or `_` (so no `..`, no hidden file,
nothing that reads as a command-line option), none is empty (no `//`, no trailing `/`); an absolute path (a leading
`/`) is allowed, as LLaMA-Factory's model_name_or_path takes one. Hugging Face repo ids (`Qwen/Qwen2-7B`,
`01-ai/Yi-6B`), ModelScope ids and the catalog's ids all pass; `$`, backticks, quotes, `;`, spaces, line breaks,
braces and non-ASCII letters do not. A display name (the catalog's `name`, e.g. "Phi-3-mini (3.8B)") may also hold
spaces, `+` and parentheses.

Formats: shell values go through `sh` (shlex.quote: single quotes), comments through `comment` (one line, no
control characters), YAML and JSON through their emitters (the builders never write a value with an f-string),
Markdown text through `md` (the characters Markdown reads as markup escaped with a backslash); the DOCX writer
unescapes it and writes text runs, never markup.
"""

from __future__ import annotations

import re
import shlex

from service.documents.errors import DocumentInputError

MODEL_ID_MAX = 128
_SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9._-]*"
MODEL_ID = re.compile(rf"/?{_SEGMENT}(?:/{_SEGMENT})*")
DISPLAY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._+()/-]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]+")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>~#])")  # `|` is fmt.cell's to escape, in tables
RULE = "ASCII letters, digits and . _ - /; at most 128 characters; no path segment empty or starting with . or -"
RULE_ZH = "只能含英文字母、数字和 . _ - /，最长 128 个字符，路径各段不能为空、不能以 . 或 - 开头"


class UnsafeValueError(DocumentInputError):
    """A value that would land in a document is not a plausible model id or name: refused, naming the field."""

    def __init__(self, field: str, value: str) -> None:
        shown = repr(value[:60] + ("…" if len(value) > 60 else ""))
        self.field, self.value = field, value
        self.message_zh = (f"模型名 {shown} 不是合法的模型 ID（{RULE_ZH}）。"
                           "请用模型在 Hugging Face 或 ModelScope 上的 ID（如 Qwen/Qwen2-7B）或目录里的名字（如 Qwen2-7B）。")
        super().__init__(f"{field}: {shown} is not a plausible model id ({RULE}).",
                         "Use the model's Hugging Face or ModelScope id (e.g. Qwen/Qwen2-7B) or a catalog name "
                         "(e.g. Qwen2-7B); a local path is fine as /data/models/qwen2-7b.")

    def at(self, prefix: str) -> UnsafeValueError:
        """The same refusal with the field named as the client sent it (e.g. 'workload.model')."""
        return UnsafeValueError(f"{prefix}.{self.field}" if prefix else self.field, self.value)


def plausible_model_id(value: str) -> bool:
    """Whether `value` is a plausible model id or path (the rule in the module docstring)."""
    return len(value) <= MODEL_ID_MAX and MODEL_ID.fullmatch(value) is not None


def model_id(value: str, field: str = "model") -> str:
    if not plausible_model_id(value):
        raise UnsafeValueError(field, value)
    return value


def display_name(value: str, field: str = "model") -> str:
    """A model's display name: a model id, or the catalog's kind of name (spaces, '+', parentheses)."""
    if len(value) > MODEL_ID_MAX or (not plausible_model_id(value) and DISPLAY_NAME.fullmatch(value) is None):
        raise UnsafeValueError(field, value)
    return value


def sh(value: object) -> str:
    """A shell word: the value, single-quoted when it holds anything but safe characters (shlex.quote)."""
    return shlex.quote(str(value))


def comment(text: object) -> str:
    """Text for a `#` comment (shell or YAML): one line, control and invisible direction characters as spaces."""
    return " ".join(_CONTROL.sub(" ", str(text)).split())


def md(text: object) -> str:
    """Text for Markdown, inline: one line, and the characters Markdown reads as markup escaped (\\*, \\_ ...)."""
    return _MD_SPECIAL.sub(r"\\\1", comment(text))
