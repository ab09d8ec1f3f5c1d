"""Add a model to knowledge/models.yaml from its Hugging Face config.json.

    python scripts/add_model.py CONFIG_JSON --id Qwen3-8B --source "owner/repo:path@commit" \
        [--aliases "Qwen/Qwen3-8B" "千问3-8B"] [--params-b 8.19] [--active-params-b X] [--family qwen3] \
        [--name NAME] [--template qwen3] [--note TEXT] [--out knowledge/models.yaml] [--dry-run]
    python scripts/add_model.py CONFIG_JSON --id Qwen3.6-27B --alias-of Qwen3.5-27B --source ... --aliases ...

The dimensions come from the config (service/catalog/hf_config.py: nested text_config / llm_config, MoE, MLA,
sliding-window and linear-attention layers, the released dtype from quantization_config, the vision tower from
vision_config). Without --params-b the parameter count is calculated from the dimensions and `source` says
"params calc". A row whose id, name or alias is already in the file (after normalisation) is refused. The row is
appended in the file's style and read back through the schema before the file is written.

--alias-of ROW: a release with the dimensions of a row already in the file (a newer checkpoint, a chat build) is
an alias of that row, not a row of its own: the config is converted and compared with ROW's sizing fields, and only
when they agree are the id and aliases added to ROW (and the config cited in its source); else it is refused.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from datetime import date
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from service.catalog.hf_config import convert  # noqa: E402
from service.catalog.queries import normalize  # noqa: E402
from service.catalog.schema import ModelSpec  # noqa: E402
from service.errors import InvalidInputError  # noqa: E402
from service.sizing.params import count_params  # noqa: E402

ORDER = ("id", "name", "family", "kind", "aliases", "num_layers", "hidden_size", "num_heads", "num_kv_heads",
         "head_dim", "intermediate_size", "vocab_size", "max_position_embeddings", "served_context_len",
         "sliding_window", "sliding_window_layers", "tie_word_embeddings", "qkv_bias", "qk_norm", "mlp",
         "attn_output_gate", "moe", "mla", "linear_attn", "vision_params_b", "vision_hidden_size",
         "vision_intermediate_size", "vision_max_patches", "vision_tokens_per_item", "released_dtype",
         "params_published_b", "active_params_b", "gflops_per_sample", "sample_desc", "template", "source", "as_of")
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+/\-]*")
_YAML_WORDS = {"yes", "no", "true", "false", "on", "off", "null", "y", "n", "~"}


class RowError(Exception):
    """A row the catalog cannot take (a duplicate, a config that does not convert)."""


def build_row(cfg: dict[str, Any], *, model_id: str, source: str, aliases: list[str], params_b: float | None = None,
              active_params_b: float | None = None, family: str | None = None, name: str | None = None,
              template: str = "", note: str = "", as_of: date | None = None) -> ModelSpec:
    """The validated row for a config.json (see the module docstring)."""
    try:
        c = convert(cfg)
    except InvalidInputError as exc:
        raise RowError(f"{model_id}: {exc.message}") from exc
    mtype = str((cfg.get("text_config") or cfg.get("llm_config") or cfg).get("model_type") or cfg.get("model_type")
                or "custom")
    fields = {**c.fields, "id": model_id, "name": name or model_id,
              "family": family or mtype.removesuffix("_text"), "aliases": aliases, "template": template,
              "params_published_b": 1.0, "source": source, "as_of": as_of or date.today()}
    spec = ModelSpec(**fields)
    counts = count_params(spec)
    vision = spec.vision_params_b or 0.0
    parts = [source]
    if params_b is None:
        params_b = _billions(counts.total / 1e9 + vision)
        parts.append(f"params calc {params_b:g}B" + (f" (vision {vision:g}B)" if vision else ""))
    if spec.moe is not None and active_params_b is None:
        active_params_b = _billions(counts.active / 1e9 + vision)
        parts.append(f"active calc {active_params_b:g}B")
    parts += c.notes
    if note:
        parts.append(note)
    return spec.model_copy(update={"params_published_b": params_b, "active_params_b": active_params_b,
                                   "source": "; ".join(parts)})


def _billions(x: float) -> float:
    """Three decimals, or four significant digits below 1B (a test-sized model)."""
    return round(x, 3) if x >= 1 else float(f"{x:.4g}")


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v) if isinstance(v, float) else str(v)  # the shortest text that reads back the same
    if isinstance(v, date):
        return v.isoformat()
    s = str(v)
    if s == "":
        return '""'
    return s if _PLAIN.fullmatch(s) and s.lower() not in _YAML_WORDS and not s[0].isdigit() else json.dumps(s)


def _flow(d: dict[str, Any]) -> str:
    items = []
    for k, v in d.items():
        items.append(f"{k}: [{', '.join(str(x) for x in v)}]" if isinstance(v, list) else f"{k}: {_scalar(v)}")
    return "{" + ", ".join(items) + "}"


def format_row(spec: ModelSpec) -> str:
    """The row as models.yaml writes rows: block keys in the file's order, flow maps for moe / mla / linear_attn,
    aliases as a quoted flow list, the source folded."""
    data = spec.model_dump(exclude_defaults=True)
    data.setdefault("template", "")
    data.setdefault("tie_word_embeddings", False)
    data.setdefault("mlp", spec.mlp)
    lines = []
    for key in ORDER:
        if key not in data:
            continue
        v = data[key]
        if key == "aliases":
            aliases = ", ".join(json.dumps(a, ensure_ascii=False) for a in v)
            lines.append(f"  aliases: [{aliases}]")
        elif isinstance(v, dict):
            flow = textwrap.wrap(f"  {key}: {_flow(v)}", width=118, subsequent_indent="    ", break_long_words=False,
                                 break_on_hyphens=False)
            lines += flow
        elif key == "source":
            wrapped = textwrap.wrap(str(v), width=114, break_on_hyphens=False, break_long_words=False)
            lines.append("  source: >-")
            lines += [f"    {w}" for w in wrapped]
        else:
            lines.append(f"  {key}: {_scalar(v)}")
    lines[0] = "- " + lines[0].lstrip()
    return "\n".join(lines) + "\n"


def names_of(row: dict[str, Any] | ModelSpec) -> set[str]:
    if isinstance(row, ModelSpec):
        raw = [row.id, row.name, *row.aliases]
    else:
        raw = [str(row.get("id", "")), str(row.get("name", "")), *[str(a) for a in row.get("aliases") or []]]
    return {normalize(n) for n in raw if n}


def check_new(spec: ModelSpec, rows: list[dict[str, Any]]) -> None:
    """Refuse a duplicate id, or a name or alias another row already answers to."""
    mine = names_of(spec)
    for row in rows:
        if row.get("id") == spec.id:
            raise RowError(f"{spec.id}: the id is already in the catalog")
        clash = mine & names_of(row)
        if clash:
            raise RowError(f"{spec.id}: {', '.join(sorted(clash))} already names {row.get('id')}")


def append_row(out: Path, spec: ModelSpec) -> str:
    """Append the row to `out` after the checks; returns the text written."""
    text = out.read_text(encoding="utf-8") if out.exists() else ""
    rows = yaml.safe_load(text) or [] if text else []
    check_new(spec, rows)
    row = format_row(spec)
    back = ModelSpec(**yaml.safe_load(row)[0])
    if back != spec:
        raise RowError(f"{spec.id}: the written row does not read back as the spec (a formatting bug)")
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    out.write_text(text + sep + row, encoding="utf-8")
    return row


# Fields that do not change what the engine sizes: a row with the same values elsewhere is the same architecture.
_NOT_SIZING = {"id", "name", "family", "aliases", "template", "source", "as_of", "params_published_b",
               "active_params_b", "vision_params_b", "sample_desc", "gflops_per_sample"}


def sizing_differences(a: ModelSpec, b: ModelSpec) -> list[str]:
    """The sizing fields in which two rows differ (a vision tower counts only as present or absent)."""
    out = [f"{k}: {getattr(a, k)!r} != {getattr(b, k)!r}" for k in ModelSpec.model_fields
           if k not in _NOT_SIZING and getattr(a, k) != getattr(b, k)]
    if (a.vision_params_b is None) != (b.vision_params_b is None):
        out.append("vision tower: one has it")
    return out


def _block(text: str, row_id: str) -> tuple[int, int]:
    """(start, end) of the row `row_id` in the file's text: from its '- id:' line to the next row or comment."""
    m = re.search(rf"^- id: {re.escape(row_id)}\n", text, re.MULTILINE)
    if m is None:
        raise RowError(f"no row {row_id} in the file")
    nxt = re.compile(r"^(?:- id: |# )", re.MULTILINE).search(text, m.end())
    return m.start(), nxt.start() if nxt else len(text)


def _fold(key: str, value: str) -> list[str]:
    return [f"  {key}: >-", *[f"    {w}" for w in textwrap.wrap(value, width=114, break_on_hyphens=False,
                                                                break_long_words=False)]]


def add_aliases(out: Path, row_id: str, names: list[str], cited: str) -> str:
    """Add `names` to row `row_id`'s aliases and `cited` to its source, editing only that row's lines; the whole
    file is read back through the schema. Returns the new block."""
    text = out.read_text(encoding="utf-8")
    rows = yaml.safe_load(text) or []
    target = next((r for r in rows if r.get("id") == row_id), None)
    if target is None:
        raise RowError(f"no row {row_id} in the file")
    others = [r for r in rows if r.get("id") != row_id]
    taken = set().union(*(names_of(r) for r in others)) if others else set()
    clash = sorted(n for n in names if normalize(n) in taken)
    if clash:
        raise RowError(f"{', '.join(clash)} already name another row")
    have = names_of(target)
    new = [n for n in names if normalize(n) not in have]
    start, end = _block(text, row_id)
    block = text[start:end]
    lines = block.rstrip("\n").split("\n")
    keep_tail = block[len(block.rstrip("\n")):]
    spec = ModelSpec(**target)
    aliases = [*spec.aliases, *new]
    flow = "  aliases: [" + ", ".join(json.dumps(a, ensure_ascii=False) for a in aliases) + "]"
    alias_lines = textwrap.wrap(flow, width=118, subsequent_indent="            ", break_long_words=False,
                                break_on_hyphens=False)
    out_lines: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("  aliases:"):
            while not lines[i].rstrip().endswith("]"):
                i += 1
            out_lines += alias_lines
        elif line.startswith("  source:"):
            j = i + 1
            if line.rstrip().endswith((">-", ">", "|")):
                while j < len(lines) and lines[j].startswith("    "):
                    j += 1
                value = " ".join(x.strip() for x in lines[i + 1:j])
            else:
                value = line.split(":", 1)[1].strip()
            out_lines += _fold("source", f"{value}; {cited}")
            i = j - 1
        else:
            out_lines.append(line)
            if line.startswith("  kind:") and not any(x.startswith("  aliases:") for x in lines):
                out_lines += alias_lines
        i += 1
    new_block = "\n".join(out_lines) + keep_tail
    new_text = text[:start] + new_block + text[end:]
    after = yaml.safe_load(new_text)
    if [r for r in after if r.get("id") != row_id] != others:
        raise RowError(f"{row_id}: editing the row changed another row (a formatting bug)")
    edited = ModelSpec(**next(r for r in after if r.get("id") == row_id))
    if edited.aliases != aliases or sizing_differences(edited, spec):
        raise RowError(f"{row_id}: the edited row does not read back as intended (a formatting bug)")
    out.write_text(new_text, encoding="utf-8")
    return new_block


def alias_existing(out: Path, cfg: dict[str, Any], row_id: str, *, model_id: str, source: str,
                   aliases: list[str], note: str = "") -> str:
    """`cfg` is a release of row `row_id`: add its names to that row when the dimensions agree (else refuse)."""
    rows = yaml.safe_load(out.read_text(encoding="utf-8")) or []
    target = next((r for r in rows if r.get("id") == row_id), None)
    if target is None:
        raise RowError(f"no row {row_id} in the file")
    base = ModelSpec(**target)
    mine = build_row(cfg, model_id=model_id, source=source, aliases=aliases, params_b=base.params_published_b)
    diff = sizing_differences(mine, base)
    if diff:
        raise RowError(f"{model_id} differs from {row_id} ({'; '.join(diff)}): add it as a row of its own")
    cited = f"{model_id} has the same dims ({source}{'; ' + note if note else ''})"
    return add_aliases(out, row_id, [model_id, *aliases], cited)


def _aliases(values: list[str]) -> list[str]:
    out: list[str] = []
    for v in values:
        for a in v.split("|"):
            if a.strip() and a.strip() not in out:
                out.append(a.strip())
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("config", type=Path, help="the model's config.json")
    p.add_argument("--id", required=True, dest="model_id")
    p.add_argument("--source", required=True, help='where the config is: "owner/repo:path@commit" or a stored id')
    p.add_argument("--aliases", nargs="*", default=[], help="names people type (also '|'-separated)")
    p.add_argument("--params-b", type=float, help="published parameter count, billions (else calculated)")
    p.add_argument("--active-params-b", type=float, help="MoE: published active parameters, billions")
    p.add_argument("--family")
    p.add_argument("--name")
    p.add_argument("--template", default="", help="LLaMA-Factory chat template")
    p.add_argument("--note", default="", help="appended to source (what is unverified, what differs)")
    p.add_argument("--out", type=Path, default=ROOT / "knowledge" / "models.yaml")
    p.add_argument("--dry-run", action="store_true", help="print the row, write nothing")
    p.add_argument("--alias-of", help="an existing row with the same dimensions: add the names to it instead")
    a = p.parse_args(argv)
    try:
        cfg = json.loads(a.config.read_text(encoding="utf-8"))
        if a.alias_of:
            print(alias_existing(a.out, cfg, a.alias_of, model_id=a.model_id, source=a.source,
                                 aliases=_aliases(a.aliases), note=a.note), end="")
            return 0
        spec = build_row(cfg, model_id=a.model_id, source=a.source, aliases=_aliases(a.aliases),
                         params_b=a.params_b, active_params_b=a.active_params_b, family=a.family, name=a.name,
                         template=a.template, note=a.note)
        if a.dry_run:
            check_new(spec, yaml.safe_load(a.out.read_text(encoding="utf-8")) or [] if a.out.exists() else [])
            print(format_row(spec), end="")
        else:
            print(append_row(a.out, spec), end="")
    except (OSError, ValueError, RowError) as exc:  # pydantic's ValidationError is a ValueError
        print(f"add_model: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
