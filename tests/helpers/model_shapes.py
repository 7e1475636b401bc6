"""config.json fields of the GPU recipes' models (Qwen2.5 1.5B, 3B and 7B), for the memory estimates' tests: the
Hub is not reachable here, so the shapes are written down once."""

QWEN_1_5B = {
    "vocab_size": 151936,
    "hidden_size": 1536,
    "num_hidden_layers": 28,
    "num_attention_heads": 12,
    "num_key_value_heads": 2,
    "intermediate_size": 8960,
    "tie_word_embeddings": True,
    "max_position_embeddings": 32768,  # vLLM's max_model_len when vllm_max_model_length is unset
}
QWEN_3B = {
    **QWEN_1_5B,
    "hidden_size": 2048,
    "num_hidden_layers": 36,
    "num_attention_heads": 16,
    "intermediate_size": 11008,
}
QWEN_7B = {
    "vocab_size": 152064,
    "hidden_size": 3584,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "intermediate_size": 18944,
    "tie_word_embeddings": False,
    "max_position_embeddings": 32768,
}
