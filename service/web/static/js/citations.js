// An answer's citations (AskResult.citations) as links that open the cited knowledge section in the panel.
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { knowledgeLink, splitKnowledgeRef } from "./markdown.js";

/** An answer's citations as links that open the cited knowledge section. */
export function citationList(citations, { heading = true } = {}) {
  if (!citations || !citations.length) return null;
  const items = citations.map((c) => {
    // the section to open: the citation's url when it is a knowledge path, else its chunk id
    const ref = splitKnowledgeRef(c.url) || splitKnowledgeRef(c.id) || splitKnowledgeRef(c.source);
    const anchor = ref && (ref[1] || (splitKnowledgeRef(c.id) || [])[1]);
    const external = /^https?:\/\//.test(c.url || "") ? c.url : "";
    return h("li", {},
      ref ? knowledgeLink(ref[0], anchor, c.title || anchor || ref[0], t("openKnowledge"))
        : h("span", {}, c.title || c.source || c.id),
      external ? h("a", { href: external, target: "_blank", rel: "noopener noreferrer", class: "small",
        title: t("external"), "aria-label": t("external") }, " ↗") : null);
  });
  return h("div", { class: "citations" },
    heading ? h("h4", { dataset: { i18n: "citationsTitle" } }, t("citationsTitle")) : null, h("ol", {}, items));
}
