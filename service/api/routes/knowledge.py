"""GET /knowledge/{path}: a guide page or a generated catalog page as Markdown, so citations can link to it.

Only `guide/<file>.md` (knowledge/guide) and `catalog/<file>.md` (the generated catalog documents) are served;
anything else, including paths that climb out of those folders, is a 404.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from service.api.deps import SettingsDep
from service.edge.errors import NotFoundError
from service.edge.ids import quote
from service.settings import Settings

router = APIRouter(tags=["knowledge"])


def _roots(settings: Settings) -> dict[str, Path]:
    return {"guide": settings.knowledge_dir / "guide", "catalog": settings.data_dir / "catalog_docs"}


def resolve_knowledge_path(settings: Settings, path: str) -> Path:
    """The file `path` names, or NotFoundError; never a file outside the two allowed folders."""
    missing = NotFoundError(
        f"No knowledge page '{quote(path)}'.", "Use a citation's path, e.g. guide/03-gpu-specs-precision.en.md."
    )
    head, _, rest = path.partition("/")
    root = _roots(settings).get(head)
    if root is None or not rest or not rest.endswith(".md") or "\\" in rest or "\x00" in rest or len(path) > 512:
        raise missing
    root = root.resolve()
    try:
        target = (root / rest).resolve()
        found = target.is_relative_to(root) and target.is_file()
    except OSError:  # a name too long for the file system, say
        found = False
    if not found:
        raise missing
    return target


@router.get("/knowledge/{path:path}", response_class=PlainTextResponse,
            responses={200: {"content": {"text/markdown": {}}}})
def knowledge_page(path: str, settings: SettingsDep) -> PlainTextResponse:
    """A guide or catalog page as Markdown (the target of citation links)."""
    target = resolve_knowledge_path(settings, path)
    return PlainTextResponse(target.read_text(encoding="utf-8"), media_type="text/markdown; charset=utf-8")
