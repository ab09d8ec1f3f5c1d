// Download buttons for one workload: the request document (Markdown, DOCX) and the launch bundle (zip).
import { download } from "./api.js";
import { h } from "./dom.js";
import { getLang, t } from "./i18n.js";

const KINDS = [
  { key: "dlRequestMd", path: "/v1/documents/request", format: "md", ext: "md" },
  { key: "dlRequestDocx", path: "/v1/documents/request", format: "docx", ext: "docx" },
  { key: "dlLaunch", path: "/v1/documents/launch", format: null, ext: "zip" },
];

export function downloadButtons(workload) {
  const status = h("p", { class: "small muted download-status", "aria-live": "polite" });
  const buttons = KINDS.map((kind) => {
    const button = h("button", { type: "button", class: "secondary", dataset: { download: kind.format || "zip" } },
      t(kind.key));
    button.addEventListener("click", async () => {
      const lang = getLang();
      const body = { workload, lang, ...(kind.format ? { format: kind.format } : {}) };
      button.disabled = true;
      status.classList.remove("error-text");
      status.textContent = t("downloading");
      try {
        const name = await download(kind.path, body, `gpu-advisor.${kind.ext}`);
        status.textContent = t("downloaded", { name });
      } catch (err) {
        status.classList.add("error-text");
        status.textContent = `${t("errorPrefix")}${err.message}${err.fix ? ` ${t("fixPrefix")}${err.fix}` : ""}`;
      } finally {
        button.disabled = false;
      }
    });
    return button;
  });
  return h("div", { class: "downloads" }, h("h4", {}, t("downloads")), h("div", { class: "button-row" }, buttons), status);
}
