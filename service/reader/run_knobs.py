"""What a post about a run states beyond the model, card and data: the training strategy and settings, a server's
flags, the links and RAM of the machines, and when and how the run went wrong. Slot finders: values only, for the
question frame's Knobs, Hardware and Outcome (service/frame.py); the cause model (service/planner/causes) reads
them.

    strategy        torchrun / DDP / accelerate without DeepSpeed or FSDP -> ddp; deepspeed / ZeRO -> zero; FSDP;
                    Megatron; device_map
    settings        precision, optimizer, attention, the loss (Liger), offload, gradient checkpointing, gradient
                    accumulation, RL (num_generations, completion length), vision (max_pixels, slices, frames)
    server flags    tensor / pipeline parallel size, gpu_memory_utilization (mem_fraction_static,
                    cache_max_entry_count), max_num_seqs, max_num_batched_tokens
    machines        interconnect (10GbE, TCP, no RDMA / IB, RoCE / NVLink, PCIe), network Gb/s, nodes, GPUs per
                    node (nproc_per_node), host RAM ('128G内存', '948G RAM')
    outcome         where it failed (loading, start-up, while serving: memory creeping up), step time, TTFT, more
                    GPUs or nodes no faster
"""

from __future__ import annotations

import re
from typing import Any

from service.reader.numbers import parse_number


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_W = r"(?<![A-Za-z])"
_E = r"(?![A-Za-z])"
_SEP = r"\s*[=:：]?\s*"
_INT = r"(?P<n>\d{1,7})(?![\d.])"

_FSDP = _c(_W + r"fsdp" + _E)
_ZERO = _c(_W + r"(?:deepspeed|zero[-_ ]?[0-3]|ds_z[0-3]|zero[-_ ]?stage)" + r"|零冗余")
_MEGATRON = _c(_W + r"(?:megatron|mcore|nemo)" + _E)
_DEVICE_MAP = _c(r"device_map")
_DDP = _c(_W + r"(?:torchrun|ddp|distributeddataparallel|accelerate\s+launch|nproc[-_]per[-_]node|"
          r"torch\.distributed\.launch|data[-_ ]parallel)" + _E + r"|数据并行")
_PURE_BF16 = _c(r"pure[-_ ]?bf16|纯\s*bf16")
_FP16 = _c(_W + r"(?:--)?fp16" + _E + r"(?!\s*(?:权重|weights))")
_BF16 = _c(_W + r"(?:bf16|bfloat16)" + _E)
# FP8 training ('用 fp8 训', 'fp8 混合精度', 'train in fp8', Transformer Engine), not FP8 weights or KV cache
_FP8_TRAIN = _c(r"fp8[^，。,.;；?？\n]{0,6}?(?:训|微调|预训练)|fp8\s*(?:training|mixed precision)|"
                r"(?:train\w*|fine-?tun\w*)\s+(?:in|with)\s+fp8|(?<![A-Za-z])in\s+fp8(?![A-Za-z])|"
                r"transformer[\s_-]?engine")
_OPT_8BIT = _c(r"(?P<paged>paged[-_ ]?)?adamw?[-_ ]?(?:bnb[-_ ]?)?8[-_ ]?bit|8[-_ ]?bit\s*adamw?")
_ADAFACTOR = _c(r"adafactor")
_EAGER = _c(r"attn_implementation\s*[=:]\s*['\"]?eager|" + _W + r"eager\s*(?:attention|attn|注意力)")
_FLASH = _c(r"flash[-_ ]?attn|flash[-_ ]?attention|" + _W + r"fa2" + _E)
_SDPA = _c(_W + r"sdpa" + _E)
_LIGER = _c(r"liger|cut[-_ ]cross[-_ ]entropy|chunked[-_ ](?:ce|loss|cross)")
_OFFLOAD = _c(r"offload|cpu[-_ ]offload[-_ ]gb|卸载到\s*(?:cpu|内存)")
_NO_CKPT = _c(r"gradient_checkpointing\s*[=:]\s*(?:false|0)|(?:没开|没有开|关(?:了|掉)|不开|未开|disabled?|without|no)"
              r"\s*(?:梯度检查点|gradient[-_ ]checkpointing|grad(?:ient)?[-_ ]?ckpt|gc)" + _E)
_CKPT = _c(r"gradient_checkpointing\s*[=:]\s*(?:true|1)|(?:开了|开启了?|打开了?|用了|enabled?|with|使用了?)\s*"
           r"(?:梯度检查点|gradient[-_ ]checkpointing|grad(?:ient)?[-_ ]?ckpt|gc)" + _E
           + r"|(?:梯度检查点|gradient[-_ ]checkpointing|grad(?:ient)?[-_ ]?ckpt)\s*(?:也)?(?:开了|已开|on|enabled)")
_ACCUM = _c(r"(?:gradient[-_ ]accumulation[-_ ]steps|grad[-_ ]accum(?:ulation)?|梯度累积)" + _SEP + _INT)
_GENERATIONS = _c(r"(?:num[-_ ]generations?|rollout\.n|n[-_ ]samples[-_ ]per[-_ ]prompt|group[-_ ]size)" + _SEP + _INT)
_COMPLETION = _c(r"(?:max[-_ ]completion[-_ ]length|response[-_ ]length|max[-_ ]response[-_ ]length)" + _SEP
                 + r"(?P<n>\d{1,6}(?:\s*[kK])?)")
_PIXELS = _c(r"max[-_ ]pixels" + _SEP + r"(?P<n>\d{1,9}(?:\s*[*x×]\s*\d{1,5}){0,3})")
_SLICES = _c(r"(?:max[-_ ]dynamic[-_ ]patch|max[-_ ]slice[-_ ]nums?|max[-_ ]num[-_ ]tiles?)" + _SEP + _INT)
_FRAMES = _c(r"(?:nframes|num[-_ ]frames|max[-_ ]frames|video[-_ ]frames)" + _SEP + _INT + r"|" + r"(?P<m>\d{1,4})\s*帧")
_TP = _c(_W + r"(?:tp|tensor[-_ ]parallel(?:[-_ ]size)?|--tp[-_ ]size|tp[-_ ]size)" + _SEP + r"(?P<n>\d{1,2})(?!\d)")
_PP = _c(_W + r"(?:pp|pipeline[-_ ]parallel(?:[-_ ]size)?)" + _SEP + r"(?P<n>\d{1,2})(?!\d)")
_SHARE = _c(r"(?:gpu[-_ ]memory[-_ ]utilization|mem[-_ ]fraction[-_ ]static|cache[-_ ]max[-_ ]entry[-_ ]count|"
            r"free[-_ ]gpu[-_ ]memory[-_ ]fraction)" + _SEP + r"(?P<n>0?\.\d+|1(?:\.0)?)(?![\d.])")
_SEQS = _c(r"max[-_ ]num[-_ ]seqs" + _SEP + _INT)
_BATCHED = _c(r"max[-_ ]num[-_ ]batched[-_ ]tokens" + _SEP + _INT)
_ETHERNET = _c(r"\d+\s*gbe" + _E + r"|万兆|千兆|以太网|" + _W + r"(?:tcp|ethernet|socket)" + _E
               + r"|(?:没有|没用|没|无|不带|不支持|不是|不走|no|not|without|do not have|don't have)\s*(?:用\s*)?"
                 r"(?:rdma|ib|infiniband|hcc)" + _E)
_RDMA = _c(_W + r"(?:rdma|infiniband|ib|roce|hcc)" + _E)
_NO_NVLINK = _c(r"(?:没有|没|无|不带|no|without)\s*nvlink|" + _W + r"pcie" + _E)
_NVLINK = _c(_W + r"(?:nvlink|nvswitch|sxm)" + _E)
_GBPS = _c(r"(?P<n>\d{1,3})\s*(?:gbe|gb/s|gbps|gbit|g\s*(?:网络|网卡|带宽|以太网))" + _E + r"|(?P<w>万兆|千兆)"
           r"|(?:网速|带宽|network|bandwidth)[^\d。.!?？\n]{0,10}(?P<mb>\d{1,5})\s*(?:M|MB)\s*/\s*s")
_NODES = _c(r"(?P<n>\d{1,3}|[两二三四五六八十])\s*(?:台|机|nodes?|machines?)" + _E + r"(?:\s*(?:[*x×]|，|,)?\s*(?:每台)?\s*(?P<g>\d{1,2})"
            r"\s*(?:卡|张|gpus?|cards?))?|(?:--)?nnodes" + _SEP + r"(?P<m>\d{1,3})")
_PER_NODE = _c(r"nproc[-_]per[-_]node" + _SEP + r"(?P<n>\d{1,2})|每台\s*(?P<m>\d{1,2})\s*(?:卡|张)")
_HOST_RAM = _c(r"(?P<n>\d{1,5}(?:\.\d+)?)\s*(?P<u>G|GB|GiB|T|TB)\s*(?:的)?\s*(?:内存|主机内存|系统内存|cpu\s*内存|ram|"
               r"of\s+(?:system\s+|host\s+|cpu\s+)?(?:ram|memory)|system\s+ram|host\s+(?:ram|memory)|dram|ddr\d?)"
               + r"|(?:内存|ram|host\s+memory|system\s+memory)\s*(?:只有|是|为|有|:|：)?\s*(?P<m>\d{1,5})\s*(?P<v>G|GB|T|TB)")
_GROWTH = _c(r"缓慢增长|慢慢(?:增长|涨|增加|变大)|逐渐(?:增长|增加|上涨)|一直(?:涨|增长|增加)|越来越(?:大|多)|持续(?:增长|上涨)|"
             r"(?:keeps?|kept)\s+(?:growing|increasing|rising|climbing)|creeps?\s+up|grows?\s+(?:slowly|over time)|"
             r"推理(?:过程中|时|一段时间后)|运行一段时间|after\s+(?:a\s+while|some\s+(?:time|requests))")
_LOADING = _c(r"加载(?:完|时|的时候|中|权重)|权重加载|(?:while|when)\s+load(?:ing)?|loading\s+(?:the\s+)?(?:model|weights|shards)")
_STARTUP = _c(r"起不来|启动(?:失败|不了|时)|won'?t\s+start|fails?\s+to\s+start|on\s+startup|at\s+start[-\s]?up")
_STEP = _c(r"(?P<n>\d+(?:\.\d+)?)\s*(?:s|秒|sec)\s*/\s*(?:it|step|步)|(?:每个?\s*step|一个\s*step|每步|一步|per\s+step|"
           r"each\s+step|a\s+step)[^\d。.!?？\n]{0,8}(?P<m>\d+(?:\.\d+)?)\s*(?:多)?\s*(?:s|秒|sec|seconds?)" + _E
           + r"|(?P<r>\d+(?:\.\d+)?)\s*it/s")
_TTFT = _c(r"(?:首字|首\s*token|ttft)(?P<mid>[^\d。!?？\n]{0,10})(?P<n>\d+(?:\.\d+)?)\s*(?P<u>ms|毫秒|s|秒)" + _E)
_TARGET_WORDS = _c(r"低于|小于|不超过|不能超过|不高于|控制在|压到|以内|目标|<|≤|under|below|within|at most|target|sla")
_SCALING = _c(r"比单卡(?:还|更)?慢|比一台(?:还|更)?慢|比单机(?:还|更)?慢|比\s*(?:1|一)\s*机\S{0,6}慢|多卡(?:反而|还)?(?:更)?慢|反而(?:更)?慢|卡多了?(?:反而)?(?:更)?慢|"
              r"没有(?:变)?快|没快|(?:只有|仅)单机的\s*\d|slower\s+than\s+(?:a\s+)?(?:single|one)|"
              r"(?:no|not)\s+faster|doesn'?t\s+(?:scale|speed)|slower\s+on\s+(?:two|2|more|multiple)")
_NPU = _c(r"ascend|" + _W + r"npu|mindie|昇腾|910b")


_ZH_DIGITS = {"两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "八": 8, "十": 10}


def _int(m: re.Match[str] | None, *groups: str) -> int | None:
    if m is None:
        return None
    for g in groups:
        v = m.groupdict().get(g)
        if v in _ZH_DIGITS:
            return _ZH_DIGITS[v]
        if v:
            n = parse_number(v.replace(" ", ""))
            return None if n is None else int(n)
    return None


def _pixels(raw: str) -> int:
    out = 1
    for part in re.split(r"\s*[*x×]\s*", raw):
        out *= int(part)
    return out


def strategy(text: str) -> str | None:
    if _FSDP.search(text):
        return "fsdp"
    if _ZERO.search(text):
        return "zero"
    if _MEGATRON.search(text):
        return "megatron"
    if _DEVICE_MAP.search(text):
        return "device_map"
    if _DDP.search(text):
        return "ddp"
    return None


def _precision(text: str) -> str | None:
    if _PURE_BF16.search(text):
        return "pure-bf16"
    if _FP8_TRAIN.search(text):
        return "fp8"
    if _FP16.search(text) and not _BF16.search(text):
        return "fp16"
    if _BF16.search(text):
        return "amp-bf16"
    return None


def _optimizer(text: str) -> str | None:
    m = _OPT_8BIT.search(text)
    if m is not None:
        return "paged-adamw-8bit" if m.group("paged") else "adamw-8bit"
    return "adafactor" if _ADAFACTOR.search(text) else None


def _attention(text: str) -> str | None:
    if _EAGER.search(text):
        return "eager"
    if _SDPA.search(text):
        return "sdpa"
    return "flash" if _FLASH.search(text) else None


def train_knobs(text: str) -> dict[str, Any]:
    """The training settings the text states (Knobs field -> value)."""
    out: dict[str, Any] = {"strategy": strategy(text), "precision": _precision(text), "optimizer": _optimizer(text),
                           "attention": _attention(text), "loss": "chunked" if _LIGER.search(text) else None,
                           "offload": True if _OFFLOAD.search(text) else None,
                           "checkpointing": False if _NO_CKPT.search(text) else True if _CKPT.search(text) else None,
                           "grad_accum": _int(_ACCUM.search(text), "n"),
                           "num_generations": _int(_GENERATIONS.search(text), "n"),
                           "image_slices": _int(_SLICES.search(text), "n"),
                           "video_frames": _int(_FRAMES.search(text), "n", "m")}
    comp = _COMPLETION.search(text)
    if comp is not None:
        raw = comp.group("n").replace(" ", "")
        out["completion_len"] = int(float(raw[:-1]) * 1024) if raw[-1] in "kK" else int(raw)
    px = _PIXELS.search(text)
    if px is not None:
        out["max_pixels"] = _pixels(px.group("n"))
    return {k: v for k, v in out.items() if v is not None}


def serve_knobs(text: str) -> dict[str, Any]:
    """A server's flags the text states."""
    out: dict[str, Any] = {"tp": _int(_TP.search(text), "n"), "pp": _int(_PP.search(text), "n"),
                           "max_num_seqs": _int(_SEQS.search(text), "n"),
                           "max_num_batched_tokens": _int(_BATCHED.search(text), "n")}
    share = _SHARE.search(text)
    if share is not None:
        out["gpu_memory_utilization"] = float(share.group("n"))
    return {k: v for k, v in out.items() if v}


def hardware(text: str) -> dict[str, Any]:
    """The machines: their link, network, nodes, GPUs per node and RAM."""
    out: dict[str, Any] = {}
    if _ETHERNET.search(text):
        out["interconnect"] = "ethernet"
    elif _RDMA.search(text):
        out["interconnect"] = "rdma"
    elif _NO_NVLINK.search(text):
        out["interconnect"] = "pcie"
    elif _NVLINK.search(text):
        out["interconnect"] = "nvlink"
    gbps = _GBPS.search(text)
    if gbps is not None:
        if gbps.group("mb"):  # '网速大致为150M/s': megabytes a second
            out["network_gbps"] = round(float(gbps.group("mb")) * 8 / 1000, 2)
            out.setdefault("interconnect", "ethernet")
        else:
            out["network_gbps"] = float(gbps.group("n")) if gbps.group("n") else (10.0 if gbps.group("w") == "万兆"
                                                                                 else 1.0)
    nodes = _NODES.search(text)
    if nodes is not None:
        n = _int(nodes, "n", "m")
        if n and 1 < n <= 512:
            out["nodes"] = n
            per = _int(nodes, "g")
            if per:
                out["gpus_per_node"] = per if per <= 8 or per % n else per // n
    per_node = _int(_PER_NODE.search(text), "n", "m")
    if per_node:
        out["gpus_per_node"] = per_node
    ram = _HOST_RAM.search(text)
    if ram is not None:
        value = float(ram.group("n") or ram.group("m"))
        unit = (ram.group("u") or ram.group("v") or "G").upper()
        out["host_ram_gb"] = value * 1024 if unit.startswith("T") else value
    return out


def outcome(text: str) -> dict[str, Any]:
    """When and how it went wrong: where, step time, TTFT, no faster on more GPUs, 'why does it run'."""
    out: dict[str, Any] = {}
    if _GROWTH.search(text):
        out["where"] = "inference"
    elif _LOADING.search(text):
        out["where"] = "load"
    elif _STARTUP.search(text):
        out["where"] = "startup"
    step = _STEP.search(text)
    if step is not None:
        if step.group("r"):
            rate = float(step.group("r"))
            if rate > 0:
                out["step_s"] = round(1 / rate, 3)
        else:
            out["step_s"] = float(step.group("n") or step.group("m"))
    ttft = _TTFT.search(text)
    if ttft is not None and not _TARGET_WORDS.search(ttft.group("mid")):  # '首字延迟要低于500ms' is a target
        v = float(ttft.group("n"))
        out["ttft_ms"] = v if ttft.group("u").lower() in ("ms", "毫秒") else v * 1000
    if _SCALING.search(text):
        out["kind"] = "scaling"
    return out


def names_npu(text: str) -> bool:
    """An Ascend NPU post ('vllm-ascend', 'PYTORCH_NPU_ALLOC_CONF', 'MindIE') that may name no card."""
    return _NPU.search(text) is not None
