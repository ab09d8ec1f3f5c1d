// The API client: JSON calls, the chat's server-sent events read from a fetch stream, and file downloads.
import { t } from "./i18n.js";

const KEY_STORE = "gpu-advisor.apiKey";

export class ApiError extends Error {
  constructor(status, code, message, fix) {
    super(message);
    this.status = status;
    this.code = code;
    this.fix = fix || "";
  }
}

export function getApiKey() {
  try { return localStorage.getItem(KEY_STORE) || ""; } catch { return ""; }
}

export function setApiKey(key) {
  try { if (key) localStorage.setItem(KEY_STORE, key); else localStorage.removeItem(KEY_STORE); } catch { /* ignore */ }
}

function headers(extra = {}) {
  const key = getApiKey();
  return { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...extra };
}

async function failure(res) {
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  const err = body && body.error ? body.error : {};
  if (res.status === 401) { // said in the page's language, by the key box (main.js), not as the server's English
    return new ApiError(401, err.code || "unauthorized", t(getApiKey() ? "keyWrong" : "keyNeeded"), "");
  }
  return new ApiError(res.status, err.code || `http_${res.status}`, err.message || res.statusText, err.fix);
}

/** fetch `path`; JSON in (when `body` is given) and JSON out; an ApiError carries the server's message and fix. */
export async function api(path, { method = "GET", body, signal } = {}) {
  const init = { method, signal, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  if (!res.ok) throw await failure(res);
  return res.status === 204 ? null : res.json();
}

/** Split a text/event-stream buffer into complete events; returns [events, rest]. */
export function parseEvents(buffer) {
  const events = [];
  const blocks = buffer.replace(/\r\n?/g, "\n").split("\n\n");
  const rest = blocks.pop();
  for (const block of blocks) {
    let name = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
    }
    if (data.length) events.push({ name, data: JSON.parse(data.join("\n")) });
  }
  return [events, rest];
}

/** POST /v1/chat?stream=true; calls onEvent(name, data) for each event as it arrives. A structured `workload`
 * (the form's) is planned as it is; `message` is then only the text the chat shows. */
export async function streamChat(message, sessionId, onEvent, signal, workload = null) {
  const body = { message, ...(sessionId ? { session_id: sessionId } : {}), ...(workload ? { workload } : {}) };
  const res = await fetch("/v1/chat?stream=true", {
    method: "POST", signal, body: JSON.stringify(body),
    headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
  });
  if (!res.ok) throw await failure(res);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    const [events, rest] = parseEvents(done ? `${buffer}\n\n` : buffer);
    buffer = rest;
    events.forEach((e) => onEvent(e.name, e.data));
    if (done) return;
  }
}

function filenameFrom(res, fallback) {
  const disposition = res.headers.get("Content-Disposition") || "";
  const match = /filename="?([^";]+)"?/.exec(disposition);
  return match ? match[1] : fallback;
}

/** POST `body` to `path` and save the response as a file; returns the file name. */
export async function download(path, body, fallbackName) {
  const res = await fetch(path, {
    method: "POST", body: JSON.stringify(body), headers: headers({ "Content-Type": "application/json" }),
  });
  if (!res.ok) throw await failure(res);
  const name = filenameFrom(res, fallbackName);
  const url = URL.createObjectURL(await res.blob());
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return name;
}
