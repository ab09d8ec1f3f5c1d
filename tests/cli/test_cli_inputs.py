"""Bad input gets one clear line naming the fix and exit code 2; private configs and price sheets are honoured."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import KNOWLEDGE_DIR, REPO_ROOT

PLAN = ("plan", "--model", "Qwen2-7B")


@pytest.mark.parametrize(
    ("args", "must_say"),
    [
        # unknown model: says what was wrong, suggests, and how to size an unlisted one
        (("estimate", "--model", "Qwen2-7", "--gpu", "A100"), ["Unknown model 'Qwen2-7'", "Did you mean",
                                                               "config.json"]),
        # unknown GPU: 'A1OO' with a letter O
        (("estimate", "--model", "Qwen2-7B", "--gpu", "A1OO"), ["Unknown GPU 'A1OO'", "Did you mean"]),
        # negative budget
        ((*PLAN, "--budget-cny", "-5"), ["budget_cny", "greater than 0", "-5"]),
        # absurd numbers
        ((*PLAN, "--samples", "-5"), ["samples", "greater than 0"]),
        ((*PLAN, "--seq-len", "0"), ["seq_len", "greater than or equal to 16"]),
        (("estimate", "--model", "Qwen2-7B", "--gpu", "T4", "--samples", "-5"), ["samples"]),
        # QLoRA 3-bit does not exist
        ((*PLAN, "--method", "qlora", "--bits", "3"), ["--bits 3", "--bits 4 or --bits 8"]),
        # clouds outside the catalog
        ((*PLAN, "--cloud", "aws"), ["'tencent' or 'jdcloud'", "aws"]),
        # quant bits with a full fine-tune is a contradiction
        ((*PLAN, "--method", "full", "--bits", "4"), ["only applies to method qlora"]),
    ],
)
def test_bad_input_is_one_line_exit_2(cli, args: tuple[str, ...], must_say: list[str]) -> None:
    result = cli(*args, "--json")
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    for text in must_say:
        assert text in lines[0]
    assert "Traceback" not in result.output


def test_hf_config_path_sizes_a_private_model(cli, tmp_path: Path) -> None:
    # Llama-2-7B's dimensions under another name: counted from the file, 6,738,415,616 parameters.
    cfg = {"model_type": "llama", "_name_or_path": "acme/private-7b", "hidden_size": 4096, "num_hidden_layers": 32,
           "num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000,
           "max_position_embeddings": 4096}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    result = cli("estimate", "--model", str(path), "--gpu", "A100 80G", "--method", "qlora", "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["model"]["name"] == "acme/private-7b"
    assert out["model"]["params_counted_b"] == pytest.approx(6.738, abs=0.001)
    assert any(str(path) in a for a in out["assumptions"])


def _price_sheet(path: Path, price: str) -> Path:
    with (KNOWLEDGE_DIR / "catalog" / "prices.csv").open(encoding="utf-8", newline="") as fh:
        header = next(csv.reader(fh))
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header)
        writer.writeheader()
        writer.writerow({"instance_type": "GT4.4XLARGE96", "billing": "on_demand", "price_cny": price,
                         "unit": "hour", "source": "my negotiated quote", "as_of": "2026-11-01",
                         "confidence": "official"})
    return path


def test_prices_file_overrides_a_shipped_price(cli, tmp_path: Path) -> None:
    sheet = _price_sheet(tmp_path / "prices.csv", "1.23")
    args = ("plan", "--model", "Qwen2-7B", "--gpu-include", "A100", "--gpu-count", "1", "--billing", "on_demand",
            "--json")
    shipped = json.loads(cli(*args).stdout)
    mine = json.loads(cli(*args, "--prices", str(sheet)).stdout)

    def gt4(out: dict[str, object]) -> dict[str, object]:
        return next(c for c in out["candidates"] if c["instance_type"] == "GT4.4XLARGE96")  # type: ignore[attr-defined,index]

    assert gt4(shipped)["price"]["price_cny"] != 1.23  # type: ignore[index]
    assert gt4(mine)["price"]["price_cny"] == 1.23  # type: ignore[index]
    assert gt4(mine)["price"]["source"] == "my negotiated quote"  # type: ignore[index]
    hours = gt4(mine)["training_hours"]
    assert gt4(mine)["cost_cny"]["on_demand"]["total_cny"] == pytest.approx(1.23 * hours, rel=0.01)  # type: ignore[index,operator]


def test_catalog_validate_names_file_line_and_field(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from service.settings import get_settings

    knowledge = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE_DIR / "catalog", knowledge / "catalog")
    shutil.copy(KNOWLEDGE_DIR / "models.yaml", knowledge / "models.yaml")
    instances = knowledge / "catalog" / "instances.csv"
    lines = instances.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].replace(",2,24,56,", ",2,24,many,", 1)  # PNV4.14XLARGE232: vcpus 56 -> "many"
    assert ",many," in lines[2]
    instances.write_text("".join(lines), encoding="utf-8")
    monkeypatch.setenv("GPU_ADVISOR_KNOWLEDGE_DIR", str(knowledge))
    get_settings.cache_clear()
    result = cli("catalog", "validate")
    assert result.exit_code == 2
    assert f"{instances}:line 3: field 'vcpus'" in result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "--model", "Qwen2-7B", "--samples", "1000", "--json"],
        ["estimate", "--model", "Qwen2-7B", "--gpu", "A10", "--json"],
    ],
)
def test_engine_commands_do_not_import_heavy_libraries(argv: list[str], tmp_path: Path) -> None:
    # plan and estimate must start fast: no torch, chromadb or langchain (checked in a fresh interpreter).
    code = (
        "import sys, io, contextlib\n"
        f"sys.argv = ['gpu-advisor', *{argv!r}]\n"
        "from service.cli import main\n"
        "buf = io.StringIO()\n"
        "try:\n"
        "    with contextlib.redirect_stdout(buf):\n"
        "        main()\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "assert buf.getvalue().lstrip().startswith('{')\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'chromadb', 'langchain',\n"
        "               'langchain_core', 'langgraph', 'sentence_transformers', 'transformers'))\n"
        "print(','.join(heavy))\n"
    )
    env = {"GPU_ADVISOR_DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""
