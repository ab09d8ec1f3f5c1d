"""The scenario dataset (evals/scenarios.yaml): questions, the workload they state (gold) and expected properties.

`gold` holds only the workload slots the conversation states, in schema units; the scorer compares exactly those
fields, and the ground truth is the planner on `Workload(**gold)` (the schema's defaults fill the rest, as they do
for the assistant). `gold: null` marks a question with no workload: the answer must not plan and should cite.
A serving scenario (`intent: serving`) states a serving workload instead (ServingWorkload's fields: model, gpu,
gpus, weights, kv_dtype, concurrency ...); its truth is the serving engine (service/evals/serving_checks.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from service.errors import InvalidInputError
from service.serving_workload import ServingWorkload
from service.settings import REPO_ROOT
from service.workload import Workload
from service.yamlio import load_yaml

EVALS_DIR = REPO_ROOT / "evals"
DEFAULT_SCENARIOS = EVALS_DIR / "scenarios.yaml"
WORKLOAD_FIELDS = frozenset(Workload.model_fields)
SERVING_FIELDS = frozenset(ServingWorkload.model_fields) - {"kind"}


class Expect(BaseModel):
    """Properties of the answer to the final turn. Unset ones are not checked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    language: Literal["zh", "en"] | None = Field(default=None, description="default: the scenario's lang")
    must_cite: bool | list[str] | None = Field(
        default=None, description="true: at least one citation; a list: citation ids containing any of these")
    must_warn: list[str] = Field(default_factory=list, description="warning codes on the top candidate; 'a|b': "
                                 "either (the same concern, whichever layout the engine picks)")

    def missing_warnings(self, codes: Iterable[str]) -> list[str]:
        """The must_warn entries none of whose alternatives is among `codes`."""
        have = set(codes)
        return [c for c in self.must_warn if not have.intersection(c.split("|"))]
    must_not_fit_single_gpu: bool | None = None
    infeasible: bool | None = None
    within_budget: bool | None = None
    meets_deadline: bool | None = None
    top_cloud: Literal["tencent", "jdcloud"] | None = None
    fits: bool | None = Field(default=None, description="feasibility: the engine's verdict for ask.gpu x count")
    gpus_needed: int | None = Field(default=None, description="min_gpus: the fewest cards of ask.gpu")
    winner: str | None = Field(default=None, description="compare: the winning option")
    starts: bool | None = Field(default=None, description="serving: the deployment starts (a pinned GPU x count)")
    gpus_per_replica: int | None = Field(default=None, ge=1, description="serving: GPUs per replica")
    gpu: str | None = Field(default=None, description="serving: the GPU (catalog id) the answer sizes")


Intent = Literal["plan", "feasibility", "min_gpus", "compare", "savings", "serving", "knowledge"]


class Ask(BaseModel):
    """The subject of a question type: the GPU (and count) asked about, the options compared, or the workload
    fields of the plan a saving is measured against."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gpu: str | None = None
    gpu_count: int | None = Field(default=None, ge=1, le=4096)
    options: list[str] = Field(default_factory=list)
    by: Literal["cost", "hours"] = "cost"
    before: dict[str, Any] = Field(default_factory=dict)


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    lang: Literal["zh", "en"]
    turns: list[str] = Field(min_length=1)
    gold: dict[str, Any] | None
    intent: Intent | None = Field(default=None, description="default: plan with a gold workload, else knowledge")
    ask: Ask = Field(default_factory=Ask)
    expect: Expect = Field(default_factory=Expect)
    tags: list[str] = Field(default_factory=list)
    note: str = ""

    @field_validator("turns")
    @classmethod
    def _non_empty(cls, turns: list[str]) -> list[str]:
        if any(not t.strip() for t in turns):
            raise ValueError("empty turn")
        return turns

    @model_validator(mode="before")
    @classmethod
    def _gold_is_a_workload(cls, data: Any) -> Any:
        """The gold fields in schema types ('1e10' -> 1e10): a Workload, or a ServingWorkload for a serving
        scenario; a gold the engine cannot take is refused."""
        if not isinstance(data, dict) or not isinstance(data.get("gold"), dict):
            return data
        gold = data["gold"]
        serving = data.get("intent") == "serving"
        schema: type[Workload] | type[ServingWorkload] = ServingWorkload if serving else Workload
        unknown = sorted(set(gold) - (SERVING_FIELDS if serving else WORKLOAD_FIELDS))
        if unknown:
            raise ValueError(f"gold has fields the {'serving ' if serving else ''}workload schema does not: "
                             f"{', '.join(unknown)}")
        w = schema.model_validate(gold)
        return {**data, "gold": {k: getattr(w, k) for k in gold}}

    @property
    def expected_language(self) -> str:
        return self.expect.language or self.lang

    @property
    def expected_intent(self) -> str:
        return self.intent or ("plan" if self.gold is not None else "knowledge")


class ScenarioFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenarios: list[Scenario]


def read_yaml(path: Path, what: str) -> Any:
    try:
        return load_yaml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInputError(f"Cannot read {path}: {exc}", f"Pass the {what} file with its option.") from exc
    except yaml.YAMLError as exc:
        raise InvalidInputError(f"{path} is not valid YAML: {exc}", "Fix the file.") from exc


def load_scenarios(path: Path = DEFAULT_SCENARIOS) -> list[Scenario]:
    try:
        scenarios = ScenarioFile.model_validate(read_yaml(path, "scenarios")).scenarios
    except ValidationError as exc:
        raise InvalidInputError(f"{path} is not a valid scenario file: {exc}", "Fix the scenarios.") from exc
    dupes = sorted(i for i, n in Counter(s.id for s in scenarios).items() if n > 1)
    if dupes:
        raise InvalidInputError(f"{path}: duplicate scenario ids: {', '.join(dupes)}.", "Give each a unique id.")
    return scenarios


def select(scenarios: list[Scenario], only: tuple[str, ...] = (), limit: int | None = None) -> list[Scenario]:
    """Scenarios whose id or a tag is in `only` (all when empty), at most `limit` of them."""
    chosen = [s for s in scenarios if not only or s.id in only or set(s.tags) & set(only)]
    if only and not chosen:
        raise InvalidInputError(f"No scenario matches {', '.join(only)}.", "Check the ids or tags in scenarios.yaml.")
    return chosen[:limit] if limit is not None else chosen
