"""`planner import` and `--models FOLDER` on real Hugging Face configs (tests/data/configs, sources
in SOURCES.md): every expected figure below is worked out by hand from the config's own fields,
not read back from the importer or the shipped catalog."""

from __future__ import annotations

import json
import re
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from planner.cli import cli
from planner.errors import CatalogError, PlannerError
from planner.inputs.catalog import load_models
from planner.inputs.fields import HF_IGNORED_FIELDS, LAYER_PATTERN_FIELDS, MODEL_FIELDS
from planner.inputs.hfimport.convert import ALIASES
from planner.inputs.hfimport.reading import import_paths

CONFIGS = Path(__file__).parent / "data" / "configs"
BF16 = 2  # bytes per KV element


@dataclass(frozen=True)
class Case:
    kv_bytes: int  # KV cache per token at BF16, every attention layer, before window capping
    layers: dict[str, int]  # attention layers by kind
    card: float  # total parameters as the model card states them
    card_counts_vision: bool  # the card's figure includes the vision tower
    stored: str | None  # checkpoint_format


CASES = {
    # 32 layers x K,V x 8 KV heads x head_dim 4096/32 = 128 x 2 bytes.
    "llama-3.1-8b": Case(32 * 2 * 8 * 128 * BF16, {"full": 32}, 8e9, False, "bf16"),
    # Only the 12 gated full-attention layers (every 4th) keep KV: 2 KV heads x head_dim 256.
    # The other 36 are Gated DeltaNet layers with a fixed state and no per-token KV.
    "qwen3-next-80b-a3b": Case(12 * 2 * 2 * 256 * BF16, {"full": 12, "linear": 36}, 80e9,
                               False, "bf16"),
    # MLA: one latent of kv_lora_rank 512 + qk_rope_head_dim 64 per layer, no K/V split.
    "deepseek-v3": Case(61 * (512 + 64) * BF16, {"full": 61}, 671e9, False, "fp8"),
    # 62 layers x 2 x 16 KV heads x head_dim 128; 5 sliding (1024 tokens) : 1 full, so layers
    # 5, 11, ..., 59 are full: 10 full, 52 sliding.
    "gemma-3-27b-it": Case(62 * 2 * 16 * 128 * BF16, {"full": 10, "sliding": 52}, 27e9, True,
                           "bf16"),
    # 48 layers x 2 x 8 KV heads x 128; every 4th layer NoPE full attention, the other 36
    # chunked (8192-token chunks). The card's 109B includes the vision encoder, which this
    # trimmed config does not describe.
    "llama-4-scout": Case(48 * 2 * 8 * 128 * BF16, {"full": 12, "chunked": 36}, 109e9, True,
                          "bf16"),
    # 24 layers x 2 x 8 KV heads x head_dim 64; alternating 128-token sliding and full.
    "gpt-oss-20b": Case(24 * 2 * 8 * 64 * BF16, {"full": 12, "sliding": 12}, 21e9, False,
                        "mxfp4"),
    # sliding_window null: 32 full layers x 2 x 8 x 128.
    "mixtral-8x7b": Case(32 * 2 * 8 * 128 * BF16, {"full": 32}, 46.7e9, False, "bf16"),
    # text_config: 40 layers x 2 x 8 KV heads x head_dim 128 (not 5120/32 = 160).
    "mistral-small-3.1-24b": Case(40 * 2 * 8 * 128 * BF16, {"full": 40}, 24e9, True, "bf16"),
    # use_sliding_window false: 28 full layers x 2 x 4 KV heads x 3584/28 = 128.
    "qwen2.5-7b-instruct": Case(28 * 2 * 4 * 128 * BF16, {"full": 28}, 7.61e9, False, "bf16"),
    # The Gemma 3 27B shape again, from a whole model folder that lists layer_types.
    "medgemma-27b-it": Case(62 * 2 * 16 * 128 * BF16, {"full": 10, "sliding": 52}, 27e9, True,
                            "bf16"),
    # Llama 3.1 8B saved by bitsandbytes in 8 bits.
    "llama-3.1-8b-instruct-bnb-8bit": Case(32 * 2 * 8 * 128 * BF16, {"full": 32}, 8e9, False,
                                           "int8"),
}


@pytest.fixture(scope="module")
def imported():  # type: ignore[no-untyped-def]
    return {item.id: item for item in import_paths([CONFIGS])}


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


def error_of(*args: str) -> str:
    result = invoke(*args)
    assert result.exit_code != 0, result.output
    assert isinstance(result.exception, PlannerError), result.exception
    return str(result.exception)


def test_every_real_config_is_imported(imported) -> None:  # type: ignore[no-untyped-def]
    assert sorted(imported) == sorted(CASES)


@pytest.mark.parametrize("model", list(CASES))
def test_layers_parameters_and_format(imported, model: str) -> None:  # type: ignore[no-untyped-def]
    case, item = CASES[model], imported[model]
    counts = {k.split("_")[0]: v for k, v in item.model.layer_counts.items() if v}
    assert counts == case.layers
    total = item.fields["params"] + (item.fields.get("vision_params", 0)
                                     if case.card_counts_vision else 0)
    assert abs(total / case.card - 1) < 0.02, (total, case.card)
    assert item.fields.get("checkpoint_format") == case.stored
    assert item.fields["source"].startswith("planner import of config.json ")
    digest = re.search(r"sha256 ([0-9a-f]{64})", item.fields["source"]).group(1)
    assert digest in (CONFIGS / "SOURCES.md").read_text()


@pytest.mark.parametrize("model", list(CASES))
def test_planner_calc_runs_on_the_imported_entry(model: str) -> None:
    result = invoke("calc", "--models", str(CONFIGS), "--model", model, "--gpu", "h100-sxm",
                    "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["kv_bytes_per_token"] == CASES[model].kv_bytes


def test_active_parameters_where_the_card_counts_them_alike(imported) -> None:  # type: ignore[no-untyped-def]
    # Mixtral: 46.7B - 32 x 8 experts x 3 x 4096 x 14336 + top-2 of 8 of them = 12.9B.
    assert abs(imported["mixtral-8x7b"].fields["active_params"] / 12.9e9 - 1) < 0.02
    assert abs(imported["deepseek-v3"].fields["active_params"] / 37e9 - 1) < 0.02


def test_gemma3_reads_text_config_and_class_defaults(imported) -> None:  # type: ignore[no-untyped-def]
    fields = imported["gemma-3-27b-it"].fields
    full = [i for i, kind in enumerate(fields["layer_types"]) if kind == "full_attention"]
    assert full == list(range(5, 62, 6))  # layer i full iff (i + 1) % 6 == 0
    assert fields["sliding_window"] == 1024
    assert fields["hidden_size"] == 5376 and fields["head_dim"] == 128
    # Absent from text_config, so Gemma3TextConfig's defaults, and the notes say so.
    assert fields["vocab_size"] == 262208 and fields["tie_word_embeddings"] is True
    assert "vocab_size 262208" in fields["notes"] and "sliding_window_pattern 6" in fields["notes"]
    # SigLIP: 27 layers of width 1152 and MLP 4304 with biases and two LayerNorms, 896/14 = 64^2
    # positions, the patch convolution, the post norm; projector 1152 x 5376 + its norm.
    h, i = 1152, 4304
    tower = 27 * (4 * h * h + 4 * h + 2 * h * i + i + h + 4 * h) + 3 * 14 * 14 * h + h \
        + 64 * 64 * h + 2 * h
    assert fields["vision_params"] == tower + h * 5376 + h == 423_060_336


def test_medgemma_folder_uses_the_index_bytes(imported) -> None:  # type: ignore[no-untyped-def]
    fields = imported["medgemma-27b-it"].fields
    total_size = 54_864_813_280  # model.safetensors.index.json metadata.total_size
    vision = fields["vision_params"]
    assert fields["checkpoint_bytes"] == total_size - 2 * vision
    assert fields["params"] == total_size // 2 - vision  # every tensor is bf16
    assert "index.json (sha256 5eed7791" in fields["source"]
    assert "base_model google/gemma-3-27b-pt" in fields["notes"]  # from the model card
    result = invoke("calc", "--models", str(CONFIGS), "--model", "medgemma-27b-it", "--gpu",
                    "h200-sxm", "--json")
    assert json.loads(result.output)["weight_bytes"] == total_size  # the checkpoint, exactly


def test_bitsandbytes_8bit_checkpoint(imported) -> None:  # type: ignore[no-untyped-def]
    fields = imported["llama-3.1-8b-instruct-bnb-8bit"].fields
    assert fields["hf_id"] == "meta-llama/Llama-3.1-8B-Instruct"  # from _name_or_path
    assert fields["checkpoint_bytes"] == 9_086_705_888
    result = invoke("calc", "--models", str(CONFIGS), "--model",
                    "llama-3.1-8b-instruct-bnb-8bit", "--gpu", "l40s", "--weights", "int8",
                    "--json")
    assert json.loads(result.output)["weight_bytes"] == 9_086_705_888


def test_llama4_chunked_rope_layers_and_nope_full_layers(imported) -> None:  # type: ignore[no-untyped-def]
    fields = imported["llama-4-scout"].fields
    full = [i for i, kind in enumerate(fields["layer_types"]) if kind == "full_attention"]
    assert full == list(range(3, 48, 4))  # no_rope_layers default: every 4th layer is NoPE
    assert fields["attention_chunk_size"] == 8192
    assert fields["n_shared_experts"] == 1 and fields["intermediate_size_mlp"] == 16384


def test_qwen3_next_linear_layers(imported) -> None:  # type: ignore[no-untyped-def]
    fields = imported["qwen3-next-80b-a3b"].fields
    full = [i for i, kind in enumerate(fields["layer_types"]) if kind == "full_attention"]
    assert full == list(range(3, 48, 4))
    assert (fields["linear_num_value_heads"], fields["linear_key_head_dim"]) == (32, 128)
    assert fields["num_experts"] == 512 and fields["shared_expert_intermediate_size"] == 512


def test_no_sliding_when_the_config_switches_it_off(imported) -> None:  # type: ignore[no-untyped-def]
    assert "sliding_window" not in imported["qwen2.5-7b-instruct"].fields  # use_sliding_window
    assert "sliding_window" not in imported["mixtral-8x7b"].fields  # sliding_window: null
    assert "layer_types" not in imported["qwen2.5-7b-instruct"].fields


def test_mla_and_fp8(imported) -> None:  # type: ignore[no-untyped-def]
    fields = imported["deepseek-v3"].fields
    assert (fields["kv_lora_rank"], fields["q_lora_rank"], fields["qk_rope_head_dim"]) == (
        512, 1536, 64)
    assert "block-wise 128x128" in fields["notes"] and "multi-token-prediction" in fields["notes"]


def test_mla_without_query_compression(tmp_path: Path) -> None:
    config = json.loads((CONFIGS / "deepseek-v3" / "config.json").read_text())
    config["q_lora_rank"] = None  # DeepSeek-V2-Lite's way of saying no query compression
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    item = import_paths([tmp_path / "m"])[0]
    assert "q_lora_rank" not in item.fields and "q_lora_rank null" in item.fields["notes"]
    # Query projection hidden x heads x (128 + 64) instead of the two low-rank matrices.
    delta = 61 * (7168 * 1536 + 1536 * 128 * 192 - 7168 * 128 * 192)
    with_rank = import_paths([CONFIGS / "deepseek-v3"])[0].fields["params"]
    assert with_rank - item.fields["params"] == delta


def test_mxfp4_keeps_the_unconverted_modules_in_the_notes(imported) -> None:  # type: ignore[no-untyped-def]
    notes = imported["gpt-oss-20b"].fields["notes"]
    assert "MXFP4" in notes and "model.layers.*.self_attn" in notes and "lm_head" in notes


def test_mistral3_pixtral_vision(imported) -> None:  # type: ignore[no-untyped-def]
    fields = imported["mistral-small-3.1-24b"].fields
    h, i, text = 1024, 4096, 5120
    # Pixtral: 24 layers of q, k, v, o (no bias) + gated MLP + 2 RMSNorms; patch conv, ln_pre.
    tower = 24 * (4 * h * h + 3 * h * i + 2 * h) + 3 * 14 * 14 * h + h
    # Projector: norm, 2x2 patch merger, two linears into the text width.
    projector = h + 4 * h * h + h * text + text * text
    assert fields["vision_params"] == tower + projector


def test_nothing_is_dropped_silently(imported) -> None:  # type: ignore[no-untyped-def]
    read = (set(MODEL_FIELDS) | set(LAYER_PATTERN_FIELDS) | {"layer_types"}
            | {a for names in ALIASES.values() for a in names}
            | {"text_config", "vision_config", "quantization_config", "decoder_sparse_step",
               "mlp_only_layers", "num_nextn_predict_layers", "_name_or_path", "torch_dtype",
               "model_type", "spatial_merge_size", "multimodal_projector_bias",
               "projector_hidden_act", "mm_tokens_per_image", "vision_feature_layer",
               "image_token_index", "boi_token_index", "eoi_token_index", "moe_layer_freq"})
    for item in imported.values():
        config = json.loads(item.config.read_text())
        reported = set(item.ignored) | set(item.unknown)
        for key, value in config.items():
            keys = [f"{key}.{k}" for k in value] if key == "text_config" else [key]
            for name in keys:
                assert name in reported or name.split(".")[-1] in read, (item.id, name)
        assert all(r.split(".")[-1] in HF_IGNORED_FIELDS or r.startswith("vision_config.")
                   for r in item.ignored)


def test_import_prints_a_catalog_entry_that_loads(tmp_path: Path) -> None:
    result = invoke("import", str(CONFIGS / "gpt-oss-20b"))
    assert result.exit_code == 0, result.output
    assert "swiglu_limit" in result.stderr and "initial_context_length" in result.stderr
    assert "KV cache 49,152 B per token at BF16" in result.stderr
    catalog = tmp_path / "models.yaml"
    catalog.write_text(result.stdout)
    model = load_models(catalog).entries["gpt-oss-20b"]
    assert model.number("sliding_window") == 128 and model.text("checkpoint_format") == "mxfp4"
    assert re.search(r"^  gpt-oss-20b:\n    name: ", result.stdout, re.M)
    assert all(len(line) <= 100 for line in result.stdout.splitlines()
               if line.lstrip().startswith(("layer_types", "sliding_attention", "full_")))


def test_import_json(tmp_path: Path) -> None:
    result = invoke("import", str(CONFIGS / "qwen2.5-7b-instruct" / "config.json"), "--id",
                    "my-qwen", "--json")
    data = json.loads(result.stdout)
    assert data["models"]["my-qwen"]["num_key_value_heads"] == 4
    assert "rope_theta" in data["ignored"]["my-qwen"] and data["written_to"] is None


def test_import_to_a_catalog_and_refuse_an_existing_id(tmp_path: Path) -> None:
    catalog = tmp_path / "models.yaml"
    shutil.copy(CONFIGS.parent / "small-models.yaml", catalog)
    before = catalog.read_text()
    result = invoke("import", str(CONFIGS / "mixtral-8x7b"), "--to", str(catalog))
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and "appended mixtral-8x7b" in result.stderr
    assert catalog.read_text().startswith(before)
    assert "mixtral-8x7b" in load_models(catalog).entries
    message = error_of("import", str(CONFIGS / "mixtral-8x7b"), "--to", str(catalog))
    line = catalog.read_text().splitlines().index("  mixtral-8x7b:") + 1
    assert message.startswith(f"{catalog}, line {line}, entry 'mixtral-8x7b'")
    assert "already exists" in message and "--id" in message
    after = catalog.read_text()
    error_of("import", str(CONFIGS / "mixtral-8x7b"), "--to", str(catalog))
    assert catalog.read_text() == after  # unchanged
    created = tmp_path / "new.yaml"
    assert invoke("import", str(CONFIGS / "llama-3.1-8b"), "--to", str(created)).exit_code == 0
    assert list(load_models(created).entries) == ["llama-3.1-8b"]


def test_models_folder_on_every_command(tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    folder.mkdir()
    # A config file named as model_configs folders name them, and a Hugging Face cache folder.
    shutil.copy(CONFIGS / "llama-3.1-8b" / "config.json",
                folder / "meta-llama--Llama-3.1-8B_config.json")
    snapshot = folder / "models--Qwen--Qwen2.5-7B-Instruct" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    shutil.copy(CONFIGS / "qwen2.5-7b-instruct" / "config.json", snapshot / "config.json")
    models = load_models(folder)
    assert sorted(models.entries) == ["llama-3.1-8b", "qwen2.5-7b-instruct"]
    assert models.entries["llama-3.1-8b"].text("hf_id") == "meta-llama/Llama-3.1-8B"
    assert models.entries["qwen2.5-7b-instruct"].text("hf_id") == "Qwen/Qwen2.5-7B-Instruct"
    listing = invoke("list", "models", "--models", str(folder))
    assert listing.exit_code == 0 and "qwen2.5-7b-instruct" in listing.output


def _safetensors(path: Path, tensors: dict[str, list[int]]) -> int:
    """A shard holding only its header (what the importer reads); returns the data bytes."""
    header, offset = {}, 0
    for name, shape in tensors.items():
        size = 2
        for dim in shape:
            size *= dim
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)
    return offset


def test_parameters_from_the_shard_headers(tmp_path: Path) -> None:
    folder = tmp_path / "llama"
    folder.mkdir()
    shutil.copy(CONFIGS / "llama-3.1-8b" / "config.json", folder / "config.json")
    h, kv, ffn, vocab = 4096, 1024, 14336, 128256
    tensors = {"model.embed_tokens.weight": [vocab, h], "lm_head.weight": [vocab, h],
               "model.norm.weight": [h]}
    for i in range(32):
        p = f"model.layers.{i}."
        tensors |= {p + "self_attn.q_proj.weight": [h, h], p + "self_attn.k_proj.weight": [kv, h],
                    p + "self_attn.v_proj.weight": [kv, h], p + "self_attn.o_proj.weight": [h, h],
                    p + "mlp.gate_proj.weight": [ffn, h], p + "mlp.up_proj.weight": [ffn, h],
                    p + "mlp.down_proj.weight": [h, ffn], p + "input_layernorm.weight": [h],
                    p + "post_attention_layernorm.weight": [h]}
    data = _safetensors(folder / "model.safetensors", tensors)
    fields = import_paths([folder])[0].fields
    assert fields["params"] == 8_030_261_248  # Llama 3.1 8B, norms included
    assert fields["checkpoint_bytes"] == data == 2 * 8_030_261_248
    assert "counted from the tensor shapes in 1 safetensors header" in fields["notes"]
    (folder / "model.safetensors").write_text("version https://git-lfs.github.com/spec/v1\n")
    fields = import_paths([folder])[0].fields
    assert fields["params"] == 8_029_995_008 and "Git LFS pointer" in fields["notes"]


# -- bad input ----------------------------------------------------------------------------------


def _copy(tmp_path: Path, model: str, edit=None) -> Path:  # type: ignore[no-untyped-def]
    folder = tmp_path / model
    folder.mkdir()
    text = (CONFIGS / model / "config.json").read_text()
    (folder / "config.json").write_text(edit(text) if edit else text)
    return folder


def test_folder_without_a_config(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    message = error_of("import", str(tmp_path / "empty"))
    assert message.startswith(f"{tmp_path / 'empty'}: is a folder that holds no config.json")
    message = error_of("calc", "--models", str(tmp_path / "empty"), "--model", "x", "--gpu",
                       "h100-sxm")
    assert "holds no config.json" in message


def test_json_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "llama-3.1-8b", lambda t: t.replace('"hidden_size": 4096,',
                                                                 '"hidden_size": 4096'))
    message = error_of("import", str(folder))
    lines = (folder / "config.json").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if '"initializer_range"' in text)
    assert message.startswith(f"{folder / 'config.json'}, line {line}, column 3: JSON syntax "
                              "error: Expecting ',' delimiter")
    assert '"initializer_range"' in message  # the offending line is shown


def test_duplicate_key(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "llama-3.1-8b", lambda t: t.replace(
        '"vocab_size": 128256', '"vocab_size": 128256,\n  "hidden_size": 8192'))
    message = error_of("import", str(folder))
    assert "duplicate key 'hidden_size'" in message and "line 34" in message


def test_architecture_the_planner_cannot_size(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "mixtral-8x7b", lambda t: t.replace(
        '    "intermediate_size": 14336,\n', ""))
    message = error_of("import", str(folder))
    assert "field 'intermediate_size': the config has no intermediate_size" in message
    assert "add it by hand to the imported entry: intermediate_size: N" in message
    mamba = tmp_path / "mamba"
    mamba.mkdir()
    (mamba / "config.json").write_text(json.dumps({
        "architectures": ["MambaForCausalLM"], "model_type": "mamba", "hidden_size": 768,
        "num_hidden_layers": 24, "state_size": 16, "vocab_size": 50280}, indent=2))
    message = error_of("import", str(mamba))
    assert "field 'state_size'" in message and "state-space (Mamba)" in message
    t5 = tmp_path / "t5"
    t5.mkdir()
    (t5 / "config.json").write_text('{"model_type": "t5", "is_encoder_decoder": true}')
    assert "encoder-decoder" in error_of("import", str(t5))


@pytest.mark.parametrize("model, edit, expect", [
    ("medgemma-27b-it", lambda t: t.replace('"sliding_window": 1024,',
                                            '"sliding_window": 1024,\n    '
                                            '"sliding_window_pattern": 4,'),
     ("field 'text_config.layer_types'", "conflicts with sliding_window_pattern")),
    ("mixtral-8x7b", lambda t: t.replace('"num_local_experts": 8,',
                                         '"num_local_experts": 8,\n    "num_experts": 16,'),
     ("field 'num_experts'", "conflicts with num_local_experts: 16 against 8")),
    ("gemma-3-27b-it", lambda t: t.replace('"mm_tokens_per_image": 256,',
                                           '"mm_tokens_per_image": 256,\n  "hidden_size": 4096,'),
     ("field 'hidden_size'", "conflicts with text_config.hidden_size: 4096 against 5376")),
    ("qwen2.5-7b-instruct", lambda t: t.replace(
        '"vocab_size": 152064', '"vocab_size": 152064,\n    "layer_types": '
        + json.dumps(["sliding_attention"] * 28)),
     ("field 'use_sliding_window'", "lists sliding_attention layers")),
    ("gpt-oss-20b", lambda t: t.replace('"experts_per_token": 4', '"experts_per_token": 2'),
     ("conflicts with num_experts_per_tok", "keep one of num_experts_per_tok and "
                                            "experts_per_token")),
], ids=["layer-types-vs-pattern", "two-expert-counts", "outer-vs-text-config",
        "no-sliding-vs-layer-types", "alias-disagrees"])
def test_conflicting_fields(tmp_path: Path, model, edit, expect) -> None:  # type: ignore[no-untyped-def]
    folder = _copy(tmp_path, model, edit)
    message = error_of("import", str(folder))
    assert message.startswith(str(folder / "config.json") + ", line ")
    for fragment in expect:
        assert fragment in message, message


def test_id_options(tmp_path: Path) -> None:
    assert "--id x: names one entry" in error_of("import", str(CONFIGS / "llama-3.1-8b"),
                                                 str(CONFIGS / "mixtral-8x7b"), "--id", "x")
    assert "cannot be a catalog id" in error_of("import", str(CONFIGS / "llama-3.1-8b"),
                                                "--id", "My Model")
    folder = tmp_path / "Meta Llama_3.1 (8B)!"
    shutil.copytree(CONFIGS / "llama-3.1-8b", folder)
    assert import_paths([folder])[0].id == "meta-llama-3.1-8b"


# -- real config.json fields in a models YAML (issue 9, item 17) --------------------------------


def _pasted(tmp_path: Path, **changes: object) -> Path:
    """The Qwen3-Next config.json pasted as a catalog entry, with a source."""
    entry = json.loads((CONFIGS / "qwen3-next-80b-a3b" / "config.json").read_text())
    entry |= {"source": "pasted config.json", "q_lora_rank": None, "sliding_window": None}
    entry |= changes
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": {"qwen3-next": entry}}, sort_keys=False))
    return path


def test_a_pasted_config_json_loads(tmp_path: Path) -> None:
    model = load_models(_pasted(tmp_path)).entries["qwen3-next"]
    assert (model.layer_counts["full_attention_layers"],
            model.layer_counts["linear_attention_layers"]) == (12, 36)
    assert not model.number("sliding_window") and not model.number("q_lora_rank")
    result = invoke("calc", "--models", str(tmp_path / "models.yaml"), "--model", "qwen3-next",
                    "--gpu", "h100-sxm", "--json")
    assert json.loads(result.output)["kv_bytes_per_token"] == 12 * 2 * 2 * 256 * BF16


def test_pasted_qwen2_does_not_slide(tmp_path: Path) -> None:
    entry = json.loads((CONFIGS / "qwen2.5-7b-instruct" / "config.json").read_text())
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": {"q": {**entry, "source": "x"}}}))
    model = load_models(path).entries["q"]
    assert model.layer_counts["full_attention_layers"] == 28 and not model.number(
        "sliding_window")


def test_a_real_typo_still_gets_did_you_mean(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="did you mean 'rope_theta'"):
        load_models(_pasted(tmp_path, rope_thetta=1))
    with pytest.raises(CatalogError, match="did you mean 'num_key_value_heads'"):
        load_models(_pasted(tmp_path, num_key_value_head=2))


def test_yaml_refuses_what_it_cannot_express(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="decoder_sparse_step 2 changes which layers are MoE"):
        load_models(_pasted(tmp_path, decoder_sparse_step=2))
    with pytest.raises(CatalogError, match="nested config section 'text_config'"):
        load_models(_pasted(tmp_path, text_config={"hidden_size": 1}))
    with pytest.raises(CatalogError, match="conflicts with full_attention_interval"):
        load_models(_pasted(tmp_path, layer_types=["full_attention"] * 48))
    with pytest.raises(CatalogError, match="conflicts with num_experts"):
        load_models(_pasted(tmp_path, n_routed_experts=512))


def test_internvl_reads_llm_config(tmp_path: Path) -> None:
    # Not a real file: InternVL3-78B's layout (InternViT-6B 45 layers + a Qwen2.5-72B language
    # model under llm_config) with the numbers the shipped catalog documents for it.
    config = {"architectures": ["InternVLChatModel"], "model_type": "internvl_chat",
              "downsample_ratio": 0.5, "torch_dtype": "bfloat16",
              "llm_config": {"model_type": "qwen2", "hidden_size": 8192,
                             "intermediate_size": 29568, "num_attention_heads": 64,
                             "num_hidden_layers": 80, "num_key_value_heads": 8,
                             "vocab_size": 151674, "max_position_embeddings": 32768,
                             "tie_word_embeddings": False},
              "vision_config": {"model_type": "intern_vit_6b", "hidden_size": 3200,
                                "intermediate_size": 12800, "num_hidden_layers": 45,
                                "patch_size": 14, "image_size": 448}}
    (tmp_path / "internvl").mkdir()
    (tmp_path / "internvl" / "config.json").write_text(json.dumps(config, indent=2))
    fields = import_paths([tmp_path / "internvl"])[0].fields
    assert fields["hidden_size"] == 8192 and "read from llm_config" in fields["notes"]
    assert abs(fields["params"] / 72.70e9 - 1) < 0.01
    # mlp1 projector: LayerNorm(12800) + 12800 x 8192 + 8192 x 8192 with biases = 172,008,448.
    assert abs(fields["vision_params"] / 5_708_504_448 - 1) < 0.002


def test_qwen2_sliding_only_from_max_window_layers(tmp_path: Path) -> None:
    def edit(text: str) -> str:
        return text.replace('"use_sliding_window": false', '"use_sliding_window": true')

    # use_sliding_window true: layers from max_window_layers (28) on slide, so none of 28 do.
    fields = import_paths([_copy(tmp_path, "qwen2.5-7b-instruct", edit)])[0].fields
    assert "sliding_window" not in fields and "layer_types" not in fields
    config = tmp_path / "qwen2.5-7b-instruct" / "config.json"
    config.write_text(config.read_text().replace('"max_window_layers": 28',
                                                 '"max_window_layers": 20'))
    fields = import_paths([config.parent])[0].fields
    assert fields["layer_types"] == ["full_attention"] * 20 + ["sliding_attention"] * 8
    assert fields["sliding_window"] == 131072


# -- weights from a config alone, against the checkpoint (issue 27, item 4) ----------------------

GB = 10**9
# Each checkpoint's stored bytes: metadata.total_size of its model.safetensors.index.json.
CHECKPOINTS = {
    # 2 x 8,030,261,248 parameters, every tensor bf16 (the shard-header test above counts them).
    "llama-3.1-8b": (16_060_522_496, "bf16"),
    # The Gemma 3 27B shape; medgemma-27b-it/model.safetensors.index.json (vision tower included).
    "gemma-3-27b-it": (54_864_813_280, "bf16"),
    "medgemma-27b-it": (54_864_813_280, "bf16"),
    # bitsandbytes LLM.int8: int8 layers, embeddings and LM head kept in 16 bits.
    "llama-3.1-8b-instruct-bnb-8bit": (9_086_705_888, "int8"),
    # openai/gpt-oss-20b: 12.8 GiB in OpenAI's model card (arXiv:2508.10925, table 1).
    "gpt-oss-20b": (13_761_264_768, "mxfp4"),
    # deepseek-ai/DeepSeek-V3, FP8 with block scales; its one MTP layer (about 14B parameters
    # with its own embedding and head) is stored too, and a config alone does not count it.
    "deepseek-v3": (688_586_727_753, "fp8"),
}


def _stored(models: Path, model: str, weights: str, engine: str = "vllm") -> dict[str, float]:
    result = invoke("calc", "--models", str(models), "--model", model, "--gpu", "h100-sxm",
                    "--weights", weights, "--set", f"engine={engine}", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    return {"stored": data["details"]["checkpoint_weight_bytes"],
            "padding": data["details"]["expert_padding_bytes"], "loaded": data["weight_bytes"]}


@pytest.mark.parametrize("model", list(CHECKPOINTS))
def test_weights_from_the_config_alone_match_the_checkpoint(tmp_path: Path, model: str) -> None:
    """Without an index the planner counts each tensor in the format the checkpoint stores it
    in (embeddings and LM head at 16 bits where the format keeps them so, MXFP4 experts with
    their scales and the rest of gpt-oss at BF16, a vision tower at BF16): within 3% of the
    checkpoint for every architecture the test configs carry."""
    total, fmt = CHECKPOINTS[model]
    folder = tmp_path / model
    folder.mkdir()
    shutil.copy(CONFIGS / model / "config.json", folder / "config.json")  # no index beside it
    figures = _stored(tmp_path, model, fmt)
    assert abs(figures["stored"] / total - 1) < 0.03, (model, figures["stored"], total)


def test_gpt_oss_20b_weights_by_hand(tmp_path: Path) -> None:
    """gpt-oss-20b from its config: 24 layers x 32 experts x (2880 x 5760 + 2880 x 2880) MXFP4
    expert weights at 4.25 bits (0.53125 B) = 10,152,345,600 B; everything else BF16:
    embeddings and LM head 2 x 201,088 x 2,880, attention 24 x (2880 x 4096 x 2 + 2 x 2880 x
    512), routers 24 x 2880 x 32 (biases, sinks and norms not counted). vLLM's MXFP4 MoE kernels
    pad hidden and expert widths to 3,072 when they load them."""
    folder = tmp_path / "gpt-oss-20b"
    folder.mkdir()
    shutil.copy(CONFIGS / "gpt-oss-20b" / "config.json", folder / "config.json")
    experts = 24 * 32 * 3 * 2880 * 2880
    rest = 2 * 201_088 * 2880 + 24 * (2 * 2880 * 4096 + 2 * 2880 * 512) + 24 * 2880 * 32
    stored = experts * 0.53125 + rest * 2
    assert stored == 13_747_322_880
    figures = _stored(tmp_path, "gpt-oss-20b", "mxfp4")
    assert figures["stored"] == pytest.approx(stored)
    assert abs(stored / 13_761_264_768 - 1) < 0.002  # the checkpoint, 13.76 GB
    padding = 24 * 32 * 3 * (3072 * 3072 - 2880 * 2880) * 0.53125
    assert figures["padding"] == pytest.approx(padding) and padding == 1_398_767_616
    assert figures["loaded"] == pytest.approx(stored + padding)
    # With the index beside the config, import takes its total_size as the stored bytes.
    (folder / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": 13_761_264_768}, "weight_map": {}}))
    fields = import_paths([folder])[0].fields
    assert fields["checkpoint_bytes"] == 13_761_264_768
    figures = _stored(tmp_path, "gpt-oss-20b", "mxfp4")
    assert figures["stored"] == 13_761_264_768
    assert figures["loaded"] == pytest.approx(13_761_264_768 + padding)
    # engine=none keeps SPEC's arithmetic for its weights: the checkpoint, exactly.
    assert _stored(tmp_path, "gpt-oss-20b", "mxfp4", "none")["loaded"] == 13_761_264_768


def test_gpt_oss_120b_weights(tmp_path: Path) -> None:
    """gpt-oss-120b's config differs from the 20b's only in depth and expert count (36 layers,
    128 experts; OpenAI's model card, arXiv:2508.10925, table 1, which gives a 60.8 GiB
    checkpoint). Built from the 20b config here; within 3% of the checkpoint, with and without
    its index."""
    config = json.loads((CONFIGS / "gpt-oss-20b" / "config.json").read_text())
    config |= {"num_hidden_layers": 36, "num_local_experts": 128,
               "layer_types": ["sliding_attention", "full_attention"] * 18}
    folder = tmp_path / "gpt-oss-120b"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    checkpoint = 65_248_815_744  # 60.77 GiB
    assert round(checkpoint / 2**30, 1) == 60.8
    stored = _stored(tmp_path, "gpt-oss-120b", "mxfp4")["stored"]
    experts = 36 * 128 * 3 * 2880 * 2880 * 0.53125
    rest = 2 * 201_088 * 2880 + 36 * (2 * 2880 * 4096 + 2 * 2880 * 512) + 36 * 2880 * 128
    assert stored == pytest.approx(experts + rest * 2)
    assert abs(stored / checkpoint - 1) < 0.03
    (folder / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": checkpoint}, "weight_map": {}}))
    assert _stored(tmp_path, "gpt-oss-120b", "mxfp4")["stored"] == checkpoint


# Numbers no model has: each is refused where it is read, naming file, line and field, instead
# of a ZeroDivisionError, OverflowError or ValueError further on ("Internal error").
BAD_NUMBERS = {
    "zero-heads": ('"num_attention_heads": 32', '"num_attention_heads": 0',
                   "field 'num_attention_heads': must be greater than 0, got 0"),
    "zero-layers": ('"num_hidden_layers": 32', '"num_hidden_layers": 0',
                    "field 'num_hidden_layers': must be greater than 0, got 0"),
    "infinite-hidden": ('"hidden_size": 4096', '"hidden_size": Infinity',
                        "field 'hidden_size': is infinite"),
    "nan-hidden": ('"hidden_size": 4096', '"hidden_size": NaN',
                   "field 'hidden_size': is NaN (not a number)"),
    "negative-ffn": ('"intermediate_size": 14336', '"intermediate_size": -14336',
                     "field 'intermediate_size': must not be negative, got -14336"),
    "float-vocab-beyond-bounds": ('"vocab_size": 128256', '"vocab_size": 1e300',
                                  "field 'vocab_size': 1e+300 is beyond any real model: at most "
                                  "10,000,000"),
    "huge-int-vocab": ('"vocab_size": 128256', '"vocab_size": ' + "1" + "0" * 400,
                       "field 'vocab_size': 1e+400 is beyond any real model"),
    "vocab-beyond-bounds": ('"vocab_size": 128256', '"vocab_size": 12825600000',
                            "field 'vocab_size': 12,825,600,000 is beyond any real model"),
    "huge-ffn": ('"intermediate_size": 14336', '"intermediate_size": 1e30',
                 "field 'intermediate_size': 1e+30 is too large for a count"),
    "fractional-heads": ('"num_attention_heads": 32', '"num_attention_heads": 32.5',
                         "field 'num_attention_heads': must be a whole number, got 32.5"),
    "text-heads": ('"num_attention_heads": 32', '"num_attention_heads": "32"',
                   "field 'num_attention_heads': must be a number, got '32'"),
}


@pytest.mark.parametrize("old, new, expect", list(BAD_NUMBERS.values()), ids=list(BAD_NUMBERS))
def test_every_number_read_is_checked(tmp_path: Path, old: str, new: str, expect: str) -> None:
    def edit(text: str) -> str:
        assert text.count(old) == 1, old
        return text.replace(old, new)

    folder = _copy(tmp_path, "llama-3.1-8b", edit)
    message = error_of("import", str(folder))
    lines = (folder / "config.json").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if new in text)
    assert message.startswith(f"{folder / 'config.json'}, line {line}, entry 'llama-3.1-8b', "
                              f"{expect}"), message


def test_vision_config_numbers_are_checked(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "gemma-3-27b-it", lambda t: t.replace('"patch_size": 14',
                                                                   '"patch_size": 0'))
    message = error_of("import", str(folder))
    assert "field 'vision_config.patch_size': must be greater than 0, got 0" in message


def test_an_index_with_a_garbled_total_size_is_located(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "llama-3.1-8b")
    (folder / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": -16060522496}, "weight_map": {}}, indent=2))
    message = error_of("import", str(folder))
    assert message.startswith(f"{folder / 'model.safetensors.index.json'}, line 3, entry "
                              "'llama-3.1-8b', field 'metadata.total_size': must not be "
                              "negative"), message


def test_shard_headers_with_garbled_shapes_fall_back_to_the_shape(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "llama-3.1-8b")
    raw = json.dumps({"model.embed_tokens.weight": {"dtype": "BF16", "shape": ["x", 4096],
                                                    "data_offsets": [0, 10]}}).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw)
    fields = import_paths([folder])[0].fields
    assert "unreadable shapes or offsets" in fields["notes"]
    assert fields["params"] == 8_029_995_008  # derived from the shape


def _read_only_folder(tmp_path: Path) -> Path:
    """A folder nothing can be written into: chmod 555, or, where that does not stop us (root),
    /sys, which the kernel keeps read-only."""
    import os

    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        (folder / "probe").touch()
    except OSError:
        return folder
    (folder / "probe").unlink()
    if not os.access("/sys", os.W_OK) or os.geteuid() == 0:
        try:
            (Path("/sys") / "planner-probe").touch()
        except OSError:
            return Path("/sys")
    pytest.skip("no read-only folder on this machine")


def test_import_to_a_read_only_folder_is_refused_before_any_work(tmp_path: Path) -> None:
    """The message names the file asked for, not the temporary .importing file."""
    folder = _read_only_folder(tmp_path)
    target = folder / "models.yaml"
    message = error_of("import", str(CONFIGS / "llama-3.1-8b"), "--to", str(target))
    assert message.startswith(f"--to {target}: cannot write models.yaml into {folder}"), message
    assert ".importing" not in message
    missing = tmp_path / "nowhere" / "models.yaml"
    assert error_of("import", str(CONFIGS / "llama-3.1-8b"), "--to", str(missing)).startswith(
        f"--to {missing}: its folder {tmp_path / 'nowhere'} does not exist")
    result = invoke("import", str(CONFIGS / "llama-3.1-8b"), "--to", str(tmp_path))
    assert result.exit_code == 2 and "is a directory" in result.output
