"""Invariants of the shipped catalogs: sources, ids, and agreement with catalog-facts; the
servers' cost fields and price rule, and the cloud offers of procurement-facts."""

from __future__ import annotations

import re

import pytest

from planner.errors import CatalogError
from planner.inputs.catalog import (
    DEFAULT_CLOUDS,
    DEFAULT_SERVERS,
    load_clouds,
    load_gpus,
    load_servers,
)
from planner.inputs.entries import Catalog
from planner.plan.calc import model_quantities
from tests.conftest import DATA

# catalog-facts.md Part A6: KV bytes per token, BF16, all attention layers, before windows.
KV_BYTES_PER_TOKEN_BF16 = {
    "llama-3.1-8b": 131072, "llama-3.1-70b": 327680, "llama-3.1-405b": 516096,
    "llama-3.2-1b": 32768, "llama-3.2-3b": 114688, "llama-4-scout": 196608,
    "llama-4-maverick": 196608, "qwen2.5-7b": 57344, "qwen2.5-72b": 327680,
    "qwen3-8b": 147456, "qwen3-32b": 262144, "qwen3-235b-a22b": 192512,
    "qwen3-next-80b-a3b": 24576, "mistral-7b-v0.3": 131072, "mistral-small-3-24b": 163840,
    "mixtral-8x7b": 131072, "mixtral-8x22b": 229376, "deepseek-v3": 70272,
    "deepseek-r1": 70272, "kimi-k2": 70272, "gemma-2-9b": 344064, "gemma-2-27b": 376832,
    "gemma-3-27b": 507904, "gpt-oss-20b": 49152, "gpt-oss-120b": 73728, "phi-4": 204800,
    "glm-4.5": 376832,
}

# catalog-facts.md Part A5: published totals of dense models (params), from model cards.
PUBLISHED_DENSE_TOTALS = {
    "llama-3.1-8b": 8.0e9, "llama-3.1-70b": 70.6e9, "llama-3.1-405b": 405e9,
    "llama-3.2-1b": 1.23e9, "llama-3.2-3b": 3.21e9, "qwen2.5-7b": 7.61e9,
    "qwen2.5-72b": 72.7e9, "qwen3-8b": 8.2e9, "qwen3-32b": 32.8e9, "mistral-7b-v0.3": 7.25e9,
    "mistral-small-3-24b": 23.57e9, "gemma-2-9b": 9.24e9, "gemma-2-27b": 27.23e9,
    "gemma-3-27b": 27.0e9, "phi-4": 14.66e9,
}


def test_enough_models_and_gpus(shipped) -> None:
    models, gpus = shipped
    assert len(models.entries) >= 24
    assert len(gpus.entries) >= 18
    vendors = {g.text("vendor") for g in gpus.entries.values()}
    assert {"NVIDIA", "AMD", "Intel"} <= vendors


def test_every_entry_has_a_source(shipped) -> None:
    for catalog in shipped:
        for entry in catalog.entries.values():
            assert len(entry.source) > 10, entry.id


def test_ids_are_lower_case_with_hyphens(shipped) -> None:
    for catalog in shipped:
        for entry_id in catalog.entries:
            assert re.fullmatch(r"[a-z0-9]+([.-][a-z0-9]+)*", entry_id)


@pytest.mark.parametrize("model,expected", sorted(KV_BYTES_PER_TOKEN_BF16.items()))
def test_kv_bytes_per_token_matches_catalog_facts(shipped, model: str, expected: int) -> None:
    q = model_quantities(shipped[0].entries[model])
    assert q["kv_bytes_per_token_bf16"] == expected


@pytest.mark.parametrize("model,published", sorted(PUBLISHED_DENSE_TOTALS.items()))
def test_derived_parameter_count_within_2_percent(shipped, model: str, published: float):
    q = model_quantities(shipped[0].entries[model])
    assert q["experts"] == 0
    assert q["params_derived"] == pytest.approx(published, rel=0.02)


def test_gpus_carry_prices_with_dates_and_dense_flops(shipped) -> None:
    for gpu in shipped[1].entries.values():
        assert gpu.number("price_per_hour_usd") > 0
        assert re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", gpu.text("price_date"))
        fp8 = gpu.number("fp8_tflops")
        assert not fp8 or fp8 >= gpu.number("bf16_tflops"), gpu.id
        mib = gpu.number("memory_mib")
        if mib:  # the device reports slightly more or less than marketed, never 2x
            assert 0.8 < mib * 2**20 / (gpu.number("memory_gb") * 1e9) < 1.1, gpu.id


def test_h100_reports_81559_mib(shipped) -> None:
    assert shipped[1].entries["h100-sxm"].number("memory_mib") == 81559


# --- servers: cost fields and the catalog's own price rule ------------------------------------

@pytest.fixture(scope="module")
def servers(shipped) -> Catalog:
    return load_servers(DEFAULT_SERVERS, shipped[1])


def test_server_prices_follow_the_catalogs_rule(shipped, servers: Catalog) -> None:
    """price = GPUs x GPU price x 1.64 for baseboard servers, 1.54 for PCIe-card servers (the
    header's rule, docs/tco-evidence.md section 14), dated by the GPU price: an old quote left in
    place (the H100 server's 2023 $270,000, 25 % under) fails here."""
    gpus = shipped[1].entries
    priced = [s for s in servers.entries.values() if not s.number("whole_rack")]
    assert len(priced) == 10
    for server in priced:
        gpu = gpus[server.text("gpu")]
        ratio = 1.64 if gpu.number("gpus_per_node") >= 8 else 1.54
        rule = server.number("gpus_per_server") * gpu.number("price_usd") * ratio
        assert server.number("price_usd") == pytest.approx(rule, rel=0.005), server.id
        assert server.text("price_date") == gpu.text("price_date"), server.id
    h100 = servers.entries["hgx-h100-8"]
    assert h100.number("price_usd") == 360800 and h100.text("price_date") == "2026-04"
    assert "$270k" in h100.text("notes") and "$310k" in h100.text("notes")


def test_servers_carry_sourced_support_and_network(shipped, servers: Catalog) -> None:
    gpus = shipped[1].entries
    bundled = {"pcie-h100-8"}  # H100 PCIe bundles a 5-year NVIDIA AI Enterprise subscription
    for server in servers.entries.values():
        vendor = server.text("vendor")
        assert vendor == gpus[server.text("gpu")].text("vendor").lower(), server.id
        support = server.number("support_usd_per_gpu_year")
        expected = 0 if vendor == "amd" or server.id in bundled else 4500
        assert support == expected and "support_usd_per_gpu_year" in server.values, server.id
        assert ("$4,500/GPU-year" if support else "support: 0") in server.source, server.id
        assert server.text("fabric") == "ethernet", server.id  # every replica in one server
        network = server.number("network_usd_per_server")
        assert network == (28800 if server.number("whole_rack") else 1600), server.id
        assert f"${network:,.0f}" in server.source and "[N1]" in server.source, server.id
    assert {s.text("vendor") for s in servers.entries.values()} == {"nvidia", "amd"}


# --- clouds: one entry per offer in procurement-facts.md section 1 ----------------------------

# Which providers the facts price for each GPU of catalogs/servers.yaml (procurement-facts 1a,
# 1b): the large clouds where they list it, and up to three GPU clouds.
OFFERS_IN_FACTS = {
    "h100-sxm": {"aws", "azure", "gcp", "coreweave", "lambda", "hyperstack"},
    "h200-sxm": {"aws", "coreweave", "crusoe", "hyperstack"},
    "b200": {"aws", "coreweave", "lambda", "hyperstack"},
    "b300": {"hyperstack", "nebius"},
    "gb200": {"coreweave"},
    "mi300x": {"azure", "crusoe", "tensorwave"},
    "mi325x": {"tensorwave"},
    "h100-pcie": {"lambda"},
    "l40s": {"aws", "coreweave", "crusoe"},
    "l4": {"aws", "gcp"},
    "rtx-pro-6000": {"gcp", "hyperstack"},
}
NO_OFFER_IN_FACTS = {"gb300"}  # CoreWeave and Nebius: "contact sales"

# The price per GPU-hour each offer lists in the facts (on-demand ÷ GPUs must give it back).
PER_GPU_HOUR = {
    "aws-p5.48xlarge": 8.60, "aws-p5en.48xlarge": 7.91, "aws-p6-b200.48xlarge": 14.24,
    "aws-g6e.48xlarge": 3.77, "aws-g6.48xlarge": 1.67, "azure-nd96isr-h100-v5": 12.25,
    "azure-nd-mi300x-v5": 6.00, "gcp-a3-highgpu-8g": 11.06, "gcp-g2-standard-48": 1.00,
    "gcp-g4-standard-384": 4.50, "coreweave-hgx-h100": 6.16, "coreweave-hgx-h200": 6.31,
    "coreweave-hgx-b200": 8.60, "coreweave-gb200-nvl72": 10.50, "coreweave-l40s": 2.25,
    "lambda-8x-h100-sxm": 3.99, "lambda-8x-b200-sxm6": 6.69, "lambda-1x-h100-pcie": 3.29,
    "crusoe-h200-hgx": 4.29, "crusoe-mi300x": 3.45, "crusoe-l40s": 1.50,
    "hyperstack-h100-sxm": 3.20, "hyperstack-h200-sxm": 3.99, "hyperstack-b200": 6.00,
    "hyperstack-b300": 7.40, "hyperstack-rtx-pro-6000": 1.85, "nebius-hgx-b300": 9.50,
    "tensorwave-mi300x": 1.50, "tensorwave-mi325x": 1.95,
}

# Reserved prices the facts quote (per instance-hour): GCP committed use, Hyperstack reserved.
QUOTED_RESERVED = {"gcp-a3-highgpu-8g": (61.38, 38.86), "hyperstack-h100-sxm": (21.76, None),
                   "hyperstack-h200-sxm": (22.32, None), "hyperstack-b200": (40.80, None)}
# The share of on-demand a commitment costs where the header derives it: Epoch's AWS and Azure
# discounts (tco-facts 3d), GCP's quoted ratios, the facts' 85 % / 70 % model for GPU clouds.
RESERVED_SHARE = {"aws": (0.59, 0.36), "azure": (0.75, 0.51), "gpu cloud": (0.85, 0.70),
                  "gcp-g2-standard-48": (0.63, 0.45), "gcp-g4-standard-384": (0.69, 0.44)}


@pytest.fixture(scope="module")
def clouds(shipped) -> Catalog:
    return load_clouds(DEFAULT_CLOUDS, shipped[1])


def test_every_offer_is_sourced_dated_and_per_instance(clouds: Catalog) -> None:
    assert set(clouds.entries) == set(PER_GPU_HOUR)
    for offer in clouds.entries.values():
        assert re.fullmatch(r"20(2[5-6])-(0[1-9]|1[0-2])", offer.text("price_date")), offer.id
        assert re.search(r"(procurement|tco)-facts\.md \d[ab]? \[[PK]\d+\]", offer.source), offer.id
        assert offer.id.startswith(offer.text("provider") + "-")
        on_demand = offer.number("on_demand_usd_per_hour")
        gpus = offer.number("gpus_per_instance")
        assert on_demand / gpus == pytest.approx(PER_GPU_HOUR[offer.id], abs=0.006), offer.id


def test_reserved_prices_are_quoted_or_derived_as_notes_say(clouds: Catalog) -> None:
    for offer in clouds.entries.values():
        on_demand = offer.number("on_demand_usd_per_hour")
        one, three = (offer.number(f"reserved_{t}_usd_per_hour") for t in ("1y", "3y"))
        assert 0 < three <= one <= on_demand, offer.id
        provider = offer.text("provider")
        share = RESERVED_SHARE.get(offer.id) or RESERVED_SHARE.get(provider,
                                                                   RESERVED_SHARE["gpu cloud"])
        quoted = QUOTED_RESERVED.get(offer.id, (None, None))
        want_one = quoted[0] if quoted[0] is not None else on_demand * share[0]
        want_three = quoted[1] if quoted[1] is not None else min(on_demand * share[1], want_one)
        assert one == pytest.approx(want_one, abs=0.0051), offer.id  # rounded to the cent
        assert three == pytest.approx(want_three, abs=0.0051), offer.id
        if quoted[1] is None:  # something was derived: the notes say what and how
            assert "derived" in offer.text("notes"), offer.id
    a3 = clouds.entries["gcp-a3-highgpu-8g"]
    assert [a3.number(f) for f in ("on_demand_usd_per_hour", "reserved_1y_usd_per_hour",
                                   "reserved_3y_usd_per_hour")] == [88.49, 61.38, 38.86]


def test_every_server_gpu_with_an_offer_in_the_facts_has_one(clouds: Catalog,
                                                              servers: Catalog) -> None:
    server_gpus = {s.text("gpu") for s in servers.entries.values()}
    assert server_gpus == set(OFFERS_IN_FACTS) | NO_OFFER_IN_FACTS
    offered: dict[str, set[str]] = {}
    for offer in clouds.entries.values():
        offered.setdefault(offer.text("gpu"), set()).add(offer.text("provider"))
    assert offered == OFFERS_IN_FACTS
    providers = set().union(*offered.values())
    assert {"aws", "azure", "gcp", "coreweave", "lambda"} <= providers


def test_shipped_clouds_beside_a_users_gpu_catalog(shipped) -> None:
    """strict=False keeps only the offers of GPUs the user's catalog has, as load_servers does;
    strict=True refuses the first offer of a GPU it lacks."""
    small = load_gpus(DATA / "small-gpus.yaml")
    assert set(small.entries) == {"h100-sxm", "mi300x"}
    kept = load_clouds(DEFAULT_CLOUDS, small, strict=False)
    assert {o.text("gpu") for o in kept.entries.values()} == {"h100-sxm", "mi300x"}
    assert len(kept.entries) == 9
    with pytest.raises(CatalogError, match="unknown GPU id 'h200-sxm'"):
        load_clouds(DEFAULT_CLOUDS, small)
