"""`gpu-advisor catalog sync`: refresh the catalog from Tencent Cloud's and JD Cloud's official APIs.

Wiring: `register(catalog_app)` adds the command to the `catalog` Typer group. Keys come from the environment
(TENCENTCLOUD_SECRET_ID / TENCENTCLOUD_SECRET_KEY, JDCLOUD_ACCESS_KEY / JDCLOUD_SECRET_KEY) and are never printed.
GPU_ADVISOR_TENCENT_ENDPOINT / GPU_ADVISOR_JD_ENDPOINT point the SDKs elsewhere (`http://127.0.0.1:8765` for a
stub, a private endpoint). Exit codes: 0 synced; 1 some regions failed (the others were written); 2 bad
credentials, bad arguments or an invalid catalog (nothing written). Docs: docs/catalog-sync.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from datetime import date
from enum import StrEnum
from typing import Annotated
from urllib.parse import urlsplit

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from service.catalog.fetchers.base import Backoff, CredentialsError, RegionFetcher
from service.catalog.fetchers.regions import cloud_of_region
from service.catalog.schema import Cloud
from service.catalog.sync import Base, SyncTarget, apply_sync, fetch_all, load_base
from service.catalog.sync_diff import diff_to_json, render_diff
from service.errors import AdvisorError

ENV_TENCENT_ID = "TENCENTCLOUD_SECRET_ID"
ENV_TENCENT_KEY = "TENCENTCLOUD_SECRET_KEY"
ENV_JD_ACCESS = "JDCLOUD_ACCESS_KEY"
ENV_JD_SECRET = "JDCLOUD_SECRET_KEY"
ENV_TENCENT_ENDPOINT = "GPU_ADVISOR_TENCENT_ENDPOINT"
ENV_JD_ENDPOINT = "GPU_ADVISOR_JD_ENDPOINT"


class CloudName(StrEnum):
    tencent = "tencent"
    jdcloud = "jdcloud"


class UsageError(AdvisorError):
    code = "usage"


class _RichProgress:
    """One bar per region, on stderr so that --json output stays clean."""

    def __init__(self, progress: Progress) -> None:
        self._p = progress
        self._task: TaskID | None = None
        self._label = ""
        self._calls = 0

    def region_started(self, cloud: str, region: str, calls: int) -> None:
        self._label, self._calls = f"{cloud} {region}", calls
        self._task = self._p.add_task(self._label, total=calls)

    def call_done(self) -> None:
        if self._task is not None:
            self._p.advance(self._task)

    def region_done(self, ok: bool) -> None:
        if self._task is not None:
            mark = "[green]ok[/green]" if ok else "[red]failed[/red]"
            self._p.update(self._task, description=f"{self._label} {mark}", completed=self._calls)


def _endpoint(value: str, default_host: str) -> tuple[str, str]:
    """(host[:port], scheme) from an override such as 'http://127.0.0.1:8765' or 'cvm.ap-shanghai.…'."""
    if not value.strip():
        return default_host, "https"
    parts = urlsplit(value.strip() if "://" in value else "https://" + value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"Endpoint override '{value}' is not host[:port] or http(s)://host[:port].")
    return parts.netloc, parts.scheme


def plan_regions(clouds: Sequence[Cloud], regions: Sequence[str]) -> dict[Cloud, list[str]]:
    """Which regions each cloud syncs ([] = its defaults). A region belongs to the cloud its id names."""
    chosen: list[Cloud] = list(dict.fromkeys(clouds)) or ["tencent", "jdcloud"]
    if not regions:
        return {c: [] for c in chosen}
    by_cloud: dict[Cloud, list[str]] = {}
    for r in dict.fromkeys(regions):
        by_cloud.setdefault(cloud_of_region(r), []).append(r)
    for c in by_cloud:
        if c not in chosen:
            raise UsageError(f"--region {', '.join(by_cloud[c])} belongs to {c}, which --cloud did not select.")
    if clouds:
        missing = [c for c in chosen if c not in by_cloud]
        if missing:
            raise UsageError(f"No --region given for {', '.join(missing)} (JD regions start with cn-, "
                             "Tencent regions with ap-, na-, eu- or sa-).")
    return {c: by_cloud[c] for c in chosen if c in by_cloud}


def build_fetchers(
    plan: Mapping[Cloud, Sequence[str]], env: Mapping[str, str], base: Base, today: date, backoff: Backoff | None
) -> list[RegionFetcher]:
    """Fetchers for the planned clouds; CredentialsError when a cloud's keys are not set."""
    fetchers: list[RegionFetcher] = []
    try:
        if "tencent" in plan:
            from service.catalog.fetchers.tencent import DEFAULT_ENDPOINT as TC_HOST
            from service.catalog.fetchers.tencent import TencentConfig, TencentFetcher

            sid, skey = env.get(ENV_TENCENT_ID, ""), env.get(ENV_TENCENT_KEY, "")
            if not sid or not skey:
                raise CredentialsError(f"Tencent Cloud keys are not set: export {ENV_TENCENT_ID} and {ENV_TENCENT_KEY}.")
            host, scheme = _endpoint(env.get(ENV_TENCENT_ENDPOINT, ""), TC_HOST)
            fetchers.append(TencentFetcher(TencentConfig(sid, skey, host, scheme), today=today,
                                           gpu_hints=base.gpu_hints("tencent"), backoff=backoff))
        if "jdcloud" in plan:
            from service.catalog.fetchers.jdcloud import DEFAULT_ENDPOINT as JD_HOST
            from service.catalog.fetchers.jdcloud import JdConfig, JdFetcher

            ak, sk = env.get(ENV_JD_ACCESS, ""), env.get(ENV_JD_SECRET, "")
            if not ak or not sk:
                raise CredentialsError(f"JD Cloud keys are not set: export {ENV_JD_ACCESS} and {ENV_JD_SECRET}.")
            host, scheme = _endpoint(env.get(ENV_JD_ENDPOINT, ""), JD_HOST)
            fetchers.append(JdFetcher(JdConfig(ak, sk, host, scheme), today=today,
                                      gpu_hints=base.gpu_hints("jdcloud"), backoff=backoff))
    except ImportError as exc:
        raise UsageError(f"The cloud SDKs are not installed ({exc.name}). Run: pip install '.[sync]'") from None
    return fetchers


def run_sync(
    clouds: Sequence[Cloud],
    regions: Sequence[str],
    *,
    target: SyncTarget,
    json_output: bool = False,
    env: Mapping[str, str] | None = None,
    out: Console | None = None,
    err: Console | None = None,
    backoff: Backoff | None = None,
    today: date | None = None,
) -> int:
    """The whole command; returns the exit code. Output: the diff on `out`, progress and errors on `err`."""
    out = out or Console()
    err = err or Console(stderr=True)
    try:
        plan = plan_regions(clouds, regions)
        base = load_base(target)
        fetchers = build_fetchers(plan, os.environ if env is None else env, base, today or date.today(), backoff)
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err,
                      disable=not err.is_terminal) as bars:
            run = fetch_all(fetchers, plan, _RichProgress(bars))
        diff = apply_sync(base, run, target)
    except CredentialsError as exc:
        return _fail(err, out, json_output, "credentials", f"{exc} Nothing was written.")
    except AdvisorError as exc:
        return _fail(err, out, json_output, exc.code, str(exc))
    if json_output:
        out.file.write(json.dumps(diff_to_json(diff), ensure_ascii=False, indent=2) + "\n")
    else:
        render_diff(diff, out)
    return 1 if diff.failures else 0


def _fail(err: Console, out: Console, json_output: bool, code: str, message: str) -> int:
    err.print(f"[red]error[/red]: {message}", markup=True, highlight=False)
    if json_output:
        out.file.write(json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False) + "\n")
    return 2


def register(catalog_app: typer.Typer) -> None:
    """Add `sync` to the `catalog` command group."""

    @catalog_app.command("sync")
    def sync(
        cloud: Annotated[list[CloudName] | None, typer.Option("--cloud", help="tencent | jdcloud; repeat for both (default: both)")] = None,
        region: Annotated[list[str] | None, typer.Option("--region", help="e.g. ap-guangzhou, cn-north-1; repeatable (default: each cloud's main regions)")] = None,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="fetch and show the diff; write nothing")] = False,
        write_knowledge: Annotated[bool, typer.Option("--write-knowledge", help="update knowledge/catalog/*.csv instead of the data-dir overlay")] = False,
        json_output: Annotated[bool, typer.Option("--json", help="print the diff as JSON")] = False,
    ) -> None:
        """Refresh instance types, stock and prices from the clouds' official APIs (read-only keys)."""
        from service.settings import get_settings

        s = get_settings()
        target = SyncTarget(s.knowledge_dir, s.catalog_overlay_dir, write_knowledge=write_knowledge, dry_run=dry_run)
        clouds: list[Cloud] = ["tencent" if c is CloudName.tencent else "jdcloud" for c in cloud or []]
        code = run_sync(clouds, region or [], target=target, json_output=json_output)
        raise typer.Exit(code)
