"""The classifier's features: cue families (what the words signal, written from what the words mean, not from
any one phrasing), the slots the finders found, and the previous turn's question type. Each feature is a number
in [0, 1]; the frame reader (service/reader/frame_reader.py) adds them to the learned model's features
(service/reader/learned.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_W = r"(?<![A-Za-z])"  # an English word starts here
_E = r"(?![A-Za-z])"
CUES: dict[str, re.Pattern[str]] = {
    "serve": _c(rf"部署|推理|上线|服务化|线上|在线服务|对话服务|客服|api\s*服务|起服务|起一个服务|跑起来给|线上环境|生产环境|"
                rf"{_W}(?:serv(?:e|es|ing|er)|inference|infer|deploy\w*|host(?:ing)?|endpoint|production|chatbot|api){_E}|"
                rf"{_W}run (?:it|them|the models?|this model|these models|a model|models?)(?: locally| on)?{_E}|{_W}boot up|"
                rf"起来吗|能起来|起得来|满血|本地跑|本地部署|加载模型|load (?:the )?model"),
    "engine": _c(rf"{_W}(?:vllm|sglang|lmdeploy|tgi|trt[\s-]?llm|tensorrt|ollama|llama\.cpp|xinference|ktransformers|"
                 rf"text-generation-inference|fastchat){_E}"),
    "serve_load": _c(rf"并发|qps|rps|吞吐|throughput|tokens?\s*/\s*s|tok/s|首字|首token|ttft|tpot|itl|latency|延迟|响应|"
                     rf"每秒|requests?|请求|users?{_E}|人同时|同时用|同时在线|用户|kv[\s_-]*cache|max[-_ ]?model[-_ ]?len|"
                     rf"gpu[-_]memory[-_]utilization|num_ctx|每百万|per million|百万token"),
    "quantized": _c(rf"{_W}(?:awq|gptq|int4|int8|w4a16|w8a8|gguf|q4_k_m|nf4|exl2){_E}|量化|quantiz"),
    "train": _c(rf"训练|训|微调|预训练|精调|对齐|全参|全量|{_W}(?:train\w*|fine[\s-]?tun\w*|finetun\w*|sft|lora|qlora|"
                rf"pre-?train\w*|dpo|orpo|kto|ppo|grpo|gpro|rlhf|epochs?|steps?|deepspeed|zero-?\d|fsdp|optimizer|"
                rf"gradient|backward){_E}"),
    "oom": _c(rf"{_W}(?:oom|out of memory|outofmemory|cuda error){_E}|爆显存|显存不足|显存不够|溢出|爆了|炸了|装不下|放不下"),
    "used": _c(rf"占用|占了|用了|吃了|吃满|{_W}(?:uses?|using|consum\w*|allocated|reserved|sits? at|nvidia-smi|peak){_E}"),
    "time_seen": _c(rf"要\d+(?:\.\d+)?\s*(?:个)?小时|\d+(?:\.\d+)?\s*(?:个)?(?:小时|天|分钟)|{_W}\d+(?:\.\d+)?\s*(?:hours?|hrs?|days?|"
                    rf"minutes?|mins?|s/it|it/s){_E}|s/it|it/s"),
    "util": _c(rf"利用率|使用率|功耗|功率|{_W}(?:util\w*|gpu usage|power draw){_E}"),
    "host_ram": _c(rf"内存(?!不足以)|{_W}(?:ram|host memory|cpu memory|system memory|dram|swap|killed){_E}"),
    "slow": _c(rf"慢|{_W}(?:slow\w*|dropped|takes? forever|too long){_E}"),
    "normal_q": _c(rf"正常吗|正常嘛|正常么|正常不|是否正常|正常吧|对吗|合理吗|合理不|按理说|离谱|不应该|应该不会|"
                   rf"{_W}(?:normal|expected|is (?:this|that|it) (?:right|ok|reasonable)|that much|a leak|reasonable){_E}"),
    "why": _c(rf"为什么|为啥|咋回事|怎么回事|什么原因|啥原因|原因|{_W}(?:why|how come|what causes|the reason|cause){_E}"),
    "fix": _c(rf"怎么办|如何解决|怎么解决|有办法|有没有办法|怎么调|如何调整|咋整|{_W}(?:how (?:do|can|to) (?:i |we )?(?:fix|solve|"
              rf"stop|avoid|reduce)|any (?:way|tips?|idea|advice)|workaround|solution){_E}"),
    "can": _c(rf"能跑|能不能|可不可以|可以跑|能否|够不够|够吗|够么|够用|够不|跑得动|跑不动|放得下|装得下|塞得下|能训|能微调|能做|"
              rf"想跑\s*\d|想开到|想上到|"
              rf"能部署|能起|行不行|行吗|可以吗|可以么|能行|能用|是否可以|是否能|{_W}(?:can (?:i|we|it|you|a|one|the|my)|could (?:i|we|it)|"
              rf"is it (?:possible|doable|feasible)|enough|fits?|feasible|possible|handle|doable|able to){_E}"),
    "how_many": _c(rf"几张|几块|几卡|几个卡|几个gpu|几台|多少张|多少块|多少卡|多少个gpu|多少台|多少节点|几个节点|"
                   rf"{_W}(?:how many|number of (?:gpus?|cards?|nodes?)|min(?:imum)? (?:#|number|no\.?) of|"
                   rf"min # of|fewest){_E}"),
    "how_much_mem": _c(rf"多少显存|多大显存|多大的显存|显存需求|显存要求|需要多少.{{0,6}}显存|显存.{{0,4}}(?:最少|至少|需要多少|多少)|"
                       rf"多少g|多少内存|资源需求|多少资源|什么资源|多少算力|什么配置|硬件要求|最低配置|最低要求|"
                       rf"{_W}how much (?:training |compute |gpu )?resources?|what (?:hardware|resources|gpus?) (?:do|would|will)|"
                       rf"{_W}(?:how much (?:vram|gpu memory|memory|gpu)|vram (?:needed|required|requirement)|"
                       rf"memory requirements?|least vram|minimum (?:vram|hardware|gpu|requirements?)|requirements?){_E}"),
    "least": _c(rf"至少|最少|最低|起码|{_W}(?:at least|minimum|min|least|lowest){_E}"),
    "largest": _c(rf"多大的模型|多大模型|最大(?:能)?(?:训|跑|放|部署|上)?|最长(?!时间)|多长(?!时)|最多|上限|能训多大|能跑多大|哪些模型|"
                  rf"什么样的模型|{_W}(?:largest|biggest|longest|max(?:imum)?|how (?:big|large)|which models?|what size|"
                  rf"how long (?:a |of a |can (?:the |a )?)?(?:context|sequence|input|prompt)){_E}"),
    "compare": _c(rf"对比|比较|比一比|相比|哪个|哪家|哪种|哪一个|哪款|还是(?!只能|必须)|区别|差别|差异|选哪|比呢|跟.{{1,12}}比|"
                  rf"{_W}(?:vs\.?|versus|compare[ds]?|comparison|which (?:one|is|gpu|cloud)|better|or (?:a|an|the)?\s*\w+\?|"
                  rf"difference between){_E}"),
    "value": _c(rf"划算|性价比|便宜|贵|省钱|成本|花费|{_W}(?:cheaper|cheapest|cost[\s-]?effective|worth|value|pricier|expensive){_E}"),
    "save": _c(rf"省多少|能省|省下|节省|节约|便宜多少|贵多少|多花|差多少|少用几张|能少|快多少|慢多少|快几|能快|提速多少|"
               rf"{_W}(?:how much (?:faster|slower|cheaper|more|less|"
               rf"would i save|do i save|can i save)|save|savings?|instead){_E}"),
    "plan": _c(rf"预算|租|配置|推荐|方案|选型|怎么选|选什么|用什么机器|什么机器|机型|实例|估算|估计|成本|费用|多少钱|多久|多长时(?:间)?|"
               rf"训练时间|训练成本|微调时间|卡时|{_W}(?:(?:fine[\s-]?tuning|training|train) (?:time|cost|hours)|gpu[\s-]?hours|approximate\w*|"
               rf"budget|rent|recommend\w*|instance|which (?:machine|instance|gpu should)|estimate\w*|cost|how long|"
               rf"what should i (?:use|rent|get)|plan){_E}"),
    "fact": _c(rf"支持|有没有|有吗|是否有|卖|售|提供|计费|包月|按量|竞价|地域|区域|可用区|带宽|rdma|nvlink|fp8|bf16|cuda|关机|扣费|"
               rf"{_W}(?:support\w*|sells?|offer\w*|available|regions?|zones?|billing|billed|spot|monthly|bandwidth){_E}"),
    "howto": _c(rf"什么是|是什么|怎么|如何|原理|介绍|教程|解释|怎么算|计算方法|区别|{_W}(?:what is(?! the (?:estimated|approximate|"
                rf"expected|total|likely|max\w*|min\w*|best|cheapest|fastest|largest|cost|price|time))|what are|what does|how does|"
                rf"how do i|how to|explain|tutorial|guide|calculat\w+|derived|formula|difference){_E}"),
    "oos": _c(rf"天气|诗|周报|日报|股票|抄底|基金|菜谱|做饭|笑话|翻译一下|写一篇|写个|团建|电影|旅游|彩票|星座|"
              rf"{_W}(?:weather|poem|stock|recipe|joke|translate|essay|movie|travel|football|horoscope|lottery){_E}"),
    "other_cloud": _c(rf"阿里云|aliyun|华为云|百度云|百度智能云|火山引擎|{_W}(?:aws|azure|gcp|google cloud|autodl|lambda labs|runpod){_E}"),
    "greeting": _c(r"^\s*(?:你好|您好|hi|hello|hey|谢谢|thanks|thank you)[!！。.,，\s]*$"),
    "follow": _c(rf"^\s*(?:那|换成|改成|如果|要是|换|改|用|只看|只用|只要|就看|不要|再|还是)|呢\s*[?？]?\s*$|{_W}(?:what about|how about|instead|what if|and (?:if|on|with)|"
                 rf"switch to){_E}"),
    "question": _c(r"[?？]|吗|么|嘛|呢"),
}
# what makes 'deploy' / 'serve' about a model: a model, a GPU, inference words, an engine or a load
_ML = _c(rf"模型|大模型|显卡|显存|算力|卡|推理|量化|并发|吞吐|对话|客服|聊天|机器人|向量|token|qps|ttft|"
         rf"{_W}(?:llms?|models?|gpus?|vram|cuda|nvidia|inference|infer|chat\w*|bot|embedding|quantiz\w*|concurren\w*|"
         rf"throughput|latency|tokens?|qwen\w*|llama\w*|glm\w*|deepseek\w*|mistral\w*|gemma\w*|yi|baichuan\w*){_E}")
_DOMAIN = _c(rf"显卡|显存|算力|gpu|cuda|模型|大模型|训练|推理|部署|微调|参数|token|{_W}(?:llm|model|gpus?|vram|nvidia|"
             rf"cloud|inference|compute|tflops|transformer){_E}|云服务器|实例|机型|服务器")
TYPES = ("plan", "feasibility", "min_gpus", "compare", "savings", "serving", "diagnose", "capacity", "knowledge",
         "out_of_scope")


def slot_features(slots: Mapping[str, Any], named: Mapping[str, int]) -> dict[str, float]:
    """`slots`: the reader's slots in the question schema; `named`: counts of GPUs, clouds, methods named."""
    obs = slots.get("observed") or {}
    kind = obs.get("kind") if isinstance(obs, Mapping) else None
    target = slots.get("target")
    f = {
        "model": "model" in slots, "params_b": "params_b" in slots, "gpu": "gpu" in slots,
        "gpu_count_multi": (slots.get("gpu_count") or 1) > 1, "gpu_memory_gb": "gpu_memory_gb" in slots,
        "method": "method" in slots, "full": slots.get("method") == "full",
        "pretrain": slots.get("method") == "pretrain",
        "data": any(k in slots for k in ("samples", "tokens", "dataset_gb")),
        "budget": "budget_cny" in slots, "deadline": "deadline_hours" in slots,
        "seq_len": "seq_len" in slots or "max_model_len" in slots,
        "serving_load": any(k in slots for k in ("concurrency", "request_rate", "input_tokens", "output_tokens",
                                                  "ttft_ms", "tpot_ms")),
        "engine": "engine" in slots, "weights": "weights" in slots, "kv_dtype": "kv_dtype" in slots,
        "observed_oom": kind == "oom", "observed_hours": kind == "hours", "observed_memory": kind == "memory",
        "observed_util": kind == "util", "observed_host": kind == "host_oom", "observed_slow": kind == "slow",
        "two_gpus": named.get("gpus", 0) >= 2, "two_clouds": named.get("clouds", 0) >= 2,
        "two_methods": named.get("methods", 0) >= 2,
        "target_model": target == "model_size", "target_context": target == "context", "target_batch": target == "batch",
        "stage": "stage" in slots, "fact_named": "fact" in slots, "cloud": "clouds" in slots,
    }
    f["observed_any"] = kind is not None
    return {k: float(v) for k, v in f.items()}


def features(text: str, slots: Mapping[str, Any], named: Mapping[str, int], prev_type: str | None) -> dict[str, float]:
    out = {name: float(bool(p.search(text))) for name, p in CUES.items()}
    out.update(slot_features(slots, named))
    # a model named with no training word: in chat, '跑' / 'run' a model without one means inference
    out["no_train"] = float(not out["train"] and ("model" in slots or "params_b" in slots))
    # nothing about models, GPUs, clouds, training or serving: a question outside what the product answers
    domain = ("serve", "engine", "serve_load", "quantized", "train", "oom", "used", "util", "fact", "other_cloud",
              "how_much_mem", "how_many")
    out["off_domain"] = float(not any(out[c] for c in domain) and not any(
        k in slots for k in ("model", "params_b", "gpu", "gpu_memory_gb", "clouds", "method", "observed")) and
        not _DOMAIN.search(text) and not (prev_type and prev_type != "out_of_scope" and out["follow"]))
    out["gpu_filter"] = float(named.get("gpu_filter", 0) > 0)  # '只用T4', 'no V100': a plan's constraint
    out["statement"] = float(not out["question"] and not out["howto"] and not out["can"] and not out["how_many"])
    out.update({f"prev_{t}": float(prev_type == t) for t in TYPES})
    out["observed_asked"] = float(bool(out["observed_any"] and (out["why"] or out["normal_q"])))
    ml = any(k in slots for k in ("model", "params_b", "gpu", "gpu_memory_gb", "engine", "weights", "concurrency",
                                  "request_rate", "input_tokens", "output_tokens")) or bool(_ML.search(text))
    out["serve_off_ml"] = float(bool(out["serve"]) and not out["engine"] and not ml)
    out["other_cloud_only"] = float(bool(out["other_cloud"]) and "clouds" not in slots and not ml)
    out["short"] = float(len(text.strip()) <= 16)
    follow = out["follow"] and not (slots.get("model") and not named.get("inherited"))
    out.update({f"follow_{t}": float(bool(follow) and prev_type == t) for t in TYPES})
    out["bias"] = 1.0
    return out
