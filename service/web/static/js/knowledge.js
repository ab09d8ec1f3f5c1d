// The knowledge panel: a cited guide or catalog page (GET /knowledge/<path>) rendered client-side, scrolled to
// the cited section. Section ids follow the retrieval chunker (`# ` title and `## ` sections, repeats -2, -3).
import { errorBox } from "./dom.js";
import { t } from "./i18n.js";
import { addCopyButtons, markKnowledgeLinks, renderMarkdown, slugify } from "./markdown.js";

const FRONT_MATTER = /^---[ \t]*\n([\s\S]*?)\n---[ \t]*\n/;
const FENCE = /^(```|~~~)/;
const cache = new Map();
let returnFocus = null;

function splitFrontMatter(text) {
  const match = FRONT_MATTER.exec(text);
  if (!match) return ["", text];
  const title = /^title:\s*(.+)$/m.exec(match[1]);
  return [title ? title[1].trim().replace(/^["']|["']$/g, "") : "", text.slice(match[0].length)];
}

/** The chunker's anchors, in document order: the `# ` title's, then one per `## ` heading. */
function chunkAnchors(body) {
  const anchors = [];
  const taken = new Set();
  const claim = (heading) => {
    const base = slugify(heading);
    let anchor = base;
    for (let n = 2; taken.has(anchor); n += 1) anchor = `${base}-${n}`;
    taken.add(anchor);
    return anchor;
  };
  let inFence = false;
  let title = null;
  const h2 = [];
  for (const line of body.split("\n")) {
    if (FENCE.test(line.trim())) inFence = !inFence;
    if (inFence) continue;
    if (line.startsWith("# ") && title === null && h2.length === 0) title = line.slice(2).trim();
    else if (line.startsWith("## ")) h2.push(line.slice(3).trim());
  }
  if (title !== null) anchors.push({ level: 1, anchor: claim(title) });
  h2.forEach((heading) => anchors.push({ level: 2, anchor: claim(heading) }));
  return anchors;
}

function labelHeadings(root, body) {
  const anchors = chunkAnchors(body);
  const h1 = root.querySelector("h1");
  const h2s = [...root.querySelectorAll("h2")];
  const fromSource = anchors.filter((a) => a.level === 2);
  h2s.forEach((el, i) => {
    el.dataset.anchor = fromSource.length === h2s.length ? fromSource[i].anchor : slugify(el.textContent);
  });
  const titleAnchor = anchors.find((a) => a.level === 1);
  if (h1 && titleAnchor) h1.dataset.anchor = titleAnchor.anchor;
  root.querySelectorAll("h3, h4, h5, h6").forEach((el) => { el.dataset.anchor = slugify(el.textContent); });
}

function findSection(root, anchor) {
  if (!anchor) return null;
  const byAnchor = (a) => [...root.querySelectorAll("[data-anchor]")].find((el) => el.dataset.anchor === a);
  return byAnchor(anchor) || byAnchor(anchor.replace(/-\d+$/, "")) || null;
}

async function fetchPage(path) {
  if (!cache.has(path)) {
    cache.set(path, fetch(`/knowledge/${encodeURI(path)}`).then(async (res) => {
      if (res.ok) return res.text();
      const body = await res.json().catch(() => ({}));
      const err = new Error((body.error && body.error.message) || res.statusText);
      err.fix = body.error && body.error.fix;
      throw err;
    }));
  }
  try {
    return await cache.get(path);
  } catch (err) {
    cache.delete(path);
    throw err;
  }
}

/** Open `path` in the panel and show the section `anchor`. */
export async function openKnowledge(path, anchor) {
  const dialog = document.getElementById("knowledge");
  const body = document.getElementById("knowledge-body");
  const title = document.getElementById("knowledge-title");
  const raw = document.getElementById("knowledge-raw");
  if (!dialog.open) returnFocus = document.activeElement;
  title.textContent = path;
  raw.href = `/knowledge/${encodeURI(path)}`;
  body.replaceChildren(t("loading"));
  if (!dialog.open) dialog.showModal();
  try {
    const [pageTitle, markdown] = splitFrontMatter((await fetchPage(path)).replace(/\r\n?/g, "\n"));
    title.textContent = pageTitle || path;
    const content = renderMarkdown(markdown);
    body.replaceChildren(content);
    labelHeadings(body, markdown);
    markKnowledgeLinks(body, path);
    addCopyButtons(body, { copy: t("copy"), copied: t("copied"), copyFailed: t("copyFailed") }, () => {});
    const target = findSection(body, anchor);
    body.querySelectorAll(".target").forEach((el) => el.classList.remove("target"));
    if (target) {
      target.classList.add("target");
      target.setAttribute("tabindex", "-1");
      target.scrollIntoView({ block: "start" });
      target.focus({ preventScroll: true });
    } else {
      if (anchor) body.prepend(Object.assign(document.createElement("p"), { className: "muted small", textContent: t("sectionMissing") }));
      body.scrollTop = 0;
      body.focus();
    }
  } catch (err) {
    body.replaceChildren(errorBox(err, t("errorPrefix"), t("fixPrefix")));
  }
}

export function setUpKnowledgePanel() {
  const dialog = document.getElementById("knowledge");
  document.getElementById("knowledge-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("click", (event) => { if (event.target === dialog) dialog.close(); });
  dialog.addEventListener("close", () => { if (returnFocus && returnFocus.isConnected) returnFocus.focus(); });
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-knowledge]");
    if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    openKnowledge(link.dataset.knowledge, link.dataset.anchor);
  });
}
