"""The sizing rationale (选型依据): the per-GPU memory sum and the time formula, with the plan's own figures.

Shown arithmetic is the plan's: the memory terms and their total as rounded by the planner (a sum of rounded
terms can differ from the rounded total by 0.01-0.02, which is then said), and the time as
tokens ÷ throughput ÷ 3600 × the offload slowdown the planner applied.
"""

from __future__ import annotations

from service.catalog.loader import Catalog
from service.documents import fmt
from service.documents.fmt import METHOD, OFFLOAD, label, tr
from service.documents.plan_view import CandidateView, Lang, PlanView
from service.planner.strategy import HEADROOM, OFFLOAD_SLOWDOWN

TERM_NAMES = {
    "weights": ("模型权重", "weights"),
    "gradients": ("梯度", "gradients"),
    "optimizer": ("优化器状态", "optimizer states"),
    "activations": ("激活值", "activations"),
    "overhead": ("其他开销（CUDA 上下文、通信缓冲、碎片）", "overhead (CUDA context, NCCL buffers, fragmentation)"),
}
SAMPLE_KINDS = ("cnn", "diffusion")


def memory_sum_is_exact(c: CandidateView) -> bool:
    """Whether the rounded terms add up to the rounded total exactly (else the text says '≈')."""
    return abs(round(sum(v for _, v in c.memory.terms()), 2) - c.memory.per_gpu_gib) < 0.005


def _setup_lines(c: CandidateView, lang: Lang) -> list[str]:
    s = c.strategy
    method = label(METHOD, s.method, lang)
    if s.quant_bits:
        method += f" {s.quant_bits}-bit"
    if s.lora_rank:
        method += f" r{s.lora_rank}"
    lines = [tr(lang, f"训练方式：{method}；策略：{s.label}", f"Method: {method}; strategy: {s.label}"),
             tr(lang, f"序列长度 {s.seq_len}，每卡 micro batch {s.micro_batch}，精度 {s.precision.upper()}，"
                      f"梯度检查点{'开启' if s.grad_ckpt else '关闭'}",
                f"Sequence length {s.seq_len}, micro batch {s.micro_batch} per GPU, {s.precision.upper()}, "
                f"gradient checkpointing {'on' if s.grad_ckpt else 'off'}")]
    if s.zero_stage:
        lines.append(tr(lang, f"DeepSpeed ZeRO-{s.zero_stage}：按每节点 {s.gpus_per_node} 卡 × {s.nodes} 节点切分，"
                              "下表为切分后的每卡值",
                        f"DeepSpeed ZeRO-{s.zero_stage}: sharded over {s.gpus_per_node} GPUs per node × "
                        f"{s.nodes} node(s); the table shows per-GPU values after sharding"))
    if s.offload != "none":
        lines.append(tr(lang, f"CPU offload：{label(OFFLOAD, s.offload, lang)}；主机内存需求合计 "
                              f"{fmt.num(c.host_ram_needed_gib)} GiB（全部节点合计），每节点内存 "
                              f"{fmt.num(c.memory_gib) + ' GiB' if c.memory_gib is not None else '未公开'}",
                        f"CPU offload: {label(OFFLOAD, s.offload, lang)}; host RAM needed "
                        f"{fmt.num(c.host_ram_needed_gib)} GiB across all nodes; each node has "
                        f"{fmt.num(c.memory_gib) + ' GiB' if c.memory_gib is not None else 'an unpublished amount'}"))
    return lines


def memory_arithmetic(c: CandidateView, lang: Lang) -> str:
    m = c.memory
    terms = m.terms()
    rows = [[label(TERM_NAMES, k, lang), fmt.gib(v)] for k, v in terms]
    rows.append([tr(lang, "**每卡合计**", "**Per GPU total**"), f"**{fmt.gib(m.per_gpu_gib)}**"])
    table = fmt.table([tr(lang, "显存项", "Memory term"), "GiB"], rows)
    exact = memory_sum_is_exact(c)
    rel = "=" if exact else "≈"
    expr = " + ".join(f"{label(TERM_NAMES, k, lang).split('（')[0].split(' (')[0]} {fmt.gib(v)}" for k, v in terms)
    eq = tr(lang, f"每卡显存 = {expr} {rel} **{fmt.gib(m.per_gpu_gib)} GiB**",
            f"Per-GPU memory = {expr} {rel} **{fmt.gib(m.per_gpu_gib)} GiB**")
    if not exact:
        eq += tr(lang, "（各项已四舍五入到 0.01 GiB，合计按未取整的数值计算）",
                 " (terms are rounded to 0.01 GiB; the total is computed before rounding)")
    pct = f"{HEADROOM:.0%}"
    fits = m.per_gpu_gib <= HEADROOM * c.gpu_memory_gib
    verdict = tr(lang, "满足" if fits else "不满足", "fits" if fits else "does not fit")
    check = tr(lang, f"对比 GPU 显存：{c.gpu_name} 每卡 {fmt.num(c.gpu_memory_gib)} GiB，规划只使用其中 {pct}"
                     f"（为峰值、分配器与驱动预留余量）：{fmt.gib(m.per_gpu_gib)} GiB ≤ "
                     f"{fmt.num(c.gpu_memory_gib)} GiB × {pct}，{verdict}。",
               f"Against GPU memory: {c.gpu_name} has {fmt.num(c.gpu_memory_gib)} GiB per GPU and the plan uses at "
               f"most {pct} of it (headroom for peaks, the allocator and the driver): {fmt.gib(m.per_gpu_gib)} GiB ≤ "
               f"{fmt.num(c.gpu_memory_gib)} GiB × {pct}: {verdict}.")
    return "\n".join([fmt.bullets(_setup_lines(c, lang)), "", table, "", eq, "", check])


def _peak_line(c: CandidateView, catalog: Catalog | None, lang: Lang) -> str | None:
    if catalog is None:
        return None
    try:
        g = catalog.gpu(c.gpu)
    except KeyError:
        return None
    return tr(lang, f"单卡峰值算力：{fmt.num(g.dense_16bit_tflops)} TFLOPS（{g.name} 稠密 BF16，无 BF16 的卡按 FP16；"
                    f"来源：{g.source}）",
              f"Peak per GPU: {fmt.num(g.dense_16bit_tflops)} TFLOPS ({g.name}, dense BF16, or FP16 where there is "
              f"no BF16; source: {g.source})")


def time_arithmetic(view: PlanView, c: CandidateView, lang: Lang, catalog: Catalog | None = None) -> str:
    job, s = view.job, c.strategy
    samples = view.model.kind in SAMPLE_KINDS
    unit = tr(lang, "样本", "samples") if samples else tr(lang, " tokens ", "tokens")
    one = tr(lang, "样本", "sample") if samples else tr(lang, " token ", "token")
    formula = tr(lang, f"训练时长（小时）= 总{unit}× 每{one}FLOPs ÷ （GPU 数 × 单卡峰值算力 × MFU × 扩展效率）÷ 3600",
                 f"Hours = total {unit} × FLOPs per {one} ÷ (GPUs × peak FLOP/s per GPU × MFU × scaling "
                 "efficiency) ÷ 3600")
    lines = [formula]
    if samples:
        total = f"{fmt.count(job.samples_per_epoch)} × {fmt.ratio(job.epochs)}"
        lines.append(tr(lang, f"总样本 = 每轮 {fmt.count(job.samples_per_epoch)} × {fmt.ratio(job.epochs)} 轮",
                        f"Total samples = {fmt.count(job.samples_per_epoch)} per epoch × {fmt.ratio(job.epochs)} epochs"))
    else:
        total = fmt.count(job.tokens_total)
        lines.append(tr(lang, f"总 tokens = 每轮 {fmt.count(job.tokens_per_epoch)} × {fmt.ratio(job.epochs)} 轮 = "
                              f"{fmt.count(job.tokens_total)}",
                        f"Total tokens = {fmt.count(job.tokens_per_epoch)} per epoch × {fmt.ratio(job.epochs)} epochs"
                        f" = {fmt.count(job.tokens_total)}"))
    lines.append(tr(lang, f"GPU 数：每节点 {s.gpus_per_node} 卡 × {s.nodes} 节点；MFU {fmt.ratio(c.mfu)}；"
                          f"扩展效率 {fmt.ratio(c.scaling_efficiency)}",
                    f"GPUs: {s.gpus_per_node} per node × {s.nodes} node(s); MFU {fmt.ratio(c.mfu)}; "
                    f"scaling efficiency {fmt.ratio(c.scaling_efficiency)}"))
    peak = _peak_line(c, catalog, lang)
    if peak:
        lines.append(peak)
    lines.append(tr(lang, f"MFU 依据：{c.mfu_source}", f"MFU source: {c.mfu_source}"))
    lines.append(tr(lang, f"分母 ÷ 每{one}FLOPs 即集群有效吞吐，规划结果为 **{fmt.num(c.throughput_tokens_per_s)} {unit.strip()}/s**",
                    f"The denominator ÷ FLOPs per {one} is the cluster's throughput: "
                    f"**{fmt.num(c.throughput_tokens_per_s)} {unit}/s** in the plan"))
    calc = f"{total} ÷ {fmt.num(c.throughput_tokens_per_s)} ÷ 3600"
    slowdown = OFFLOAD_SLOWDOWN.get(s.offload, 1.0)
    if slowdown != 1.0:
        calc += tr(lang, f"（吞吐已计入 CPU offload 降速 {fmt.ratio(slowdown)} 倍，估算）",
                   f" (the throughput includes the CPU offload slowdown of {fmt.ratio(slowdown)}x, an estimate)")
    result = tr(lang, f"训练时长：{calc} ≈ **{fmt.num(c.training_hours)} 小时**",
                f"Training time: {calc} ≈ **{fmt.num(c.training_hours)} h**")
    return fmt.bullets(lines) + "\n\n" + result
