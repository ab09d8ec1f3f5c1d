"""Tencent Cloud CVM fetcher (official SDK `tencentcloud-sdk-python-cvm`, API version 2017-03-12).

Per region: DescribeInstanceTypeConfigs once (GPU model and memory per type) and DescribeZoneInstanceConfigInfos
once per charge type (POSTPAID_BY_HOUR, PREPAID, SPOTPAID): every zone's types, stock and price. Read-only
actions; a key with QcloudCVMReadOnlyAccess is enough. The SDK is imported when a client is built, not at import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from service.catalog.fetchers.base import (
    Backoff,
    CredentialsError,
    RegionFetchError,
    RegionResult,
    call_with_backoff,
    quiet_logger,
    redact,
)
from service.catalog.fetchers.regions import TENCENT_DEFAULT_REGIONS
from service.catalog.fetchers.tencent_rows import CHARGE_TYPES, parse_region
from service.catalog.schema import Billing, Cloud

API_VERSION = "2017-03-12"
DEFAULT_ENDPOINT = "cvm.tencentcloudapi.com"
# AuthFailure.* (bad or expired key, signature), UnauthorizedOperation (CAM policy lacks the action).
_AUTH_PREFIXES = ("AuthFailure", "UnauthorizedOperation", "InvalidCredential")
_NETWORK_CODES = ("ClientNetworkError", "ServerNetworkError")
# The SDK's logger writes whole requests (Authorization header with the SecretId) at DEBUG.
SDK_LOGGER = "tencentcloud_sdk_common"


@dataclass(frozen=True)
class TencentConfig:
    secret_id: str = field(repr=False)
    secret_key: str = field(repr=False)
    endpoint: str = DEFAULT_ENDPOINT  # host[:port]
    scheme: str = "https"
    timeout_s: int = 30
    language: str = "en-US"


class TencentApiError(Exception):
    def __init__(self, code: str, message: str, request_id: str = "") -> None:
        super().__init__(f"{code}: {message}" + (f" (RequestId {request_id})" if request_id else ""))
        self.code = code


def _is_throttled(exc: Exception) -> bool:
    return isinstance(exc, TencentApiError) and exc.code.startswith("RequestLimitExceeded")


class TencentFetcher:
    """Reads GPU instance types and prices for one Tencent region at a time."""

    cloud: Cloud = "tencent"
    default_regions: tuple[str, ...] = TENCENT_DEFAULT_REGIONS
    priced_billings: tuple[Billing, ...] = tuple(b for _, b in CHARGE_TYPES)
    price_note: str = ""

    def __init__(
        self,
        config: TencentConfig,
        *,
        today: date,
        gpu_hints: Mapping[str, str] | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self._config = config
        self._today = today
        self._hints = dict(gpu_hints or {})
        self._backoff = backoff or Backoff()
        self._secrets = (config.secret_id, config.secret_key)

    def calls_per_region(self) -> int:
        return 1 + len(CHARGE_TYPES)

    def _client(self, region: str) -> Any:
        from tencentcloud.common.credential import Credential
        from tencentcloud.common.exception.tencent_cloud_sdk_exception import TencentCloudSDKException
        from tencentcloud.common.profile.client_profile import ClientProfile
        from tencentcloud.common.profile.http_profile import HttpProfile
        from tencentcloud.cvm.v20170312.cvm_client import CvmClient

        try:
            cred = Credential(self._config.secret_id, self._config.secret_key)
        except TencentCloudSDKException as exc:
            raise CredentialsError(
                f"Tencent Cloud keys are unusable: {exc.get_message()}. Set TENCENTCLOUD_SECRET_ID and "
                "TENCENTCLOUD_SECRET_KEY to a CAM key (no spaces)."
            ) from None
        http = HttpProfile(
            protocol=self._config.scheme, endpoint=self._config.endpoint, reqTimeout=self._config.timeout_s
        )
        return CvmClient(cred, region, ClientProfile(httpProfile=http, language=self._config.language))

    def _call(self, client: Any, action: str, params: dict[str, Any], region: str) -> dict[str, Any]:
        from tencentcloud.common.exception.tencent_cloud_sdk_exception import TencentCloudSDKException

        def once() -> dict[str, Any]:
            try:
                with quiet_logger(SDK_LOGGER):
                    body = client.call_json(action, params)
            except TencentCloudSDKException as exc:
                raise TencentApiError(
                    str(exc.get_code()), str(exc.get_message()), str(exc.get_request_id() or "")
                ) from None
            except ValueError as exc:  # a body that is not JSON
                raise TencentApiError("InvalidResponse", f"not JSON: {exc}") from None
            resp = body.get("Response") if isinstance(body, dict) else None
            if not isinstance(resp, dict):
                raise TencentApiError("InvalidResponse", "no 'Response' object in the body")
            # The SDK only raises for errors sent as exactly 'application/json'; check the body as well.
            err = resp.get("Error")
            if isinstance(err, dict):
                raise TencentApiError(str(err.get("Code", "")), str(err.get("Message", "")), str(resp.get("RequestId", "")))
            return resp

        try:
            return call_with_backoff(once, _is_throttled, self._backoff, f"Tencent {action} in {region}")
        except TencentApiError as exc:
            message = redact(str(exc), self._secrets)
            if exc.code.startswith(_AUTH_PREFIXES):
                raise CredentialsError(
                    f"Tencent Cloud rejected the keys ({message}). Check TENCENTCLOUD_SECRET_ID / "
                    "TENCENTCLOUD_SECRET_KEY and that the key's CAM policy allows read-only CVM access "
                    "(QcloudCVMReadOnlyAccess)."
                ) from None
            raise RegionFetchError(f"Tencent {action} in {region} failed: {message}", exc.code) from None

    def fetch_region(self, region: str, on_call: Callable[[], None] = lambda: None) -> RegionResult:
        client = self._client(region)
        notes: list[str] = []
        configs: list[Any] = []
        try:
            configs = list(self._call(client, "DescribeInstanceTypeConfigs", {}, region).get("InstanceTypeConfigSet") or [])
        except RegionFetchError as exc:
            if exc.code in (*_NETWORK_CODES, "Throttled", "InvalidResponse"):
                raise
            # Optional action (absent on international-site accounts): GPU models then come from Remark.
            notes.append(f"{region}: GPU models read from Remark only ({exc})")
        on_call()
        quota_sets: dict[str, list[Any]] = {}
        for charge, _billing in CHARGE_TYPES:
            params = {"Filters": [{"Name": "instance-charge-type", "Values": [charge]}]}
            try:
                resp = self._call(client, "DescribeZoneInstanceConfigInfos", params, region)
                quota_sets[charge] = list(resp.get("InstanceTypeQuotaSet") or [])
            except RegionFetchError as exc:
                if exc.code != "UnsupportedOperation.InstanceChargeType":
                    raise
                notes.append(f"{region}: {charge} not offered")
            on_call()
        return parse_region(region, quota_sets, configs, self._today, self._hints, notes)
