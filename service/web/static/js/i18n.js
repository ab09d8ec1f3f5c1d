// Interface strings in Chinese and English. The language comes from localStorage, else navigator.language.
const KEY = "gpu-advisor.lang";

const STRINGS = {
  zh: {
    skip: "跳到输入框", tagline: "GPU 训练资源顾问", sessions: "会话", modes: "模式", tabChat: "对话",
    tabForm: "表单规划", newChat: "＋ 新对话", noSessions: "还没有会话。", apiKey: "API 密钥",
    apiKeyHelp: "服务器设置了 GPU_ADVISOR_API_KEY 时填写", conversation: "对话记录",
    keyNeeded: "这个服务器需要 API 密钥：请在上面填写（服务器的 GPU_ADVISOR_API_KEY），按回车保存。",
    keyWrong: "API 密钥不对：请检查后重新填写，按回车保存。",
    welcome: "描述你的训练任务：模型、方法、数据量、预算和期限。回答中的配置、时长和价格都由规划引擎计算并注明来源。",
    example: "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000",
    yourMessage: "你的消息", enterHint: "Enter 发送，Shift+Enter 换行", stop: "停止", send: "发送",
    fModel: "模型", fModelHint: "输入以搜索，例如 Qwen2-7B、Llama-3-8B", fMethod: "训练方法", mFull: "全参微调",
    mFreeze: "Freeze（冻结部分层）", mPretrain: "预训练", fDataset: "数据集大小", fDatasetAmount: "数量",
    fDatasetUnit: "单位", uSamples: "条样本", fBudget: "预算（¥）", fBudgetAmount: "金额（元）",
    fBudgetPeriod: "预算周期", pMonth: "每月", pTotal: "总计", fDeadline: "期限（小时内完成）", fBilling: "计费方式",
    bAuto: "自动（最省）", bOnDemand: "按量计费", bMonthly: "包年包月", bSpot: "竞价实例", fClouds: "云厂商",
    cTencent: "腾讯云", cJdcloud: "京东云", fObjective: "优先", oCheapest: "最便宜", oFastest: "最快",
    oBalanced: "均衡", fMore: "更多选项", fEpochs: "训练轮数", fAvgTokens: "平均每条 tokens", plan: "计算方案",
    explain: "让助手解释", knowledge: "知识库", rawMarkdown: "原始 Markdown", close: "关闭", you: "你",
    assistant: "助手", thinking: "正在思考…", calling: "调用工具：{name}", answerDone: "回答完成",
    stopped: "已停止。", rename: "重命名", del: "删除", save: "保存", cancel: "取消",
    renameLabel: "会话标题", confirmDelete: "删除会话“{title}”及其记录？", continuing:
      "继续会话“{title}”：新消息会接着这段对话。", newSession: "新对话",
    turns: "{n} 轮", turns1: "1 轮", copy: "复制", copied: "已复制", copyFailed: "复制失败",
    errorPrefix: "出错了：", fixPrefix: "解决办法：", unknownSession: "这个会话已不存在，已开始新对话。",
    needCloud: "至少选择一个云厂商。", needModel: "请填写模型。", needSize: "请填写数据集大小（大于 0）。",
    planning: "正在计算…", planDone: "方案已更新", langName: "English", langSwitch: "Switch to English",
    // plan view
    recTitle: "推荐配置", pick: "推荐", faster: "更快", cheaper: "更便宜", shownOf: "显示 {shown} / 共 {total} 个可行配置",
    colInstance: "实例规格", colGpu: "GPU / 主机", colStrategy: "训练策略",
    colMemory: "每卡显存 需要/可用", colHours: "预计时长", colCost: "费用",
    colPrice: "单价与来源", colFit: "预算 / 期限", quote: "官方报价", hours: "{h} 小时", days: "约 {d} 天",
    perHour: "/小时", perMonth: "/月", withinBudget: "在预算内", overBudget: "超预算", meetsDeadline: "按期完成",
    missesDeadline: "超期", nodes: "{n} 台", confidence_official: "官方", confidence_third_party: "第三方",
    confidence_estimate: "估算", confidence_user: "用户提供", stale: "价格已过期",
    priceUndated: "页面未注明日期 · 抓取于 {date}",
    hostUnpublished: "vCPU / 内存未公开",
    warningsTitle: "注意事项", notesTitle: "建议", assumptionsTitle: "估算假设", citationsTitle: "参考资料",
    infeasible: "没有可行方案", chartCost: "费用（¥）", chartTime: "训练时长（小时）",
    chartDesc: "每个候选配置的费用与训练时长", downloads: "下载", dlRequestMd: "《AI训练资源申请说明》Markdown",
    dlRequestDocx: "《AI训练资源申请说明》DOCX", dlLaunch: "启动脚本包（zip）", downloading: "正在生成…",
    downloaded: "已下载 {name}", external: "外部链接", openKnowledge: "打开知识库章节", loading: "加载中…",
    sectionMissing: "（没有找到这一节，显示整页）", tencent: "腾讯云", jdcloud: "京东云",
    on_demand: "按量计费", monthly: "包年包月", spot: "竞价实例", on_request: "价格需询价", askSales: "联系销售询价", epochsN: "{n} 轮", budgetMonth: "预算每月 {amount}",
    budgetTotal: "总预算 {amount}", source: "来源", derivationTitle: "计算过程与依据（显存、时长、费用、主机）",
    tableRegion: "表格", backend: "回答来自：{who}", backendOffline: "离线规划模型",
    backendLlm: "大模型（数字由规划引擎计算）", backendFallback: "离线规划模型（大模型暂不可用）", sourceKind_official: "官方价格页", sourceKind_third_party: "第三方价格采集",
    sourceKind_estimate: "估算（由其他计费方式的价格推算）", sourceKind_user: "你提供的价格表",
    unknownModel: "未知模型“{model}”：请从列表中选择，或填写参数量（如 7B）。",
    whyPick: "为什么推荐 {instance}：",
    // serving form and card
    tabServing: "部署规划", svModelHint: "输入以搜索，例如 Qwen2.5-72B、Llama-3.1-70B，或填参数量（如 14B）",
    svGpu: "GPU（可选）", svGpuHint: "留空则在两家云出租的全部 GPU 中找", svGpus: "每副本 GPU 数（可选）",
    svGpusHint: "和 GPU 一起填写：按这几张卡核算能否启动", svWeights: "权重精度", wBf16: "BF16（原始精度）",
    svKv: "KV 缓存精度", kvAuto: "自动（同模型精度）", svEngine: "推理引擎", svMaxLen: "最大上下文（tokens）",
    svMaxLenHint: "留空取模型的上下文长度", svInput: "每个请求输入 tokens", svOutput: "每个请求输出 tokens",
    svLoad: "负载", svLoadAmount: "数值", svLoadUnit: "单位", lConcurrency: "个并发请求", lQps: "每秒请求（QPS）",
    svTtft: "首字延迟上限（毫秒）", svTpot: "每 token 时延上限（毫秒）", svFastest: "最快（首字延迟最低）",
    svSubmit: "计算部署方案", needLoadPositive: "负载须大于 0。",
    svTitle: "部署方案", svCount: "共 {total} 张 {gpu}", svLayout: "每个副本 {tp} 张 × {replicas}",
    svReplicas: "{n} 个副本", svReplicas1: "1 个副本", svNoStart: "{count} 张 {gpu} 起不来",
    svNone: "按当前条件无法部署", svLoadConc: "{n} 个并发", svLoadQps: "每秒 {n} 个请求", svLoadNone: "未给负载（按副本跑满）",
    svWeightsOf: "{w} 权重", svFigKv: "KV 容量", svTokensPerReplica: "{n} tokens/副本", svFigConc: "最大并发",
    svConcAt: "{n} 个（{len} 长度）", svFigAtLoad: "按负载长度", svConcLoad: "{n} 个（输入 {inp} / 输出 {out}）",
    svFigTps: "输出吞吐", svFigTtft: "首字延迟（TTFT）", svFigTpot: "每 token 时延（TPOT）", svMs: "{n} 毫秒",
    svFigWeights: "每卡权重", svFigKvGib: "每卡 KV 缓存", svLimited_memory: "瓶颈：显存（KV 池）",
    svLimited_throughput: "瓶颈：吞吐", svLimited_latency: "瓶颈：时延要求", svMissesLimits: "该配置在此负载下达不到时延要求。",
    svColGpus: "GPU（每副本 × 副本）", svColHour: "每小时", svColMonth: "每月（24×7）", svColCpm: "每百万输出 token",
    svNotRented: "腾讯云和京东云都不出租 {gpu}：以上是自有卡的估算。", svLaunch: "启动命令（每个副本）",
    svSglangNo: "这张 GPU 的计算能力不支持 SGLang 运行所选配置，请用 vLLM。",
    svReplicasNote: "{replicas} 个副本分布在 {nodes} 台实例上：每个副本用自己的 GPU 和端口启动，前面加负载均衡（如云上的 CLB）。",
    svRejected: "另有 {n} 个实例无法承载", svWhyWeights: "每卡权重 {weights} GiB，加载时显存不足：增加每副本的卡数（张量并行）或用更小的权重精度。",
    svWhyNoKv: "每卡权重 {weights} GiB 之后没有留给 KV 缓存的显存：加卡、量化，或调高显存占用比例。",
    svWhyKvPool: "KV 池只能放 {fits} tokens，不够一条 {len} 长度的请求：调小最大上下文、调高显存占用比例或加卡。",
    svWhyCc: "这张 GPU 的计算能力不支持所选的引擎或精度：换精度或换更新的 GPU。",
    svWhyGraph: "分配 KV 池后，CUDA Graph 捕获显存不足：略调低显存占用比例，或加 --enforce-eager。",
    svWhyOther: "每卡权重 {weights} GiB，KV 池 {tokens} tokens。",
    // catalog view
    tabCatalog: "价格目录", fCloud: "云厂商", cBoth: "两家都看", cGpu: "GPU",
    cGpuHint: "例如 A100（含全部 A100 型号）；留空看全部", cMemory: "每卡显存至少（GB）", cCards: "每台 GPU 数至少",
    cRdma: "RDMA 网络", cAny: "不限", cWith: "有 RDMA", cWithout: "无 RDMA",
    cAnyBilling: "不限（先按量，再包月，再竞价）", cSort: "排序", sPerGpu: "每 GPU 小时价格",
    sPerTflops: "每 TFLOPS 小时价格（BF16 稠密）", sPrice: "整台价格", cSubmit: "筛选", cReset: "清除筛选",
    cTitle: "价格目录", cCount: "{n} 个实例", cNone: "没有符合条件的实例：放宽筛选条件再试。",
    cColGpu: "GPU", cColHost: "主机", cColPrice: "价格", cColPerGpu: "每 GPU 小时", cColPerTflops: "每 TFLOPS 小时",
    cColSource: "来源与日期", cEach: "每卡 {n} GiB", cCardsOf: "{n} 张 {gpu}", cHost: "{cpu} 核 · 内存 {ram} GiB",
    cNet: "网络 {n} Gb/s", cSortedBy: "按{sort}排序", cFoot: "每 GPU 小时与每 TFLOPS 小时：包月价按每月 730 小时折算；"
      + "TFLOPS 为每卡 BF16 稠密算力。价格需询价的实例排在最后。",
    cNeedMemory: "每卡显存须是 0 到 1024 之间的数。", cNeedCards: "每台 GPU 数须是 1 到 64 之间的整数。",
    sale_on_sale: "在售", sale_main: "主售", sale_invite_only: "邀测", sale_allowlist: "需开白名单",
    sale_limited: "限量", sale_legacy: "旧款", sale_unknown: "售卖状态未知", sale_sold_out: "售罄", promo: "限时优惠",
  },
  en: {
    skip: "Skip to the message box", tagline: "GPU training advisor", sessions: "Sessions", modes: "Mode",
    tabChat: "Chat", tabForm: "Plan form", newChat: "+ New chat", noSessions: "No sessions yet.",
    apiKey: "API key", apiKeyHelp: "Needed when the server sets GPU_ADVISOR_API_KEY", conversation: "Conversation",
    keyNeeded: "This server needs an API key: enter it above (the server's GPU_ADVISOR_API_KEY) and press Enter.",
    keyWrong: "That API key is not accepted: check it, enter it again and press Enter.",
    welcome: "Describe your training job: model, method, data size, budget and deadline. Every configuration, " +
      "time and price in the answer comes from the planning engine, with its source.",
    example: "用Qwen2-7B做问答微调，数据集10万条JSONL，预算月均¥3000",
    yourMessage: "Your message", enterHint: "Enter to send, Shift+Enter for a new line", stop: "Stop",
    send: "Send", fModel: "Model", fModelHint: "Type to search, e.g. Qwen2-7B, Llama-3-8B", fMethod: "Method",
    mFull: "Full fine-tuning", mFreeze: "Freeze (some layers frozen)", mPretrain: "Pre-training",
    fDataset: "Dataset size", fDatasetAmount: "Amount", fDatasetUnit: "Unit", uSamples: "samples",
    fBudget: "Budget (¥)", fBudgetAmount: "Amount (CNY)", fBudgetPeriod: "Budget period", pMonth: "per month",
    pTotal: "in total", fDeadline: "Deadline (hours)", fBilling: "Billing", bAuto: "Automatic (cheapest)",
    bOnDemand: "On-demand", bMonthly: "Monthly", bSpot: "Spot", fClouds: "Clouds", cTencent: "Tencent Cloud",
    cJdcloud: "JD Cloud", fObjective: "Prefer", oCheapest: "Cheapest", oFastest: "Fastest", oBalanced: "Balanced",
    fMore: "More options", fEpochs: "Epochs", fAvgTokens: "Average tokens per sample", plan: "Plan",
    explain: "Explain this in the chat", knowledge: "Knowledge base", rawMarkdown: "Raw Markdown", close: "Close",
    you: "You", assistant: "Assistant", thinking: "Thinking…", calling: "Calling tool: {name}",
    answerDone: "Answer complete", stopped: "Stopped.", rename: "Rename", del: "Delete", save: "Save",
    cancel: "Cancel", renameLabel: "Session title", confirmDelete: "Delete the session “{title}” and its history?",
    continuing: "Continuing “{title}”: new messages follow on from it.",
    newSession: "New chat", turns: "{n} turns", turns1: "1 turn", copy: "Copy", copied: "Copied", copyFailed: "Copy failed",
    errorPrefix: "Error: ", fixPrefix: "How to fix: ", unknownSession: "That session no longer exists; a new chat has started.",
    needCloud: "Choose at least one cloud.", needModel: "Enter a model.", needSize: "Enter the dataset size (above 0).",
    planning: "Planning…", planDone: "Plan updated", langName: "中文", langSwitch: "切换到中文",
    recTitle: "Recommended configurations", pick: "Pick", faster: "Faster", cheaper: "Cheaper",
    shownOf: "Showing {shown} of {total} feasible configurations", colInstance: "Instance", colGpu: "GPU / host",
    colStrategy: "Strategy", colMemory: "Memory per GPU need/have", colHours: "Time",
    colCost: "Cost", colPrice: "Price and source", colFit: "Budget / deadline",
    quote: "Official quote", hours: "{h} h", days: "≈ {d} days", perHour: "/hour", perMonth: "/month",
    withinBudget: "within budget", overBudget: "over budget", meetsDeadline: "on time", missesDeadline: "late",
    nodes: "{n} nodes", confidence_official: "official", confidence_third_party: "third party",
    confidence_estimate: "estimate", confidence_user: "user supplied", stale: "stale price",
    priceUndated: "page undated · captured {date}",
    hostUnpublished: "vCPU / RAM not published",
    warningsTitle: "Warnings", notesTitle: "Advice", assumptionsTitle: "Assumptions", citationsTitle: "Sources",
    infeasible: "No feasible configuration", chartCost: "Cost (¥)", chartTime: "Training time (hours)",
    chartDesc: "Cost and training time of each candidate configuration", downloads: "Downloads",
    dlRequestMd: "Resource request 《AI训练资源申请说明》 (Markdown)",
    dlRequestDocx: "Resource request 《AI训练资源申请说明》 (DOCX)", dlLaunch: "Launch bundle (zip)",
    downloading: "Generating…", downloaded: "Downloaded {name}", external: "external link",
    openKnowledge: "Open the knowledge section", loading: "Loading…",
    sectionMissing: "(section not found; showing the whole page)", tencent: "Tencent Cloud", jdcloud: "JD Cloud",
    on_demand: "On-demand", monthly: "Monthly", spot: "Spot", on_request: "Price on request", askSales: "Ask sales", epochsN: "{n} epochs",
    budgetMonth: "budget {amount} per month", budgetTotal: "budget {amount} in total", source: "source",
    derivationTitle: "How it was worked out (memory, time, cost, host)", tableRegion: "Table", backend: "Answered by {who}", backendOffline: "the offline planner model",
    backendLlm: "the LLM (figures from the planning engine)", backendFallback: "the offline planner model (the LLM is unavailable)",
    sourceKind_official: "official price page", sourceKind_third_party: "third-party price capture",
    sourceKind_estimate: "estimate (derived from another billing mode's price)", sourceKind_user: "your price sheet",
    unknownModel: "Unknown model “{model}”: pick one from the list, or give the size (e.g. 7B).",
    whyPick: "Why {instance}: ",
    tabServing: "Serving plan", svModelHint: "Type to search, e.g. Qwen2.5-72B, Llama-3.1-70B, or a size such as 14B",
    svGpu: "GPU (optional)", svGpuHint: "Empty: every GPU the two clouds rent", svGpus: "GPUs per replica (optional)",
    svGpusHint: "With a GPU: whether that many cards start it", svWeights: "Weights", wBf16: "BF16 (as released)",
    svKv: "KV-cache dtype", kvAuto: "Auto (the model's 16-bit)", svEngine: "Engine", svMaxLen: "Max context (tokens)",
    svMaxLenHint: "Empty: the model's context length", svInput: "Input tokens per request",
    svOutput: "Output tokens per request", svLoad: "Load", svLoadAmount: "Amount", svLoadUnit: "Unit",
    lConcurrency: "concurrent requests", lQps: "requests per second (QPS)", svTtft: "TTFT limit (ms)",
    svTpot: "TPOT limit (ms)", svFastest: "Fastest (lowest TTFT)", svSubmit: "Plan serving",
    needLoadPositive: "The load must be above 0.",
    svTitle: "Serving plan", svCount: "{total} × {gpu} in all", svLayout: "{tp} per replica × {replicas}",
    svReplicas: "{n} replicas", svReplicas1: "1 replica", svNoStart: "{count} × {gpu} does not start",
    svNone: "It cannot be served as asked", svLoadConc: "{n} concurrent", svLoadQps: "{n} requests/s",
    svLoadNone: "no load given (replicas full)", svWeightsOf: "{w} weights", svFigKv: "KV pool",
    svTokensPerReplica: "{n} tokens per replica", svFigConc: "Max concurrency", svConcAt: "{n} at {len} tokens",
    svFigAtLoad: "At the load's lengths", svConcLoad: "{n} ({inp} in / {out} out)", svFigTps: "Output throughput",
    svFigTtft: "Time to first token", svFigTpot: "Time per output token", svMs: "{n} ms", svFigWeights: "Weights per GPU",
    svFigKvGib: "KV cache per GPU", svLimited_memory: "limited by memory (the KV pool)",
    svLimited_throughput: "limited by throughput", svLimited_latency: "limited by the latency limits",
    svMissesLimits: "This option misses the latency limits at this load.", svColGpus: "GPUs (per replica × replicas)",
    svColHour: "Per hour", svColMonth: "Per month (24×7)", svColCpm: "Per million output tokens",
    svNotRented: "Neither Tencent Cloud nor JD Cloud rents the {gpu}: the figures are for your own cards.",
    svLaunch: "Launch commands (one replica)", svSglangNo: "SGLang cannot run this setup on this GPU; use vLLM.",
    svReplicasNote: "", svRejected: "{n} more instances cannot serve it",
    // catalog view
    tabCatalog: "Catalog", fCloud: "Cloud", cBoth: "Both clouds", cGpu: "GPU",
    cGpuHint: "e.g. A100 (every A100 model); empty for all", cMemory: "Memory per GPU, at least (GB)",
    cCards: "GPUs per instance, at least", cRdma: "RDMA network", cAny: "Any", cWith: "With RDMA",
    cWithout: "Without RDMA", cAnyBilling: "Any (on-demand, else monthly, else spot)", cSort: "Sort by",
    sPerGpu: "Price per GPU-hour", sPerTflops: "Price per TFLOPS-hour (dense BF16)", sPrice: "Instance price",
    cSubmit: "Filter", cReset: "Clear filters", cTitle: "Catalog", cCount: "{n} instances",
    cNone: "No instance matches: loosen the filters and try again.", cColGpu: "GPU", cColHost: "Host",
    cColPrice: "Price", cColPerGpu: "Per GPU-hour", cColPerTflops: "Per TFLOPS-hour", cColSource: "Source and date",
    cEach: "{n} GiB each", cCardsOf: "{n} × {gpu}", cHost: "{cpu} vCPU · {ram} GiB RAM", cNet: "{n} Gb/s network",
    cSortedBy: "sorted by {sort}", cFoot: "Per GPU-hour and per TFLOPS-hour: a month counts as 730 hours; TFLOPS are "
      + "dense BF16 per GPU. Instances with a price on request come last.",
    cNeedMemory: "Memory per GPU must be a number from 0 to 1024.",
    cNeedCards: "GPUs per instance must be a whole number from 1 to 64.",
    sale_on_sale: "on sale", sale_main: "main line", sale_invite_only: "invite only", sale_allowlist: "allowlist",
    sale_limited: "limited", sale_legacy: "legacy", sale_unknown: "sale status unknown", sale_sold_out: "sold out", promo: "promotion",
  },
};

let current = initialLang();
let pinned = null; // the language a block is being drawn in (inLang): an answer's, not the page's
const listeners = [];
const TRANSLATED_ATTRS = new Set(["aria-label", "title", "placeholder"]);

function initialLang() {
  const saved = safeGet(KEY);
  if (saved === "zh" || saved === "en") return saved;
  const nav = (navigator.languages && navigator.languages[0]) || navigator.language || "en";
  return nav.toLowerCase().startsWith("zh") ? "zh" : "en";
}

function safeGet(key) {
  try { return localStorage.getItem(key); } catch { return null; }
}

/** The language being drawn in: the block's inside inLang(), else the page's. */
export function getLang() { return pinned || current; }

/** The page's own language (its chrome), whatever block is being drawn. */
export function pageLang() { return current; }

/** Run `fn` (synchronous drawing) with t() and getLang() in `lang`: an answer is drawn in its own language. */
export function inLang(lang, fn) {
  if (lang !== "zh" && lang !== "en") return fn();
  const outer = pinned;
  pinned = lang;
  try { return fn(); } finally { pinned = outer; }
}

export function setLang(lang) {
  current = lang;
  try { localStorage.setItem(KEY, lang); } catch { /* private mode: the switch still works for this page */ }
  applyStatic(document);
  listeners.forEach((fn) => fn(lang));
}

export function onLangChange(fn) { listeners.push(fn); }

/** The string for `key` in `lang` (default: the language being drawn in), `{name}` placeholders from `vars`. */
export function t(key, vars = {}, lang = getLang()) {
  const text = STRINGS[lang][key] ?? STRINGS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => String(vars[name] ?? ""));
}

/** Fill every `data-i18n` element under `root` (its text, or the attribute named by `data-i18n-attr`). */
export function applyStatic(root) {
  document.documentElement.lang = current === "zh" ? "zh-CN" : "en";
  root.querySelectorAll("[data-i18n]").forEach((el) => {
    if (el.closest("[data-lang-pinned]")) return; // inside an answer drawn in its own language
    const attr = el.getAttribute("data-i18n-attr");
    if (attr && TRANSLATED_ATTRS.has(attr)) el.setAttribute(attr, t(el.dataset.i18n, {}, current));
    else el.textContent = t(el.dataset.i18n, {}, current);
  });
}
