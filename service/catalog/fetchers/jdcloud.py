"""JD Cloud VM fetcher (official SDK `jdcloud-sdk`, vm v1): describeInstanceTypes per region.

It gives each type's GPU model and count and per-AZ stock (`state[].inStock`), and no price. JD's only quote API,
billing `calculateTotalPrice`, needs per-item `formula` keys for a VM type that JD does not document
(cloud-apis.md §2.3), so prices are not synced: JD price rows stay as they are and the diff says so.
The SDK's default logger prints URLs, signing headers and bodies to stdout; a silent logger is always passed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pydantic import ValidationError

from service.catalog.fetchers.base import (
    Backoff,
    CredentialsError,
    RegionFetchError,
    RegionResult,
    Skipped,
    ThrottledError,
    call_with_backoff,
    redact,
)
from service.catalog.fetchers.gpu_names import resolve_gpu
from service.catalog.fetchers.regions import JD_DEFAULT_REGIONS
from service.catalog.schema import Billing, Cloud, InstanceRow, SaleStatus

DEFAULT_ENDPOINT = "vm.jdcloud-api.com"
INSTANCE_SOURCE = "api:describeInstanceTypes"
PRICE_NOTE = (
    "JD prices not synced: billing calculateTotalPrice needs VM formula keys that JD does not document "
    "(cloud-apis.md §2.3); existing JD prices are kept unchanged"
)
_AUTH_STATUSES = ("UNAUTHENTICATED", "HTTP_FORBIDDEN", "PERMISSION_DENIED")


@dataclass(frozen=True)
class JdConfig:
    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)
    endpoint: str = DEFAULT_ENDPOINT  # host[:port]
    scheme: str = "https"
    timeout_s: int = 30


def _silent_logger() -> Any:
    from jdcloud_sdk.core.logger import Logger

    class _Silent(Logger):  # type: ignore[misc]
        def log(self, level: int, message: object) -> None:
            return None

    return _Silent(0)


def _count(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value) if value > 0 else 0.0


def _local_disk(disks: Any) -> str:
    if not isinstance(disks, list):
        return ""
    sizes: dict[tuple[float, str], int] = {}
    for d in disks:
        if isinstance(d, Mapping) and (size := _count(d.get("diskSizeGB"))):
            key = (size, str(d.get("diskType") or ""))
            sizes[key] = sizes.get(key, 0) + 1
    return "; ".join(f"{n} × {size:g} GiB {kind}".strip() for (size, kind), n in sizes.items())


def _row(raw: Mapping[str, Any], status: SaleStatus | None, today: date, hints: Mapping[str, str]) -> InstanceRow:
    itype = str(raw.get("instanceType") or "")
    family = str(raw.get("family") or itype.rsplit(".", 1)[0])
    gpu = raw.get("gpu")
    model = str(gpu.get("model") or "") if isinstance(gpu, Mapping) else ""
    found = resolve_gpu([model], None, hints.get(itype) or hints.get(family))
    if found.gpu_id is None:
        raise ValueError(found.reason)
    count = _count(gpu.get("number")) if isinstance(gpu, Mapping) else 0.0
    states = [s for s in raw.get("state") or [] if isinstance(s, Mapping) and s.get("az")]
    if status is None:
        if not states:
            status = "unknown"
        else:
            status = "on_sale" if any(s.get("inStock") is True for s in states) else "sold_out"
    rdma = raw.get("rdma")
    return InstanceRow(
        cloud="jdcloud",
        family=family,
        instance_type=itype,
        gpu=found.gpu_id,
        gpu_count=count,
        gpu_memory_gib=round(found.card_memory_gib * min(count, 1.0), 2),
        vcpus=int(_count(raw.get("cpu"))),
        memory_gib=round(_count(raw.get("memoryMB")) / 1024, 2),
        rdma=isinstance(rdma, Mapping) and _count(rdma.get("count")) > 0,
        local_disk=_local_disk(raw.get("localDisks")),
        regions=";".join(sorted(str(s["az"]) for s in states)),
        sale_status=status,
        source=INSTANCE_SOURCE,
        as_of=today,
        confidence="official",
    )


def parse_region(region: str, result: Mapping[str, Any] | None, today: date, gpu_hints: Mapping[str, str]) -> RegionResult:
    """GPU types (those with `gpu.number` > 0) of one region's describeInstanceTypes `result`."""
    instances: dict[str, InstanceRow] = {}
    skipped: list[Skipped] = []
    # specificInstanceTypes need a ticket to enable: our 'allowlist'.
    lists: Sequence[tuple[str, SaleStatus | None]] = (("instanceTypes", None), ("specificInstanceTypes", "allowlist"))
    for key, status in lists:
        items = (result or {}).get(key) or []
        for raw in items if isinstance(items, list) else []:
            if not isinstance(raw, Mapping):
                skipped.append(Skipped("jdcloud", region, "?", f"{key} item is not an object"))
                continue
            gpu = raw.get("gpu")
            if not isinstance(gpu, Mapping) or not _count(gpu.get("number")):
                continue  # not a GPU type (or the gpu slot was renamed away, cloud-apis.md §2.2)
            itype = str(raw.get("instanceType") or "")
            if not itype:
                skipped.append(Skipped("jdcloud", region, "?", "no instanceType"))
                continue
            if itype in instances:
                continue
            try:
                instances[itype] = _row(raw, status, today, gpu_hints)
            except ValidationError as exc:
                reason = "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors())
                skipped.append(Skipped("jdcloud", region, itype, reason))
            except ValueError as exc:
                skipped.append(Skipped("jdcloud", region, itype, str(exc)))
    rows = tuple(instances[k] for k in sorted(instances))
    return RegionResult("jdcloud", region, rows, (), tuple(skipped))


class JdFetcher:
    """Reads GPU instance types and per-AZ stock for one JD region at a time."""

    cloud: Cloud = "jdcloud"
    default_regions: tuple[str, ...] = JD_DEFAULT_REGIONS
    priced_billings: tuple[Billing, ...] = ()
    price_note: str = PRICE_NOTE

    def __init__(
        self,
        config: JdConfig,
        *,
        today: date,
        gpu_hints: Mapping[str, str] | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        if not config.access_key.strip() or not config.secret_key.strip():
            raise CredentialsError("JD Cloud keys are empty. Set JDCLOUD_ACCESS_KEY and JDCLOUD_SECRET_KEY.")
        self._config = config
        self._today = today
        self._hints = dict(gpu_hints or {})
        self._backoff = backoff or Backoff()
        self._secrets = (config.access_key, config.secret_key)

    def calls_per_region(self) -> int:
        return 1

    def _send(self, region: str) -> Mapping[str, Any] | None:
        import requests
        from jdcloud_sdk.core.config import Config
        from jdcloud_sdk.core.credential import Credential
        from jdcloud_sdk.services.vm.apis.DescribeInstanceTypesRequest import (
            DescribeInstanceTypesParameters,
            DescribeInstanceTypesRequest,
        )
        from jdcloud_sdk.services.vm.client.VmClient import VmClient

        client = VmClient(
            Credential(self._config.access_key, self._config.secret_key),
            Config(self._config.endpoint, self._config.scheme, self._config.timeout_s),
            _silent_logger(),
        )
        try:
            resp = client.send(DescribeInstanceTypesRequest(DescribeInstanceTypesParameters(region)))
        except (requests.RequestException, ValueError) as exc:  # network failure, or a body that is not JSON
            raise RegionFetchError(
                f"JD describeInstanceTypes in {region} failed: {redact(str(exc), self._secrets)}", "Network"
            ) from None
        err = resp.error
        if err is not None:
            status, code = str(err.status or ""), err.code
            text = redact(f"HTTP {code} {status}: {err.message}", self._secrets)
            if status == "RATE_LIMIT" or (code == 429 and status != "QUOTA_EXCEEDED"):
                raise ThrottledError(text)
            if status in _AUTH_STATUSES or code in (401, 403):
                raise CredentialsError(
                    f"JD Cloud rejected the keys ({text}). Check JDCLOUD_ACCESS_KEY / JDCLOUD_SECRET_KEY and that "
                    "the key may read VM instance types (a read-only VM policy)."
                )
            raise RegionFetchError(f"JD describeInstanceTypes in {region} failed: {text}", status)
        result = resp.result
        return result if isinstance(result, Mapping) else None  # the SDK turns an empty result into None

    def fetch_region(self, region: str, on_call: Callable[[], None] = lambda: None) -> RegionResult:
        result = call_with_backoff(
            lambda: self._send(region),
            lambda exc: isinstance(exc, ThrottledError),
            self._backoff,
            f"JD describeInstanceTypes in {region}",
        )
        on_call()
        return parse_region(region, result, self._today, self._hints)
