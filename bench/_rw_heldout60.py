"""The `heldout60` set of bench/real_world.py (`--set heldout60`): speech, a language model and low-rank adapters:
openai/whisper (the encoder-decoder Whisper of whisper/model.py from a small ModelDimensions with random weights,
audio.log_mel_spectrogram, training steps of a cross-entropy loss on tokens, greedy and beam-search decoding through
decoding.py's PyTorchInference and its kv-cache forward hooks, install_kv_cache_hooks), google/gemma_pytorch
(GemmaForCausalLM of gemma/model.py for Gemma 1, 2 and 3 configs made small: next-token training steps and the
model's own generate(), greedy and sampled) and microsoft/LoRA (loralib's Linear, Embedding, MergedLinear and
Conv2d in a small model, mark_only_lora_as_trainable, training steps, the merge of eval() and lora_state_dict),
converted as a new user would convert them, through drivers of ours calling their documented entry points.

    python bench/real_world.py --mirrors /work/.mirror --set heldout60 [--only whisper_greedy,lora_plain]

- whisper (the whisper package as it is, its assets/mel_filters.npz included; whisper/__init__.py imports
  transcribe.py, timing.py and tokenizer.py, which import numba and tiktoken, not installed here: stand-ins of ours
  on both sides, never called: numba.jit returns the function, tiktoken.Encoding raises): a driver builds
  `Whisper(ModelDimensions(n_mels=80, n_audio_ctx=32, n_audio_state=32, n_audio_head=4, n_audio_layer=2,
  n_vocab=64, n_text_ctx=16, n_text_state=32, n_text_head=4, n_text_layer=2))` under `torch.manual_seed(0)`
  (TextDecoder's positional_embedding, torch.empty in the model, drawn `normal_(std=0.02)`), computes
  `audio.log_mel_spectrogram(audio.pad_or_trim(wave, 10240))` of two synthetic 16 kHz waveforms (two sines each
  with NumPy's seeded noise; 64 mel frames of 80 bins with the package's own filters, stacked into a batch of 2),
  token sequences of 12 from `torch.randint` behind a start-of-transcript token 60 (63 the end of text), trains
  `model(mel, tokens[:, :-1])` with `F.cross_entropy` against `tokens[:, 1:]` (AdamW, lr 3e-3) for 4 steps, then
  in eval mode: the logits' mean |.| as a VALUE, and decoding as DecodingTask._main_loop and run() do it
  without their tokenizer's logit filters: `model.embed_audio(mel)`, `decoding.PyTorchInference(model, 1)`
  (whose first logits() installs `model.install_kv_cache_hooks()`, forward hooks on the decoder's key and value
  projections that concatenate the cache), its logits of the last token fed to a decoding TokenDecoder's update()
  until completed or 16 tokens, cleanup_caching() (the hooks removed), finalize(), the tokens cut at the first end
  of text, `decoding.MaximumLikelihoodRanker(None).rank(...)`: the chosen tokens and summed log-probabilities
  as VALUEs, and one logits pass of the decoded tokens without the cache against the cached pass's last logits.
  - whisper_greedy: SDPA attention (MultiHeadAttention.use_sdpa, torch's scaled_dot_product_attention with
    is_causal), `decoding.GreedyDecoder(temperature=0.0, eot=63)`.
  - whisper_beam: under `model.disable_sdpa()` (whisper.model's context manager) (the explicit qk path with the decoder's -inf triangular mask),
    `decoding.BeamSearchDecoder(beam_size=2, eot=63, inference, patience=None)` over tokens
    `repeat_interleave`d by 2 (rearrange_kv_cache reorders the hooks' caches to the chosen beams).
- gemma_pytorch (the gemma package as it is; tokenizer.py imports sentencepiece, not installed here: a stand-in
  SentencePieceProcessor of ours on both sides, a character tokenizer of 64 ids, pad 0, eos 1, bos 2; the driver
  writes the file the config's tokenizer path names, as Tokenizer asserts it exists): a driver takes
  `config.get_model_config(VARIANT, dtype='float32')` with its architecture's features and makes it small with
  dataclasses.replace (vocabulary 64, 32 positions, 2 layers, 4 heads, hidden 32, intermediate 64, head_dim 8,
  the variant's attention types cut to 2 layers, sliding window 4), builds `model.GemmaForCausalLM(config)`
  under `torch.manual_seed(0)` and draws its torch.empty weights `normal_(std=0.1)` (the RMSNorm weights stay
  zero: 1 + weight), sets every parameter trainable (the model freezes its Linear and Embedding weights, it ships
  for inference), and trains 3 AdamW steps (lr 1e-2) of the next-token cross-entropy of 2 sequences of 9 tokens
  from `torch.randint` computed as GemmaForCausalLM.forward computes its hidden states and Sampler its logits
  (forward is under `torch.no_grad()`): the embedder times sqrt(hidden), `model.model(...)` with fresh zero kv
  caches, kv_write_indices the positions, the causal mask (and the sliding-window mask) as generate() builds them,
  the rotary tables of `model.freqs_cis` (or local_freqs_cis and global_freqs_cis), the final softcapping where
  the config has it. Then `model.generate(["hello", "gemma"], device="cpu", output_len=6, temperature=None)`
  (greedy: Sampler's argmax) and `model.generate("abc", device="cpu", output_len=6, temperature=0.8,
  top_p=0.9, top_k=1)` (Sampler's temperature, sort, cumsum, top-p and top-k masks, gather, multinomial; top_k=1
  leaves one candidate, as the bench's runner cannot give both sides the same draws inside a module) as VALUEs (the decoded strings as numbers: sum of (position + 1) * ord(character)).
  - gemma_v1: variant '2b' (Gemma 1, one key-value head: repeat_interleave of the cache).
  - gemma_v2: variant '2b-v2' (Gemma 2: local sliding and global layers, attention and final logit softcapping,
    pre and post feed-forward norms).
  - gemma_v3: variant '1b' (Gemma 3: query/key RMSNorm, rope_wave_length's two rotary tables).
- LoRA (loralib as it is): a driver builds a small model of ours under `torch.manual_seed(0)`: `lora.Embedding(40,
  16, r=4, lora_alpha=8)`, `lora.MergedLinear(16, 48, r=4, lora_alpha=8, enable_lora=[True, False, True])` for
  q, k and v (chunk, softmax attention), `lora.Linear(16, 16, r=4, lora_alpha=8)`, `lora.Conv2d(3, 8, 3, r=2,
  lora_alpha=4, padding=1)` over 3x8x8 images, and an nn.Linear head over the two mean-pooled branches; a
  fixed batch of 4 token sequences of 6 and 4 images (torch.randint, torch.randn); one no_grad forward (the
  initial outputs, a VALUE), the state_dict saved as pretrained.pt (torch.save), `lora.mark_only_lora_as_trainable(
  model, bias=BIAS)`, 4 Adam steps (lr 1e-2) of F.cross_entropy over the trainable parameters, then `model.eval()` (each layer's train(False) adds
  B @ A * scaling into its weight: merged), the eval-mode outputs and the merged weights' sums as VALUEs,
  `lora.lora_state_dict(model, bias=BIAS)` (its size and sum as VALUEs) saved with torch.save; a second model
  built beside the first loads pretrained.pt, then the LoRA file, both `strict=False` as the README does, and in
  eval mode gives its outputs (a VALUE); then `model.train()` unmerges and a training-mode forward gives a VALUE.
  - lora_plain: bias='none'.
  - lora_fan_in_fan_out: bias='lora_only', the Linear and MergedLinear with `fan_in_fan_out=True` (GPT-2's
    Conv1D layout: the weight transposed in __init__ through `.data`).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

WHISPER = "openai+whisper@c0d2f624c09dc18e709e37c2ad90c039a4eb72a2"
GEMMA = "google+gemma_pytorch@014acb7ac4563a5f77c76d7ff98f31b568c16508"
LORA = "microsoft+LoRA@c4593f060e6a368d7bb5af5273b8e42810cdef90"

_WHISPER_DRIVER = '''
import numpy as np
import torch
import torch.nn.functional as F

from whisper import audio, decoding
from whisper.model import ModelDimensions, Whisper, disable_sdpa

torch.manual_seed(0)
dims = ModelDimensions(n_mels=80, n_audio_ctx=32, n_audio_state=32, n_audio_head=4, n_audio_layer=2,
                       n_vocab=64, n_text_ctx=16, n_text_state=32, n_text_head=4, n_text_layer=2)
model = Whisper(dims)
with torch.no_grad():
    model.decoder.positional_embedding.normal_(std=0.02)

rng = np.random.RandomState(0)
t = np.arange(10000) / audio.SAMPLE_RATE
waves = [0.5 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 1250 * t),
         0.4 * np.sin(2 * np.pi * 300 * t + 1.0) + 0.3 * np.sin(2 * np.pi * 2100 * t)]
mel = torch.stack([audio.log_mel_spectrogram(audio.pad_or_trim((w + 0.01 * rng.randn(len(w))).astype(np.float32),
                                                               10240)) for w in waves])
print("mel", tuple(mel.shape))

SOT, EOT = 60, 63
tokens = torch.cat([torch.full((2, 1), SOT), torch.randint(0, 60, (2, 11))], 1)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
model.train()
for step in range(4):
    logits = model(mel, tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, dims.n_vocab), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, loss.item())

model.eval()


def decode(mel):
    with torch.no_grad():
        audio_features = model.embed_audio(mel)
        print("VALUE logits", float(model.logits(tokens[:, :-1], audio_features).abs().mean()))
        n_group = {n_group}
        inference = decoding.PyTorchInference(model, 1)
        decoder = {decoder}
        decoder.reset()
        n_audio = mel.shape[0]
        tokens_ = torch.tensor([[SOT]]).repeat(n_audio, 1)
        tokens_ = tokens_.repeat_interleave(n_group, dim=0)
        audio_features = audio_features.repeat_interleave(n_group, dim=0)
        sum_logprobs = torch.zeros(tokens_.shape[0])
        try:
            for i in range(16):
                logits = inference.logits(tokens_, audio_features)
                logits = logits[:, -1]
                last_logits = logits
                tokens_, completed = decoder.update(tokens_, logits, sum_logprobs)
                if completed or tokens_.shape[-1] > dims.n_text_ctx:
                    break
        finally:
            inference.cleanup_caching()
        if n_group == 1:    # greedy: the rows fed are the rows decoded (a beam search reorders them)
            full = model.logits(tokens_[:, :-1], audio_features)[:, -1]
            print("VALUE cache_vs_full", float((full - last_logits).abs().max() < 1e-3))
        tokens_ = tokens_.reshape(n_audio, n_group, -1)
        sum_logprobs = sum_logprobs.reshape(n_audio, n_group)
        tokens_, sum_logprobs = decoder.finalize(tokens_, sum_logprobs)
        tokens_ = [[t[1: (t == EOT).nonzero()[0, 0]] for t in s] for s in tokens_]
        selected = decoding.MaximumLikelihoodRanker(None).rank(tokens_, sum_logprobs)
        tokens_ = [t[i].tolist() for i, t in zip(selected, tokens_)]
        sum_logprobs = [lp[i] for i, lp in zip(selected, sum_logprobs)]
        for k, (t, lp) in enumerate(zip(tokens_, sum_logprobs)):
            print("tokens", k, t)
            print("VALUE tokens_" + str(k), float(sum((j + 1) * v for j, v in enumerate(t))))
            print("VALUE length_" + str(k), float(len(t)))
            print("VALUE sum_logprob_" + str(k), float(lp))


{decode_call}
'''

_NUMBA = '''
"""A stand-in written by bench/_rw_heldout60.py: numba is not installed; whisper/timing.py imports it for its
dynamic time warping (word timestamps), which nothing here calls. jit returns the function as it is."""


def jit(*args, **kwargs):
    if args and callable(args[0]):
        return args[0]
    return lambda function: function
'''

_TIKTOKEN = '''
"""A stand-in written by bench/_rw_heldout60.py: tiktoken is not installed; whisper/tokenizer.py imports it, and
nothing here builds a tokenizer."""


class Encoding:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("the stand-in's tiktoken is imported, not used")
'''

_GEMMA_DRIVER = '''
import dataclasses

import torch
import torch.nn.functional as F

from gemma import config as gemma_config
from gemma import model as gemma_model

with open("tokenizer.model", "w") as f:
    f.write("the stand-in sentencepiece reads nothing here")

base = gemma_config.get_model_config("{variant}", dtype="float32")
attn_types = base.attn_types[:2] if base.attn_types is not None else None
config = dataclasses.replace(base, vocab_size=64, max_position_embeddings=32, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads={kv_heads}, hidden_size=32,
                             intermediate_size=64, head_dim=8, attn_types=attn_types,
                             sliding_window_size=4 if base.sliding_window_size else None,
                             query_pre_attn_scalar=16 if base.query_pre_attn_scalar else None,
                             tokenizer="tokenizer.model")
torch.manual_seed(0)
model = gemma_model.GemmaForCausalLM(config)
with torch.no_grad():
    for name, p in model.named_parameters():
        if not name.endswith("norm.weight"):
            p.normal_(std=0.1)
for p in model.parameters():
    p.requires_grad_(True)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)

batch, seq = 2, 8
ids = torch.randint(3, 64, (batch, seq + 1))
positions = torch.arange(0, seq, dtype=torch.int64)
mask = torch.triu(torch.full((1, 1, seq, seq), -2.3819763e38).to(torch.float), diagonal=1)
local_mask = mask + torch.tril(torch.full((1, 1, seq, seq), -2.3819763e38),
                               diagonal=-config.sliding_window_size) if config.sliding_window_size else None
if config.architecture == gemma_config.Architecture.GEMMA_3:
    freqs = {{gemma_config.AttentionType.LOCAL_SLIDING: model.local_freqs_cis.index_select(0, positions),
             gemma_config.AttentionType.GLOBAL: model.global_freqs_cis.index_select(0, positions)}}
else:
    freqs = {{gemma_config.AttentionType.LOCAL_SLIDING: model.freqs_cis.index_select(0, positions),
             gemma_config.AttentionType.GLOBAL: model.freqs_cis.index_select(0, positions)}}


def next_token_loss(ids):
    inputs, targets = ids[:, :-1], ids[:, 1:]
    kv_caches = []
    for _ in range(config.num_hidden_layers):
        size = (batch, seq, config.num_key_value_heads, config.head_dim)
        kv_caches.append((torch.zeros(size=size, dtype=config.get_dtype()),
                          torch.zeros(size=size, dtype=config.get_dtype())))
    hidden_states = model.embedder(inputs)
    normalizer = torch.tensor(config.hidden_size ** 0.5, dtype=hidden_states.dtype)
    hidden_states = hidden_states * normalizer
    hidden_states = model.model(hidden_states=hidden_states, freqs_cis=freqs, kv_write_indices=positions,
                                kv_caches=kv_caches, mask=mask, local_mask=local_mask)
    logits = torch.matmul(hidden_states, model.embedder.weight.t())
    if config.final_logit_softcapping is not None:
        logits = torch.tanh(logits / config.final_logit_softcapping) * config.final_logit_softcapping
    return F.cross_entropy(logits.reshape(-1, config.vocab_size), targets.reshape(-1))


for step in range(3):
    loss = next_token_loss(ids)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, loss.item())


def code(text):
    return float(sum((i + 1) * ord(c) for i, c in enumerate(text)))


greedy = model.generate(["hello", "gemma"], device="cpu", output_len=6, temperature=None)
print("greedy", greedy)
for k, text in enumerate(greedy):
    print("VALUE greedy_" + str(k), code(text))
# Sampler's sampling path (temperature, sort, cumsum, the top-p and top-k masks, gather, multinomial) with top_k=1:
# one candidate left, whatever the multinomial draws (drawn inside a module, where the bench's runner cannot give
# both sides the same random numbers)
sampled = model.generate("abc", device="cpu", output_len=6, temperature=0.8, top_p=0.9, top_k=1)
print("sampled", repr(sampled))
print("VALUE sampled", code(sampled))
'''

_SENTENCEPIECE = '''
"""A stand-in written by bench/_rw_heldout60.py: sentencepiece is not installed; gemma/tokenizer.py loads its
SentencePieceProcessor. This one is a character tokenizer of 64 ids: pad 0, eos 1, bos 2, a character c is
3 + ord(c) % 61, and an id i decodes to chr(32 + i % 64)."""


class SentencePieceProcessor:
    def Load(self, model_path):
        self.model_path = model_path

    def GetPieceSize(self):
        return 64

    def bos_id(self):
        return 2

    def eos_id(self):
        return 1

    def pad_id(self):
        return 0

    def EncodeAsIds(self, s):
        return [3 + ord(c) % 61 for c in s]

    def DecodeIds(self, ids):
        return "".join(chr(32 + i % 64) for i in ids)
'''

_LORA_DRIVER = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

import loralib as lora

BIAS = "{bias}"
FAN_IN_FAN_OUT = {fan_in_fan_out}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = lora.Embedding(40, 16, r=4, lora_alpha=8)
        self.qkv = lora.MergedLinear(16, 48, r=4, lora_alpha=8, enable_lora=[True, False, True],
                                     fan_in_fan_out=FAN_IN_FAN_OUT)
        self.proj = lora.Linear(16, 16, r=4, lora_alpha=8, fan_in_fan_out=FAN_IN_FAN_OUT)
        self.conv = lora.Conv2d(3, 8, 3, r=2, lora_alpha=4, padding=1)
        self.head = nn.Linear(16 + 8, 5)

    def forward(self, tokens, images):
        x = self.embed(tokens)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attention = torch.softmax(q @ k.transpose(1, 2) / 4.0, dim=-1)
        x = self.proj(attention @ v).mean(1)
        y = F.relu(self.conv(images)).mean((2, 3))
        return self.head(torch.cat([x, y], -1))


torch.manual_seed(0)
model = Net()
restored = Net()
tokens = torch.randint(0, 40, (4, 6))
images = torch.randn(4, 3, 8, 8)
labels = torch.tensor([0, 1, 2, 3])
with torch.no_grad():
    print("VALUE initial_out", float(model(tokens, images).abs().mean()))
torch.save(model.state_dict(), "pretrained.pt")
lora.mark_only_lora_as_trainable(model, bias=BIAS)
trainable = [p for p in model.parameters() if p.requires_grad]
print("VALUE trainable", float(sum(p.numel() for p in trainable)))
optimizer = torch.optim.Adam(trainable, lr=1e-2)

model.train()
for step in range(4):
    loss = F.cross_entropy(model(tokens, images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, loss.item())

model.eval()
with torch.no_grad():
    merged = model(tokens, images)
print("VALUE merged_out", float(merged.abs().mean()))
print("VALUE merged_weights", float(model.embed.weight.abs().sum() + model.qkv.weight.abs().sum()
                                    + model.proj.weight.abs().sum() + model.conv.conv.weight.abs().sum()))
state = lora.lora_state_dict(model, bias=BIAS)
print("lora keys", sorted(state))
print("VALUE lora_keys", float(len(state)))
print("VALUE lora_sum", float(sum(v.abs().sum() for v in state.values())))
torch.save(state, "lora.pt")

restored.load_state_dict(torch.load("pretrained.pt"), strict=False)
restored.load_state_dict(torch.load("lora.pt"), strict=False)
restored.eval()
with torch.no_grad():
    print("VALUE restored_out", float(restored(tokens, images).abs().mean()))
model.train()
with torch.no_grad():
    print("VALUE unmerged_weights", float(model.proj.weight.abs().sum() + model.conv.conv.weight.abs().sum()))
    print("VALUE train_out", float(model(tokens, images).abs().mean()))
'''

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("whisper_greedy", WHISPER, "whisper", "driver.py", [], None),
    ("whisper_beam", WHISPER, "whisper", "driver.py", [], None),
    ("gemma_v1", GEMMA, "gemma", "driver.py", [], None),
    ("gemma_v2", GEMMA, "gemma", "driver.py", [], None),
    ("gemma_v3", GEMMA, "gemma", "driver.py", [], None),
    ("lora_plain", LORA, "loralib", "driver.py", [], None),
    ("lora_fan_in_fan_out", LORA, "loralib", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "whisper_greedy": _WHISPER_DRIVER.format(
        n_group=1, decoder="decoding.GreedyDecoder(temperature=0.0, eot=EOT)", decode_call="decode(mel)"),
    "whisper_beam": _WHISPER_DRIVER.format(
        n_group=2, decoder="decoding.BeamSearchDecoder(2, EOT, inference, None)",
        decode_call="with disable_sdpa():\n    decode(mel)"),
    "gemma_v1": _GEMMA_DRIVER.format(variant="2b", kv_heads=1),
    "gemma_v2": _GEMMA_DRIVER.format(variant="2b-v2", kv_heads=2),
    "gemma_v3": _GEMMA_DRIVER.format(variant="1b", kv_heads=1),
    "lora_plain": _LORA_DRIVER.format(bias="none", fan_in_fan_out=False),
    "lora_fan_in_fan_out": _LORA_DRIVER.format(bias="lora_only", fan_in_fan_out=True),
}

FILES = {**{name: {"numba.py": _NUMBA, "tiktoken.py": _TIKTOKEN} for name, *_ in PROGRAMS
            if name.startswith("whisper_")},
         **{name: {"sentencepiece.py": _SENTENCEPIECE} for name, *_ in PROGRAMS if name.startswith("gemma_")}}

# whisper: 4 AdamW steps; gemma: 3 AdamW steps; LoRA: 4 Adam steps
LOSSES = {name: 4 for name, *_ in PROGRAMS}
