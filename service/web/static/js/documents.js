// Download buttons for one workload: the request document (Markdown, DOCX) and the launch bundle (zip).
import { download } from "./api.js";
import { h } from "./dom.js";
import { getLang, t } from "./i18n.js";

const KINDS = [
  { key: "dlRequestMd", path: "/v1/documents/request", format: "md", ext: "md" },
  { key: "dlRequestDocx", path: "/v1/documents/request", format: "docx", ext: "docx" },
  { key: "dlLaunch", path: "/v1/documents/launch", format: null, ext: "zip" },
];

/** The buttons, labelled in `lang`; the documents are written in it too (an answer's language, or the page's). */
export function downloadButtons(workload, lang = getLang()) {
  const status = h("p", { class: "small muted download-status", "aria-live": "polite" });
  const buttons = KINDS.map((kind) => {
    const button = h("button", { type: "button", class: "secondary", dataset: { download: kind.format || "zip" } },
      t(kind.key, {}, lang));
    button.addEventListener("click", async () => {
      const body = { workload, lang, ...(kind.format ? { format: kind.format } : {}) };
      button.disabled = true;
      status.classList.remove("error-text");
      status.textContent = t("downloading", {}, lang);
      try {
        const name = await download(kind.path, body, `gpu-advisor.${kind.ext}`);
        status.textContent = t("downloaded", { name }, lang);
      } catch (err) {
        status.classList.add("error-text");
        status.textContent = `${t("errorPrefix", {}, lang)}${err.message}${err.fix ? ` ${t("fixPrefix", {}, lang)}${err.fix}` : ""}`;
      } finally {
        button.disabled = false;
      }
    });
    return button;
  });
  return h("div", { class: "downloads" }, h("h4", {}, t("downloads", {}, lang)), h("div", { class: "button-row" }, buttons), status);
}
