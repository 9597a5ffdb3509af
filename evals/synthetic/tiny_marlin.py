"""A tiny, randomly initialised model of Marlin's architecture (Qwen3.5 VL), built offline.

A test instrument for the CPU engine's plumbing: same classes, config layout, tokenizer
family, processor and chat template shape as the real checkpoint, a few hundred kilobytes
of random weights. It produces noise, not captions; what it proves is that a request goes
from HTTP through video decoding, the processor and ``generate`` and back as a chat completion.
"""

from __future__ import annotations

import json
from pathlib import Path

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
           "<|image_pad|>", "<|video_pad|>", "<think>", "</think>"]

CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _byte_vocab() -> dict[str, int]:
    from tokenizers.pre_tokenizers import ByteLevel

    alphabet = sorted(ByteLevel.alphabet())
    return {symbol: index for index, symbol in enumerate(alphabet)}


def build_tiny_marlin(folder: Path) -> Path:
    """Write a tokenizer, processor and random Qwen3.5-VL model into ``folder``."""
    import torch
    from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration
    from transformers.models.qwen3_5.tokenization_qwen3_5 import Qwen3_5Tokenizer
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    folder.mkdir(parents=True, exist_ok=True)
    vocab = _byte_vocab()
    tokenizer = Qwen3_5Tokenizer(vocab=vocab, merges=[])
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL[1:]})
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIAL}
    tokenizer.eos_token = "<|im_end|>"
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    # The video processor's settings as the checkpoint ships them (its processing code needs no torchvision
    # when the CPU engine hands it frames already resized and normalised).
    Qwen3VLVideoProcessor().save_pretrained(folder)
    (folder / "chat_template.jinja").write_text(CHAT_TEMPLATE)

    torch.manual_seed(0)
    config = Qwen3_5Config(
        text_config={
            "vocab_size": len(tokenizer), "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
            "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_num_key_heads": 2,
            "linear_num_value_heads": 4, "layer_types": ["linear_attention", "full_attention"],
            "max_position_embeddings": 4096, "eos_token_id": ids["<|im_end|>"], "pad_token_id": ids["<|endoftext|>"],
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3],
                                "mrope_interleaved": True, "partial_rotary_factor": 1.0},
        },
        vision_config={"depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "patch_size": 16,
                       "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 64,
                       "num_position_embeddings": 256},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
    )
    model = Qwen3_5ForConditionalGeneration(config).eval()
    model.save_pretrained(folder)
    # The real checkpoint names its custom class; engines must serve it through the Qwen3.5 code anyway.
    saved = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**saved, "architectures": ["MarlinForConditionalGeneration"]}))
    return folder


# A chat template in the Qwen family's shape for tools: signatures in a system turn, calls as
# <tool_call>{...}</tool_call>, results as <tool_response> turns.
CHAT_TEMPLATE_WITH_TOOLS = (
    "{% if tools %}<|im_start|>system\n"
    "{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}\n\n{% endif %}"
    "Functions you may call:\n<tools>\n{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}</tools>\n"
    "To call one, answer <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>.<|im_end|>\n"
    "{% elif messages[0]['role'] == 'system' %}<|im_start|>system\n{{ messages[0]['content'] }}<|im_end|>\n{% endif %}"
    "{% for message in messages %}"
    "{% if message['role'] == 'tool' %}<|im_start|>user\n<tool_response>\n{{ message['content'] }}\n"
    "</tool_response><|im_end|>\n"
    "{% elif message['role'] == 'assistant' %}<|im_start|>assistant\n{{ message['content'] }}"
    "{% if message['tool_calls'] is defined %}{% for call in message['tool_calls'] %}<tool_call>"
    "{{ {'name': call['function']['name'], 'arguments': call['function']['arguments']} | tojson }}</tool_call>"
    "{% endfor %}{% endif %}<|im_end|>\n"
    "{% elif message['role'] != 'system' %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_tiny_chat_model(folder: Path) -> Path:
    """A tiny, randomly initialised Qwen2 text model with a tool-calling chat template: the
    planner the CPU engine serves, for plumbing tests (its answers are noise)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from transformers.models.qwen3_5.tokenization_qwen3_5 import Qwen3_5Tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = Qwen3_5Tokenizer(vocab=_byte_vocab(), merges=[])
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    tokenizer.eos_token = "<|im_end|>"
    tokenizer.chat_template = CHAT_TEMPLATE_WITH_TOOLS
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                         eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"))
    Qwen2ForCausalLM(config).eval().save_pretrained(folder)
    return folder
