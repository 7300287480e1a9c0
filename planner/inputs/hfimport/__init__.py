"""Hugging Face model folders and config.json files as model catalog entries.

``planner import`` and ``--models FOLDER`` read a model the project has not seen. The conversion
(:func:`convert`) is pure: parsed config dicts (and, when the folder has them, the safetensors
index, shard headers and model card) in; a catalog entry, the line each field came from and the
config fields it did not use out. The readers around it (:func:`read_json`, :func:`import_path`,
:func:`folder_catalog`) only find and parse files, keeping line numbers so that every error names
the file, line and field at fault.

What a naive reading gets wrong, and this one does not: vision-language models nest the text model
under ``text_config`` (Gemma 3, Llama 4, Mistral 3) or ``llm_config`` (InternVL); configs leave
fields at their transformers class defaults (Gemma 3's vocabulary, tied embeddings and 5:1
sliding pattern); the layer pattern is spelt ``layer_types``, ``full_attention_interval``,
``sliding_window_pattern``, ``use_sliding_window``/``max_window_layers`` or
``no_rope_layers``/``attention_chunk_size``; ``quantization_config`` says how the weights are
stored; ``q_lora_rank: null`` is MLA without query compression.
"""

# files.py finds and parses the files; convert.py (with quantisation.py and params.py) turns
# a parsed config into a checked catalog entry; reading.py imports paths and folders;
# writing.py writes entries as YAML and appends them to a catalog.
