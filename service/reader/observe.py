"""What the user saw happen: an OOM, hours per epoch, GPU memory in use, GPU utilisation, host RAM overflow, a slow
run. A slot finder: it returns the observation and the text with its figures blanked; it never decides the
question type (a reported OOM may come with 'how many cards do I need?').
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from service.reader.numbers import DEC, parse_number
from service.reader.quantities import NA, blank


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_OOM = _c(r"(?<![A-Za-z])(?:c?uda\s+)?(?:oom|o\.o\.m)(?![A-Za-z])|out\s*of\s*(?:gpu\s*)?mem\w*|outofmemory|"
          r"爆显存|显存(?:不足|不够|溢出|爆|炸|满了)|(?:显存|gpu)?溢出|炸显存|放不下了|装不下了|装不下|放不下|"
          r"not enough (?:gpu )?memory|ran out of (?:gpu )?memory|cuda error: out of memory|"
          r"(?:升到|涨到|到了|飙到|reach(?:es|ed)?|hits?)\s*\d+\s*(?:G|GB|GiB)\S{0,4}\s*(?:后|then|and)?\s*(?:报错|崩|挂|crash)")
_HOST = _c(r"(?:内存|主机内存|系统内存|机器内存|cpu\s*内存|ram|host\s*(?:ram|memory)|cpu\s*(?:ram|memory)|system\s*(?:ram|memory)"
           r"|dram)\s*(?:直接|就|usage|使用)?\s*(?:爆|溢出|不够|不足|满|炸|oom|out of memory|keeps? (?:growing|increasing)"
           r"|continuously|exhaust)|(?<![A-Za-z])(?:oom[\s-]?killer|killed by (?:the )?(?:os|kernel)|sigkill|host\s*oom|"
           r"dmesg[^\n]{0,20}kill\w*)(?![A-Za-z])"
           r"|进程被(?:kill|杀)|被系统杀")
_UTIL = _c(r"(?:利用率|使用率|占用率|(?<![A-Za-z])util(?:i[sz]ation)?|gpu[\s-]*usage|volatile gpu-util|功耗|功率)"
           r"[^\d%]{0,12}(?P<n>\d{1,3}(?:\.\d+)?)\s*%|(?P<m>\d{1,3}(?:\.\d+)?)\s*%\s*(?:的)?\s*(?:gpu\s*)?"
           r"(?:利用率|使用率|占用率|util|usage)|利用率(?:很|太|特别|比较)?低|(?:low|poor) (?:gpu )?util|功率(?:很|太)?低"
           r"|util\w* (?:is )?(?:low|fluctuat)|利用率(?:波动|忽高忽低)")
_UNIT_H = {"小时": 1.0, "个小时": 1.0, "h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "hours": 1.0, "天": 24.0,
           "days": 24.0, "day": 24.0, "分钟": 1 / 60, "min": 1 / 60, "mins": 1 / 60, "minutes": 1 / 60, "minute": 1 / 60}
_DUR = (rf"(?P<n>{DEC}|[一二两三四五六七八九十半]+|(?<![A-Za-z])(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|an?)(?![A-Za-z]))\s*(?P<u>个小时|小时|hrs?|hours?|h(?![A-Za-z])|天|days?|分钟|mins?|minutes?)")
_EPOCH = r"(?:epoch|轮|个epoch|一轮|一个epoch|1个epoch|每个epoch|每轮|per epoch|an epoch|one epoch|1 epoch|each epoch)"
_DEADLINE_AFTER = r"(?!\s*(?:内|之内|以内|完成|跑完|训完|搞定|deadline|or less|以下))"  # '48h 内' is a deadline
_HOURS = [
    _c(_EPOCH + r"[^。.!?？\n\d]{0,14}?" + _DUR + _DEADLINE_AFTER),
    _c(_DUR + _DEADLINE_AFTER + r"[^。.!?？\n\d]{0,12}?(?:per|for|an?|one|each|一个|每个|1个)?\s*" + _EPOCH),
    _c(r"(?:花了|用了|跑了|训了|训练了|练了|要跑|需要跑|得跑|实际需要|实际要|显示|预计还要|预计|总时长|耗时|"
       r"(?<![A-Za-z])(?:took|takes?|taking|eta|it'?s been|ran for|trained for)"
       r"(?![A-Za-z]))[^。.!?？\n\d]{0,10}?" + _DUR + r"(?!\s*(?:内|之内|以内|完成|deadline))"),
]
_MEM_USED = [
    _c(r"(?:显存|现存|vram|gpu\s*memory|memory)[^。.!?？\n\d]{0,20}?(?:占用|占了|用了|使用|吃了|usage|used|sits? at|stays? at|is at|reaches|reached|"
       r"占到|到了|达到|升到|涨到|吃到|峰值|peak)\s*(?:了|约|大概|大约|around|about|~|≈)?\s*(?P<n>\d+(?:\.\d+)?)\s*(?:G|GB|GiB|Gb)"),
    _c(r"(?:占用|占了|各占|都占|用了|吃了|吃满|使用了|uses?|using|consum\w*|takes?|took|allocated|reserved|occup\w*)\s*(?:了|约|大概|"
       r"almost|around|about|nearly|~|≈)?\s*(?P<n>\d+(?:\.\d+)?)\s*(?:G|GB|GiB|Gb)(?:\s*(?:的)?\s*(?:显存|vram|gpu memory))?"),
    _c(r"(?P<n>\d+(?:\.\d+)?)\s*(?:G|GB|GiB|Gb)\s*(?:的)?\s*(?:显存占用|显存使用|vram usage|memory usage)"),
]
_SLOW = _c(r"很慢|太慢|好慢|变慢|慢了|慢出|慢得|速度慢|非常慢|特别慢|慢\d|还慢|更慢|反而慢|(?<![A-Za-z])(?:slow(?:er|ly|s)?|dropped from|drops? to)(?![A-Za-z])"
           r"|首字(?:延迟|时间)?\s*(?:要(?!\s*(?:低于|小于|控制|在|不超过|不高于|求|<|≤))|长|高|达)")  # 要低于 500ms: a target
_TOKENS_S = _c(r"(?P<n>" + DEC + r")\s*(?P<k>[kK])?\s*(?:tokens?|tok)\s*/\s*s")
_DROPPED_TO = _c(r"(?:dropped|drops?|fell|falls?|went down|降到|掉到|降至|掉至)\s*(?:from\s*\d+(?:\.\d+)?\s*k?\s*)?(?:to|到|至)?\s*"
                 r"(?P<n>\d+(?:\.\d+)?)\s*(?P<k>k(?![A-Za-z]))?")
HIGH_UTIL_PCT = 90.0  # '利用率100%，但是很慢': the complaint is the speed, not the utilisation
_ZH_SMALL = {"半": 0.5, "a": 1.0, "an": 1.0}


@dataclass(frozen=True)
class Observed:
    kind: str  # oom | hours | memory | util | host_oom | slow
    hours: float | None = None
    memory_gb: float | None = None
    util_pct: float | None = None
    tokens_per_s: float | None = None
    whole_run: bool = False  # the hours are the whole run's ('took 88 hours'), not an epoch's ('一个epoch要20小时')

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind}
        for key in ("hours", "memory_gb", "util_pct", "tokens_per_s"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.whole_run:
            out["whole_run"] = True
        return out


def _hours(m: re.Match[str]) -> float | None:
    raw = m.group("n")
    n = _ZH_SMALL.get(raw) or parse_number(raw)
    unit = m.group("u").lower()
    return None if not n else round(n * _UNIT_H.get(unit, _UNIT_H.get(unit.rstrip("s"), 1.0)), 3)


_IF_BEFORE = re.compile(r"(?:再大|再长|如果|要是|一旦|否则|不然|(?<![A-Za-z])(?:if|would|otherwise|else))[^。.!?？\n]{0,8}$",
                        re.IGNORECASE)
_NORMAL = re.compile(r"正常吗|正常嘛|正常么|正常不|是否正常|对吗|合理吗|(?<![A-Za-z])(?:normal|expected|reasonable)(?![A-Za-z])",
                     re.IGNORECASE)
_TOTAL = re.compile(r"一共|总共|总计|合计|整个训练|全程|(?<![A-Za-z])(?:in total|total of|altogether)(?![A-Za-z])",
                    re.IGNORECASE)
_PER_EPOCH = re.compile(r"每个?\s*(?:epoch|轮)|一个?\s*(?:epoch|轮)|(?<![A-Za-z])(?:per|an?|one|each|1)\s+epoch", re.IGNORECASE)
_BARE_DURATION = re.compile(_DUR + r"(?!\s*(?:内|之内|以内|完成))")


def _conditional_oom(text: str) -> bool:
    """'batch size=18（再大就爆显存了）': an OOM the user avoided, not the one observed."""
    m = _OOM.search(text)
    return m is not None and bool(_IF_BEFORE.search(text[max(0, m.start() - 12) : m.start()]))


def find_observation(text: str) -> tuple[Observed | None, str]:
    """The first kind of observation the text reports, with its figures; the text with them blanked."""
    memory = None
    oom = _OOM.search(text) is not None and not _conditional_oom(text)  # before blanking: '升到80G后报错' is an OOM
    for pattern in _MEM_USED:
        if (m := pattern.search(text)) is not None:
            memory = float(m.group("n"))
            text = blank(text, m.start(), m.end())
            break
    if _HOST.search(text):
        return Observed("host_oom", memory_gb=_host_gb(text)), text
    if oom:
        return Observed("oom", memory_gb=memory), text
    util = _UTIL.search(text)
    if util is not None:
        raw = util.group("n") or util.group("m")
        pct = float(raw) if raw else None
        if pct is not None and pct >= HIGH_UTIL_PCT and _SLOW.search(text):
            return Observed("slow", util_pct=pct), blank(text, util.start(), util.end())  # busy and still slow
        return Observed("util", util_pct=pct), blank(text, util.start(), util.end())
    for i, pattern in enumerate(_HOURS):
        if (m := pattern.search(text)) is not None and (hours := _hours(m)) is not None:
            # 'took 88 hours': the run, not an epoch; '3个epoch 一共用了60小时': the run's total
            whole = (i == len(_HOURS) - 1 and not _PER_EPOCH.search(text)) or _TOTAL.search(text) is not None
            return Observed("hours", hours=hours, whole_run=whole), blank(text, m.start(), m.end())
    if _NORMAL.search(text) and (m := _BARE_DURATION.search(text)) is not None and (hours := _hours(m)):
        # 'One RTX 3090, 88 hours, normal? --num_epochs=10': the whole run unless an epoch is named
        return Observed("hours", hours=hours, whole_run=not _PER_EPOCH.search(text)), blank(text, m.start(), m.end())
    if memory is not None:
        return Observed("memory", memory_gb=memory), text
    if _SLOW.search(text):
        tps = _TOKENS_S.search(text)
        if tps is None and re.search(r"tokens?\s*/\s*s|tok/s|tps", text, re.IGNORECASE):
            tps = _DROPPED_TO.search(text)  # 'tokens/s dropped from 3500 to 1200': what it runs at now
        value = None if tps is None else (parse_number(tps.group("n")) or 0.0) * (1000 if tps.group("k") else 1)
        return Observed("slow", tokens_per_s=value), text if tps is None else blank(text, tps.start(), tps.end())
    if _NORMAL.search(text) and (tps := _TOKENS_S.search(text)) is not None:
        # '4090上 9 tokens/s 正常吗': a speed seen, asked about (not 9 tokens a sample)
        value = (parse_number(tps.group("n")) or 0.0) * (1000 if tps.group("k") else 1)
        return Observed("slow", tokens_per_s=value), blank(text, tps.start(), tps.end())
    return None, text


_HOST_GB = _c(r"(?P<n>\d+(?:\.\d+)?)\s*(?P<u>G|GB|GiB|T|TB)\s*(?:的)?\s*(?:内存|ram|of (?:system |host )?ram|system ram|dram|ddr)")


def _host_gb(text: str) -> float | None:
    m = _HOST_GB.search(text)
    if m is None:
        return None
    return float(m.group("n")) * (1024 if m.group("u").upper().startswith("T") else 1)


__all__ = ["NA", "Observed", "find_observation"]
