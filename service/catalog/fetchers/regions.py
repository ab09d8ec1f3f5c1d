"""Region and zone names per cloud: which region a catalog `regions` entry belongs to.

Tencent zones are the region plus `-N` (`ap-guangzhou-6` → `ap-guangzhou`); JD zones are the region plus a
letter (`cn-north-1a` → `cn-north-1`). The shipped catalog also writes Tencent zones as doc text
(`Guangzhou-7`), so the city names of Tencent's regions are understood too.
"""

from __future__ import annotations

import re

from service.catalog.schema import Cloud

TENCENT_DEFAULT_REGIONS = ("ap-guangzhou", "ap-shanghai", "ap-beijing", "ap-nanjing", "ap-chengdu", "ap-chongqing")
# JD's vm service has no region-listing call; these are the regions in JD's VM docs (cloud-apis.md §2.4).
JD_DEFAULT_REGIONS = ("cn-north-1", "cn-east-1", "cn-east-2", "cn-south-1")

_TENCENT_ZONE = re.compile(r"^([a-z]{2}-[a-z]+(?:-[a-z]+)?)-\d+$")
_TENCENT_REGION = re.compile(r"^[a-z]{2}-[a-z]+(?:-[a-z]+)?$")
_TENCENT_CITY = re.compile(r"^([A-Za-z][A-Za-z ]*?)(?:[\s-]*\d.*)?$")
_TENCENT_CITIES = {
    "guangzhou": "ap-guangzhou", "shanghai": "ap-shanghai", "beijing": "ap-beijing", "nanjing": "ap-nanjing",
    "chengdu": "ap-chengdu", "chongqing": "ap-chongqing", "hongkong": "ap-hongkong",
    "singapore": "ap-singapore", "tokyo": "ap-tokyo", "seoul": "ap-seoul", "bangkok": "ap-bangkok",
    "jakarta": "ap-jakarta", "mumbai": "ap-mumbai", "siliconvalley": "na-siliconvalley",
    "ashburn": "na-ashburn", "frankfurt": "eu-frankfurt", "saopaulo": "sa-saopaulo",
}
_JD_ZONE = re.compile(r"^(cn-[a-z]+-\d+)[a-z]?$")


def tencent_region_of_zone(zone: str) -> str | None:
    m = _TENCENT_ZONE.match(zone)
    return m.group(1) if m else None


def region_of(cloud: Cloud, entry: str) -> str | None:
    """The region an entry of InstanceRow.regions lies in, or None when the text names no known region."""
    entry = entry.strip()
    if cloud == "jdcloud":
        m = _JD_ZONE.match(entry)
        return m.group(1) if m else None
    if _TENCENT_REGION.match(entry):
        return entry
    if (region := tencent_region_of_zone(entry)) is not None:
        return region
    m = _TENCENT_CITY.match(entry)
    if m:
        return _TENCENT_CITIES.get(m.group(1).replace(" ", "").lower())
    return None


def cloud_of_region(region: str) -> Cloud:
    """JD region ids start with `cn-`; Tencent's with `ap-`, `na-`, `eu-` or `sa-`."""
    return "jdcloud" if region.startswith("cn-") else "tencent"


def split_regions(text: str) -> list[str]:
    return [e.strip() for e in text.split(";") if e.strip()]
