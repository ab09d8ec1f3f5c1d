// Form mode: a workload from form fields → POST /v1/plan → the same plan view; "explain" asks the chat.
import { api } from "./api.js";
import { errorBox, announce, reveal } from "./dom.js";
import { getLang, t } from "./i18n.js";
import { showPlan } from "./plan-view.js";

const METHOD_ZH = { lora: "LoRA微调", qlora: "QLoRA微调", full: "全参微调", freeze: "Freeze微调", pretrain: "预训练" };
const METHOD_EN = { lora: "LoRA fine-tuning", qlora: "QLoRA fine-tuning", full: "Full fine-tuning",
  freeze: "Freeze fine-tuning", pretrain: "Pre-training" };
const BILLING_ZH = { on_demand: "按量计费", monthly: "包年包月", spot: "竞价实例" };
const BILLING_EN = { on_demand: "on-demand billing", monthly: "monthly billing", spot: "spot billing" };
const OBJECTIVE_ZH = { cheapest: "最便宜优先", fastest: "速度优先", balanced: "均衡" };
const CLOUD_ZH = { tencent: "腾讯云", jdcloud: "京东云" };
const CLOUD_EN = { tencent: "Tencent Cloud", jdcloud: "JD Cloud" };

class FormError extends Error {
  constructor(message, field) { super(message); this.field = field; }
}

const num = (value) => (value === "" || value === null ? null : Number(value));

/** The workload the form describes (the public flat Workload schema), or a FormError naming the field. */
export function readWorkload(form) {
  const data = new FormData(form);
  const model = String(data.get("model") || "").trim();
  if (!model) throw new FormError(t("needModel"), form.elements.model);
  const size = num(data.get("size"));
  if (!(size > 0)) throw new FormError(t("needSize"), form.elements.size);
  const clouds = data.getAll("clouds");
  if (!clouds.length) throw new FormError(t("needCloud"), form.querySelector("input[name=clouds]"));
  const workload = { model, method: data.get("method"), objective: data.get("objective"),
    budget_period: data.get("budget_period"), clouds: clouds.length === 2 ? [] : clouds };
  workload[data.get("size_unit") === "tokens" ? "tokens" : "samples"] = data.get("size_unit") === "tokens" ? size : Math.round(size);
  for (const [key, value] of [["budget_cny", num(data.get("budget_cny"))], ["deadline_hours", num(data.get("deadline_hours"))],
    ["epochs", num(data.get("epochs"))], ["avg_tokens_per_sample", num(data.get("avg_tokens_per_sample"))]]) {
    if (value !== null && value > 0) workload[key] = key === "avg_tokens_per_sample" ? Math.round(value) : value;
  }
  if (data.get("billing")) workload.billing = data.get("billing");
  if (workload.tokens) delete workload.avg_tokens_per_sample;
  return workload;
}

/** The workload as the chat shows it in the user's bubble (the request carries the workload itself). */
export function describeWorkload(w, lang = getLang()) {
  const n = (v) => String(Math.round(v * 100) / 100);
  if (lang === "zh") {
    const parts = [`用${w.model}做${METHOD_ZH[w.method]}`,
      w.tokens ? `数据集共${n(w.tokens)} tokens` : `数据集${n(w.samples)}条样本`];
    if (w.avg_tokens_per_sample) parts.push(`平均每条${w.avg_tokens_per_sample} tokens`);
    if (w.epochs) parts.push(`训练${n(w.epochs)}轮`);
    if (w.budget_cny) parts.push(w.budget_period === "total" ? `总预算¥${n(w.budget_cny)}` : `预算每月¥${n(w.budget_cny)}`);
    if (w.deadline_hours) parts.push(`${n(w.deadline_hours)}小时内完成`);
    if (w.clouds.length === 1) parts.push(`只用${CLOUD_ZH[w.clouds[0]]}`);
    if (w.billing) parts.push(BILLING_ZH[w.billing]);
    parts.push(OBJECTIVE_ZH[w.objective]);
    return `${parts.join("，")}。`;
  }
  const parts = [`${METHOD_EN[w.method]} of ${w.model} on ${w.tokens ? `${n(w.tokens)} tokens` : `${n(w.samples)} samples`}`];
  if (w.avg_tokens_per_sample) parts.push(`${w.avg_tokens_per_sample} tokens per sample on average`);
  if (w.epochs) parts.push(`${n(w.epochs)} epochs`);
  if (w.budget_cny) parts.push(`budget ¥${n(w.budget_cny)} ${w.budget_period === "total" ? "in total" : "per month"}`);
  if (w.deadline_hours) parts.push(`finish within ${n(w.deadline_hours)} hours`);
  if (w.clouds.length === 1) parts.push(`${CLOUD_EN[w.clouds[0]]} only`);
  if (w.billing) parts.push(BILLING_EN[w.billing]);
  parts.push(w.objective);
  return `${parts.join(", ")}.`;
}

const FIELD_ZH = { model: "模型", samples: "数据集大小", tokens: "数据集大小", budget_cny: "预算",
  deadline_hours: "期限", epochs: "训练轮数", avg_tokens_per_sample: "平均每条 tokens", method: "训练方法" };
const FIELD_INPUT = { samples: "size", tokens: "size" };

/** A plan error as the form shows it: in the page's language, with the field it is about. `names` (Chinese field
 * names) and `inputs` (API field → form input) default to the training form's. */
export function localError(err, form, { names = FIELD_ZH, inputs = FIELD_INPUT } = {}) {
  const unknown = /^Unknown (model|GPU) '([^']*)'(?:\. Did you mean: (.*?)\?)?/.exec(err.message || "");
  if (unknown) {
    const gpu = unknown[1] === "GPU";
    const field = form.elements[gpu ? "gpu" : "model"] || null;
    if (getLang() !== "zh") return { message: err.message, fix: err.fix, field };
    const hint = unknown[3] ? `你是不是要找：${unknown[3].split(", ").join("、")}？` : "";
    return gpu
      ? { message: `未知 GPU“${unknown[2]}”。${hint}`, fix: "请从列表中选择 GPU，或留空在全部 GPU 中找。", field }
      : { message: `未知模型“${unknown[2]}”。${hint}`, fix: "请从列表中选择已知模型（如 Qwen2-7B），或填写参数量（如 7B）。", field };
  }
  const invalid = err.code === "invalid_input" && /(?:^|: )(\w+): /.exec(err.message || "");
  if (invalid) {
    const name = invalid[1];
    const field = form.elements[inputs[name] || name] || null;
    if (getLang() !== "zh") return { message: err.message, fix: err.fix, field };
    const gt = /greater than (?:or equal to )?([\d.]+)/.exec(err.message);
    const le = /less than (?:or equal to )?([\d.]+)/.exec(err.message);
    const rule = gt ? `：须大于 ${gt[1]}` : le ? `：须不超过 ${le[1]}` : "";
    return { message: `“${names[name] || name}”的值无效${rule}。`, fix: "请修改该字段后重试。", field };
  }
  return err;
}

export function setUpForm({ onExplain, onError }) {
  const form = document.getElementById("plan-form");
  const result = document.getElementById("form-result");
  const errorLine = document.getElementById("form-error");
  const hint = document.getElementById("f-model-hint");
  const models = new Map();

  function showFormError(err) {
    errorLine.textContent = err.message;
    errorLine.hidden = false;
    if (err.field) {
      err.field.setAttribute("aria-invalid", "true");
      err.field.focus();
    }
  }

  function workloadOrNull() {
    errorLine.hidden = true;
    form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
    try {
      return readWorkload(form);
    } catch (err) {
      if (!(err instanceof FormError)) throw err;
      showFormError(err);
      return null;
    }
  }

  form.elements.model.addEventListener("input", () => {
    const m = models.get(form.elements.model.value.trim().toLowerCase());
    hint.textContent = m ? `${m.name} · ${m.params_b}B · ${m.kind}${m.aliases.length ? ` · ${m.aliases.join(", ")}` : ""}` : t("fModelHint");
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const workload = workloadOrNull();
    if (!workload) return;
    const button = document.getElementById("plan-submit");
    button.disabled = true;
    result.setAttribute("aria-busy", "true");
    result.replaceChildren(t("planning"));
    try {
      showPlan(result, await api("/v1/plan", { method: "POST", body: workload }));
      announce(t("planDone"));
      reveal(result);
    } catch (err) {
      const shown = localError(err, form);
      result.replaceChildren(errorBox(shown, t("errorPrefix"), t("fixPrefix")));
      if (shown.field) shown.field.setAttribute("aria-invalid", "true");
      result.scrollIntoView({ block: "nearest" });
      onError(err, { quiet: true });
    } finally {
      button.disabled = false;
      result.removeAttribute("aria-busy");
    }
  });

  document.getElementById("plan-explain").addEventListener("click", () => {
    const workload = workloadOrNull();
    if (workload) onExplain(describeWorkload(workload), workload);
  });

  async function loadModels() {
    try {
      const rows = await api("/v1/catalog/models");
      const list = document.getElementById("model-options");
      list.replaceChildren(...rows.map((m) => {
        [m.id, m.name, ...m.aliases].forEach((name) => models.set(String(name).toLowerCase(), m));
        const option = document.createElement("option");
        option.value = m.id;
        option.textContent = `${m.name} · ${m.params_b}B${m.aliases.length ? ` · ${m.aliases.slice(0, 3).join(", ")}` : ""}`;
        return option;
      }));
    } catch (err) {
      onError(err, { quiet: true });
    }
  }

  return { loadModels };
}
