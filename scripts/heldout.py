"""Is a thread one of those kept back to check us (../shared/heldout-threads.txt, `owner/repo#N` a line)?

    python scripts/heldout.py URL [URL ...]   # 'held out' or 'ok' per URL; the list itself is never printed
    python scripts/heldout.py --corpus        # ids of evals/questions cases whose source is held out (exit 1 if any)
    python scripts/heldout.py --seen URL ...  # 'in corpus' when evals/questions (or /work/staging/questions)
                                              #   already has a case from that thread, else 'new'

Run it before reading a thread to label it: a held-out thread is skipped unread. Without the file (a clone without
../shared) every URL is 'unknown' and --corpus checks nothing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT.parent / "shared" / "heldout-threads.txt"
_GH = re.compile(r"github\.com/([^/\s]+)/([^/\s]+)/(?:issues|pull|discussions)/(\d+)", re.IGNORECASE)
_KEY = re.compile(r"^([\w.-]+)/([\w.-]+)#(\d+)$")


def key_of(url: str) -> str | None:
    """'owner/repo#N' (lower-case) for a GitHub thread URL or an 'owner/repo#N' key; the URL's path otherwise."""
    m = _GH.search(url) or _KEY.match(url.strip())
    if m:
        return f"{m.group(1)}/{m.group(2)}#{m.group(3)}".lower()
    u = re.sub(r"^https?://", "", url.strip()).split("#", 1)[0].rstrip("/").lower()
    return u or None


def held_out() -> set[str] | None:
    if not LIST.exists():
        return None
    keys = set()
    for line in LIST.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and (k := key_of(line)):
            keys.add(k)
    return keys


def corpus_keys() -> set[str]:
    """Threads the corpus (and the staging area where new cases are written) already draws on."""
    keys: set[str] = set()
    roots = [ROOT / "evals" / "questions", Path("/work/staging/questions")]
    for root in roots:
        for path in sorted(root.glob("**/*.yaml")) if root.exists() else []:
            for row in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
                if isinstance(row, dict) and (k := key_of(str(row.get("source", "")))):
                    keys.add(k)
    return keys


def main(argv: list[str]) -> int:
    if argv[:1] == ["--seen"]:
        seen = corpus_keys()
        for url in argv[1:]:
            print(f"{url}\t{'in corpus' if key_of(url) in seen else 'new'}")
        return 0
    keys = held_out()
    if argv == ["--corpus"]:
        if keys is None:
            print("no held-out list here; nothing checked")
            return 0
        bad = []
        for path in sorted((ROOT / "evals" / "questions").glob("*/*.yaml")):
            for row in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
                k = key_of(str(row.get("source", "")))
                if k and k in keys:
                    bad.append(f"{path.relative_to(ROOT)}: {row.get('id')}")
        print("\n".join(bad) or "ok: no question comes from a held-out thread")
        return 1 if bad else 0
    for url in argv:
        k = key_of(url)
        print(f"{url}\t{'unknown' if keys is None else ('held out' if k in keys else 'ok')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
