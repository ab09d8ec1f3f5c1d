"""Write knowledge/modelscope.yaml: the Hugging Face repo id -> ModelScope id of the models our documents name.

    python scripts/modelscope_ids.py CONSTANTS_PY --commit SHA [--extra OLD_CONSTANTS_PY --extra-commit SHA]

The source is LLaMA-Factory's own model list (src/llamafactory/extras/constants.py: each model's
DownloadSource.DEFAULT and DownloadSource.MODELSCOPE ids), the list its USE_MODELSCOPE_HUB route reads. A pair is
kept only when it is the same checkpoint under an organisation's name: the repo names agree (ignoring case; Meta's
Llama-2 `-hf` repos are `-ms` on ModelScope) and the ModelScope owner is the publisher's own organisation or
ModelScope's (AI-ModelScope, LLM-Research, modelscope, swift). Personal re-uploads and mismatched rows in the list
(e.g. google/gemma-7b -> AI-ModelScope/gemma-2b-it) are left out. Only the ids our documents use are written: the
launch bundle's repos (service/documents/hf_repos.py) and the repo aliases in knowledge/models.yaml.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "https://github.com/hiyouga/LLaMA-Factory/blob/{commit}/src/llamafactory/extras/constants.py#L{line}"
MODELSCOPE_ORGS = {"ai-modelscope", "llm-research", "modelscope", "swift"}
# The publisher's organisation on ModelScope when it is spelled differently from Hugging Face
SAME_OWNER = {"01-ai": "01ai", "baidu": "paddlepaddle", "internlm": "shanghai_ai_laboratory", "zai-org": "zhipuai",
              "thudm": "zhipuai", "tencent": "tencent-hunyuan", "openbmb": "openbmb"}
# Hugging Face owners renamed since (the old id redirects): THUDM's repos are zai-org's now
RENAMED = {"THUDM": "zai-org"}


def pairs(text: str) -> dict[str, tuple[str, int]]:
    """{Hugging Face id: (ModelScope id, line of the ModelScope id)} as the list states them."""
    out: dict[str, tuple[str, int]] = {}
    default: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if m := re.search(r'DownloadSource\.DEFAULT:\s*"([^"]+)"', line):
            default = m.group(1)
        elif (m := re.search(r'DownloadSource\.MODELSCOPE:\s*"([^"]+)"', line)) and default:
            out.setdefault(default, (m.group(1), number))
        elif line.strip().startswith("},"):
            default = None
    return out


def same_checkpoint(hf: str, ms: str) -> bool:
    hf_owner, _, hf_name = hf.partition("/")
    ms_owner, _, ms_name = ms.partition("/")
    names = hf_name.lower() == ms_name.lower() or (
        hf_name.lower().endswith("-hf") and ms_name.lower() == hf_name.lower()[:-3] + "-ms")
    owner = ms_owner.lower() in MODELSCOPE_ORGS | {hf_owner.lower(), SAME_OWNER.get(hf_owner.lower(), "")}
    return names and owner


def wanted_ids() -> set[str]:
    sys.path.insert(0, str(ROOT))
    from service.documents.hf_repos import HF_REPOS

    ids = set(HF_REPOS.values())
    models = yaml.safe_load((ROOT / "knowledge" / "models.yaml").read_text(encoding="utf-8"))
    for row in models["models"] if isinstance(models, dict) else models:
        ids.update(a for a in row.get("aliases") or [] if "/" in a)
    return ids


def rows(lists: list[tuple[str, str]]) -> list[dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for text, commit in lists:
        for hf, (ms, line) in pairs(text).items():
            if hf not in found and same_checkpoint(hf, ms):
                found[hf] = {"hf": hf, "modelscope": ms, "source": SOURCE.format(commit=commit, line=line)}
    out = []
    for hf in sorted(wanted_ids(), key=str.lower):
        owner, _, name = hf.partition("/")
        renamed = f"{RENAMED.get(owner, owner)}/{name}"
        if hf in found:
            out.append(found[hf])
        elif renamed in found:
            out.append({**found[renamed], "hf": hf,
                        "note": f"{owner}/* is {RENAMED[owner]}/* on Hugging Face now; the list names {renamed}"})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("constants", type=Path)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--extra", type=Path, help="an older constants.py for models the newest list dropped")
    ap.add_argument("--extra-commit")
    args = ap.parse_args()
    lists = [(args.constants.read_text(encoding="utf-8"), args.commit)]
    if args.extra is not None:
        lists.append((args.extra.read_text(encoding="utf-8"), args.extra_commit or ""))
    data = {"note": "Hugging Face repo id -> ModelScope id for the models our documents name. Written by "
                    "scripts/modelscope_ids.py from LLaMA-Factory's model list; each row cites its line.",
            "models": rows(lists)}
    out = ROOT / "knowledge" / "modelscope.yaml"
    out.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=200), encoding="utf-8")
    print(f"{len(data['models'])} ids written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
