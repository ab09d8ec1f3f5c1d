"""What a question about the catalog asks, read from its words into the frame: the fact (a price, what a family is,
which instances carry a GPU, the cheapest instance meeting a need, monthly against on-demand, spot, two GPUs or
families side by side, what a cloud sells), the instance families and types it names, the features it needs (RDMA,
FP8), the least memory per card ("80G以上"), and whether it asks for a speed rather than a price. A slot finder:
the catalog question type maps these to its arguments.

    catalog_names(text, families, instances) -> names      the catalog's families and instance types named
    catalog_fact(text, gpus, names, clouds, billings, fact) -> fact
    needs(text) -> ('rdma', 'fp8')
    least_memory_gb(text) -> 80.0
    asks_speed(text) -> bool                                 '哪个快', 'how much faster'
    load_scale(text) -> 2.0                                  '并发翻倍', 'half the traffic'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from service.catalog.queries import normalize


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# an instance family as the clouds write it: GT4, PNV4, HCCPNV4sn, GN10Xp, p.n1v100 (JD: p.<family>)
_FAMILY = re.compile(r"(?<![A-Za-z0-9.])(?:(?:HCC|BM)?[A-Z]{2,5}\d{1,2}[A-Za-z]{0,3}|p\.[a-z]\d[a-z0-9]+|cps\.gpu)"
                     r"(?![A-Za-z0-9])")
_NOT_FAMILY = re.compile(r"(?:FP|BF|INT|TP|PP|EP|DP|SM|CC|GB|TB|MB)\d", re.IGNORECASE)  # dtypes, degrees, units
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.\-]*")
_CHEAPEST = _c(r"最便宜|最低价|便宜的|(?<![A-Za-z])(?:cheapest|lowest price|least expensive)(?![A-Za-z])")
_BREAKEVEN = _c(r"划算|合算|临界|break[- ]?even|worth it|多少小时|几个小时")
_LIST = _c(r"哪些|哪个实例|哪款实例|哪种实例|什么(?:卡|gpu|显卡|实例|机型|型号)|都有|有啥|有什么|(?<![A-Za-z])(?:which|what)\s+"
           r"(?:[A-Za-z]+\s+){0,2}(?:gpus|cards|instances?|instance types?|machines?|types?)(?![A-Za-z])|"
           r"instance types?")
_WHAT = _c(r"是什么|是啥|啥卡|什么卡|区别|啥区别|什么意思|(?<![A-Za-z])(?:what is|what's|what exactly|difference)"
           r"(?![A-Za-z])")
_VERSUS = _c(r"(?<![A-Za-z])vs\.?(?![A-Za-z])|versus|对比|比较|哪个好|哪个更|还是")
_LEAST_MEMORY = _c(r"(?:≥|>=|至少|不少于|起码|at least|over)?\s*(\d{2,3})\s*(?:G|GB|GiB)(?:\s*(?:以上|及以上|\+))?")
_RDMA = _c(r"rdma|infiniband|(?<![A-Za-z])ib(?![A-Za-z])|roce|星脉|多机互联")
_FP8 = _c(r"fp8")
_SPEED = _c(r"快|慢|速度|时间|(?<![A-Za-z])(?:faster|fastest|quicker|slower|speed|sooner|time)(?![A-Za-z])")
_DOUBLE = _c(r"翻倍|翻一倍|两倍|加倍|(?<![A-Za-z])(?:double[sd]?|2x|twice)(?![A-Za-z])")
_HALF = _c(r"减半|一半|(?<![A-Za-z])(?:half|halve[sd]?)(?![A-Za-z])")
_SPEC_FACTS = ("supports_fp8", "supports_bf16", "supports_flash_attn", "nvlink", "memory", "bandwidth", "tflops",
               "cuda", "rdma")


def gpus_and_instances(text: str, instances: Mapping[str, str], gpus: Mapping[str, str]) -> list[str]:
    """GPU and instance names in a message, for catalog look-ups ('A10支持FP8吗' -> A10): each word and each pair of
    words looked up by its normalised name (`instances` and `gpus` map it to the catalog's id); a GPU as written."""
    found: list[str] = []
    toks = [t.group(0) for t in _TOKEN.finditer(text)]
    spans = [" ".join(toks[i:i + 2]) for i in range(len(toks))] + toks
    for span in spans:
        key = normalize(span)
        hit = instances.get(key) or gpus.get(key)
        if hit and hit not in found and not any(hit in f for f in found):
            found.append(span if key in gpus else hit)
    return found


def catalog_names(text: str, families: Mapping[str, str], instances: Mapping[str, str]) -> tuple[str, ...]:
    """The catalog's instance types and families the text names, as the catalog writes them, in order, each once
    ('gn10xp 8卡那个' -> GN10Xp). `families` maps a family in lower case to its spelling; `instances` a normalised
    instance type to the catalog's spelling."""
    found: list[tuple[int, str]] = []
    for m in _TOKEN.finditer(text):
        hit = instances.get(normalize(m.group(0)))
        if hit is not None:
            found.append((m.start(), hit))
    for m in _TOKEN.finditer(text):
        word = m.group(0).rstrip(".-")
        low = word.lower()
        if not any(ch.isdigit() for ch in low) or any(at <= m.start() < at + len(h) for at, h in found):
            continue
        if low in families:
            found.append((m.start(), families[low]))
    if found:  # beside a family the catalog has, another written the clouds' way is one too (it may have no rows)
        for m in _FAMILY.finditer(text):
            word = m.group(0)
            if not _NOT_FAMILY.match(word) and not any(at <= m.start() < at + len(h) for at, h in found):
                found.append((m.start(), word))
    return tuple(dict.fromkeys(name for _, name in sorted(found)))


def catalog_fact(text: str, gpus: Sequence[str], names: Sequence[str], clouds: Sequence[str],
                 billings: Sequence[str], fact: str | None) -> str | None:
    """The catalog fact the words ask, the most specific first (None: nothing of the catalog's). `fact` is the
    spec or product fact the reader found (service/reader/asked.py find_fact)."""
    families = [n for n in names if n.upper() not in {g.split("-")[0].upper() for g in gpus}]
    if "spot" in billings:
        return "spot"
    if len(set(billings) & {"monthly", "on_demand"}) == 2 or (_BREAKEVEN.search(text) and billings):
        return "break_even"
    if _CHEAPEST.search(text):
        return "cheapest"
    if len(families) >= 2 and (_WHAT.search(text) or _VERSUS.search(text)):
        return "side_by_side"
    if len(gpus) >= 2 and fact in (None, "price"):
        return "side_by_side"
    if families and _WHAT.search(text):
        return "family"
    if fact in _SPEC_FACTS or fact in ("sells", "regions", "billing"):
        return fact
    if names or fact == "price":
        return "price"  # a GPU named with no price words is not a price question ('V100 跑不了 FlashAttention')
    if gpus and _LIST.search(text):
        return "instances"
    if families:
        return "family"
    if _LIST.search(text):
        return "sells"
    return fact  # a cloud named alone ('那京东云呢') asks what the question before it asked


_AROUND_THE_CLOCK = _c(r"24\s*[x×*/]\s*7|24\s*小时(?:不停|不间断|开着|运行)|24h\s*不停|全天候|一直开着|一直跑|常驻|"
                      r"(?<![A-Za-z])(?:around the clock|round the clock|24/7|always on|non-?stop)(?![A-Za-z])")
_USAGE = _c(r"(?:每月|每个月|一个月|月均|(?<![A-Za-z])(?:per|a|each)\s+month)[^\d。.!?？\n]{0,8}?(?P<a>\d{1,3}(?:\.\d+)?)\s*"
            r"(?:个)?\s*(?:小时|h(?:ours?|rs?)?)(?![A-Za-z])"
            r"|(?P<b>\d{1,3}(?:\.\d+)?)\s*(?:个)?\s*(?:小时|h(?:ours?|rs?)?)\s*(?:/|每|a|per|一个)\s*(?:月|month)")
_MACHINES = _c(r"(?<![\d.A-Za-z])(?P<n>\d{1,3}|[两二三四五六七八九十]|two|three|four|five|six|seven|eight|ten)\s*(?:台|个实例|(?:x\s*)?(?:machines?|instances?|servers?|boxes)"
               r"(?![A-Za-z]))")
_CN = {"两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10, "two": 2, "three": 3,
       "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "ten": 10}


def usage_hours(text: str) -> float | None:
    """The hours a month a machine runs: '每月只用100小时', '~400h/month', 'around the clock' (730)."""
    m = _USAGE.search(text)
    if m is not None:
        value = float(m.group("a") or m.group("b"))
        return value if 0 < value <= 744 else None
    return 730.0 if _AROUND_THE_CLOCK.search(text) else None


def machines(text: str) -> int | None:
    """Machines (instances) said as such: '两台GN7', '4 台 GN10Xp', 'two machines'."""
    m = _MACHINES.search(text)
    if m is None:
        return None
    raw = m.group("n")
    return int(raw) if raw.isdigit() else _CN.get(raw.lower())


def needs(text: str) -> tuple[str, ...]:
    out = []
    if _RDMA.search(text):
        out.append("rdma")
    if _FP8.search(text):
        out.append("fp8")
    return tuple(out)


def least_memory_gb(text: str) -> float | None:
    m = _LEAST_MEMORY.search(text)
    return float(m.group(1)) if m else None


def asks_speed(text: str) -> bool:
    return bool(_SPEED.search(text))


def load_scale(text: str) -> float | None:
    return 2.0 if _DOUBLE.search(text) else 0.5 if _HALF.search(text) else None


def lists(text: str) -> bool:
    """The words ask for a list (which GPUs, what instances)."""
    return bool(_LIST.search(text))
