"""`catalog sync` end to end: the official SDKs talk to a loopback stub that serves recorded-shape responses.

Nothing of ours is mocked: the Tencent SDK is pointed at the stub through HttpProfile(protocol="http",
endpoint=...), JD's through Config(host, "http"), both via the GPU_ADVISOR_*_ENDPOINT overrides.
"""

from __future__ import annotations

import io
import json
import logging
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from service.catalog.fetchers.base import Backoff
from service.catalog.loader import load_catalog
from service.catalog.queries import best_price
from service.catalog.sync import SyncTarget
from service.catalog.sync_cli import register, run_sync
from tests.catalog.fixtures.cloud_stub import CloudStub, jd_error, tencent_error

KNOWLEDGE = Path(__file__).parent / "fixtures" / "sync_knowledge"
TODAY = date(2026, 11, 30)
ALL_REGIONS = ["ap-guangzhou", "ap-shanghai", "cn-north-1", "cn-east-2"]
SECRETS = {
    "TENCENTCLOUD_SECRET_ID": "AKIDstubSecretId0001",
    "TENCENTCLOUD_SECRET_KEY": "stubTencentSecretKey0001",
    "JDCLOUD_ACCESS_KEY": "JDstubAccessKey0001",
    "JDCLOUD_SECRET_KEY": "stubJdSecretKey0001",
}


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[CloudStub]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    with CloudStub() as s:
        yield s


@dataclass
class Run:
    code: int
    out: str
    err: str
    overlay: Path
    slept: list[float]

    def json(self) -> Any:
        return json.loads(self.out)


def env_for(stub: CloudStub, **override: str) -> dict[str, str]:
    env = {**SECRETS, "GPU_ADVISOR_TENCENT_ENDPOINT": stub.endpoint, "GPU_ADVISOR_JD_ENDPOINT": stub.endpoint}
    env.update(override)
    return {k: v for k, v in env.items() if v}


def sync(stub: CloudStub, tmp_path: Path, regions: list[str] | None = None, *, clouds: list[str] | None = None,
         knowledge: Path = KNOWLEDGE, env: dict[str, str] | None = None, **target: Any) -> Run:
    out, err = io.StringIO(), io.StringIO()
    slept: list[float] = []
    overlay = tmp_path / "data" / "catalog"
    code = run_sync(
        clouds or [],  # type: ignore[arg-type]
        ALL_REGIONS if regions is None else regions,
        target=SyncTarget(knowledge, overlay, **target),
        json_output=True,
        env=env_for(stub) if env is None else env,
        out=Console(file=out, width=200),
        err=Console(file=err, width=200),
        backoff=Backoff(attempts=4, base_s=1, cap_s=8, sleep=slept.append),
        today=TODAY,
    )
    return Run(code, out.getvalue(), err.getvalue(), overlay, slept)


def price_of(cat: Any, itype: str, billing: str, region: str) -> Any:
    return next(p for p in cat.prices if (p.instance_type, p.billing, p.region) == (itype, billing, region))


def instance_of(cat: Any, itype: str) -> Any:
    return next(r for r in cat.instances if r.instance_type == itype)


def test_full_sync_tencent_and_jd(stub: CloudStub, tmp_path: Path) -> None:
    run = sync(stub, tmp_path)
    assert run.code == 0, run.err
    cat = load_catalog(KNOWLEDGE, overlay_dir=run.overlay)  # the written overlay validates with the loader
    # Tencent: list price per hour with the hour tiers in the note; spot = UnitPriceDiscount; month = OriginalPrice
    on_demand = price_of(cat, "GN7.2XLARGE32", "on_demand", "ap-guangzhou")
    assert (on_demand.price_cny, on_demand.source, on_demand.confidence) == (8.68, "api:DescribeZoneInstanceConfigInfos", "official")
    assert "96-360 h 8.2" in on_demand.note and on_demand.as_of == TODAY
    assert price_of(cat, "GN7.2XLARGE32", "spot", "ap-guangzhou").price_cny == 1.74
    assert price_of(cat, "GN7.2XLARGE32", "monthly", "ap-guangzhou").price_cny == 3942
    assert "account price 10.08" in price_of(cat, "PNV4.7XLARGE116", "on_demand", "ap-guangzhou").note
    gn7 = instance_of(cat, "GN7.2XLARGE32")
    assert gn7.regions == "ap-guangzhou-6;ap-guangzhou-7;ap-shanghai-4" and gn7.sale_status == "main"
    vgpu = instance_of(cat, "GN7.LARGE20")
    assert (vgpu.gpu, vgpu.gpu_count, vgpu.gpu_memory_gib) == ("T4", 0.25, 4)
    assert instance_of(cat, "GT4.41XLARGE948").sale_status == "sold_out"
    hcc = instance_of(cat, "HCCPNV4h.48XLARGE1024")  # GPU from Remark, size from the catalog's row
    assert hcc.gpu == "A100-40G-SXM" and hcc.rdma and hcc.regions == "ap-guangzhou-6"
    assert instance_of(cat, "GN10X.2XLARGE40").stale  # not returned in ap-guangzhou any more
    assert not instance_of(cat, "GN8.LARGE56").stale  # ap-beijing was not synced
    # JD: stock per AZ, specific types as allowlist, prices untouched
    assert instance_of(cat, "p.n1p40.3xlarge").sale_status == "sold_out"
    assert instance_of(cat, "p.n1p40.7xlarge").sale_status == "allowlist"
    assert instance_of(cat, "p.n1v100.2xlarge").regions == "cn-east-2a;cn-north-1a;cn-north-1b"
    assert instance_of(cat, "p.n1p40h.3xlarge").stale
    jd_price = price_of(cat, "p.n1v100.2xlarge", "on_demand", "cn-north-1")
    assert jd_price.price_cny == 20.73 and not jd_price.stale
    report = run.json()
    assert any(n.startswith("JD prices not synced: ") for n in report["notes"])
    assert report["synced"] == {"tencent": ["ap-guangzhou", "ap-shanghai"], "jdcloud": ["cn-east-2", "cn-north-1"]}
    # the SDKs really talked to the stub, signed, with the documented headers and paths
    tc = stub.calls("tencent")
    assert {(c["action"], c["region"], c["charge"]) for c in tc} >= {
        ("DescribeInstanceTypeConfigs", "ap-guangzhou", ""),
        ("DescribeZoneInstanceConfigInfos", "ap-guangzhou", "POSTPAID_BY_HOUR"),
        ("DescribeZoneInstanceConfigInfos", "ap-guangzhou", "PREPAID"),
        ("DescribeZoneInstanceConfigInfos", "ap-guangzhou", "SPOTPAID"),
    }
    assert all(c["headers"]["x-tc-version"] == "2017-03-12" for c in tc)
    assert all(c["headers"]["authorization"].startswith("TC3-HMAC-SHA256 ") for c in tc)
    jd = stub.calls("jdcloud")
    assert [c["path"].split("?")[0] for c in jd] == ["/v1/regions/cn-north-1/instanceTypes",
                                                     "/v1/regions/cn-east-2/instanceTypes"]
    assert all(c["headers"]["authorization"].startswith("JDCLOUD3-HMAC-SHA256 ") for c in jd)


def test_answer_changes_after_sync(stub: CloudStub, tmp_path: Path) -> None:
    """After a sync that changes a price in the overlay, the loader + best_price answer with the new price."""
    before = load_catalog(KNOWLEDGE)
    assert best_price("GN7.2XLARGE32", "on_demand", before.prices).price_cny == 9.5  # type: ignore[union-attr]
    run = sync(stub, tmp_path, ["ap-guangzhou"], clouds=["tencent"])
    assert run.code == 0, run.err
    after = load_catalog(KNOWLEDGE, overlay_dir=run.overlay)
    new = best_price("GN7.2XLARGE32", "on_demand", after.prices)
    assert new is not None and (new.price_cny, new.region, new.confidence) == (8.68, "ap-guangzhou", "official")


def test_diff_lists_new_removed_changed_and_sold_out(stub: CloudStub, tmp_path: Path) -> None:
    report = sync(stub, tmp_path).json()
    assert {r["instance_type"] for r in report["new_instances"]} == {"GN7.LARGE20", "p.n1p40.7xlarge"}
    assert {r["instance_type"] for r in report["removed_instances"]} == {"GN10X.2XLARGE40", "p.n1p40h.3xlarge"}
    assert {r["instance_type"] for r in report["newly_sold_out"]} == {"GT4.41XLARGE948", "p.n1p40.3xlarge"}
    changes = {(c["instance_type"], c["billing"], c["region"]): c for c in report["price_changes"]}
    same_key = changes[("GN7.2XLARGE32", "on_demand", "ap-guangzhou")]
    assert (same_key["old_cny"], same_key["new_cny"], same_key["change_pct"]) == (8.2, 8.68, 5.9)
    estimate = changes[("GT4.41XLARGE948", "on_demand", "ap-guangzhou")]
    assert (estimate["old_cny"], estimate["old_region"], estimate["change_pct"]) == (200, "", 20.0)


def test_malformed_and_unmapped_rows_are_skipped_and_listed(stub: CloudStub, tmp_path: Path) -> None:
    run = sync(stub, tmp_path)
    skipped = {(s["instance_type"], s["reason"]) for s in run.json()["skipped"]}
    assert ("?", "no InstanceType") in skipped
    assert ("GN7.5XLARGE80", "vcpus: Input should be greater than 0") in skipped
    assert ("PNV5b.8XLARGE96", "unknown GPU model 'NVIDIA GPU'") in skipped
    assert ("p.x1k80.2xlarge", "unknown GPU model 'Tesla K80'") in skipped
    assert any(t == "p.n2v100.5xlarge" and "ambiguous" in r for t, r in skipped)
    assert ("PNV6.32XLARGE1280", "GPU id H20 not in gpus.yaml") in skipped
    cat = load_catalog(KNOWLEDGE, overlay_dir=run.overlay)
    assert not {"GN7.5XLARGE80", "PNV5b.8XLARGE96", "PNV6.32XLARGE1280"} & {r.instance_type for r in cat.instances}


@pytest.mark.parametrize(
    ("cloud", "route"),
    [
        ("tencent", lambda s: s.tencent.update({k: [tencent_error("AuthFailure.SecretIdNotFound")] for k in s.tencent})),
        ("jdcloud", lambda s: s.jd.update({k: [jd_error(401)] for k in s.jd})),
    ],
)
def test_bad_credentials_exit_2_and_write_nothing(stub: CloudStub, tmp_path: Path, cloud: str, route: Any) -> None:
    route(stub)
    run = sync(stub, tmp_path)
    assert run.code == 2
    assert "rejected the keys" in run.err and "Nothing was written" in run.err
    assert run.json()["error"]["code"] == "credentials"
    assert not run.overlay.exists()  # not even the cloud that answered


def test_key_echoed_in_an_error_message_is_redacted(stub: CloudStub, tmp_path: Path) -> None:
    secret_id = SECRETS["TENCENTCLOUD_SECRET_ID"]
    echo = {"Response": {"Error": {"Code": "AuthFailure.SecretIdNotFound", "Message": f"SecretId {secret_id} not found"},
                         "RequestId": "err-echo"}}
    stub.tencent.update({k: [echo] for k in stub.tencent})
    run = sync(stub, tmp_path)
    assert run.code == 2 and "SecretId *** not found" in run.err
    assert secret_id not in run.err + run.out


def test_missing_credentials_exit_2_before_any_call(stub: CloudStub, tmp_path: Path) -> None:
    run = sync(stub, tmp_path, env=env_for(stub, JDCLOUD_SECRET_KEY=""))
    assert run.code == 2 and "JDCLOUD_ACCESS_KEY and JDCLOUD_SECRET_KEY" in run.err
    assert stub.requests == [] and not run.overlay.exists()


def test_throttling_is_retried_with_exponential_backoff(stub: CloudStub, tmp_path: Path) -> None:
    ok = stub.tencent[("DescribeZoneInstanceConfigInfos", "ap-guangzhou", "POSTPAID_BY_HOUR")][0]
    stub.tencent[("DescribeZoneInstanceConfigInfos", "ap-guangzhou", "POSTPAID_BY_HOUR")] = [
        tencent_error("RequestLimitExceeded"), tencent_error("RequestLimitExceeded"), ok]
    stub.jd["cn-north-1"] = [jd_error(429), stub.jd["cn-north-1"][0]]
    run = sync(stub, tmp_path)
    assert run.code == 0, run.err
    assert run.slept == [1, 2, 1]  # Tencent: 1 s, 2 s; JD: 1 s
    assert run.json()["failed_regions"] == []


def test_throttling_gives_up_after_the_bound(stub: CloudStub, tmp_path: Path) -> None:
    stub.tencent[("DescribeInstanceTypeConfigs", "ap-shanghai", "")] = [tencent_error("RequestLimitExceeded")]
    run = sync(stub, tmp_path)
    assert run.code == 1 and run.slept == [1, 2, 4]
    [failure] = run.json()["failed_regions"]
    assert failure["region"] == "ap-shanghai" and "still throttled after 4 attempts" in failure["error"]


def test_one_region_failing_does_not_stop_the_others(stub: CloudStub, tmp_path: Path) -> None:
    stub.tencent[("DescribeZoneInstanceConfigInfos", "ap-shanghai", "POSTPAID_BY_HOUR")] = [
        tencent_error("InternalError")]
    stub.jd["cn-east-2"] = [jd_error(500)]
    run = sync(stub, tmp_path)
    assert run.code == 1
    report = run.json()
    assert {(f["cloud"], f["region"]) for f in report["failed_regions"]} == {
        ("tencent", "ap-shanghai"), ("jdcloud", "cn-east-2")}
    assert "InternalError" in report["failed_regions"][0]["error"]
    assert report["synced"] == {"tencent": ["ap-guangzhou"], "jdcloud": ["cn-north-1"]}
    cat = load_catalog(KNOWLEDGE, overlay_dir=run.overlay)
    assert price_of(cat, "GN7.2XLARGE32", "on_demand", "ap-guangzhou").price_cny == 8.68
    # the failed region is not judged: its zones stay, nothing of it goes stale
    assert instance_of(cat, "GN7.2XLARGE32").regions == "ap-guangzhou-6;ap-guangzhou-7;Shanghai-4"


def test_secrets_never_printed_or_logged(stub: CloudStub, tmp_path: Path, capfd: pytest.CaptureFixture[str],
                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    stub.jd["cn-east-2"] = [jd_error(500)]  # error paths print too
    run = sync(stub, tmp_path)
    captured = capfd.readouterr()
    everything = "\n".join([run.out, run.err, captured.out, captured.err, caplog.text])
    for secret in SECRETS.values():
        assert secret not in everything
    assert "JDCLOUD3-HMAC-SHA256" not in everything  # JD's SDK logger would print the signing headers
    assert captured.out == ""  # nothing reached the real stdout


def test_sync_twice_reports_no_changes(stub: CloudStub, tmp_path: Path) -> None:
    assert sync(stub, tmp_path).code == 0
    report = sync(stub, tmp_path).json()
    for key in ("new_instances", "removed_instances", "newly_sold_out", "price_changes", "new_prices", "stale_prices"):
        assert report[key] == [], key


def test_dry_run_writes_nothing(stub: CloudStub, tmp_path: Path) -> None:
    run = sync(stub, tmp_path, dry_run=True)
    assert run.code == 0 and run.json()["written"] == [] and run.json()["price_changes"]
    assert not run.overlay.exists()


def test_write_knowledge_updates_the_knowledge_files(stub: CloudStub, tmp_path: Path) -> None:
    knowledge = tmp_path / "knowledge"
    shutil.copytree(KNOWLEDGE, knowledge)
    run = sync(stub, tmp_path, ["ap-guangzhou"], clouds=["tencent"], knowledge=knowledge, write_knowledge=True)
    assert run.code == 0, run.err
    assert not run.overlay.exists()
    cat = load_catalog(knowledge)
    assert price_of(cat, "GN7.2XLARGE32", "on_demand", "ap-guangzhou").price_cny == 8.68
    header = (knowledge / "catalog" / "prices.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == (KNOWLEDGE / "catalog" / "prices.csv").read_text(encoding="utf-8").splitlines()[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cloud", "tencent", "--region", "cn-north-1"], "belongs to jdcloud"),  # region of an unselected cloud
        (["--cloud", "tencent", "--cloud", "jdcloud", "--region", "ap-guangzhou"], "No --region given for jdcloud"),
    ],
)
def test_cli_region_errors_exit_2(stub: CloudStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  args: list[str], message: str) -> None:
    result = _invoke_cli(stub, tmp_path, monkeypatch, args)
    assert result.exit_code == 2 and message in result.stderr


def test_cli_wiring_writes_the_settings_overlay(stub: CloudStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _invoke_cli(stub, tmp_path, monkeypatch, ["--cloud", "tencent", "--region", "ap-guangzhou", "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["written"] == [str(tmp_path / "data" / "catalog" / "instances.csv"),
                                 str(tmp_path / "data" / "catalog" / "prices.csv")]


def _invoke_cli(stub: CloudStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> Any:
    from service.settings import get_settings

    for k, v in env_for(stub).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("GPU_ADVISOR_KNOWLEDGE_DIR", str(KNOWLEDGE))
    monkeypatch.setenv("GPU_ADVISOR_DATA_DIR", str(tmp_path / "data"))
    get_settings.cache_clear()
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """catalog"""

    register(app)
    try:
        return CliRunner().invoke(app, ["sync", *args])
    finally:
        get_settings.cache_clear()
