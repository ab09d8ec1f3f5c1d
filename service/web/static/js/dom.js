// h("a", {href, class: "x", onclick}, "text", child): elements built from text, never from HTML strings.
export function h(tag, attrs = {}, ...children) {
  const svg = tag.startsWith("svg:");
  const el = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4)) : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

let announceTimer = 0;

/** Say `text` through the page's polite status region (screen readers). */
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => { region.textContent = text; }, 50);
}

/** An error box with the server's message and its fix. */
/** Scroll `el` to the top of the view when its top is not on screen (a phone: the result is below the form). */
export function reveal(el) {
  const top = el.getBoundingClientRect().top;
  if (top >= 0 && top <= window.innerHeight * 0.6) return;
  const smooth = !window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  el.scrollIntoView({ block: "start", behavior: smooth ? "smooth" : "auto" });
}

export function errorBox(err, prefix, fixPrefix) {
  return h("div", { class: "alert error", role: "alert" },
    h("strong", {}, prefix), err.message || String(err),
    err.fix ? h("div", { class: "small" }, fixPrefix, err.fix) : null);
}

/** Tokens a line may break inside (after a hyphen or slash: "A100-40G-SXM", "on-demand") wrapped whole. */
export function keepTokens(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (/\S[-/‐]\S/.test(n.data) && !n.parentElement.closest(".nowrap")) nodes.push(n);
  }
  for (const n of nodes) {
    n.replaceWith(...n.data.split(/(\s+)/).filter(Boolean).map((part) => (/\S[-/‐]\S/.test(part)
      ? h("span", { class: "nowrap" }, part) : part)));
  }
}
