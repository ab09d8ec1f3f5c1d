// The chat: a user message (shown as text) → POST /v1/chat?stream=true → the answer streamed as Markdown,
// then the final AskResult: sanitised answer, the recommendation's tables and chart, sources, downloads.
import { streamChat } from "./api.js";
import { announce, errorBox, h } from "./dom.js";
import { t } from "./i18n.js";
import { addCopyButtons, linkKnowledgeRefs, renderMarkdown } from "./markdown.js";
import { citationList } from "./citations.js";
import { showPlan } from "./plan-view.js";

function copyLabels() {
  return { copy: t("copy"), copied: t("copied"), copyFailed: t("copyFailed") };
}

/** Markdown into `target`: sanitised, knowledge references linked, copy buttons on code. */
function fillMarkdown(target, markdown, { final }) {
  target.replaceChildren(renderMarkdown(markdown));
  if (final) {
    linkKnowledgeRefs(target);
    addCopyButtons(target, copyLabels(), announce);
    target.querySelectorAll("table").forEach((table) => {
      const wrap = h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": t("recTitle") });
      table.replaceWith(wrap);
      wrap.append(table);
    });
  }
}

/** Documents the answer carries but does not already show in its text (the offline answer usually does). */
function documentsBlock(documents, answer) {
  const shown = (text) => answer.includes(String(text).trim().slice(0, 200));
  const parts = [];
  if (typeof documents.request_document === "string" && !shown(documents.request_document)) {
    const body = h("div", { class: "markdown" });
    fillMarkdown(body, documents.request_document, { final: true });
    parts.push(h("details", { class: "document" }, h("summary", {}, t("dlRequestMd")), body));
  }
  if (documents.launch_bundle && typeof documents.launch_bundle === "object") {
    const files = Object.entries(documents.launch_bundle).filter(([, text]) => !shown(text)).map(([name, text]) =>
      h("div", { class: "bundle-file" }, h("h5", { class: "mono" }, name), h("pre", {}, h("code", {}, String(text)))));
    const body = h("div", {}, files);
    addCopyButtons(body, copyLabels(), announce);
    if (files.length) parts.push(h("details", { class: "document" }, h("summary", {}, t("dlLaunch")), body));
  }
  return parts;
}

export function createChat({ onSession, onTurnDone, onError }) {
  const log = document.getElementById("chat-log");
  const form = document.getElementById("composer");
  const input = document.getElementById("composer-input");
  const send = document.getElementById("send");
  const stop = document.getElementById("stop");
  const welcome = document.getElementById("welcome");
  let sessionId = null;
  let controller = null;

  function setBusy(busy) {
    send.disabled = busy;
    stop.hidden = !busy;
  }

  function userBubble(text) {
    return h("article", { class: "message user" }, h("h3", { class: "visually-hidden" }, t("you")),
      h("div", { class: "bubble" }, h("p", { class: "plain" }, text)));
  }

  async function ask(message) {
    if (controller) return;
    welcome.remove();
    const status = h("p", { class: "status small muted" }, t("thinking"));
    const content = h("div", { class: "markdown answer" });
    const extras = h("div", { class: "extras" });
    const bubble = h("article", { class: "message assistant", "aria-busy": "true" },
      h("h3", { class: "visually-hidden" }, t("assistant")), h("div", { class: "bubble" }, status, content, extras));
    log.append(userBubble(message), bubble);
    bubble.scrollIntoView({ block: "end" });
    controller = new AbortController();
    setBusy(true);
    let text = "";
    let pending = false;
    let done = false;
    const paint = () => {
      pending = false;
      if (!done) fillMarkdown(content, text, { final: false });
    };
    const onEvent = (name, data) => {
      if (name === "token") {
        text += data.text || "";
        status.textContent = "";
        if (!pending) { pending = true; requestAnimationFrame(paint); }
      } else if (name === "tool" && data.data && data.data.args) {
        status.textContent = t("calling", { name: data.name });
      } else if (name === "final") {
        finish(data.data || {});
      } else if (name === "error") {
        const err = (data.data && data.data.error) || { message: data.text };
        extras.append(errorBox(err, t("errorPrefix"), t("fixPrefix")));
      }
    };
    const finish = (result) => {
      done = true; // a repaint already scheduled must not replace the final answer
      fillMarkdown(content, result.answer_markdown || text, { final: true });
      status.textContent = "";
      if (result.recommendation) {
        const host = h("div", { class: "plan-host" });
        extras.append(host);
        showPlan(host, result.recommendation);
      }
      if (result.prose_check && result.prose_check.length) {
        extras.append(h("div", { class: "alert warn" }, `⚠ ${result.prose_check.join("; ")}`));
      }
      extras.append(...documentsBlock(result.documents || {}, result.answer_markdown || text));
      const cites = citationList(result.citations);
      if (cites) extras.append(cites);
      if (result.backend) extras.append(h("p", { class: "small muted backend" }, `backend: ${result.backend}`));
      if (result.session_id && result.session_id !== sessionId) {
        sessionId = result.session_id;
        onSession(sessionId);
      }
      onTurnDone(result);
    };
    try {
      await streamChat(message, sessionId, onEvent, controller.signal);
    } catch (err) {
      if (err.name === "AbortError") {
        status.textContent = t("stopped");
      } else if (err.status === 404 && sessionId) {
        sessionId = null;
        onSession(null);
        extras.append(h("div", { class: "alert warn", role: "alert" }, t("unknownSession")));
      } else {
        status.textContent = "";
        extras.append(errorBox(err, t("errorPrefix"), t("fixPrefix")));
        onError(err, { quiet: true });
      }
    } finally {
      bubble.setAttribute("aria-busy", "false");
      controller = null;
      setBusy(false);
      announce(t("answerDone"));
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const message = input.value.trim();
    if (!message || controller) return;
    input.value = "";
    ask(message);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  stop.addEventListener("click", () => controller && controller.abort());

  return {
    ask,
    get sessionId() { return sessionId; },
    /** Start over (no session) or continue `id`; the log is cleared either way. */
    reset(id = null, banner = "") {
      if (controller) controller.abort();
      sessionId = id;
      log.replaceChildren(...(id ? [] : [welcome]));
      const note = document.getElementById("session-banner");
      note.textContent = banner;
      note.hidden = !banner;
      input.focus();
    },
  };
}
