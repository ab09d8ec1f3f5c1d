"""The mainland-China route of the documents: ModelScope ids (knowledge/modelscope.yaml), the clouds' PyPI mirrors,
the Hugging Face mirror and LLaMA-Factory's install routes (knowledge/mirrors.yaml), each with its source.

    route = mainland_route()                 # read once per knowledge dir
    route.modelscope_id("Qwen/Qwen2-7B")     # 'Qwen/Qwen2-7B', or None when not published there (as far as we know)
    route.pypi("tencent")                    # the PyPI mirror a launch script on that cloud installs from
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from service.documents import safe

MODELSCOPE_FILE = "modelscope.yaml"
MIRRORS_FILE = "mirrors.yaml"


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelScopeRow(_Row):
    hf: str
    modelscope: str
    source: str
    note: str = ""


class Mirror(_Row):
    url: str
    official: bool
    source: str
    note: str = ""
    note_zh: str = ""

    def says(self, lang: str) -> str:
        return self.note_zh if lang == "zh" and self.note_zh else self.note


class PypiMirror(Mirror):
    cloud: str


class ModelScopeHub(_Row):
    url: str
    source: str
    note: str = ""


class LlamaFactoryRoutes(_Row):
    pip: str
    pip_source: str
    git: str
    note: str = ""


class Mirrors(_Row):
    pypi: list[PypiMirror]
    hf_mirror: Mirror
    modelscope: ModelScopeHub
    llamafactory: LlamaFactoryRoutes


class ModelScopeFile(_Row):
    note: str = ""
    models: list[ModelScopeRow] = Field(default_factory=list)


class MainlandRoute(_Row):
    mirrors: Mirrors
    models: dict[str, ModelScopeRow]

    def modelscope_id(self, hf_repo: str | None) -> str | None:
        row = self.models.get(hf_repo or "")
        return row.modelscope if row is not None else None

    def pypi(self, cloud: str) -> PypiMirror | None:
        return next((m for m in self.mirrors.pypi if m.cloud == cloud), None)


def _load(path: Path) -> object:
    from service.yamlio import load_yaml

    return load_yaml(path.read_text(encoding="utf-8"))


@cache
def _read(knowledge_dir: Path) -> MainlandRoute:
    mirrors = Mirrors.model_validate(_load(knowledge_dir / MIRRORS_FILE))
    rows = ModelScopeFile.model_validate(_load(knowledge_dir / MODELSCOPE_FILE)).models
    for row in rows:  # these ids land in launch.sh: the same rule as any model id there
        safe.model_id(row.hf, f"{MODELSCOPE_FILE}: hf")
        safe.model_id(row.modelscope, f"{MODELSCOPE_FILE}: modelscope")
    return MainlandRoute(mirrors=mirrors, models={r.hf: r for r in rows})


def mainland_route(knowledge_dir: Path | None = None) -> MainlandRoute:
    if knowledge_dir is None:
        from service.settings import get_settings

        knowledge_dir = get_settings().knowledge_dir
    return _read(knowledge_dir.resolve())


def route_bullets(route: MainlandRoute, cloud: str, repo: str, lang: str, model_dir: str = "") -> list[str]:
    """The mainland route as a reader reads it (README, request document): where the model, the Python packages and
    LLaMA-Factory come from, each choice with its source. Markdown; `repo` is the Hugging Face id ('' unknown)."""
    zh = lang == "zh"
    ms = route.models.get(repo)
    pypi = route.pypi(cloud)
    mirror = route.mirrors.hf_mirror
    where = f" → `{model_dir}`" if model_dir else ""
    if ms is not None:
        model = (f"模型：`HUB=modelscope`（默认）从 ModelScope 下载 `{ms.modelscope}`{where}（[来源]({ms.source})）" if zh
                 else f"Model: `HUB=modelscope` (the default) downloads `{ms.modelscope}` from ModelScope{where} "
                      f"([source]({ms.source}))")
    elif repo:
        model = ("模型：ModelScope 上没有已知的对应 ID，默认 `HUB=hf-mirror`" if zh else
                 "Model: no ModelScope id is known for it, so the default is `HUB=hf-mirror`")
    else:
        model = ("模型：没有已知的仓库 ID，请把权重放到本机目录，运行时设 `MODEL_DIR=/path/to/weights`（`HUB=local`）" if zh
                 else "Model: no repo id is known: put the weights on the machine and run with "
                      "`MODEL_DIR=/path/to/weights` (`HUB=local`)")
    shown = f"`{repo}`" if repo else ("模型" if zh else "the model")
    out = [model,
           (f"`HUB=hf-mirror`：经 `HF_ENDPOINT={mirror.url}` 下载 Hugging Face 上的 {shown}。{mirror.says(lang)}" if zh
            else f"`HUB=hf-mirror`: Hugging Face's {shown} through `HF_ENDPOINT={mirror.url}`. {mirror.says(lang)}"),
           ("`HUB=hf`：直连 huggingface.co（境外）；`HUB=local`：用 `MODEL_DIR` 里已有的权重" if zh else
            "`HUB=hf`: huggingface.co itself (outside mainland China); `HUB=local`: the weights already in `MODEL_DIR`")]
    if pypi is not None:
        out.append(f"Python 包：`PIP_INDEX={pypi.url}`。{pypi.says(lang)}（[来源]({pypi.source})）" if zh else
                   f"Python packages: `PIP_INDEX={pypi.url}`. {pypi.says(lang)} ([source]({pypi.source}))")
    lf = route.mirrors.llamafactory
    out.append(f"LLaMA-Factory：缺少 `llamafactory-cli` 时，`LF_SOURCE=pip`（默认）经上面的镜像安装 PyPI 上的 `{lf.pip}`"
               f"（[来源]({lf.pip_source})），不需要访问 GitHub；`LF_SOURCE=git` 从 `LF_GIT_URL`（默认 GitHub）克隆" if zh
               else f"LLaMA-Factory: when `llamafactory-cli` is missing, `LF_SOURCE=pip` (the default) installs `{lf.pip}` "
                    f"from PyPI through the mirror above ([source]({lf.pip_source})), with no GitHub needed; "
                    f"`LF_SOURCE=git` clones `LF_GIT_URL` (GitHub by default)")
    return out
