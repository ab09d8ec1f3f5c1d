"""Dependencies as `Annotated` aliases: route signatures read like plain typed functions."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from service.api.owner import OWNER_COOKIE, owner_token
from service.assistant.types import AssistantProtocol
from service.catalog.loader import Catalog
from service.edge.auth import check_api_key
from service.edge.ids import SESSION_ID_MAX, SESSION_ID_PATTERN
from service.edge.resources import Resources, RetrieverLike
from service.settings import Settings

_bearer = HTTPBearer(auto_error=False, description="Required when the server sets GPU_ADVISOR_API_KEY.")


def get_resources(request: Request) -> Resources:
    resources: Resources = request.app.state.resources
    return resources


ResourcesDep = Annotated[Resources, Depends(get_resources)]


def get_settings(resources: ResourcesDep) -> Settings:
    return resources.settings


def get_catalog(resources: ResourcesDep) -> Catalog:
    return resources.catalog.get()


def get_retriever(resources: ResourcesDep) -> RetrieverLike:
    return resources.retriever.get()


def get_assistant(resources: ResourcesDep) -> AssistantProtocol:
    return resources.assistant.get()


SessionIdPath = Annotated[str, Path(max_length=SESSION_ID_MAX, pattern=SESSION_ID_PATTERN,
                                     description="a session id from POST /v1/chat or GET /v1/sessions")]
SettingsDep = Annotated[Settings, Depends(get_settings)]
CatalogDep = Annotated[Catalog, Depends(get_catalog)]
RetrieverDep = Annotated[RetrieverLike, Depends(get_retriever)]
AssistantDep = Annotated[AssistantProtocol, Depends(get_assistant)]


def get_owner(
    request: Request,
    settings: SettingsDep,
    x_client_id: Annotated[str | None, Header(max_length=256, description="your client id: sessions you create "
                                              "are visible only with the same id (the page uses a cookie)")] = None,
) -> str:
    """The caller's owner token (service.api.owner): whose sessions it may list, read, continue, rename, delete."""
    return owner_token(x_client_id, request.cookies.get(OWNER_COOKIE), settings.api_key, settings.api_key_id)


OwnerDep = Annotated[str, Depends(get_owner)]


def get_request_id(
    idempotency_key: Annotated[str | None, Header(max_length=128, description="a retry with the same key is "
                                                  "answered once (the stored answer is returned)")] = None,
    x_request_id: Annotated[str | None, Header(max_length=128, description="same as Idempotency-Key")] = None,
) -> str | None:
    value = (idempotency_key or x_request_id or "").strip()
    return value or None


RequestIdDep = Annotated[str | None, Depends(get_request_id)]


def require_api_key(
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """When settings.api_key is set, every /v1 route needs `Authorization: Bearer <key>`."""
    check_api_key(settings, credentials.credentials if credentials is not None else None)
