// The catalog view: the filters of GET /v1/catalog/instances (cloud, GPU, memory per card, cards, RDMA, billing,
// sort; service/planner/catalog_view.py runs the query) and its rows as one table: each instance with its GPUs,
// host, the price it is sorted on, ¥ per GPU-hour and per dense BF16 TFLOPS-hour, and the price's source and
// date (an undated page says when it was captured). Every figure is the API's; this file only lays them out.
import { api } from "./api.js";
import { announce, errorBox, h } from "./dom.js";
import { getLang, onLangChange, t } from "./i18n.js";
import { localError } from "./form.js";
import { formatCny, labelCells, sourceDetails, words } from "./plan-view.js";

const BILLINGS = ["on_demand", "monthly", "spot"];
const HEAD = ["colInstance", "cColGpu", "cColHost", "cColPrice", "cColPerGpu", "cColPerTflops", "cColSource"];
const SORT_LABEL = { price: "sPrice", "price-per-gpu": "sPerGpu", "price-per-tflops": "sPerTflops" };
const FIELD_ZH = { cloud: "云厂商", gpu: "GPU", min_memory_gb: "每卡显存", min_cards: "每台 GPU 数", rdma: "RDMA 网络",
  billing: "计费方式", sort: "排序" };

class FormError extends Error {
  constructor(message, field) { super(message); this.field = field; }
}

const zh = () => getLang() === "zh";
const num = (n) => Number(n).toLocaleString(zh() ? "zh-CN" : "en-US", { maximumFractionDigits: 1 });
const payable = (p) => p && p.planner_uses && !p.on_request && !p.stale;

/** The query string the form describes, or a FormError naming the field. */
export function readCatalogQuery(form) {
  const data = new FormData(form);
  const params = new URLSearchParams();
  for (const key of ["cloud", "rdma", "billing", "sort"]) {
    const value = String(data.get(key) || "");
    if (value) params.set(key, value);
  }
  const gpu = String(data.get("gpu") || "").trim();
  if (gpu) params.set("gpu", gpu);
  const memory = String(data.get("min_memory_gb") || "").trim();
  if (memory) {
    const n = Number(memory);
    if (!(n >= 0 && n <= 1024)) throw new FormError(t("cNeedMemory"), form.elements.min_memory_gb);
    params.set("min_memory_gb", String(n));
  }
  const cards = String(data.get("min_cards") || "").trim();
  if (cards) {
    const n = Number(cards);
    if (!(Number.isInteger(n) && n >= 1 && n <= 64)) throw new FormError(t("cNeedCards"), form.elements.min_cards);
    params.set("min_cards", String(n));
  }
  return params;
}

/** The price a row is sorted on (as the API sorts): the billing asked, else on-demand, else monthly, else spot;
 * for a row without one, the price the planner keeps for it (a price on request), if any. */
export function shownPrice(row, billing) {
  const order = billing ? [billing] : BILLINGS;
  const used = (b) => row.prices.find((p) => p.billing === b && p.planner_uses);
  return order.map(used).find(payable) || order.map(used).find(Boolean) || null;
}

function perTflops(value) {
  if (value === null || value === undefined) return "—";
  // as the API rounds it (4 decimals): ¥0.0906 per TFLOPS-hour
  return `¥${Number(value).toLocaleString(zh() ? "zh-CN" : "en-US", { maximumFractionDigits: 4 })}`;
}

function instanceCell(r) {
  return h("th", { scope: "row" },
    h("strong", { class: "mono instance-name" }, r.instance_type),
    h("div", { class: "small" }, t(r.cloud)),
    h("div", { class: "small muted" }, t(`sale_${r.sale_status}`)));
}

function gpuCell(r) {
  return h("td", { class: "gpu" },
    h("div", {}, t("cCardsOf", { n: num(r.gpu_count), gpu: r.gpu_name })),
    h("div", { class: "small muted" }, t("cEach", { n: num(r.gpu_memory_gib) }),
      r.fp8 ? h("span", { class: "badge" }, "FP8") : null));
}

function hostCell(r) {
  return h("td", { class: "host" },
    h("div", {}, r.vcpus == null || r.memory_gib == null ? t("hostUnpublished") : t("cHost", { cpu: r.vcpus, ram: num(r.memory_gib) })),
    r.network_gbps ? h("div", { class: "small muted" }, t("cNet", { n: num(r.network_gbps) })) : null,
    r.rdma ? h("span", { class: "badge" }, "RDMA") : null);
}

function priceCell(r, p) {
  if (!payable(p)) {
    return h("td", { class: "price" }, h("span", {}, t("on_request")),
      h("div", {}, h("a", { href: r.quote_link, target: "_blank", rel: "noopener noreferrer", class: "small" },
        `${t("askSales")} ↗`)));
  }
  const unit = p.unit === "month" ? t("perMonth") : t("perHour");
  return h("td", { class: "price" },
    h("span", { class: "nowrap" }, `${formatCny(p.price_cny)}${unit}`),
    h("div", { class: "small muted" }, t(p.billing)),
    p.promo ? h("span", { class: "badge" }, t("promo")) : null);
}

function sourceCell(r, p) {
  if (!p) return h("td", { class: "source-cell" }, "—");
  const date = (zh() ? p.date_zh : p.date_en) || "";
  return h("td", { class: "source-cell" },
    h("div", { class: "small price-date" }, [date, t(`confidence_${p.confidence}`)].filter(Boolean).join(" · ")),
    h("div", {}, sourceDetails(p),
      h("a", { href: r.quote_link, target: "_blank", rel: "noopener noreferrer", class: "small" }, `${t("quote")} ↗`)));
}

function catalogRow(r, billing) {
  const p = shownPrice(r, billing);
  const paid = payable(p);
  return labelCells(h("tr", { dataset: { instance: r.instance_type, cloud: r.cloud } },
    instanceCell(r), gpuCell(r), hostCell(r), priceCell(r, p),
    h("td", { class: "per-gpu" }, paid ? formatCny(p.per_gpu_hour_cny) : "—"),
    h("td", { class: "per-tflops" }, paid ? perTflops(p.per_tflops_hour_cny) : "—"),
    sourceCell(r, p)), HEAD);
}

/** The rows as a table (cards at phone width), a count line and how the per-hour figures are reckoned. */
export function renderCatalog(rows, params) {
  const billing = params.get("billing") || "";
  const sort = params.get("sort") || "price-per-gpu";
  const caption = t("cTitle");
  const count = h("p", { class: "catalog-count" },
    [t("cCount", { n: rows.length }), t("cSortedBy", { sort: t(SORT_LABEL[sort]) })].join(" · "));
  if (!rows.length) return [count, h("p", { class: "muted" }, t("cNone"))];
  return [count,
    h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": caption },
      h("table", { class: "plan-table catalog-table" },
        h("caption", { class: "visually-hidden" }, caption),
        h("thead", {}, h("tr", {}, HEAD.map((key) => h("th", { scope: "col" }, words(t(key)))))),
        h("tbody", {}, rows.map((r) => catalogRow(r, billing))))),
    h("p", { class: "small muted" }, t("cFoot"))];
}

export function setUpCatalog({ onError }) {
  const form = document.getElementById("catalog-form");
  const result = document.getElementById("catalog-result");
  const errorLine = document.getElementById("catalog-error");
  let shown = null; // { rows, params }: redrawn on a language switch
  let loaded = false;

  const showError = (err) => {
    const local = localError(err, form, { names: FIELD_ZH, inputs: {} });
    result.replaceChildren(errorBox(local, t("errorPrefix"), t("fixPrefix")));
    if (local.field) local.field.setAttribute("aria-invalid", "true");
    shown = null;
  };

  async function load() {
    errorLine.hidden = true;
    form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
    let params;
    try {
      params = readCatalogQuery(form);
    } catch (err) {
      if (!(err instanceof FormError)) throw err;
      errorLine.textContent = err.message;
      errorLine.hidden = false;
      err.field.setAttribute("aria-invalid", "true");
      err.field.focus();
      return;
    }
    result.setAttribute("aria-busy", "true");
    result.replaceChildren(t("loading"));
    try {
      const query = params.toString();
      const rows = await api(`/v1/catalog/instances${query ? `?${query}` : ""}`);
      shown = { rows, params };
      result.replaceChildren(...renderCatalog(rows, params));
      announce(t("cCount", { n: rows.length }));
    } catch (err) {
      showError(err);
      onError(err, { quiet: true });
    } finally {
      result.removeAttribute("aria-busy");
      loaded = true;
    }
  }

  form.addEventListener("submit", (event) => { event.preventDefault(); load(); });
  form.addEventListener("change", () => load());
  form.addEventListener("reset", () => setTimeout(load, 0));
  onLangChange(() => { if (shown) result.replaceChildren(...renderCatalog(shown.rows, shown.params)); });
  // the first look: when the tab is first shown (a click or the arrow keys)
  document.getElementById("panel-catalog").addEventListener("shown", () => { if (!loaded) load(); });
  return { load };
}
