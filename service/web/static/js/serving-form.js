// The serving form: a serving workload from its fields → POST /v1/plan/serving, or with a GPU × count pinned
// POST /v1/inference (does it start, the figures) beside the plan on that GPU (where to rent it) → the serving card.
import { api } from "./api.js";
import { announce, errorBox, reveal } from "./dom.js";
import { t } from "./i18n.js";
import { localError } from "./form.js";
import { showServing } from "./serving-view.js";

const NUMBERS = ["gpus", "max_model_len", "input_tokens", "output_tokens", "ttft_ms", "tpot_ms"];
const INTEGERS = new Set(["gpus", "max_model_len", "input_tokens", "output_tokens"]);
const FIELD_ZH = { model: "模型", gpu: "GPU", gpus: "每副本 GPU 数", max_model_len: "最大上下文",
  input_tokens: "每个请求输入 tokens", output_tokens: "每个请求输出 tokens", concurrency: "负载", request_rate: "负载",
  ttft_ms: "首字延迟上限", tpot_ms: "每 token 时延上限", weights: "权重精度", kv_dtype: "KV 缓存精度" };
const FIELD_INPUT = { concurrency: "load", request_rate: "load" };

class FormError extends Error {
  constructor(message, field) { super(message); this.field = field; }
}

const num = (value) => (value === "" || value === null ? null : Number(value));

/** The serving workload the form describes (service/serving_workload.py), or a FormError naming the field. */
export function readServingWorkload(form) {
  const data = new FormData(form);
  const model = String(data.get("model") || "").trim();
  if (!model) throw new FormError(t("needModel"), form.elements.model);
  const clouds = data.getAll("clouds");
  if (!clouds.length) throw new FormError(t("needCloud"), form.querySelector("input[name=clouds]"));
  const w = { model, weights: data.get("weights"), kv_dtype: data.get("kv_dtype"), engine: data.get("engine"),
    objective: data.get("objective"), clouds: clouds.length === 2 ? [] : clouds };
  const gpu = String(data.get("gpu") || "").trim();
  if (gpu) w.gpu = gpu;
  for (const key of NUMBERS) {
    const value = num(data.get(key));
    if (value !== null && value > 0) w[key] = INTEGERS.has(key) ? Math.round(value) : value;
  }
  const load = num(data.get("load"));
  if (load !== null) {
    if (!(load > 0)) throw new FormError(t("needLoadPositive"), form.elements.load);
    w[data.get("load_unit") === "request_rate" ? "request_rate" : "concurrency"] = load;
  }
  return w;
}

/** The card's data for `w`: the whole plan (the card shows a few options per cloud of how many), and with a GPU ×
 * count pinned the inference beside it. */
export async function planServing(w) {
  const plan = () => api("/v1/plan/serving", { method: "POST", body: w });
  if (!(w.gpu && w.gpus)) return { plan: await plan(), inference: null };
  const [inference, planned] = await Promise.all([api("/v1/inference", { method: "POST", body: w }),
    plan().catch(() => null)]); // the figures stand on their own when no rent option can be planned
  return { plan: planned, inference };
}

export function setUpServingForm({ onError }) {
  const form = document.getElementById("serving-form");
  const result = document.getElementById("serving-result");
  const errorLine = document.getElementById("serving-error");

  function workloadOrNull() {
    errorLine.hidden = true;
    form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
    try {
      return readServingWorkload(form);
    } catch (err) {
      if (!(err instanceof FormError)) throw err;
      errorLine.textContent = err.message;
      errorLine.hidden = false;
      if (err.field) {
        err.field.setAttribute("aria-invalid", "true");
        err.field.focus();
      }
      return null;
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const workload = workloadOrNull();
    if (!workload) return;
    const button = document.getElementById("serving-submit");
    button.disabled = true;
    result.setAttribute("aria-busy", "true");
    result.replaceChildren(t("planning"));
    try {
      showServing(result, await planServing(workload));
      announce(t("planDone"));
      reveal(result);
    } catch (err) {
      const shown = localError(err, form, { names: FIELD_ZH, inputs: FIELD_INPUT });
      result.replaceChildren(errorBox(shown, t("errorPrefix"), t("fixPrefix")));
      if (shown.field) shown.field.setAttribute("aria-invalid", "true");
      result.scrollIntoView({ block: "nearest" });
      onError(err, { quiet: true });
    } finally {
      button.disabled = false;
      result.removeAttribute("aria-busy");
    }
  });

  async function loadGpus() {
    try {
      const rows = await api("/v1/catalog/gpus");
      const list = document.getElementById("gpu-options");
      list.replaceChildren(...rows.map((g) => {
        const option = document.createElement("option");
        option.value = g.id;
        option.textContent = g.name;
        return option;
      }));
    } catch (err) {
      onError(err, { quiet: true });
    }
  }

  return { loadGpus };
}
