// The sessions sidebar: list (GET /v1/sessions), select, rename (PATCH), delete (DELETE), new chat.
import { api } from "./api.js";
import { errorBox, h } from "./dom.js";
import { getLang, t } from "./i18n.js";

function trashIcon() {
  return h("svg:svg", { viewBox: "0 0 16 16", width: 16, height: 16, "aria-hidden": "true", focusable: "false" },
    h("svg:path", { d: "M3 4h10M6.5 4V2.5h3V4M4.5 4l.7 9.5h5.6l.7-9.5M7 6.5v5M9 6.5v5", fill: "none",
      stroke: "currentColor", "stroke-width": 1.4, "stroke-linecap": "round", "stroke-linejoin": "round" }));
}

export function createSessions({ getCurrent, onSelect, onDeleted, onError }) {
  const list = document.getElementById("session-list");
  const empty = document.getElementById("session-empty");
  let sessions = [];

  function dateText(iso) {
    const d = new Date(iso);
    return Number.isNaN(d.getTime()) ? "" : d.toLocaleString(getLang() === "zh" ? "zh-CN" : "en-US",
      { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  }

  function item(s) {
    const current = s.session_id === getCurrent();
    const select = h("button", { type: "button", class: "session-select", "aria-current": current ? "true" : null,
      onclick: () => onSelect(s) },
    h("span", { class: "session-title" }, s.title || t("newSession")),
    h("span", { class: "small muted" }, `${s.turns === 1 ? t("turns1") : t("turns", { n: s.turns })} · ${dateText(s.updated_at)}`));
    const rename = h("button", { type: "button", class: "icon-button", "aria-label": `${t("rename")}: ${s.title}`,
      title: t("rename"), onclick: () => startRename(li, s) }, "✎");
    const remove = h("button", { type: "button", class: "icon-button danger", "aria-label": `${t("del")}: ${s.title}`,
      title: t("del"), onclick: () => remove_(s) }, trashIcon());
    const li = h("li", { class: current ? "session current" : "session", dataset: { sessionId: s.session_id } },
      select, h("span", { class: "session-actions" }, rename, remove));
    return li;
  }

  function startRename(li, s) {
    const input = h("input", { type: "text", value: s.title, maxlength: "200", required: true, "aria-label": t("renameLabel") });
    const form = h("form", { class: "rename-form" }, input,
      h("button", { type: "submit", class: "primary small-button" }, t("save")),
      h("button", { type: "button", class: "secondary small-button", onclick: () => render() }, t("cancel")));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const title = input.value.trim();
      if (!title) return;
      try {
        await api(`/v1/sessions/${encodeURIComponent(s.session_id)}`, { method: "PATCH", body: { title } });
        await refresh();
        const again = list.querySelector(`[data-session-id="${CSS.escape(s.session_id)}"] .session-select`);
        if (again) again.focus();
      } catch (err) { onError(err); }
    });
    form.addEventListener("keydown", (event) => { if (event.key === "Escape") { render(); focusItem(s.session_id); } });
    li.replaceChildren(form);
    input.focus();
    input.select();
  }

  function focusItem(id) {
    const el = list.querySelector(`[data-session-id="${CSS.escape(id)}"] .session-select`);
    if (el) el.focus();
  }

  async function remove_(s) {
    if (!window.confirm(t("confirmDelete", { title: s.title }))) return;
    try {
      await api(`/v1/sessions/${encodeURIComponent(s.session_id)}`, { method: "DELETE" });
      if (s.session_id === getCurrent()) onDeleted(s);
      await refresh();
      document.getElementById("new-chat").focus();
    } catch (err) { onError(err); }
  }

  function render() {
    list.replaceChildren(...sessions.map(item));
    empty.hidden = sessions.length > 0;
  }

  async function refresh() {
    try {
      sessions = (await api("/v1/sessions")).sort((a, b) => String(b.updated_at).localeCompare(String(a.updated_at)));
      render();
    } catch (err) {
      // a missing key is asked for by the key box (main.js), not shown here as an error
      list.replaceChildren(...(err.status === 401 ? [] : [h("li", {}, errorBox(err, t("errorPrefix"), t("fixPrefix")))]));
      onError(err, { quiet: true });
    }
  }

  return { refresh, render };
}
