// The engine's plan (POST /v1/plan, AskResult.answer.plan of a plan answer) as one comparison table per cloud, a cost and
// time chart, warnings, assumptions, sources and downloads. Used by the chat and by the form.
import { barChart } from "./chart.js";
import { downloadButtons } from "./documents.js";
import { h, keepTokens } from "./dom.js";
import { getLang, inLang, t } from "./i18n.js";
import { priceNote, publicLinks } from "./sources.js";

const ROWS_PER_CLOUD = 5;
const ROWS_COMPACT = 3; // in the chat, where the answer should stay within a few screens
const SEVERITY_ORDER = { error: 0, warning: 1, info: 2 };
let counter = 0;

const zh = () => getLang() === "zh";
const msg = (w) => (zh() && w.message_zh ? w.message_zh : w.message);
const count = (n) => (Number.isInteger(Number(n)) ? String(Number(n)) : String(n));
const METHOD_LABEL = { lora: "LoRA", qlora: "QLoRA", freeze: "Freeze" };
const methodLabel = (m) => METHOD_LABEL[m] || (m === "full" ? t("mFull") : m === "pretrain" ? t("mPretrain") : m || "");
const isPick = (plan, c) => Boolean(plan.picks && plan.picks[c.cloud] === c.instance_type);

/** A price's date: the API's (the content's age, when it was read and, when old, that it may have changed), else
 * the source's own, or for an undated page when it was captured. */
export function priceDate(p) {
  const said = zh() ? p.date_zh : p.date_en;
  if (said) return said;
  if (p.as_of) return p.as_of;
  return p.captured ? t("priceUndated", { date: p.captured }) : "";
}

export function formatCny(value) {
  if (value === null || value === undefined) return t("on_request"); // no public price (价格需询价)
  const n = Number(value);
  const digits = Math.abs(n) >= 100 ? 0 : 2;
  const locale = zh() ? "zh-CN" : "en-US";
  return `¥${n.toLocaleString(locale, { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

export function formatHours(hours) {
  const n = Number(hours);
  const text = t("hours", { h: n < 10 ? n.toFixed(1) : n.toLocaleString("en-US", { maximumFractionDigits: 1 }) });
  return n >= 48 ? `${text} (${t("days", { d: (n / 24).toFixed(1) })})` : text;
}

/** The hours as unbreakable pieces ("53.4 小时", "(约 2.2 天)") that may stack in a narrow cell. */
function hoursCell(hours) {
  const n = Number(hours);
  const text = t("hours", { h: n < 10 ? n.toFixed(1) : n.toLocaleString("en-US", { maximumFractionDigits: 1 }) });
  return h("td", { class: "hours" }, h("span", { class: "nowrap" }, text),
    n >= 48 ? [" ", h("span", { class: "nowrap small muted" }, `(${t("days", { d: (n / 24).toFixed(1) })})`)] : null);
}

function formatTokens(n) {
  if (!n) return "";
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}B tokens`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(0)}M tokens`;
  return `${Math.round(n).toLocaleString("en-US")} tokens`;
}

function badges(c, plan) {
  const out = [];
  if (isPick(plan, c)) out.push(h("span", { class: "badge pick" }, `★ ${t("pick")}`));
  for (const [kind, inst] of Object.entries(plan.alternatives || {})) {
    if (inst === c.instance_type) out.push(h("span", { class: "badge alt" }, t(kind)));
  }
  return out;
}

function seriousWarnings(c) {
  return (c.warnings || []).filter((w) => w.severity === "warning" || w.severity === "error");
}

/** The candidates shown for `cloud`: its pick, the alternatives on it, the options its pick is explained against
 * (pick_reasons' versus), then the best-ranked others. */
function rowsFor(plan, cloud, limit = ROWS_PER_CLOUD) {
  const mine = (plan.candidates || []).filter((c) => c.cloud === cloud);
  const why = (plan.pick_reasons || {})[cloud];
  const wanted = [plan.picks && plan.picks[cloud], ...Object.values(plan.alternatives || {}),
    ...(why ? why.versus || [] : [])].filter(Boolean);
  const first = [...new Set(wanted.map((it) => mine.find((c) => c.instance_type === it)).filter(Boolean))];
  const rest = mine.filter((c) => !first.includes(c));
  return [...first, ...rest].slice(0, Math.max(limit, first.length));
}

/** A candidate's price: per hour or month, its date and confidence, its source folded (also the serving card's). */
export function priceCell(c) {
  if (c.price_on_request) {
    const link = (c.quote && c.quote.link) || c.quote_link;
    return h("td", { class: "price" }, h("span", {}, t("on_request")),
      link ? h("div", {}, h("a", { href: link, target: "_blank", rel: "noopener noreferrer", class: "small" },
        `${t("askSales")} ↗`)) : null);
  }
  const p = c.price || {};
  const unit = p.unit === "month" ? t("perMonth") : p.unit === "hour" ? t("perHour") : p.unit ? `/${p.unit}` : "";
  const confidence = p.confidence ? t(`confidence_${p.confidence}`) : "";
  const quote = c.quote_link
    ? h("a", { href: c.quote_link, target: "_blank", rel: "noopener noreferrer", class: "small" }, `${t("quote")} ↗`)
    : null;
  return h("td", { class: "price" },
    h("span", { class: "nowrap" }, `${formatCny(p.price_cny)}${unit}`),
    p.stale ? h("span", { class: "badge warn" }, t("stale")) : null,
    h("div", { class: "small muted price-date" }, [priceDate(p), confidence].filter(Boolean).join(" · ")),  // may wrap: an undated page says so
    h("div", {}, sourceDetails(p), quote));
}

/** The price's source, folded: its kind in the reader's language, the public pages it names, the note. */
export function sourceDetails(p) {
  const links = publicLinks(p.source).map((href) => h("li", {},
    h("a", { href, target: "_blank", rel: "noopener noreferrer", title: href }, new URL(href).hostname)));
  const note = priceNote(p, getLang());
  return h("details", { class: "source" }, h("summary", { class: "small" }, t("source")),
    h("div", { class: "small source-body" },
      h("p", {}, t(`sourceKind_${p.confidence}`)),
      links.length ? h("ul", {}, links) : null,
      note ? h("p", { class: "muted" }, note) : null));
}

function fitCell(c) {
  const mark = (value, yes, no) => (value === true ? h("div", { class: "ok" }, `✓\u00a0${t(yes)}`)
    : value === false ? h("div", { class: "bad-text" }, `✗\u00a0${t(no)}`) : null);
  const budget = mark(c.within_budget, "withinBudget", "overBudget");
  const deadline = mark(c.meets_deadline, "meetsDeadline", "missesDeadline");
  return h("td", { class: "fit" }, budget, deadline, !budget && !deadline ? "—" : null);
}

/** "⚠ 2": opens and shows the warning list under the table. */
function warningBadge(serious, warnId) {
  if (!serious.length) return null;
  return h("a", { href: `#${warnId}`, class: "badge warn", title: serious.map(msg).join("\n"),
    onclick: (event) => {
      const list = document.getElementById(warnId);
      if (!list) return;
      event.preventDefault();
      list.open = true;
      list.scrollIntoView({ block: "nearest" });
      list.querySelector("summary").focus();
    } }, `⚠ ${serious.length}`);
}

function candidateRow(c, plan, warnId) {
  const serious = seriousWarnings(c);
  const nodes = Number(c.nodes || 1);
  const gpu = `${count(c.gpu_count)} × ${c.gpu}${nodes > 1 ? ` × ${t("nodes", { n: nodes })}` : ""}`;
  const strategy = c.strategy ? (zh() ? c.strategy.label_zh : c.strategy.label) : "";
  const cls = [isPick(plan, c) ? "is-pick" : "", serious.length ? "warn" : "", c.within_budget === false ? "over" : ""];
  return h("tr", { class: cls.filter(Boolean).join(" ") || null, dataset: { instance: c.instance_type } },
    h("th", { scope: "row" }, h("span", { class: "mono nowrap" }, c.instance_type), " ",
      h("span", { class: "badges" }, badges(c, plan), warningBadge(serious, warnId))),
    h("td", { class: "gpu", title: c.gpu_name || "" }, h("span", { class: "nowrap" }, gpu),
      h("div", { class: "small muted nowrap" }, c.vcpus == null || c.memory_gib == null ? t("hostUnpublished") : `${c.vcpus} vCPU · ${Number(c.memory_gib)} GiB`)),
    h("td", { class: "strategy" }, strategy),
    h("td", { class: "nowrap" }, `${c.memory_per_gpu_gib} / ${Number(c.gpu_memory_gib)} GiB`),
    hoursCell(c.training_hours),
    h("td", { class: "cost" }, h("strong", {}, formatCny(c.total_cost_cny)),
      h("div", { class: "small muted" }, t(c.billing))),
    priceCell(c),
    fitCell(c));
}

const HEAD = ["colInstance", "colGpu", "colStrategy", "colMemory", "colHours", "colCost", "colPrice", "colFit"];

/** Each cell names its column (data-label): at phone width the rows show as cards, one labelled line per cell. */
export function labelCells(row, head = HEAD) {
  keepTokens(row);
  [...row.children].forEach((cell, i) => {
    cell.dataset.label = t(head[i]);
    const content = h("div", { class: "cell" });
    content.append(...cell.childNodes);
    cell.append(content);
  });
  return row;
}

/** Text that may wrap at its spaces only: each word an unbreakable span ("每卡显存", "需要/可用"). */
export function words(text) {
  return text.split(" ").flatMap((w, i) => [i ? " " : null, h("span", { class: "nowrap" }, w)]);
}

function cloudTable(plan, cloud, rows, warnId) {
  const head = HEAD;
  const caption = `${t(cloud)} — ${t("recTitle")}`;
  return h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": caption },
    h("table", { class: "plan-table", dataset: { cloud } },
      h("caption", { class: "visually-hidden" }, caption),
      h("thead", {}, h("tr", {}, head.map((key) => h("th", { scope: "col" }, words(t(key)))))),
      h("tbody", {}, rows.map((c) => labelCells(candidateRow(c, plan, warnId))))));
}

/** Warnings of the rows shown: every one for the pick, the serious ones (warning, error) for the others. */
function warningList(plan, rows, warnId) {
  const items = [];
  for (const c of rows) {
    const seen = new Set();
    const sorted = (isPick(plan, c) ? [...(c.warnings || [])] : seriousWarnings(c))
      .sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
    for (const w of sorted) {
      const text = msg(w);
      if (seen.has(text)) continue;
      seen.add(text);
      items.push(h("li", { class: `sev-${w.severity}` }, h("span", { class: "mono" }, c.instance_type), ": ", text));
    }
  }
  if (!items.length) return null;
  return h("details", { class: "warnings", id: warnId, open: items.some((li) => li.classList.contains("sev-error")) },
    h("summary", {}, `${t("warningsTitle")} (${items.length})`), h("ul", {}, items));
}

function chartFor(plan, shown) {
  const base = (c) => ({ label: `${c.instance_type} · ${t(c.cloud)}`, cloud: c.cloud, pick: isPick(plan, c) });
  const cost = shown.filter((c) => c.total_cost_cny !== null && c.total_cost_cny !== undefined).map((c) => ({ ...base(c), value: Number(c.total_cost_cny), valueText: formatCny(c.total_cost_cny),
    bad: c.within_budget === false }));
  const time = shown.map((c) => ({ ...base(c), value: Number(c.training_hours),
    valueText: t("hours", { h: Number(c.training_hours).toFixed(1) }), bad: c.meets_deadline === false }));
  const clouds = { tencent: t("tencent"), jdcloud: t("jdcloud") };
  return h("div", { class: "charts" },
    barChart(t("chartCost"), cost, { clouds, pick: t("pick"), bad: t("overBudget") }),
    barChart(t("chartTime"), time, { clouds, pick: t("pick"), bad: t("missesDeadline") }));
}

function summaryLine(plan) {
  const w = plan.workload || {};
  const job = plan.job || {};
  const model = (plan.model && plan.model.name) || w.model || (w.params_b ? `${w.params_b}B` : "");
  const parts = [model, methodLabel(job.method || w.method), formatTokens(job.tokens_total),
    job.epochs ? t("epochsN", { n: job.epochs }) : ""];
  if (w.budget_cny) {
    parts.push(t(w.budget_period === "total" ? "budgetTotal" : "budgetMonth", { amount: formatCny(w.budget_cny) }));
  }
  if (w.deadline_hours) parts.push(`≤ ${formatHours(w.deadline_hours)}`);
  return parts.filter(Boolean).join(" · ");
}

/** Why the pick is neither the cheapest nor the fastest of its cloud (the engine's pick_reasons), or null. */
function pickWhy(plan, cloud) {
  const why = (plan.pick_reasons || {})[cloud];
  if (!why) return null;
  return h("p", { class: "pick-why small" }, h("strong", {}, t("whyPick", { instance: why.instance_type })), msg(why));
}

/** The whole recommendation block: tables, chart, warnings, assumptions and downloads. `compact` (the chat, where
 * the answer's verdict already names the job): no title line, fewer rows per cloud. `lang`: drawn in that language
 * (an answer's), else in the page's. */
export function renderPlan(plan, { compact = false, lang = null } = {}) {
  return inLang(lang, () => drawPlan(plan, compact));
}

function drawPlan(plan, compact) {
  counter += 1;
  const block = h("section", { class: compact ? "plan compact" : "plan", "aria-label": t("recTitle") },
    compact ? null : h("h3", {}, t("recTitle")), compact ? null : h("p", { class: "plan-summary" }, summaryLine(plan)));
  if (plan.infeasible) {
    block.append(h("div", { class: "alert error", role: "alert" },
      h("strong", {}, `${t("infeasible")}: `), (zh() && plan.infeasible_zh) || plan.infeasible));
  }
  for (const note of (plan.notes || []).filter((n) => n.severity !== "info")) {
    block.append(h("div", { class: `alert ${note.severity === "error" ? "error" : "warn"}` }, `⚠ ${msg(note)}`));
  }
  const clouds = [...new Set([...Object.keys(plan.picks || {}), ...(plan.candidates || []).map((c) => c.cloud)])];
  const charted = [];
  let listed = 0;
  clouds.forEach((cloud, i) => {
    const rows = rowsFor(plan, cloud, compact ? ROWS_COMPACT : ROWS_PER_CLOUD);
    if (!rows.length) return;
    const warnId = `plan-${counter}-warn-${i}`;
    charted.push(...rows.slice(0, 3));
    listed += rows.length;
    block.append(...[h("h4", { class: `cloud-title ${cloud}` }, t(cloud)), pickWhy(plan, cloud),
      cloudTable(plan, cloud, rows, warnId), warningList(plan, rows, warnId)].filter(Boolean));
  });
  if (charted.length) {
    const total = plan.n_candidates ?? (plan.candidates || []).length;
    block.append(chartFor(plan, charted), h("p", { class: "small muted" }, t("shownOf", { shown: listed, total })));
  }
  const folded = (cls, title, items) => (items && items.length
    ? h("details", { class: cls }, h("summary", {}, title), h("ul", {}, items.map((text) => h("li", {}, text))))
    : null);
  block.append(...[
    folded("notes", t("notesTitle"), (plan.notes || []).filter((n) => n.severity === "info").map(msg)),
    folded("assumptions", t("assumptionsTitle"), zh() ? plan.assumptions_zh : plan.assumptions),
  ].filter(Boolean));
  if (plan.workload && !plan.infeasible) block.append(downloadButtons(plan.workload, getLang()));
  return block;
}

/** Re-render every plan block on the page in the current language (after the language switch); a host drawn by
 * another view (the serving card) keeps its own `draw`. */
export function rerenderPlans() {
  document.querySelectorAll("[data-plan-host]").forEach((host) => {
    const state = host.planState;
    if (state) host.replaceChildren((state.draw || renderPlan)(state.plan, state.options));
  });
}

/** Show `plan` inside `host`, remembering it so the language switch can redraw it. */
export function showPlan(host, plan, options = {}) {
  host.dataset.planHost = "";
  host.planState = { plan, options };
  host.replaceChildren(renderPlan(plan, options));
}
