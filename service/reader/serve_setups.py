"""The setups a post about a server describes, and what it asks: 'tp4能跑，tp8就oom' is two setups (TP4 worked,
TP8 OOMed), 'HF能跑，vllm就OOM' two engines, 'A100上能跑 4090上OOM' two cards; 'is 9 tok/s normal' one setup with
its speed; 'why does FP8 run on A100' a question about a dtype on a card. A finder: values only; which question
type answers is the classifier's (and service/questions/diagnose.py's routing)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_ENGINES = [("vllm", r"vllm(?:-ascend)?"), ("sglang", r"sglang"), ("lmdeploy", r"lmdeploy|turbomind"),
            ("trtllm", r"trt[\s-]?llm|tensorrt[\s-]?llm"), ("tgi", r"tgi|text[\s-]generation[\s-]inference"),
            ("ollama", r"ollama"), ("llamacpp", r"llama\.cpp|llamacpp|llama-server"), ("mindie", r"mindie"),
            ("hf", r"hf|huggingface|hugging face|transformers|model\.generate|generate\(\)")]
_ENGINE = [(name, _c(rf"(?<![A-Za-z]){p}(?![A-Za-z])")) for name, p in _ENGINES]
_TP = _c(r"(?<![A-Za-z])(?:tp|tensor[-_ ]parallel(?:[-_ ]size)?|--tp)\s*[=:：]?\s*(?P<n>\d{1,2})(?!\d)")
_PP = _c(r"(?<![A-Za-z])(?:pp|pipeline[-_ ]parallel(?:[-_ ]size)?)\s*[=:：]?\s*(?P<n>\d{1,2})(?!\d)")
_FRACTION = _c(r"(?:gpu[-_ ]memory[-_ ]utilization|mem[-_ ]fraction[-_ ]static|cache[-_ ]max[-_ ]entry[-_ ]count)"
               r"\s*[=:：]?\s*(?P<n>0?\.\d+|1(?:\.0)?)(?![\d.])")
_EAGER = _c(r"enforce[-_ ]eager")
_WORKED = _c(r"能跑|可以跑|跑得起来|跑起来了|能起来|可以起来|能启动|启动成功|正常(?:运行|跑)|没问题|没事|可以(?!吗)|"
             r"(?<![A-Za-z])(?:works?|worked|working|runs? fine|runs?|fine|ok|okay|succeeds?|succeeded|loads?)(?![A-Za-z])")
_FAILED = _c(r"(?<![A-Za-z])(?:oom|o\.o\.m|out of memory|fails?|failed|crash(?:es|ed)?|errors?)(?![A-Za-z])|"
             r"爆显存|显存不足|显存不够|起不来|启动失败|报错|挂了|崩|就?oom|爆了")
_TOKENS_S = _c(r"(?P<n>\d+(?:\.\d+)?)\s*(?:tokens?|tok|t)\s*/\s*(?:s|sec|秒)|每秒\s*(?P<m>\d+(?:\.\d+)?)\s*(?:个)?\s*tokens?")
_GROWTH = _c(r"缓慢增长|慢慢(?:增长|涨|增加|变大)|逐渐(?:增长|增加|上涨)|一直(?:涨|增长|增加)|越来越(?:大|多)|持续(?:增长|上涨)|"
             r"(?:keeps?|kept)\s+(?:growing|increasing|rising|climbing)|creeps?\s+up|grows?\s+(?:slowly|over time)|leak")
_WHY_RUNS = _c(r"(?:为什么|为啥|怎么|why|how)[^。.!?？\n]{0,12}?(?:能|可以|can|does|do|is)[^。.!?？\n]{0,30}?(?:跑|运行|run|work)|"
               r"(?:跑|运行|run|work)\S{0,6}(?:起来)?了?\s*(?:为什么|为啥|\?|？)")
_VERSUS = _c(r"(?<![A-Za-z])(?:vs\.?|versus|or|还是|和|与|比)(?![A-Za-z])|哪个|which|faster|更快|快还是慢")
_NODES = _c(r"(?P<a>\d{1,2})\s*[*x×]\s*(?P<b>\d{1,2})\s*[*x×]\s*\d{2,3}\s*G|(?P<c>\d{1,2})\s*(?:台|nodes?|机)\s*[*x×]?\s*"
             r"(?P<d>\d{1,2})\s*(?:卡|张|gpus?|cards?)")
SLOW = _c(r"慢|(?<![A-Za-z])slow|正常吗|正常么|正常嘛|normal|expected|reasonable|合理")


@dataclass(frozen=True)
class SetupRead:
    engine: str | None = None
    tp: int | None = None
    gpu: str | None = None
    outcome: str = "unknown"  # worked | oom | unknown


@dataclass(frozen=True)
class ServeRead:
    setups: tuple[SetupRead, ...] = ()
    asked: str | None = None  # oom | growth | slow | compare | why_runs
    pp: int | None = None
    mem_fraction: float | None = None
    enforce_eager: bool = False
    tokens_per_s: float | None = None
    engines: tuple[str, ...] = field(default_factory=tuple)
    gpus: int | None = None  # '2*8*80G', '2台8卡': nodes x GPUs each


def _outcome(text: str) -> str:
    failed, worked = _FAILED.search(text), _WORKED.search(text)
    if failed and (not worked or failed.start() < worked.start()):
        return "oom"
    return "worked" if worked else "unknown"


def _anchors(text: str, gpus: tuple[tuple[int, str], ...]) -> list[tuple[int, str, object]]:
    """Mentions that start a setup, in order: (position, kind, value)."""
    found: list[tuple[int, str, object]] = [(m.start(), "tp", int(m.group("n"))) for m in _TP.finditer(text)]
    for name, pattern in _ENGINE:
        found += [(m.start(), "engine", name) for m in pattern.finditer(text)]
    found += [(pos, "gpu", gpu) for pos, gpu in gpus]
    return sorted(found, key=lambda a: a[0])


def read_serve(text: str, gpus: tuple[tuple[int, str], ...] = ()) -> ServeRead:
    """The setups, the knobs and the question of a server post. `gpus`: (position, catalog id) of the GPUs
    named, from the name finder."""
    anchors = _anchors(text, gpus)
    setups: list[SetupRead] = []
    for kind in ("tp", "engine", "gpu"):
        mine = [a for i, a in enumerate(anchors) if a[1] == kind]
        mine = [a for i, a in enumerate(mine) if i == 0 or a[2] != mine[i - 1][2]]  # 'HF transformers': one
        if len({a[2] for a in mine}) < 2:
            continue
        for i, (pos, _, value) in enumerate(mine):
            end = mine[i + 1][0] if i + 1 < len(mine) else len(text)
            seg = text[pos:end]
            setups.append(SetupRead(**{kind: value}, outcome=_outcome(seg)))  # type: ignore[arg-type]
        break
    tp = next((int(a[2]) for a in anchors if a[1] == "tp"), None)  # type: ignore[call-overload]
    engines = tuple(dict.fromkeys(str(a[2]) for a in anchors if a[1] == "engine"))
    if not setups:
        setups = [SetupRead(engine=engines[0] if engines else None, tp=tp, outcome=_outcome(text))]
    pp = _PP.search(text)
    frac = _FRACTION.search(text)
    speed = _speed(text, [a[0] for a in anchors if a[1] == "engine"])
    nodes = _NODES.search(text)
    count = None
    if nodes:
        count = int(nodes.group("a") or nodes.group("c")) * int(nodes.group("b") or nodes.group("d"))
    return ServeRead(setups=tuple(setups), asked=_asked(text, setups, speed), pp=int(pp.group("n")) if pp else None,
                     mem_fraction=float(frac.group("n")) if frac else None, enforce_eager=bool(_EAGER.search(text)),
                     tokens_per_s=speed, engines=engines, gpus=count)


def _speed(text: str, engine_at: list[int]) -> float | None:
    """The tokens/s the post saw: the one nearest an engine named ('60 tokens/sec on the API vs. 13 on sglang':
    13), else the first."""
    found = list(_TOKENS_S.finditer(text))
    if not found:
        return None
    best = min(found, key=lambda t: min(abs(t.start() - e) for e in engine_at)) if engine_at else found[0]
    return float(best.group("n") or best.group("m"))


def _asked(text: str, setups: list[SetupRead], speed: float | None) -> str | None:
    if _GROWTH.search(text):
        return "growth"
    if any(s.outcome == "oom" for s in setups) or _FAILED.search(text):
        return "oom"
    if re.search(r"fp8", text, re.IGNORECASE) and _WHY_RUNS.search(text):
        return "why_runs"
    if len(setups) > 1 and any(s.tp for s in setups) and _VERSUS.search(text):
        return "compare"
    if speed is not None or SLOW.search(text):
        return "slow"
    return None
