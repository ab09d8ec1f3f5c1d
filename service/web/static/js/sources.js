// A price's or an instance's source as a reader sees it: the kind of source in their language and the public
// addresses it names. Our working notes (research-note sections, scrape ids) never reach the page.
// Mirrors service/labels.py (strip_internal, public_links).
const NOTE_REF = /\s*\([^()]*\b(?:id \d{6,}|sizing\.md|prices\.md|clouds\.md|shared\/)[^()]*\)/g;
const SHARED = /(?:^|[;,]\s*)shared\/[^;,()]*(?:\s*\(derived\))?/g;
const SECTION_REF = /\s*\b\w+\.md\s*(?:§\s*[\d.]+|[A-Z]\d+(?:[,/]\s*[A-Z]?\d+)*)(?:\s*\(derived\))?/g;
// the name of our price scrape in a note ("（starpool）", "starpool capture"), never its address (starpoolprice)
const SCRAPER = /\s*[(（]starpool[)）]|\bstarpool\b\s*/g;
const GITHUB = /(?<![/\w.])([A-Za-z0-9][\w-]*\/[\w.-]+):[^\s;,]+/g;
const ADDRESS = /https?:\/\/[^\s;,)]+|\b(?:[a-z0-9-]+\.)+(?:com|cn|net|org|io)(?:\/[^\s;,)']*)?/gi;

/** `text` without references to our research notes or scrape ids. */
export function stripInternal(text) {
  return String(text || "").replace(NOTE_REF, "").replace(SHARED, "").replace(SECTION_REF, "").replace(SCRAPER, "")
    .replace(/\s*;\s*(?=;|$)/g, "").replace(/^[\s;,]+|[\s;,]+$/g, "");
}

/** The public web addresses a source names, each once, as https links. */
export function publicLinks(source) {
  const text = stripInternal(source);
  const out = [];
  for (const m of text.matchAll(GITHUB)) out.push(`https://github.com/${m[1]}`);
  for (const found of text.replace(GITHUB, "").match(ADDRESS) || []) {
    const link = (/^http/i.test(found) ? found : `https://${found}`).replace(/[.']+$/, "");
    if (!out.includes(link)) out.push(link);
  }
  return out;
}

/** A price note in the reader's language: the Chinese note for Chinese (none if the data has none). */
export function priceNote(price, lang) {
  return stripInternal(lang === "zh" ? price.note_zh || "" : price.note || "");
}
