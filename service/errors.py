"""User-facing errors. Each says what was wrong and how to fix it; adapters render them, never a traceback."""

from __future__ import annotations

from pydantic import ValidationError


class AdvisorError(Exception):
    """Base class: `message` names the problem, `fix` says what to do; `message_zh` / `fix_zh` say it in Chinese
    for a Chinese answer (empty: the English is all there is; the API's error body is English)."""

    code = "bad_request"
    message_zh = ""
    fix_zh = ""

    def __init__(self, message: str, fix: str = "", *, message_zh: str = "", fix_zh: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        if message_zh:  # (a subclass may have set its own before calling this)
            self.message_zh = message_zh
        if fix_zh:
            self.fix_zh = fix_zh

    def __str__(self) -> str:
        return f"{self.message} {self.fix}".strip()

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "fix": self.fix}


class InvalidInputError(AdvisorError):
    code = "invalid_input"


class IdempotencyConflictError(InvalidInputError):
    """An Idempotency-Key (or X-Request-Id) sent again with another request: refused, not answered with the first
    request's answer (Stripe's rule). HTTP 409."""

    code = "idempotency_conflict"

    def __init__(self, key: str, what: str) -> None:
        shown = key[:64] + ("…" if len(key) > 64 else "")
        super().__init__(f"The Idempotency-Key (or X-Request-Id) '{shown}' was already used {what}.",
                         "Send a new Idempotency-Key (or X-Request-Id) for each new message; repeat the same body "
                         "only to retry it.")
        self.key = key


_KIND_ZH = {"model": "模型", "GPU": "GPU", "instance type": "实例规格", "GPU or instance": "GPU 或实例"}


class UnknownNameError(AdvisorError):
    """An unknown model, GPU or instance, with the closest known names."""

    code = "unknown_name"

    def __init__(self, kind: str, name: str, suggestions: list[str], fix: str = "", fix_zh: str = "") -> None:
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        hint_zh = f"你是不是想找：{'、'.join(suggestions)}？" if suggestions else ""
        kind_zh = _KIND_ZH.get(kind, kind)
        super().__init__(
            f"Unknown {kind} '{name}'.{hint}",
            fix or f"Use a {kind} name from `gpu-advisor catalog list`, or a parameter count such as 7B.",
            message_zh=f"不认识的{kind_zh}「{name}」。{hint_zh}",
            fix_zh=fix_zh or f"请用 `gpu-advisor catalog list` 里的{kind_zh}名称，或参数规模（如 7B）。",
        )
        self.kind = kind
        self.name = name
        self.suggestions = suggestions


class UnknownModelError(UnknownNameError):
    def __init__(self, name: str, suggestions: list[str]) -> None:
        super().__init__(
            "model",
            name,
            suggestions,
            "Give a known model (e.g. Qwen2-7B), a size such as 7B, or a path to a Hugging Face config.json.",
            "请给出已知的模型（如 Qwen2-7B）、参数规模（如 7B），或 Hugging Face config.json 的路径。",
        )


class UnknownGpuError(UnknownNameError):
    def __init__(self, name: str, suggestions: list[str]) -> None:
        super().__init__("GPU", name, suggestions, "Use a GPU from `gpu-advisor catalog list` (e.g. A100, A10, T4).",
                         "请用 `gpu-advisor catalog list` 里的 GPU（如 A100、A10、T4）。")


class InfeasibleError(AdvisorError):
    """No catalog option can run the workload; `closest` says what would make it feasible."""

    code = "infeasible"

    def __init__(self, message: str, fix: str, closest: str = "") -> None:
        super().__init__(message, fix)
        self.closest = closest


class CatalogError(AdvisorError):
    """A knowledge file does not validate; the message names file, row and field."""

    code = "catalog_invalid"


class DependencyUnavailableError(AdvisorError):
    """A dependency (LLM provider, Chroma server, Slack) cannot be reached; one feature degrades."""

    code = "dependency_unavailable"


def validation_line(exc: ValidationError) -> str:
    """A pydantic validation error as one line naming each field, its problem and the value given."""
    parts = []
    for err in exc.errors():
        field = ".".join(str(x) for x in err["loc"]) or "input"
        msg = str(err["msg"]).removeprefix("Value error, ")
        value = err.get("input")
        shown = f" (got {value!r})" if field != "input" and not isinstance(value, dict) else ""
        parts.append(f"{field}: {msg}{shown}")
    return "Invalid input: " + "; ".join(parts) + ". Fix the value and run again."
