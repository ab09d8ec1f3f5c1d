// The chat: a user message (shown as text) → POST /v1/chat?stream=true → the answer streamed as Markdown,
// then the final AskResult: sanitised answer, the card its typed answer draws (tables, chart), sources, downloads.
import { api, streamChat } from "./api.js";
import { announce, errorBox, h } from "./dom.js";
import { t } from "./i18n.js";
import { fillMarkdown, showAnswer } from "./answer-view.js";

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

  function assistantBubble(status, content, extras, busy) {
    return h("article", { class: "message assistant", "aria-busy": busy ? "true" : "false" },
      h("h3", { class: "visually-hidden" }, t("assistant")), h("div", { class: "bubble" }, status, content, extras));
  }

  /** A stored conversation (GET /v1/sessions/{id}/messages), drawn as it was answered. */
  async function showHistory(id) {
    const shown = h("p", { class: "status small muted" }, t("loading"));
    log.append(shown);
    try {
      const messages = await api(`/v1/sessions/${encodeURIComponent(id)}/messages`);
      if (sessionId !== id) return; // another chat was opened meanwhile
      const items = [];
      let asked = "";
      for (const m of messages) {
        if (m.role === "user") { asked = m.content; items.push(userBubble(m.content)); continue; }
        const content = h("div", { class: "markdown answer" });
        const extras = h("div", { class: "extras" });
        items.push(assistantBubble(null, content, extras, false));
        // answered in the language of the question, as the assistant does
        showAnswer(content, extras, { answer_markdown: m.content, answer: m.answer,
          citations: m.citations || [], language: /[\u3400-\u9fff]/.test(asked) ? "zh" : "en" });
        if (m.stopped) extras.append(h("p", { class: "small muted" }, t("stopped")));
      }
      shown.replaceWith(...items);
      const last = log.lastElementChild;
      if (last) last.scrollIntoView({ block: "end" });
    } catch (err) {
      shown.replaceWith(errorBox(err, t("errorPrefix"), t("fixPrefix")));
      onError(err, { quiet: true });
    }
  }

  /** The new answer's top in view: when it sits below the upper part of the log (a follow-up starts near the input
   * box, below the fold) or above it, the log scrolls so the answer starts at its top. Called on the first
   * streamed words and again on the final answer (the cards can move it); an answer already in view stays. */
  function revealTop(bubble) {
    const box = log.getBoundingClientRect();
    const top = bubble.getBoundingClientRect().top;
    if (top >= box.top && top <= box.top + box.height * 0.4) return;
    const smooth = !window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    log.scrollTo({ top: log.scrollTop + top - box.top - 8, behavior: smooth ? "smooth" : "auto" });
  }

  function userBubble(text) {
    return h("article", { class: "message user" }, h("h3", { class: "visually-hidden" }, t("you")),
      h("div", { class: "bubble" }, h("p", { class: "plain" }, text)));
  }

  async function ask(message, workload = null) {
    if (controller) return;
    welcome.remove();
    const status = h("p", { class: "status small muted" }, t("thinking"));
    const content = h("div", { class: "markdown answer" });
    const extras = h("div", { class: "extras" });
    const bubble = assistantBubble(status, content, extras, true);
    log.append(userBubble(message), bubble);
    bubble.scrollIntoView({ block: "end" });
    controller = new AbortController();
    setBusy(true);
    let text = "";
    let pending = false;
    let done = false;
    let shown = false;
    const paint = () => {
      pending = false;
      if (done) return;
      fillMarkdown(content, text, { final: false });
      if (!shown) { shown = true; revealTop(bubble); }
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
      status.textContent = "";
      showAnswer(content, extras, result, text);
      revealTop(bubble);
      if (result.session_id && result.session_id !== sessionId) {
        sessionId = result.session_id;
        onSession(sessionId);
      }
      onTurnDone(result);
    };
    try {
      await streamChat(message, sessionId, onEvent, controller.signal, workload);
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
      if (id) showHistory(id);
      input.focus();
    },
  };
}
