// One assistant answer on the page. A plan answer shows once: the verdict (title and budget/deadline lines), the
// plan card as the single structured view, then the arithmetic and sources folded away. The Markdown's own table,
// alternatives, warnings and assumptions are what the card already shows, so they are not repeated.
import { announce, h, keepTokens } from "./dom.js";
import { getLang, inLang, t } from "./i18n.js";
import { addCopyButtons, linkKnowledgeRefs, markKnowledgeLinks, renderMarkdown } from "./markdown.js";
import { citationList } from "./citations.js";
import { showPlan } from "./plan-view.js";
import { showServing } from "./serving-view.js";

// Sections of the plan answer the card shows already (both languages' headings from prompts/answer.*.yaml).
const SHOWN_BY_CARD = ["备选方案", "注意事项", "估算假设", "Alternatives", "Warnings", "Assumptions"];
// ... and of a serving answer (srv_picks, srv_launch, assume_title): where to rent it, the command, the assumptions.
const SHOWN_BY_SERVING_CARD = ["租用方案（24×7 运行）", "启动命令", "估算假设", "Where to rent it (24x7)",
  "Launch command", "Assumptions"];
const SOURCES = ["参考资料", "Sources"];
// Emoji that fonts without colour emoji draw as tofu: drawn as plain text marks instead.
const MARK_RE = /(✅|❌|⚠)\uFE0F?/g;
const MARK = { "✅": ["✓", "ok"], "❌": ["✗", "bad-text"], "⚠": ["⚠", "warn-mark"] };

function copyLabels() {
  return { copy: t("copy"), copied: t("copied"), copyFailed: t("copyFailed") };
}

/** Replace colour emoji in the text of `root` by plain marks in a span (its class colours them). */
export function plainMarks(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    MARK_RE.lastIndex = 0;
    if (MARK_RE.test(node.data)) nodes.push(node);
  }
  for (const node of nodes) {
    const parts = [];
    let last = 0;
    for (const found of node.data.matchAll(MARK_RE)) {
      const [mark, cls] = MARK[found[1]];
      parts.push(node.data.slice(last, found.index), h("span", { class: `mark ${cls}` }, mark));
      last = found.index + found[0].length;
    }
    parts.push(node.data.slice(last));
    node.replaceWith(...parts.filter((p) => p !== ""));
  }
}

/** Markdown into `target`: sanitised, knowledge references linked, emoji as marks, tables in scroll boxes. */
export function fillMarkdown(target, markdown, { final, citations = [] }) {
  target.replaceChildren(renderMarkdown(markdown));
  if (!final) return;
  linkKnowledgeRefs(target, citations);
  markKnowledgeLinks(target);
  plainMarks(target);
  addCopyButtons(target, copyLabels(), announce);
  target.querySelectorAll("table").forEach((table) => {
    const wrap = h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": t("tableRegion") });
    table.replaceWith(wrap);
    wrap.append(table);
    keepTokens(table);
  });
}

/** A plan answer's Markdown split into the verdict, the sections worth folding, and anything after (documents). */
export function splitPlanAnswer(markdown) {
  const text = String(markdown || "").replace(/\n*<!-- gpu-advisor:workload [\s\S]*?-->\s*$/, "");
  const top = text.split(/\n(?=## )/);
  const first = top.findIndex((part) => /^(?:>[^\n]*\n+)*## /.test(part.trimStart()));
  const main = first >= 0 ? top[first] : text;
  const before = first > 0 ? top.slice(0, first).join("\n") : "";
  const after = first >= 0 ? top.slice(first + 1).join("\n") : "";
  const [head, ...subs] = main.split(/\n(?=### )/);
  const verdict = [before, head.split("\n").filter((line) => !line.trimStart().startsWith("|")).join("\n")]
    .filter(Boolean).join("\n\n").replace(/\n{3,}/g, "\n\n").trim();
  const sections = [];
  for (const sub of subs) {
    const [titleLine, ...body] = sub.split("\n");
    const title = titleLine.replace(/^###\s*/, "").trim();
    if (SOURCES.includes(title)) break; // the sources are the citation list; the offer after them, the buttons
    if (!SHOWN_BY_CARD.includes(title)) sections.push({ title, body: body.join("\n").trim() });
  }
  return { verdict, sections, after: after.trim() };
}

/** A serving answer's Markdown: the direct answer (its first line, after any note quoted above it; the figures
 * that follow are the card's), and the sections the card does not show. */
export function splitServingAnswer(markdown) {
  const text = String(markdown || "").replace(/\n*<!-- gpu-advisor:workload [\s\S]*?-->\s*$/, "");
  const [head, ...subs] = text.split(/\n(?=### )/);
  const lines = head.split("\n");
  const first = lines.findIndex((line) => line.trim() && !line.trimStart().startsWith(">"));
  const verdict = (first < 0 ? lines : lines.slice(0, first + 1)).join("\n").trim();
  const sections = [];
  for (const sub of subs) {
    const [titleLine, ...body] = sub.split("\n");
    const title = titleLine.replace(/^###\s*/, "").trim();
    if (!SOURCES.includes(title) && !SHOWN_BY_SERVING_CARD.includes(title)) {
      sections.push({ title, body: body.join("\n").trim() });
    }
  }
  return { verdict, sections };
}

function folded(cls, title, body) {
  return h("details", { class: `fold ${cls}` }, h("summary", {}, title), body);
}

function derivation(sections, citations) {
  if (!sections.length) return null;
  const body = h("div", { class: "markdown" });
  fillMarkdown(body, sections.map((s) => `#### ${s.title}\n\n${s.body}`).join("\n\n"), { final: true, citations });
  return folded("derivation", t("derivationTitle"), body);
}

/** Documents the answer carries but does not already show in its text. */
function documentsBlock(documents, shownText) {
  const shown = (text) => shownText.includes(String(text).trim().slice(0, 200));
  const parts = [];
  if (typeof documents.request_document === "string" && !shown(documents.request_document)) {
    const body = h("div", { class: "markdown" });
    fillMarkdown(body, documents.request_document, { final: true });
    parts.push(folded("document", t("dlRequestMd"), body));
  }
  if (documents.launch_bundle && typeof documents.launch_bundle === "object") {
    const files = Object.entries(documents.launch_bundle).filter(([, text]) => !shown(text)).map(([name, text]) =>
      h("div", { class: "bundle-file" }, h("h5", { class: "mono" }, name), h("pre", {}, h("code", {}, String(text)))));
    const body = h("div", {}, files);
    addCopyButtons(body, copyLabels(), announce);
    if (files.length) parts.push(folded("document", t("dlLaunch"), body));
  }
  return parts;
}

/** Which model wrote the answer, in the page's language ("离线规划模型", "大模型（不可用，离线规划模型代答）"). */
function backendLabel(backend) {
  const kind = backend === "openai" ? "backendLlm" : backend.startsWith("offline (fallback") ? "backendFallback"
    : backend === "offline" ? "backendOffline" : "";
  return t("backend", { who: kind ? t(kind) : backend });
}

/** The answer's Markdown without its own list of sources: the citation list below shows them once. */
export function withoutSources(markdown) {
  const lines = String(markdown || "").split("\n");
  const out = [];
  let skipping = 0; // the heading level of the sources section being left out
  for (const line of lines) {
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    // the section ends at a heading of its level, or at the first paragraph after its list
    if (skipping && (heading ? heading[1].length <= skipping : line.trim() && !/^\s*(?:[-*+]|\d+[.)])\s/.test(line))) {
      skipping = 0;
    }
    if (heading && SOURCES.includes(heading[2].trim())) { skipping = heading[1].length; continue; }
    if (!skipping) out.push(line);
  }
  return out.join("\n").trim();
}

/** Fill an answer's `content` (the text) and `extras` (card, folds, sources) from its final AskResult, all in the
 * answer's language (a Chinese question gets a Chinese card, whatever the page's language). */
export function showAnswer(content, extras, result, streamedText = "") {
  const lang = result.language === "zh" || result.language === "en" ? result.language : getLang();
  content.dataset.langPinned = lang;
  extras.dataset.langPinned = lang;
  content.lang = extras.lang = lang === "zh" ? "zh-CN" : "en";
  inLang(lang, () => drawAnswer(content, extras, result, streamedText, lang));
}

/** What an answer's card draws, by its typed answer's `kind`: a plan answer's training plan, or a serving answer's
 * plan and pinned-GPU inference, each with the name assumptions the answer states ({plan} / {serving} / {}). */
export function cardOf(answer) {
  if (!answer) return {};
  if (answer.kind === "plan" && answer.plan) return { plan: answer.plan };
  if (answer.kind !== "serving" || !(answer.plan || answer.inference)) return {};
  const said = answer.said || [];
  const stated = (part) => part && { ...part,
    assumptions: [...said.map((s) => s[0]), ...(part.assumptions || [])],
    assumptions_zh: [...said.map((s) => s[1]), ...(part.assumptions_zh || [])] };
  return { serving: { plan: stated(answer.plan), inference: stated(answer.inference) } };
}

function drawAnswer(content, extras, result, streamedText, lang) {
  const markdown = result.answer_markdown || streamedText;
  const citations = result.citations || [];
  let shownText = markdown;
  const card = cardOf(result.answer);
  if (card.plan) {
    const { verdict, sections, after } = splitPlanAnswer(markdown);
    fillMarkdown(content, verdict, { final: true, citations });
    const host = h("div", { class: "plan-host" });
    extras.append(host);
    showPlan(host, card.plan, { compact: true, lang });
    const fold = derivation(sections, citations);
    if (fold) extras.append(fold);
    if (after) {
      const rest = h("div", { class: "markdown" });
      fillMarkdown(rest, after, { final: true, citations });
      extras.append(rest);
    }
    shownText = `${verdict}\n${after}`;
  } else if (card.serving) {
    const { verdict, sections } = splitServingAnswer(markdown);
    fillMarkdown(content, verdict, { final: true, citations });
    const host = h("div", { class: "plan-host" });
    extras.append(host);
    showServing(host, card.serving, { compact: true, lang });
    if (sections.length) {
      const rest = h("div", { class: "markdown" });
      fillMarkdown(rest, sections.map((x) => `### ${x.title}\n\n${x.body}`).join("\n\n"), { final: true, citations });
      extras.append(rest);
    }
    shownText = verdict;
  } else {
    const text = markdown.replace(/\n*<!-- gpu-advisor:workload [\s\S]*?-->\s*$/, "");
    fillMarkdown(content, citations.length ? withoutSources(text) : text, { final: true, citations });
  }
  if (result.prose_check && result.prose_check.length) {
    extras.append(h("div", { class: "alert warn" }, `⚠ ${result.prose_check.join("; ")}`));
  }
  extras.append(...documentsBlock(result.documents || {}, shownText));
  const carded = Boolean(card.plan || card.serving);
  const cites = citationList(citations, { heading: !carded });
  if (cites) extras.append(carded ? folded("sources", `${t("citationsTitle")} (${citations.length})`, cites) : cites);
  if (result.backend) extras.append(h("p", { class: "small muted backend", title: result.backend }, backendLabel(result.backend)));
}
