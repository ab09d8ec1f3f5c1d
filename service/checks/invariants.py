"""Answer invariants, checked before an answer leaves (issue 40 item 6). Each names a way an answer can contradict
itself or its engine; the turn logs a violation (service/questions/turn.py), it never blocks the answer. Each is
fixed at its source; these checks keep it fixed.

    check(answer, text, lang, catalog=None) -> [Violation(code, detail), ...]

- `load_figure`: a serving answer's "N % of the output it serves" is the engine's own check, demand over
  capacity within the limits (ServingSizing.demand_output_tokens_per_s / capacity_output_tokens_per_s).
- `dtype`: the weights a serving answer sizes and names are a dtype the GPU runs: no BF16 on a card without it
  (V100, T4: the catalog's supports_bf16), and a training strategy's precision likewise.
- `english_in_zh`: a Chinese answer holds no English prose (service/questions/english.py).
- `price_dash`: no "¥—": a price on request says so (需询价 / price on request), and the answer gives the link to ask
  for it.
- `dominated_pick`: a pick both slower and dearer than an option listed beside it (another cloud's pick, the
  cheaper or faster alternative, the fastest within the budget) says why, on a line naming the pick and that option
  (for another cloud's options, one line naming any of them: the pick is its cloud's best).
- `doc_reason`: the request document gives the pick's own reason, and under an alternative only a reason that
  names that alternative.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from pydantic import BaseModel

from service.catalog.loader import Catalog
from service.checks.english import english_runs
from service.planner.listed import listed
from service.planner.serving_inference import InferenceResult
from service.planner.serving_types import ServingSizing
from service.planner.training_types import TrainingPlan

log = logging.getLogger(__name__)
CODES = ("load_figure", "dtype", "english_in_zh", "price_dash", "dominated_pick", "doc_reason")


@dataclass(frozen=True)
class Violation:
    code: str
    detail: str


def _models(answer: BaseModel) -> list[BaseModel]:
    """Every pydantic model inside an answer, the answer first (walked once per check)."""
    out: list[BaseModel] = []
    stack: list[object] = [answer]
    while stack:
        value = stack.pop()
        if isinstance(value, BaseModel):
            out.append(value)
            stack.extend(v for v in vars(value).values() if isinstance(v, (BaseModel, list, tuple, dict)))
        elif isinstance(value, (list, tuple)):
            stack.extend(v for v in value if isinstance(v, (BaseModel, list, tuple, dict)))
        elif isinstance(value, dict):
            stack.extend(v for v in value.values() if isinstance(v, (BaseModel, list, tuple, dict)))
    return out


# "87% of the output it serves", "占其在时延约束内输出能力的 87%" (and the older "of the load it holds" wording)
_LOAD_EN = re.compile(r"(\d+)\s?% of the (?:load|output)\b")
_LOAD_ZH = re.compile(r"(?:负载|输出能力)的\s?(\d+)\s?%")


def _load_figures(models: list[BaseModel], text: str, lang: str) -> list[Violation]:
    """Each sizing whose headroom line the answer shows: the load share that line states is the engine's check."""
    out: list[Violation] = []
    for s in models:
        if not isinstance(s, ServingSizing) or s.capacity_output_tokens_per_s <= 0:
            continue
        line = s.headroom_zh if lang == "zh" else s.headroom
        hit = (_LOAD_ZH if lang == "zh" else _LOAD_EN).search(line)
        if not line or line not in text or hit is None:
            continue
        engine = round(100 * s.demand_output_tokens_per_s / s.capacity_output_tokens_per_s)
        if abs(int(hit.group(1)) - engine) > 1:
            out.append(Violation("load_figure", f"{s.replicas} replica(s) of {s.gpu}: the answer says "
                                 f"{hit.group(1)}% of the load, the engine's check {engine}%"))
    return out


_BF16 = ("bf16", "amp-bf16")


def _dtypes(models: list[BaseModel], catalog: Catalog) -> list[Violation]:
    no_bf16 = {g.id for g in catalog.gpus if not g.supports_bf16}
    out: list[Violation] = []
    for m in models:
        if isinstance(m, (ServingSizing, InferenceResult)) and m.gpu in no_bf16 and m.weights in _BF16:
            out.append(Violation("dtype", f"{m.weights} weights sized on {m.gpu}, which has no BF16"))
        if isinstance(m, TrainingPlan):
            out += [Violation("dtype", f"{c.strategy.precision} training on {c.gpu} ({c.instance_type}), which has "
                              "no BF16") for c in m.candidates if c.gpu in no_bf16 and c.strategy.precision in _BF16]
    return out


_PRICE_DASH = re.compile(r"[¥￥]\s*[—–-](?!\d)")


_ON_REQUEST = re.compile(r"需询价|price on request|priced on request", re.IGNORECASE)


def _price_dashes(text: str) -> list[Violation]:
    return [Violation("price_dash", f"'{line.strip()[:120]}'") for line in text.splitlines() if _PRICE_DASH.search(line)]


def _quote_links(models: list[BaseModel], text: str) -> list[Violation]:
    """An option the answer prices on request (the engine's `price_on_request`, billing `on_request`) and says so
    comes with the link to ask for the price."""
    on_request = any(vars(m).get("price_on_request") is True or vars(m).get("billing") == "on_request"
                     for m in models)
    if on_request and _ON_REQUEST.search(text) and "http" not in text:
        return [Violation("price_dash", "a price on request with no quote link")]
    return []


def _dominated(models: list[BaseModel], text: str) -> list[Violation]:
    """A pick beaten on time and cost by a listed option: a prose line (not a table row) names the pick and, for
    another cloud's option, any one of them (the pick is its cloud's best), for its own cloud's, that one."""
    out: list[Violation] = []
    prose = [line for line in text.splitlines() if not line.lstrip().startswith("|")]
    for plan in (m for m in models if isinstance(m, TrainingPlan)):
        picks, others = listed(plan)
        for pick in picks:
            rivals = [x for x in [*picks, *others] if x.name != pick.name and x.beats(pick)]
            said = [x for x in rivals if any(pick.name in line and x.name in line for line in prose)]
            other_cloud_said = any(x.cloud != pick.cloud for x in said)
            for x in rivals:
                if x in said or (x.cloud != pick.cloud and other_cloud_said):
                    continue
                out.append(Violation("dominated_pick", f"{pick.name} ({pick.hours:g} h, ¥{pick.cost_cny:,.0f}) is "
                                     f"slower and dearer than {x.name} ({x.hours:g} h, ¥{x.cost_cny:,.0f}) with no "
                                     "line saying why"))
    return out


_ALT_REASON = re.compile(r"\*\*(?:[^*]*?\s)?([\w.\-]+)\*\*.*?(?:推荐方案仍排在它前面：|The recommendation still goes first: )(.+)$")


def _doc_reasons(answer: BaseModel, models: list[BaseModel]) -> list[Violation]:
    """The request document's reasons: under an alternative, one that names it."""
    out: list[Violation] = []
    plan = next((m for m in models if isinstance(m, TrainingPlan)), None)
    docs = getattr(answer, "documents", None)
    document = getattr(docs, "request_document", None) if docs is not None else None
    if plan is None or not document:
        return out
    for line in document.splitlines():
        hit = _ALT_REASON.search(line)
        if hit is None:
            continue
        alt, said = hit.group(1), hit.group(2)
        why = next((r for r in plan.pick_reasons.values() if r.message in said or r.message_zh in said), None)
        if why is None or alt not in why.versus:
            out.append(Violation("doc_reason", f"the reason under {alt} is "
                                 f"{'not a pick reason' if why is None else 'about ' + ', '.join(why.versus)}"))
    return out


def check(answer: BaseModel | None, text: str, lang: str, catalog: Catalog | None = None) -> list[Violation]:
    """Every invariant the answer breaks (module docstring); `answer` None: an error's text, checked as text."""
    out = _price_dashes(text)
    if lang == "zh":
        out += [Violation("english_in_zh", run[:160]) for run in english_runs(text)]
    if answer is None:
        return out
    models = _models(answer)
    out += _load_figures(models, text, lang) + _quote_links(models, text)
    if catalog is not None:
        out += _dtypes(models, catalog)
    out += _dominated(models, text) + _doc_reasons(answer, models)
    return list(dict.fromkeys(out))  # each once


def log_violations(answer: BaseModel | None, text: str, lang: str, catalog: Catalog | None = None) -> list[Violation]:
    """`check`, each violation logged as a warning with its code; never raises (a check that fails is logged too),
    so an answer always leaves."""
    try:
        found = check(answer, text, lang, catalog)
    except Exception:  # a broken check must not cost the user the answer
        log.exception("answer invariants: the check failed")
        return []
    for v in found:
        log.warning("answer invariant %s broken: %s", v.code, v.detail)
    return found
