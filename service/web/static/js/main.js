// Wiring: language, tabs, sidebar, chat, the training and serving forms, sessions, knowledge panel.
import { getApiKey, setApiKey } from "./api.js";
import { applyStatic, getLang, onLangChange, setLang, t } from "./i18n.js";
import { createChat } from "./chat.js";
import { setUpForm } from "./form.js";
import { setUpKnowledgePanel } from "./knowledge.js";
import { rerenderPlans } from "./plan-view.js";
import { setUpServingForm } from "./serving-form.js";
import { createSessions } from "./sessions.js";

function setUpTabs() {
  const tabs = [...document.querySelectorAll("#mode-tabs [role=tab]")];
  const select = (tab, focus) => {
    tabs.forEach((other) => {
      const on = other === tab;
      other.setAttribute("aria-selected", String(on));
      other.tabIndex = on ? 0 : -1;
      document.getElementById(other.getAttribute("aria-controls")).hidden = !on;
    });
    if (focus) tab.focus();
  };
  tabs.forEach((tab, i) => {
    tab.addEventListener("click", () => select(tab, false));
    tab.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (step) { event.preventDefault(); select(tabs[(i + step + tabs.length) % tabs.length], true); }
      if (event.key === "Home") { event.preventDefault(); select(tabs[0], true); }
      if (event.key === "End") { event.preventDefault(); select(tabs[tabs.length - 1], true); }
    });
  });
  return { showChat: () => select(tabs[0], false) };
}

function setUpSidebar() {
  const toggle = document.getElementById("sidebar-toggle");
  const sidebar = document.getElementById("sidebar");
  const set = (open) => {
    toggle.setAttribute("aria-expanded", String(open));
    sidebar.classList.toggle("open", open);
  };
  toggle.addEventListener("click", () => set(toggle.getAttribute("aria-expanded") !== "true"));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && sidebar.classList.contains("open")) { set(false); toggle.focus(); }
  });
  return { close: () => set(false), open: () => set(true) };
}

function setUpApiKey(onChange, openSidebar) {
  const input = document.getElementById("api-key-input");
  const prompt = document.getElementById("api-key-prompt");
  input.value = getApiKey();
  const save = () => {
    setApiKey(input.value.trim());
    prompt.hidden = true;
    onChange();
  };
  input.addEventListener("change", save);
  document.getElementById("api-key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    save();
  });
  // a 401: ask for the key by the key box, in the page's language (the prompt follows a language switch)
  return () => {
    prompt.dataset.i18n = getApiKey() ? "keyWrong" : "keyNeeded";
    prompt.textContent = t(prompt.dataset.i18n);
    prompt.hidden = false;
    input.closest("details").open = true;
    if (input.offsetParent === null) openSidebar(); // a phone: the sidebar holds the key box
    input.focus();
  };
}

function setUpLanguage() {
  const button = document.getElementById("lang-switch");
  // held by reference: the first message takes the welcome block (and this button) out of the document
  const example = document.getElementById("example-question");
  const label = () => {
    button.textContent = t("langName");
    button.setAttribute("aria-label", t("langSwitch"));
    button.lang = getLang() === "zh" ? "en" : "zh";
    example.textContent = t("example");
  };
  button.addEventListener("click", () => setLang(getLang() === "zh" ? "en" : "zh"));
  onLangChange(() => { label(); rerenderPlans(); });
  applyStatic(document);
  label();
}

function main() {
  setUpLanguage();
  setUpKnowledgePanel();
  const tabs = setUpTabs();
  const sidebar = setUpSidebar();
  let sessions = null;
  let form = null;
  let serving = null;
  const askForKey = setUpApiKey(() => { sessions.refresh(); form.loadModels(); serving.loadGpus(); },
    () => sidebar.open());
  const onError = (err) => { if (err && err.status === 401) askForKey(); };
  const chat = createChat({
    onSession: () => sessions.render(),
    onTurnDone: () => sessions.refresh(),
    onError,
  });
  sessions = createSessions({
    getCurrent: () => chat.sessionId,
    onSelect: (s) => {
      chat.reset(s.session_id, t("continuing", { title: s.title }));
      sessions.render();
      tabs.showChat();
      sidebar.close();
    },
    onDeleted: () => chat.reset(null),
    onError,
  });
  onLangChange(() => sessions.render());
  document.getElementById("new-chat").addEventListener("click", () => {
    chat.reset(null);
    sessions.render();
    tabs.showChat();
    sidebar.close();
  });
  document.getElementById("example-question").addEventListener("click", () => chat.ask(t("example")));
  // "Explain this" starts a new chat: the form's workload is its own question, not a turn of the open chat
  form = setUpForm({ onExplain: (message, workload) => {
    chat.reset(null);
    sessions.render();
    tabs.showChat();
    chat.ask(message, workload);
  }, onError });
  serving = setUpServingForm({ onError });
  form.loadModels();
  serving.loadGpus();
  sessions.refresh();
}

main();
