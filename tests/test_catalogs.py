"""Invariants of the shipped catalogs: sources, ids, and agreement with catalog-facts."""

from __future__ import annotations

import re

import pytest

from planner.plan.calc import model_quantities

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
