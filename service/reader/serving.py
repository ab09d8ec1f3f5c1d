"""Serving slots: concurrency, request rate, input/output lengths, the context to serve, weight and KV dtypes, the
inference engine, latency limits. Slot finders only; the question type is the classifier's.

'40并发' / 'concurrency 40' / '200人同时用' = 40 / 200 concurrent; '15 QPS' / '15 req/s' = 15 requests per second
('每天10w次请求' = 100000 / 86400 per second); '2k in / 400 out', '输入2k 输出500' = lengths; 'int4', 'awq', 'gptq',
'w4a16' = int4 weights; 'fp8 kv' = KV dtype fp8; '首字延迟1秒内' = TTFT 1000 ms.
"""

from __future__ import annotations

import re
from typing import Any

from service.reader.numbers import DEC, parse_number
from service.reader.quantities import blank
from service.reader.ranges import Refused, check


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_K = rf"(?<![\d.])(?P<n>{DEC})\s*(?:(?P<k>[kKwW])(?![A-Za-z])|(?P<z>[万千]))?"
_CONCURRENCY = [
    _c(_K + r"\s*(?:个|路|人)?\s*(?:并发|concurrent(?:\s+(?:users?|requests?|sessions?|streams?))?|simultaneous"
            r"|parallel (?:requests?|users?)|同时在线|人同时用|人同时|个用户同时|用户同时)"),
    _c(r"(?:并发|concurrency|max[_-]?num[_-]?seqs|--max-concurrent-requests|batch of)\s*(?:数|量)?\s*(?:是|为|=|:|：|到|大概|约|~|≈)?\s*"
       + _K),
    _c(r"(?:about|around|~|≈)?\s*" + _K + r"\s*(?:users?|people|人)\s*(?:at (?:the same|a) time|at once|同时|concurrently|在线)"),
    _c(r"(?:serve|for|to)\s+(?:about|around|~)?\s*" + _K + r"\s*(?:users?|people)(?![A-Za-z])"),
]
_RATE = [
    _c(_K + r"\s*(?:qps|rps|req(?:uest)?s?\s*/\s*s(?:ec)?|requests?\s+(?:per|a|/)\s*s(?:econd|ec)?|次/秒|个请求每秒|次每秒)"),
    _c(r"(?:每秒|一秒)(?:钟)?\s*(?:大概|约|有|来|要处理|处理)?\s*" + _K + r"\s*(?:个|次)?\s*(?:请求|调用|query|queries)"),
    _c(r"(?:qps|rps)\s*(?:是|为|=|:|：|大概|约|~|≈)?\s*" + _K),
]
_PER_DAY = [
    _c(r"(?:每天|一天|日均|daily|per day|a day)\s*(?:大概|约|~)?\s*" + _K + r"\s*(?:次|个)?\s*(?:请求|调用|requests?|calls?|queries)"),
    _c(_K + r"\s*(?:次|个)?\s*(?:请求|调用|requests?|calls?|queries)\s*(?:每天|/天|一天|per day|a day|/day)"),
]
_IN = [
    _c(r"(?:输入|(?<![A-Za-z])(?:input|prompt|isl)(?:[_ ]?(?:len|length|tokens))?)\s*(?:长度)?\s*(?:平均|大概|约|~|≈|是|为|=|:|：)?\s*" + _K
       + r"\s*(?:tokens?|token|字|个token)?"),
    _c(_K + r"\s*(?:tokens?)?\s*(?:in|input|输入)(?![A-Za-z])"),
]
_OUT = [
    _c(r"(?:输出|生成|(?<![A-Za-z])(?:output|completion|osl)(?:[_ ]?(?:len|length|tokens))?)\s*(?:长度)?\s*(?:平均|大概|约|~|≈|是|为|=|:|：)?\s*"
       + _K + r"\s*(?:tokens?|token|字|个token)?"),
    _c(_K + r"\s*(?:tokens?)?\s*(?:out|output|输出)(?![A-Za-z])"),
]
_CTX = [
    _c(r"(?:max[-_ ]?model[-_ ]?len|context(?: length| window)?|ctx|上下文(?:长度|窗口)?|num_ctx|max[-_ ]?seq[-_ ]?len)\s*"
       r"(?:开到|开|想开到|想开|设为|设置为|=|:|：|of|to|是|为)?\s*" + _K),
    _c(_K + r"\s*(?:tokens?\s*)?(?:的)?\s*(?:上下文|context|ctx|长上下文)"),
]
_WEIGHTS = [
    ("int4", _c(r"(?<![A-Za-z0-9])(?:int4|w4a16|awq|gptq(?:-int4)?|4[\s-]?bit|4位|q4(?:_k_m|_0|_k)?|nf4|gguf)(?![A-Za-z0-9])")),
    ("int8", _c(r"(?<![A-Za-z0-9])(?:int8|w8a8|w8a16|8[\s-]?bit|8位|q8(?:_0)?|gptq-int8)(?![A-Za-z0-9])")),
    ("fp8", _c(r"(?<![A-Za-z0-9])(?:fp8|w8a8-fp8|e4m3)(?![A-Za-z0-9])(?!\s*(?:kv|的kv))")),
    ("bf16", _c(r"(?<![A-Za-z0-9])(?:bf16|bfloat16)(?![A-Za-z0-9])")),
    ("fp16", _c(r"(?<![A-Za-z0-9])(?:fp16|float16|half)(?![A-Za-z0-9])")),
]
_KV = _c(r"(?:kv[\s_-]*cache|kv)\s*(?:用|开|设为|dtype|=|:)?\s*(?P<d>fp8|int8|fp16|bf16|int4)|(?P<e>fp8|int8|int4)\s*(?:的)?\s*kv")
_ENGINES = [("vllm", r"vllm"), ("sglang", r"sglang"), ("lmdeploy", r"lmdeploy|turbomind"),
            ("trtllm", r"trt[\s-]?llm|tensorrt[\s-]?llm|tensorrt"), ("tgi", r"tgi|text[\s-]generation[\s-]inference"),
            ("ollama", r"ollama"), ("llamacpp", r"llama\.cpp|llamacpp|llama-server"), ("ktransformers", r"ktransformers"),
            ("xinference", r"xinference"), ("transformers", r"hf generate|transformers推理")]
_ENGINE = [(name, _c(rf"(?<![A-Za-z]){p}(?![A-Za-z])")) for name, p in _ENGINES]
_TTFT = _c(r"(?:首字|首token|首 token|首包|ttft|time to first token|first token)\s*(?:延迟|时间|latency)?\s*"
           r"(?:(?:要|在|<|<=|≤|控制在|压到|不超过|不能超过|低于|小于|under|below|within|of|at most)\s*){0,2}"
           r"(?P<n>" + DEC + r"|[一二两三四五半])\s*(?P<u>ms|毫秒|s|秒|sec|seconds?)")
_TPOT = _c(r"(?:tpot|itl|每个token|per[- ]token|inter[- ]token)\s*(?:延迟|latency)?\s*(?:<|<=|≤|under|below|within|在)?\s*"
           r"(?P<n>" + DEC + r")\s*(?P<u>ms|毫秒|s|秒)")


def _num(m: re.Match[str]) -> float | None:
    n = parse_number(m.group("n"))
    if n is None:
        return None
    k = (m.groupdict().get("k") or m.groupdict().get("z") or "").lower()
    return n * {"k": 1024 if n < 1000 else 1000, "w": 1e4, "万": 1e4, "千": 1e3}.get(k, 1)


def _first(text: str, patterns: list[re.Pattern[str]], slot: str | None, refused: list[Refused] | None,
           scale: float = 1.0) -> tuple[float | None, str]:
    """The first figure the patterns read, in `slot`'s range once scaled (per day -> per second); one out of
    range is noted in `refused` and blanked, and the search goes on."""
    for p in patterns:
        for m in p.finditer(text):
            value = _num(m)
            if value is None:
                continue
            if slot is None or check(slot, value * scale, m.group(0), refused):
                return value, blank(text, m.start(), m.end())
            text = blank(text, m.start(), m.end())
    return None, text


def _tokens(v: float | None) -> int | None:
    """'2k' of tokens is 2048; an exact number stays."""
    return None if v is None else int(v)


def find_serving(text: str, refused: list[Refused] | None = None) -> tuple[dict[str, Any], str]:
    """The serving slots the text states, and the text with their figures blanked; a figure out of its slot's range
    ('0并发', '10^9 QPS') is noted in `refused`."""
    out: dict[str, Any] = {}
    per_day, text = _first(text, _PER_DAY, "request_rate", refused, scale=1 / 86400)
    if per_day is not None:
        out["request_rate"] = round(per_day / 86400, 3)
    rate, text = _first(text, _RATE, "request_rate", refused)
    if rate is not None:
        out["request_rate"] = rate
    conc, text = _first(text, _CONCURRENCY, "concurrency", refused)
    if conc is not None:
        out["concurrency"] = int(conc)
    kv = _KV.search(text)
    if kv is not None:
        out["kv_dtype"] = (kv.group("d") or kv.group("e")).lower()
        text = blank(text, kv.start(), kv.end())
    for name, pattern in _WEIGHTS:
        if pattern.search(text):
            out["weights"] = name
            break
    engines = sorted((m.start(), name) for name, pattern in _ENGINE if (m := pattern.search(text)))
    if engines:
        out["engine"] = engines[0][1]  # the engine named first is the one asked about
    for key, patterns in (("input_tokens", _IN), ("output_tokens", _OUT)):
        value, text = _first(text, patterns, key, refused)
        if value is not None:
            out[key] = _tokens(value)
    ctx, text = _first(text, _CTX, None, refused)  # '上下文 32' is 32k: checked once read as tokens
    if ctx is not None and check("max_model_len", length := ctx if ctx >= 256 else ctx * 1024, f"{ctx:g}", refused):
        out["max_model_len"] = int(length)
    for key, pattern in (("ttft_ms", _TTFT), ("tpot_ms", _TPOT)):
        m = pattern.search(text)
        if m is not None:
            raw = m.group("n")
            n = {"半": 0.5, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5}.get(raw) or parse_number(raw) or 0.0
            out[key] = n if m.group("u").lower() in ("ms", "毫秒") else n * 1000
    return out, text
