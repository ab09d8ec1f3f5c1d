"""Small slot finders about what is asked: the capacity target (largest model / longest context / largest batch),
the training objective (SFT, DPO, ORPO, ...), a GPU memory size said instead of (or after) a GPU name, and which
catalog fact a knowledge question asks (sold by, FP8 support, memory, RDMA, billing, price, regions)."""

from __future__ import annotations

import re

from service.reader.quantities import blank


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_TARGETS = [
    ("context", _c(r"最长(?!时间)|多长(?!时)|最大(?:的)?(?:上下文|长度|序列|context|ctx|seq)|上下文(?:最多|最长|能开多|能到多)|"
                   r"(?<![A-Za-z])(?:longest|max(?:imum)?\s+(?:context|ctx|seq(?:uence)?(?:\s+len(?:gth)?)?|input length|tokens?)"
                   r"|how long (?:a |of a )?(?:context|sequence)|context_size that|support longer|更长的输入)")),
    ("batch", _c(r"(?:最大|最多|多大|max(?:imum)?|largest|biggest|what|good)\s*(?:的)?\s*(?:micro[\s_-]*)?(?:batch|bs|批)"
                 r"|(?:batch[\s_-]*size|bs|per_device_train_batch_size)\s*(?:最大|最多|能开到多少|能开多大|should be|能开)")),
    ("model_size", _c(r"多大(?:的)?(?:参数)?(?:的)?模型|多大参数|最大(?:能)?(?:训|跑|放|部署|上)?(?:多大|的)?模型|能训多大|能跑多大|能部署多大|"
                      r"能放下多大|能上多大|能训到多大|(?<![A-Za-z])(?:largest|biggest|max(?:imum)?)\s+(?:model|size)|"
                      r"what (?:size|model size|sized? model)s?|which models? (?:can|could) (?:i )?(?:run|fit|train)"
                      r"|how (?:big|large) (?:a |of a )?model|model size\??$|哪个版本的|什么样的模型|哪些模型能")),
]
_STAGES = [
    ("dpo", r"dpo"), ("orpo", r"orpo"), ("kto", r"kto"), ("simpo", r"simpo"), ("grpo", r"grpo|gpro"),
    ("ppo", r"ppo|rlhf"), ("rm", r"reward model|奖励模型|(?<![A-Za-z])rm(?![A-Za-z])"), ("sft", r"sft|指令微调"),
]
_STAGE = [(name, _c(rf"(?<![A-Za-z]){p}(?![A-Za-z])")) for name, p in _STAGES]
# '24G显存', '12gb vram', 'a card with 45G', '(24 Gb)' after a GPU name (marked \x01): a card's memory, never data.
_MEMORY = _c(r"(?P<n>\d{1,3}(?:\.\d)?)\s*(?:G|GB|GiB|Gb|g)(?![A-Za-z])\s*(?:的)?\s*(?:显存|现存|vram|gpu memory|memory card|卡|显卡|gpus?|cards?)"
             r"|(?:显存|vram|varm|gpu memory|显卡|card)\s*(?:只有|是|为|有|:|：|of|is|with|=|一共|总共|固定)?[（(]?\s*(?:比如)?\s*(?:只有)?\s*(?P<m>\d{1,3}(?:\.\d)?)\s*(?:G|GB|GiB|Gb|g)(?![A-Za-z])"
             r"|(?<![\d.])(?P<c>\d{1,3})\s*(?:G|GB|GiB|Gb|gb)\s*(?:is\s+)?(?:enough|够用|够不够|够吗|够)"
             r"|\x01[\s(（-]*(?P<a>\d{1,3})\s*(?:G|GB|GiB|Gb|g)(?![A-Za-z])"
             r"|(?<![A-Za-z\d.])(?P<b>\d{1,3})\s*(?:G|GB|GiB|Gb)[\s-]*(?:的)?\s*\x01"
             r"|(?:单卡|每卡|每张|单张|一张|a single|each)\s*(?P<d>\d{1,3})\s*(?:G|GB|GiB|Gb)(?![A-Za-z])"
             r"|\x01[^。.!?？\n]{0,12}?with\s+(?P<e>\d{1,3})\s*(?:G|GB|GiB|Gb)\s+(?:of\s+)?(?:memory|vram)")
_USED_BEFORE = _c(r"(?:占用|占了|各占|占到|用了|吃了|使用了?|达到|升到|涨到|到了|(?<![A-Za-z])(?:uses?|using|takes?|took|"
                  r"consum\w*|allocat\w*|reserv\w*|occup\w*))\s*(?:了|约|大概|大约|almost|around|about|nearly|~|≈)?\s*$")
_FACTS = [
    ("supports_fp8", _c(r"fp8")), ("supports_bf16", _c(r"bf16|bfloat16")),
    ("supports_flash_attn", _c(r"flash[\s-]?attn|flash[\s-]?attention|fa2")),
    # 'HCC' alone is the clusters' name; inside an instance type (HCCPNV5, HCCPNV4sn) it is not an RDMA question
    ("rdma", _c(r"rdma|infiniband|(?<![A-Za-z])ib(?![A-Za-z])|roce|星脉|(?<![A-Za-z])hcc(?![A-Za-z0-9])|多机互联")),
    ("nvlink", _c(r"nvlink|nvswitch")),
    ("price", _c(r"多少钱|价格|价钱|单价|费用|怎么收费|price|cost per|how much (?:is|does|per)|/小时|每小时|per hour|一小时")),
    # the billing rule itself (the ratio, the price relation): '包月怎么算', '包月是按量的几倍'; '怎么选' is a how-to
    ("billing", _c(r"(?:包月|包年|按量|竞价|计费)[^。？?]{0,12}(?:几倍|多少倍|怎么算|如何计算|换算|折扣|比例|贵多少|便宜多少)|"
                   r"(?:几倍|多少倍|ratio|times)[^。？?]{0,12}(?:包月|按量|monthly|hourly|on-demand)|"
                   r"monthly (?:price|rate) (?:vs|versus|compared)|how (?:is|are) (?:monthly|spot) (?:prices?|billing) (?:set|computed)")),
    ("regions", _c(r"地域|区域|哪些区|哪个区|可用区|region|zone|广州|上海|北京|成都|南京|华东|华北|华南")),
    ("bandwidth", _c(r"带宽|bandwidth|tb/s|gb/s")),
    ("tflops", _c(r"算力|tflops|flops|compute power")),
    ("cuda", _c(r"cuda\s*(?:版本|version|最低|minimum|需要|要求)|最低cuda|min(?:imum)? cuda")),
    ("memory", _c(r"显存(?:多大|多少|是多少)|多少显存|how much (?:vram|memory) does (?:the|an?)|memory size of")),
    ("sells", _c(r"有没有|是否有|有卖|在卖|卖不卖|售卖|在售|能租到|能买到|买得到|租得到|可以租到|可租|有货|上架|"
                 r"(?:腾讯云?|京东云?|云上|云里|上面|平台)\s*(?:现在|目前)?\s*(?:有|卖|提供|能租)|"
                 r"(?<![A-Za-z])(?:sells?|offers?|available on|do(?:es)? \w+ (?:cloud )?have|can i rent|rent \w+ on)(?![A-Za-z])")),
]


def find_target(text: str) -> str | None:
    """The capacity target a question names ('最长能跑多长', 'max batch', '能训多大的模型')."""
    for name, pattern in _TARGETS:
        if pattern.search(text):
            return name
    return None


def find_stage(text: str) -> str | None:
    """The training objective named last (DPO after SFT: the stage being asked about)."""
    found = [(m.start(), name) for name, pattern in _STAGE for m in pattern.finditer(text)]
    return max(found)[1] if found else None


def find_gpu_memory(marked: str) -> tuple[float | None, str]:
    """A card's memory size; `marked` has GPU names marked with \\x01 so '3090 24G' reads as that card's 24 GB."""
    m = _MEMORY.search(marked)
    while m is not None and _USED_BEFORE.search(marked[max(0, m.start() - 14) : m.start()]):
        m = _MEMORY.search(marked, m.end())  # '占用了20g显存', 'takes 16G of VRAM': memory in use, not the card's
    if m is None:
        return None, marked
    group = next(g for g in ("n", "m", "c", "a", "b", "d", "e") if m.group(g))
    raw = m.group(group)
    value = float(raw)
    if not 2 <= value <= 1024:
        return None, marked
    start = m.start(group) if group in ("d", "e") else m.start()  # '单卡40G': the count stays for the count finder
    return value, blank(marked, start, m.end(), " ")


def find_fact(text: str) -> str | None:
    """Which catalog fact a knowledge question asks, the most specific first; None when none is named."""
    for name, pattern in _FACTS:
        if pattern.search(text):
            return name
    return None
