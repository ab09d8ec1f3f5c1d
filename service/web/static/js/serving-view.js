// The serving card: a serving plan (POST /v1/plan/serving) and/or one GPU type sized (POST /v1/inference), as the
// form gets them and as a chat answer carries them (AskResult.answer of kind serving: its plan and inference, see
// answer-view.js cardOf). The count first (GPUs per replica × replicas), the engine's figures, per cloud the
// instances with their cost per hour and month and ¥ per million output tokens and the price's source, the launch
// commands (copyable), warnings and assumptions. Every figure is the engine's; this file only lays them out.
import { announce, h } from "./dom.js";
import { getLang, inLang, t } from "./i18n.js";
import { addCopyButtons } from "./markdown.js";
import { formatCny, labelCells, priceCell, words } from "./plan-view.js";

const ROWS_PER_CLOUD = 3;
const ENGINES = { vllm: "vLLM", sglang: "SGLang", trtllm: "TensorRT-LLM", lmdeploy: "LMDeploy" };
const HEAD = ["colInstance", "svColGpus", "svColHour", "svColMonth", "svColCpm", "colPrice"];
const SEVERITY_ORDER = { error: 0, warning: 1, info: 2 };

const zh = () => getLang() === "zh";
const msg = (w) => (zh() && w.message_zh ? w.message_zh : w.message);
const int = (n) => Number(n).toLocaleString(zh() ? "zh-CN" : "en-US", { maximumFractionDigits: 0 });
const dec = (n, d = 1) => Number(n).toLocaleString(zh() ? "zh-CN" : "en-US",
  { minimumFractionDigits: d, maximumFractionDigits: d });
const have = (x) => x !== null && x !== undefined;

/** The sizing the answer opens with: the pinned GPU's when one was sized, else the plan's top option's. */
function sizingOf(card) {
  const top = card.plan && card.plan.candidates && card.plan.candidates[0];
  return (card.inference && card.inference.sizing) || (top && top.sizing) || null;
}

/** Why the engine does not start, in the reader's language (the engine says it in English: map its kinds). */
export function reasonText(inf) {
  const reason = String(inf.starts_reason || "");
  if (!zh()) return reason;
  const vars = { weights: dec(inf.weights_gib_per_gpu), fits: int(inf.max_model_len_fits || 0),
    len: int(inf.max_model_len || 0), tokens: int(inf.kv_capacity_tokens || 0) };
  const kind = reason.startsWith("weights need") ? "svWhyWeights"
    : reason.startsWith("no memory left for the KV cache") ? "svWhyNoKv"
      : reason.startsWith("the KV pool") ? "svWhyKvPool"
        : reason.includes("compute capability") ? "svWhyCc"
          : reason.includes("CUDA-graph") ? "svWhyGraph" : "svWhyOther";
  return t(kind, vars);
}

function replicasText(n) {
  return t(Number(n) === 1 ? "svReplicas1" : "svReplicas", { n });
}

/** The first line: every GPU, then GPUs per replica × replicas; or whether the pinned GPUs start. */
function countLine(card) {
  const inf = card.inference;
  if (inf && !inf.starts) {
    return h("div", { class: "alert error serving-count", role: "alert" },
      h("strong", {}, t("svNoStart", { count: inf.gpus, gpu: inf.gpu_name })), h("div", {}, reasonText(inf)));
  }
  const s = sizingOf(card);
  if (!s) {
    const plan = card.plan || {};
    return h("div", { class: "alert error serving-count", role: "alert" },
      h("strong", {}, t("svNone")), h("div", {}, (zh() && plan.infeasible_zh) || plan.infeasible || ""));
  }
  return h("p", { class: "serving-count" },
    h("strong", { class: "count" }, t("svCount", { total: s.total_gpus, gpu: s.gpu_name })), " ",
    h("span", {}, t("svLayout", { tp: s.gpus_per_replica, replicas: replicasText(s.replicas) })));
}

function summaryLine(card) {
  const s = sizingOf(card) || {};
  const part = card.inference || card.plan || {};
  const w = (card.plan && card.plan.workload) || {};
  const model = (part.model && part.model.name) || w.model || "";
  const engine = ENGINES[s.engine || part.engine || w.engine] || s.engine || "";
  const weights = String(s.weights || part.weights || w.weights || "").toUpperCase();
  const load = w.concurrency ? t("svLoadConc", { n: w.concurrency })
    : w.request_rate ? t("svLoadQps", { n: w.request_rate }) : t("svLoadNone");
  return [model, engine, weights ? t("svWeightsOf", { w: weights }) : "", load].filter(Boolean).join(" · ");
}

function figure(label, value) {
  return h("div", { class: "figure" }, h("dt", {}, label), h("dd", {}, value));
}

/** The engine's figures: the KV pool and concurrency, then throughput and latency at the load. */
function figures(card) {
  const s = sizingOf(card);
  const inf = card.inference;
  if (!s && !inf) return null;
  const src = s || inf;
  const items = [
    figure(t("svFigKv"), t("svTokensPerReplica", { n: int(src.kv_capacity_tokens) })),
    figure(t("svFigConc"), t("svConcAt", { n: dec(src.max_concurrency), len: int(src.max_model_len) })),
  ];
  if (s) {
    items.push(
      figure(t("svFigAtLoad"), t("svConcLoad", { n: dec(s.max_concurrency_at_load), inp: s.input_tokens,
        out: s.output_tokens })),
      figure(t("svFigTps"), `${int(s.output_tokens_per_s)} tokens/s`),
      figure(t("svFigTtft"), have(s.ttft_ms) ? t("svMs", { n: int(s.ttft_ms) }) : "—"),
      figure(t("svFigTpot"), t("svMs", { n: dec(s.tpot_ms) })),
    );
  }
  items.push(figure(t("svFigWeights"), `${dec(src.weights_gib_per_gpu)} GiB`),
    figure(t("svFigKvGib"), `${dec(src.kv_cache_gib_per_gpu)} GiB`));
  const block = [h("dl", { class: "serving-figures" }, items)];
  if (s) {
    block.push(h("p", { class: "small muted headroom" }, zh() ? s.headroom_zh : s.headroom, " · ",
      t(`svLimited_${s.limited_by}`)));
    if (!s.meets_limits) block.push(h("div", { class: "alert warn" }, `⚠ ${t("svMissesLimits")}`));
  }
  return block;
}

function gpusCell(c) {
  const nodes = Number(c.nodes || 1);
  const per = `${Number(c.gpu_count)} × ${c.gpu}`;
  return h("td", { class: "gpu" }, h("span", { class: "nowrap" }, nodes > 1 ? `${per} × ${t("nodes", { n: nodes })}` : per),
    h("div", { class: "small muted nowrap" }, t("svLayout", { tp: c.gpus_per_replica, replicas: replicasText(c.replicas) })));
}

function costCell(value, unitKey, extra = null) {
  return h("td", { class: "cost" }, have(value) ? h("strong", { class: "nowrap" }, `${formatCny(value)}${t(unitKey)}`)
    : h("span", {}, t("on_request")), extra);
}

function optionRow(c, picked) {
  const serious = (c.warnings || []).filter((w) => w.severity !== "info");
  const row = h("tr", { class: [picked ? "is-pick" : "", serious.length ? "warn" : ""].filter(Boolean).join(" ") || null,
    dataset: { instance: c.instance_type } },
  h("th", { scope: "row" }, h("span", { class: "mono nowrap" }, c.instance_type),
    picked ? h("span", { class: "badge pick" }, `★ ${t("pick")}`) : null),
  gpusCell(c),
  costCell(c.cost_per_hour_cny, "perHour"),
  costCell(c.cost_per_month_cny, "perMonth", have(c.cost_per_month_cny)
    ? h("div", { class: "small muted" }, t(c.billing)) : null),
  h("td", { class: "cpm" }, have(c.cny_per_million_output_tokens)
    ? h("strong", { class: "nowrap" }, formatCny(c.cny_per_million_output_tokens)) : "—"),
  priceCell(c));
  return labelCells(row, HEAD);
}

/** The options shown per cloud: its pick first, then the next best (at most ROWS_PER_CLOUD). */
function shownRows(plan) {
  const clouds = [...new Set([...Object.keys(plan.picks || {}), ...(plan.candidates || []).map((c) => c.cloud)])];
  return clouds.map((cloud) => {
    const mine = (plan.candidates || []).filter((c) => c.cloud === cloud);
    const pick = mine.find((c) => c.instance_type === (plan.picks || {})[cloud]);
    return { cloud, pick, rows: [...(pick ? [pick] : []), ...mine.filter((c) => c !== pick)].slice(0, ROWS_PER_CLOUD) };
  }).filter((x) => x.rows.length);
}

/** One table per cloud. */
function cloudTables(shown) {
  const out = [];
  for (const { cloud, pick, rows } of shown) {
    const caption = `${t(cloud)} — ${t("svTitle")}`;
    out.push(h("h4", { class: `cloud-title ${cloud}` }, t(cloud)),
      h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": caption },
        h("table", { class: "plan-table serving-table", dataset: { cloud } },
          h("caption", { class: "visually-hidden" }, caption),
          h("thead", {}, h("tr", {}, HEAD.map((key) => h("th", { scope: "col" }, words(t(key)))))),
          h("tbody", {}, rows.map((c) => optionRow(c, c === pick))))));
  }
  return out;
}

function launchBlock(card) {
  const top = card.plan && card.plan.candidates && card.plan.candidates[0];
  const launch = (card.inference && card.inference.launch) || (top && top.launch);
  if (!launch) return null;
  const sglang = String(launch.sglang || "");
  const parts = [h("h4", {}, t("svLaunch")), h("p", { class: "small muted" }, "vLLM"),
    h("pre", {}, h("code", { class: "language-bash" }, launch.vllm))];
  if (sglang.startsWith("# ")) {
    parts.push(h("p", { class: "small muted" }, "SGLang: ", zh() ? t("svSglangNo") : sglang.slice(2)));
  } else if (sglang) {
    parts.push(h("p", { class: "small muted" }, "SGLang"), h("pre", {}, h("code", { class: "language-bash" }, sglang)));
  }
  const chosen = top && card.plan.picks && Object.values(card.plan.picks).includes(top.instance_type) ? top : null;
  if (chosen && chosen.replicas > 1) {
    parts.push(h("p", { class: "small muted" }, zh() ? t("svReplicasNote", { replicas: chosen.replicas,
      nodes: chosen.nodes }) : launch.replicas_note));
  }
  const block = h("div", { class: "launch" }, parts);
  addCopyButtons(block, { copy: t("copy"), copied: t("copied"), copyFailed: t("copyFailed") }, announce);
  return block;
}

/** The warnings of the rows shown: every one for a pick, the serious ones for the others, each once. */
function warningList(plan, rows) {
  const picked = new Set(Object.values(plan.picks || {}));
  const seen = new Set();
  const items = [];
  for (const c of rows) {
    const mine = [...(c.warnings || [])].filter((w) => picked.has(c.instance_type) || w.severity !== "info")
      .sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
    for (const w of mine) {
      const text = msg(w);
      if (seen.has(text)) continue;
      seen.add(text);
      items.push(h("li", { class: `sev-${w.severity}` }, h("span", { class: "mono" }, c.instance_type), ": ", text));
    }
  }
  if (!items.length) return null;
  return h("details", { class: "warnings" }, h("summary", {}, `${t("warningsTitle")} (${items.length})`),
    h("ul", {}, items));
}

/** The whole card. `compact` (the chat, whose answer text already opens with the count): no title or summary. */
export function renderServing(card, { compact = false, lang = null } = {}) {
  return inLang(lang, () => drawServing(card || {}, compact));
}

function drawServing(card, compact) {
  const plan = card.plan || null;
  const block = h("section", { class: compact ? "plan serving compact" : "plan serving", "aria-label": t("svTitle") },
    compact ? null : h("h3", {}, t("svTitle")), compact ? null : h("p", { class: "plan-summary" }, summaryLine(card)),
    countLine(card));
  const figs = figures(card);
  if (figs) block.append(...figs);
  const shown = plan ? shownRows(plan) : [];
  const rows = shown.flatMap((x) => x.rows);
  if (rows.length) {
    block.append(...cloudTables(shown));
    const total = card.n_candidates ?? (plan.candidates || []).length;
    const rejected = card.n_rejected ?? (plan.rejected || []).length;
    block.append(h("p", { class: "small muted" }, t("shownOf", { shown: rows.length, total }),
      rejected ? ` · ${t("svRejected", { n: rejected })}` : ""));
  } else if (card.inference && plan) {
    block.append(h("p", { class: "small muted" }, t("svNotRented", { gpu: card.inference.gpu_name })));
  }
  const launch = launchBlock(card);
  if (launch) block.append(launch);
  const warnings = plan ? warningList(plan, rows) : null;
  if (warnings) block.append(warnings);
  const source = card.inference || plan || {};
  // When the pinned GPUs do not start, the engine's own line about it ("无法承载（...）：<the English reason>") is
  // what the card's first line already says in the reader's language.
  const unserved = card.inference && !card.inference.starts ? /^(?:Not served by |无法承载（)/ : null;
  const assumptions = ((zh() ? source.assumptions_zh : source.assumptions) || [])
    .filter((text) => !(unserved && unserved.test(text)));
  if (assumptions && assumptions.length) {
    block.append(h("details", { class: "assumptions" }, h("summary", {}, t("assumptionsTitle")),
      h("ul", {}, assumptions.map((text) => h("li", {}, text)))));
  }
  return block;
}

/** Show `card` inside `host`, remembering it so the language switch can redraw it (plan-view's rerenderPlans). */
export function showServing(host, card, options = {}) {
  host.dataset.planHost = "";
  host.planState = { plan: card, options, draw: renderServing };
  host.replaceChildren(renderServing(card, options));
}
