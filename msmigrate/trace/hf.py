"""Hugging Face transformers models on the trace route: the traced forwards (and, for generation, the
prefill and KV-cache decode-step graphs) of causal LMs, encoder-decoders, text encoders and vision models."""
from __future__ import annotations


def causal_lm_forward(model):
    """Make `model` (a transformers *ForCausalLM) trace as (input_ids, attention_mask) -> logits, with
    the position ids that generate() derives from the mask (cumsum - 1, 0 on padding) computed inside
    the graph, so that rerunning the whole sequence gives generate()'s logits for left-padded batches.
    The instance's class is swapped for a subclass (same name): state_dict keys stay the HF keys."""
    base = type(model)

    class Traced(base):
        def forward(self, input_ids, attention_mask):
            position_ids = (attention_mask.long().cumsum(-1) - 1).masked_fill(attention_mask == 0, 0)
            out = base.forward(self, input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                               use_cache=False)
            return out.logits

    Traced.__name__ = Traced.__qualname__ = base.__name__
    model.__class__ = Traced
    return model, token_dims(model.config)


def token_dims(config):
    """torch.export dynamic shapes of (input_ids, attention_mask): batch and sequence free, the sequence
    up to the model's position table."""
    import torch

    seq = torch.export.Dim("seq", min=2, max=int(getattr(config, "max_position_embeddings", 0)
                                                  or getattr(config, "n_positions", 1024)))
    batch = torch.export.Dim("batch", min=1, max=1024)
    return ({0: batch, 1: seq}, {0: batch, 1: seq})


def _cache_kwarg(cls) -> str:
    """The name forward() takes the KV cache by: `cache` (transformers >= 5.2x) or `past_key_values`."""
    import inspect

    fwd = inspect.unwrap(cls.forward)
    return "cache" if "cache" in inspect.signature(fwd).parameters else "past_key_values"


def causal_lm_graphs(model):
    """The two graphs of generation with a KV cache, for a transformers *ForCausalLM:
    - prefill, `model` itself (its class swapped, HF state_dict keys kept): (input_ids, attention_mask)
      -> (logits, key_0, value_0, key_1, value_1, ...), each (batch, kv_heads, seq, head_dim); position
      ids from the mask as generate() makes them (cumsum - 1, 0 on padding);
    - decode step, a shallow copy sharing the weights: (new ids (batch, 1), mask over all positions,
      (key_0, value_0, ...)) -> the same outputs for the new position, the cache one position longer;
      position id = number of unmasked positions - 1 (generate() adds 1 to the last one each step).
    The cache is a plain DynamicCache (full layers; a sliding window is applied by the mask, as
    generate()'s cropped cache gives the same attention). Returns (prefill model, its dynamic shapes,
    step(example_ids, example_mask) -> (step module, step args, step dynamic shapes))."""
    import copy

    import torch
    from transformers import DynamicCache

    base = type(model)
    kw = _cache_kwarg(base)

    def flat(cache):
        return tuple(t for layer in cache.layers for t in (layer.keys, layer.values))

    class Prefill(base):
        def forward(self, input_ids, attention_mask):
            position_ids = (attention_mask.long().cumsum(-1) - 1).masked_fill(attention_mask == 0, 0)
            cache = DynamicCache()
            out = base.forward(self, input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                               use_cache=True, **{kw: cache})
            return (out.logits,) + flat(cache)

    class DecodeStep(base):
        def forward(self, input_ids, attention_mask, past):
            cache = DynamicCache()
            for i in range(len(past) // 2):
                cache.update(past[2 * i], past[2 * i + 1], i)
            position_ids = attention_mask.long().sum(-1, keepdim=True) - 1
            out = base.forward(self, input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                               use_cache=True, **{kw: cache})
            return (out.logits,) + flat(cache)

    for cls in (Prefill, DecodeStep):
        cls.__name__ = cls.__qualname__ = base.__name__
    step_model = copy.copy(model)   # shares parameters and submodules
    model.__class__ = Prefill
    step_model.__class__ = DecodeStep
    seq = torch.export.Dim("seq", min=2, max=int(getattr(model.config, "max_position_embeddings", 0)
                                                  or getattr(model.config, "n_positions", 1024)))
    batch = torch.export.Dim("batch", min=1, max=1024)

    def step(ids, mask):
        """Example decode-step inputs after a prefill on (ids, mask): the greedy next token."""
        with torch.no_grad():
            logits, *past = model(ids, mask)
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        mask2 = torch.cat([mask, torch.ones_like(nxt)], 1)
        auto = torch.export.Dim.AUTO   # torch derives the relations (mask = past + 1) itself
        shapes = ({0: auto}, {0: auto, 1: auto}, tuple({0: auto, 2: auto} for _ in past))
        return step_model, (nxt, mask2, tuple(past)), shapes

    return model, ({0: batch, 1: seq}, {0: batch, 1: seq}), step


def seq2seq_graphs(model):
    """The two graphs of generation with a KV cache, for a transformers encoder-decoder LM (T5...):
    - the model graph, `model` itself (class swapped): (input_ids, attention_mask, decoder_input_ids
      (batch, 1), the start token) -> (logits, encoder output, self-attention key_0, value_0, ...);
    - the decode step, a shallow copy sharing the weights: (new decoder ids (batch, 1), encoder output,
      attention_mask, (key_0, value_0, ...)) -> (logits, the self-attention cache one position longer).
      Cross-attention keys/values are recomputed from the encoder output each step (the same values
      generate() caches once). Returns (model, dynamic shapes, step(ids, mask, start) -> (module, args,
      dynamic shapes))."""
    import copy

    import torch
    from transformers import DynamicCache, EncoderDecoderCache
    from transformers.modeling_outputs import BaseModelOutput

    base = type(model)
    kw = _cache_kwarg(base)

    def flat(cache):
        return tuple(t for layer in cache.layers for t in (layer.keys, layer.values))

    class Prefill(base):
        def forward(self, input_ids, attention_mask, decoder_input_ids):
            own = DynamicCache()
            out = base.forward(self, input_ids=input_ids, attention_mask=attention_mask,
                               decoder_input_ids=decoder_input_ids, use_cache=True,
                               **{kw: EncoderDecoderCache(own, DynamicCache())})
            return (out.logits, out.encoder_last_hidden_state) + flat(own)

    class DecodeStep(base):
        def forward(self, decoder_input_ids, encoder_hidden, attention_mask, past):
            own = DynamicCache()
            for i in range(len(past) // 2):
                own.update(past[2 * i], past[2 * i + 1], i)
            out = base.forward(self, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids,
                               encoder_outputs=BaseModelOutput(last_hidden_state=encoder_hidden), use_cache=True,
                               **{kw: EncoderDecoderCache(own, DynamicCache())})
            return (out.logits,) + flat(own)

    for cls in (Prefill, DecodeStep):
        cls.__name__ = cls.__qualname__ = base.__name__
    step_model = copy.copy(model)
    model.__class__ = Prefill
    step_model.__class__ = DecodeStep
    auto = torch.export.Dim.AUTO

    def step(ids, mask, start):
        with torch.no_grad():   # one step past the start token: a cache of length 1 would be specialised
            logits, encoded, *past = model(ids, mask, start)
            logits, *past = step_model(logits[:, -1].argmax(-1, keepdim=True), encoded, mask, tuple(past))
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        shapes = ({0: auto}, {0: auto, 1: auto}, {0: auto, 1: auto}, tuple({0: auto, 2: auto} for _ in past))
        return step_model, (nxt, encoded, mask, tuple(past)), shapes

    return model, ({0: auto, 1: auto}, {0: auto, 1: auto}, {0: auto}), step


def text_forward(model, output):
    """(input_ids, attention_mask) -> one output field (logits, last_hidden_state) of an HF text model."""
    base = type(model)

    class Traced(base):
        def forward(self, input_ids, attention_mask):
            return getattr(base.forward(self, input_ids=input_ids, attention_mask=attention_mask), output)

    Traced.__name__ = Traced.__qualname__ = base.__name__
    model.__class__ = Traced
    return model


def image_forward(model, output):
    """pixel_values -> one output field of an HF vision model."""
    base = type(model)

    class Traced(base):
        def forward(self, pixel_values):
            return getattr(base.forward(self, pixel_values=pixel_values), output)

    Traced.__name__ = Traced.__qualname__ = base.__name__
    model.__class__ = Traced
    return model


def hf_task(cls, config):
    """What `msmigrate hf` traces for a transformers class: "causal" (LM with generate()), "seq2seq" (text
    encoder-decoder with generate()), "vision" (pixel_values), "text" (input_ids, attention_mask), or None."""
    import inspect

    arch = cls.__name__
    # the parameters of forward as written (inspect follows __wrapped__ through transformers' decorators)
    params = set(inspect.signature(cls.forward).parameters)
    vocab = getattr(config, "vocab_size", None) or getattr(getattr(config, "text_config", None), "vocab_size", None)
    if arch.endswith("ForCausalLM") or arch.endswith("LMHeadModel"):
        return "causal"
    if (config.is_encoder_decoder and arch.endswith("ForConditionalGeneration")
            and {"input_ids", "decoder_input_ids"} <= params):
        return "seq2seq"
    if "pixel_values" in params and "input_ids" not in params and not vocab:
        return "vision"
    if vocab and "input_ids" in params and "pixel_values" not in params and not config.is_encoder_decoder:
        return "text"
    return None


def _hide_broken_torchvision(notes):
    """transformers imports torchvision whenever it finds it; a torchvision built for another torch fails
    at import (`operator torchvision::nms does not exist`). Hide it then, and say so."""
    import importlib.util
    import sys

    if "torchvision" in sys.modules or importlib.util.find_spec("torchvision") is None:
        return
    import subprocess

    r = subprocess.run([sys.executable, "-c", "import torchvision"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.modules["torchvision"] = None  # find_spec then reports it absent
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        notes.append(f"torchvision is installed but does not import ({last[:120]}); hidden from transformers")


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json", "vocab.txt",
                   "merges.txt", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "added_tokens.json",
                   "chat_template.jinja", "preprocessor_config.json")


def main_hf(argv=None) -> int:
    """`msmigrate hf MODEL_DIR -o OUT`: a folder written by save_pretrained (config.json + safetensors)
    -> OUT/model.py + model.ckpt (+ a KV-cache decode step and generate() for causal and text encoder-decoder
    LMs), generation_config.json and the tokenizer
    files copied through, trace-report.md naming every op and its max|d|."""
    import argparse
    import shutil
    import sys
    from pathlib import Path

    p = argparse.ArgumentParser(prog="msmigrate hf", description=main_hf.__doc__)
    p.add_argument("model_dir", help="a save_pretrained folder (config.json + *.safetensors); no network is used")
    p.add_argument("-o", "--out", required=True)
    p.add_argument("--batch", type=int, default=2, help="batch of the tracing inputs (default 2)")
    p.add_argument("--seq", type=int, default=12, help="sequence length of the tracing inputs (default 12)")
    p.add_argument("--no-check", action="store_true", help="skip the torch-free PYNATIVE/GRAPH check")
    a = p.parse_args(argv)
    src, out = Path(a.model_dir), Path(a.out)
    if not (src / "config.json").is_file():
        print(f"msmigrate hf: error: {src}/config.json not found (expected a save_pretrained folder)", file=sys.stderr)
        return 2
    notes = []
    _hide_broken_torchvision(notes)
    import torch
    import transformers

    from .core import padding_mask, print_outcome, trace_model

    config = transformers.AutoConfig.from_pretrained(str(src), local_files_only=True)
    arch = (getattr(config, "architectures", None) or [None])[0]
    cls = getattr(transformers, arch, None) if arch else None
    if cls is None:
        print(f"msmigrate hf: error: config.json names no transformers architecture ({arch!r})", file=sys.stderr)
        return 2
    model = cls.from_pretrained(str(src), local_files_only=True).eval()
    g = torch.Generator().manual_seed(0)
    vocab = getattr(config, "vocab_size", None) or getattr(getattr(config, "text_config", None), "vocab_size", None)
    dyn, generate, decode = None, False, None
    task = hf_task(cls, config)
    if task == "causal":
        model, dyn, step = causal_lm_graphs(model)
        args = (torch.randint(0, vocab, (a.batch, a.seq), generator=g), padding_mask((a.batch, a.seq), left=True))
        decode = step(*args)
        generate, kind = True, ("causal LM: prefill (input_ids, attention_mask) -> (logits, KV cache), decode step "
                                "with the KV cache in and out, generate() (greedy or sampled)")
    elif (task == "seq2seq"
          and getattr(model.generation_config, "decoder_start_token_id", None) is not None):
        model, dyn, step = seq2seq_graphs(model)
        start = torch.full((a.batch, 1), int(model.generation_config.decoder_start_token_id), dtype=torch.long)
        args = (torch.randint(0, vocab, (a.batch, a.seq), generator=g), padding_mask((a.batch, a.seq)), start)
        decode = step(*args)
        generate, kind = "seq2seq", ("encoder-decoder LM: (input_ids, attention_mask, decoder start) -> (logits, "
                                     "encoder output, KV cache), decode step with the cache in and out, generate()")
    elif task == "vision":
        size = getattr(config, "image_size", 224)
        size = size if isinstance(size, int) else size[0]
        field = "last_hidden_state" if arch.endswith("Model") else "logits"
        model = image_forward(model, field)
        args = (torch.randn(a.batch, getattr(config, "num_channels", 3), size, size, generator=g),)
        kind = "vision model: pixel_values -> " + field
    elif task == "text":
        field = "last_hidden_state" if arch.endswith("Model") else "logits"
        model, dyn = text_forward(model, field), token_dims(config)
        args = (torch.randint(0, vocab, (a.batch, a.seq), generator=g), padding_mask((a.batch, a.seq)))
        kind = f"text encoder: (input_ids, attention_mask) -> {field}"
    else:
        print(f"msmigrate hf: error: {arch} is not handled yet (causal LMs, text encoder-decoders, text encoders and "
              f"vision models are; speech and multi-modal heads are not)", file=sys.stderr)
        return 2
    res = trace_model(model, args, out, source=f"{src} ({arch})", dynamic_shapes=dyn, generate=generate,
                      check=not a.no_check, decode=decode)
    for n in notes + res.notes:
        print(f"msmigrate hf: note: {n}")
    copied = [f for f in TOKENIZER_FILES if (src / f).is_file()]
    for f in copied:
        shutil.copy2(src / f, out / f)
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.to_json_file(str(out / "generation_config.json"))
    print(f"msmigrate hf: {arch}, {kind}")
    return print_outcome("msmigrate hf", res, f"{out / 'model.py'}, model.ckpt, trace-report.md"
                         + (", generation_config.json" if (out / "generation_config.json").exists() else "")
                         + (f", {', '.join(copied)}" if copied else ""))
