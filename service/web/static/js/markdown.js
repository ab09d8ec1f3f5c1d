// Markdown → sanitised DOM. Every piece of Markdown (answers, knowledge pages) goes through marked and then
// DOMPurify; nothing from a message, an answer or a knowledge file can run script. User messages are text only.
import { h } from "./dom.js";

const KNOWLEDGE_REF = /\[((?:guide|catalog)\/[^\]\s]+?\.md)(?:#([^\]\s]*))?\]/g;
const HAS_KNOWLEDGE_REF = new RegExp(KNOWLEDGE_REF.source);
const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "option", "iframe", "object", "embed"],
  FORBID_ATTR: ["style", "id", "name"],
  ALLOW_DATA_ATTR: false, // data-* drives the page (data-i18n, data-knowledge): never from Markdown
  RETURN_DOM_FRAGMENT: true,
};
let hooked = false;

function hookOnce() {
  if (hooked) return;
  hooked = true;
  window.DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A" && /^https?:/i.test(node.getAttribute("href") || "")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
}

/** `markdown` as a sanitised DocumentFragment (GitHub-flavoured: tables, fenced code). */
export function renderMarkdown(markdown) {
  hookOnce();
  const html = window.marked.parse(String(markdown || ""), { gfm: true, breaks: false, async: false });
  const fragment = window.DOMPurify.sanitize(html, PURIFY);
  return fragment;
}

/** The link a citation opens: the knowledge page, marked so a click opens it in the panel. */
export function knowledgeLink(path, anchor, text, title) {
  const href = `/knowledge/${encodeURI(path)}${anchor ? `#${encodeURIComponent(anchor)}` : ""}`;
  return h("a", { href, class: "cite", title, dataset: { knowledge: path, anchor: anchor || "" } }, text);
}

/** "guide/x.md#y" (or "/knowledge/guide/x.md#y") → [path, anchor], or null for anything else. */
export function splitKnowledgeRef(ref) {
  const match = /^(?:\/?knowledge\/)?((?:guide|catalog)\/[^#?\s]+\.md)(?:#(.*))?$/.exec(ref || "");
  if (!match) return null;
  let anchor = match[2] || "";
  try { anchor = decodeURIComponent(anchor); } catch { /* keep it as written */ }
  return [match[1], anchor];
}

/** A reference's readable name: the cited section's title when a citation has it, else the anchor in words. */
function refTitle(path, anchor, citations) {
  const id = anchor ? `${path}#${anchor}` : path;
  const cited = citations.find((c) => c.id === id || c.id === `knowledge/${id}`);
  if (cited && cited.title) return cited.title;
  return (anchor || path.split("/").pop().replace(/\.(zh|en)\.md$|\.md$/g, "")).replace(/-/g, " ");
}

/** Turn "[guide/x.md#anchor]" references in the text of `root` into knowledge links named by the section title. */
export function linkKnowledgeRefs(root, citations = []) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => (node.parentElement.closest("a, code, pre") ? NodeFilter.FILTER_REJECT
      : HAS_KNOWLEDGE_REF.test(node.data) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP),
  });
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
  for (const node of nodes) {
    const parts = [];
    let last = 0;
    node.data.replace(KNOWLEDGE_REF, (whole, path, anchor, offset) => {
      let decoded = anchor || "";
      try { decoded = decodeURIComponent(decoded); } catch { /* keep it as written */ }
      parts.push(node.data.slice(last, offset), knowledgeLink(path, decoded, refTitle(path, decoded, citations)));
      last = offset + whole.length;
      return whole;
    });
    parts.push(node.data.slice(last));
    node.replaceWith(...parts.filter((p) => p !== ""));
  }
}

/** Mark links to knowledge pages (absolute, or relative to `basePath`) so they open in the panel. */
export function markKnowledgeLinks(root, basePath = "") {
  root.querySelectorAll("a[href]").forEach((a) => {
    const href = a.getAttribute("href");
    let ref = splitKnowledgeRef(href);
    if (!ref && basePath && /^[^:/?#][^:?]*\.md(#.*)?$/.test(href)) {
      const resolved = new URL(href, `https://x/${basePath}`).pathname.slice(1);
      ref = splitKnowledgeRef(`${resolved}${href.includes("#") ? href.slice(href.indexOf("#")) : ""}`);
    }
    if (!ref) return;
    a.dataset.knowledge = ref[0];
    a.dataset.anchor = ref[1];
    a.setAttribute("href", `/knowledge/${encodeURI(ref[0])}${ref[1] ? `#${encodeURIComponent(ref[1])}` : ""}`);
    a.removeAttribute("target");
  });
}

/** A copy button on every code block under `root`. */
export function addCopyButtons(root, labels, onCopied) {
  root.querySelectorAll("pre").forEach((pre) => {
    if (pre.parentElement.classList.contains("code-block")) return;
    const wrap = h("div", { class: "code-block" });
    pre.replaceWith(wrap);
    const button = h("button", { type: "button", class: "copy", "aria-label": labels.copy }, labels.copy);
    button.addEventListener("click", async () => {
      const ok = await copyText(pre.innerText);
      button.textContent = ok ? labels.copied : labels.copyFailed;
      onCopied(button.textContent);
      setTimeout(() => { button.textContent = labels.copy; }, 2000);
    });
    wrap.append(button, pre);
  });
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h("textarea", { class: "visually-hidden", "aria-hidden": "true" });
    area.value = text;
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}

/** The chunker's heading slug (service/retrieval/chunking.py slugify): lower case, CJK kept, punctuation dropped. */
export function slugify(heading) {
  const text = heading.normalize("NFKC").trim().toLowerCase();
  const kept = [...text].filter((ch) => /[\p{L}\p{N}]/u.test(ch) || " -_".includes(ch)).join("");
  return kept.replace(/\s+/g, "-").replace(/^-+|-+$/g, "") || "section";
}
