"""Hugging Face transformers models through the graph-capture route (`msmigrate trace`).

Each architecture is a tiny random config built from its config class (no downloads), with seeded
weights. It is traced with msmigrate.trace (torch.export -> model.py + model.ckpt) on realistic
inputs: token ids drawn over the whole vocabulary and attention masks with padding (left padding for
decoder LMs, right padding for encoders). The written model is then run in a process that never
imports torch, in PYNATIVE and GRAPH mode, against torch's logits (max|d| <= 1e-4 * max(1, max|y|)).

The model keeps its Hugging Face defaults (use_cache=True for decoders), as a new user would get it.

    python bench/hf_zoo.py                       # all
    python bench/hf_zoo.py --archs bert,gpt2 --work /tmp/hz

Prints one row per architecture and the pass counts."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VOCAB = 99
BATCH, SEQ = 2, 12

# name -> (transformers class, config class, config kwargs, input kind, output field)
_TEXT = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
             max_position_embeddings=64)
_DEC = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            intermediate_size=64, max_position_embeddings=64)
_VIS = dict(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=37)
ARCHS = {
    "bert": ("BertModel", "BertConfig", _TEXT, "encoder", "last_hidden_state"),
    "bert_mlm": ("BertForMaskedLM", "BertConfig", _TEXT, "encoder", "logits"),
    "roberta": ("RobertaForMaskedLM", "RobertaConfig", dict(_TEXT, pad_token_id=1), "encoder", "logits"),
    "gpt2": ("GPT2LMHeadModel", "GPT2Config",
             dict(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64), "decoder", "logits"),
    "llama": ("LlamaForCausalLM", "LlamaConfig", _DEC, "decoder", "logits"),
    "qwen2": ("Qwen2ForCausalLM", "Qwen2Config", _DEC, "decoder", "logits"),
    "mistral": ("MistralForCausalLM", "MistralConfig", dict(_DEC, sliding_window=8), "decoder", "logits"),
    "qwen2_moe": ("Qwen2MoeForCausalLM", "Qwen2MoeConfig",
                  dict(_DEC, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                       shared_expert_intermediate_size=32), "decoder", "logits"),
    "mixtral": ("MixtralForCausalLM", "MixtralConfig", dict(_DEC, num_local_experts=4, num_experts_per_tok=2),
                "decoder", "logits"),
    "t5": ("T5ForConditionalGeneration", "T5Config",
           dict(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_heads=4,
                relative_attention_num_buckets=8, decoder_start_token_id=0), "seq2seq", "logits"),
    "vit": ("ViTForImageClassification", "ViTConfig", dict(_VIS, num_labels=10), "image", "logits"),
    "whisper": ("WhisperForConditionalGeneration", "WhisperConfig",
                dict(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                     decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, num_mel_bins=16,
                     max_source_positions=30, max_target_positions=40, decoder_start_token_id=1,
                     pad_token_id=0, bos_token_id=1, eos_token_id=2), "audio", "logits"),
    "clip": ("CLIPModel", "CLIPConfig", None, "clip", "logits_per_image"),
}
DEFAULT = [a for a in ARCHS if a != "mixtral"]


def hide_torchvision():
    """The venv's torchvision wheel does not load with its torch (`operator torchvision::nms does not
    exist`); transformers imports it when it finds it. None in sys.modules makes find_spec say absent."""
    sys.modules.setdefault("torchvision", None)


def _config(name):
    hide_torchvision()
    import transformers

    cls_name, cfg_name, kw, _, _ = ARCHS[name]
    if name == "clip":
        text = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                    max_position_embeddings=32)
        return transformers.CLIPConfig(text_config=text, vision_config=dict(_VIS), projection_dim=16)
    return getattr(transformers, cfg_name)(**kw)


def padded_mask(batch, seq, left):
    """Row i has i * 3 padding positions (row 0 none), on the left or the right."""
    import torch

    mask = torch.ones(batch, seq, dtype=torch.long)
    for i in range(batch):
        n = min(3 * i, seq - 1)
        if n:
            if left:
                mask[i, :n] = 0
            else:
                mask[i, seq - n:] = 0
    return mask


def build(name):
    """(torch module taking positional tensors, example inputs)."""
    hide_torchvision()
    import torch
    import transformers

    cls_name, _, _, kind, field = ARCHS[name]
    torch.manual_seed(0)
    model = getattr(transformers, cls_name)(_config(name)).eval()
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
    if kind == "encoder":
        names, args = ["input_ids", "attention_mask"], [ids, padded_mask(BATCH, SEQ, left=False)]
    elif kind == "decoder":
        names, args = ["input_ids", "attention_mask"], [ids, padded_mask(BATCH, SEQ, left=True)]
    elif kind == "seq2seq":
        dec = torch.randint(0, VOCAB, (BATCH, 7), generator=g)
        names, args = ["input_ids", "attention_mask", "decoder_input_ids"], [ids, padded_mask(BATCH, SEQ, False), dec]
    elif kind == "image":
        names, args = ["pixel_values"], [torch.randn(BATCH, 3, 32, 32, generator=g)]
    elif kind == "audio":
        dec = torch.randint(0, VOCAB, (BATCH, 7), generator=g)
        names, args = ["input_features", "decoder_input_ids"], [torch.randn(BATCH, 16, 60, generator=g), dec]
    else:  # clip
        names = ["input_ids", "pixel_values", "attention_mask"]
        args = [ids, torch.randn(BATCH, 3, 32, 32, generator=g), padded_mask(BATCH, SEQ, left=False)]

    class HFCall(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.model = m

        def forward(self, x0, x1=None, x2=None):  # named: torch.export matches dynamic shapes by position
            return getattr(self.model(**dict(zip(names, (x0, x1, x2)))), field)

    return HFCall(model), tuple(args)


def one(name: str, work: Path) -> dict:
    from msmigrate.trace import CaptureError, trace_model

    net, args = build(name)
    t = time.perf_counter()
    row = {"arch": name}
    try:
        res = trace_model(net, args, work / name, source=f"transformers.{ARCHS[name][0]} (tiny config)")
    except CaptureError as exc:
        row.update(error="export: " + str(exc).replace("\n", " ")[:300], seconds=round(time.perf_counter() - t, 1))
        return row
    row.update(seconds=round(time.perf_counter() - t, 1), missing=sorted({m[0] for m in res.missing}),
               pynative_in_process=res.pynative_diff, tol=res.tol, notes=res.notes)
    if res.first_bad:
        row["first_bad"] = {k: res.first_bad.get(k) for k in ("node", "op", "max_abs_diff", "error")}
    if res.check:
        row.update({m: res.check.get(m) for m in ("pynative", "graph") if m in res.check})
        if "error" in res.check:
            row["error"] = res.check["error"][-300:]
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--work", default=str(ROOT / "bench" / "_work" / "hf_zoo"))
    p.add_argument("--archs", default=",".join(DEFAULT))
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--timeout", type=int, default=900)
    a = p.parse_args(argv)
    work = Path(a.work)
    if a.one:
        print("ROW " + json.dumps(one(a.one, work), default=str), flush=True)
        return 0
    archs = [x for x in a.archs.split(",") if x]
    env = dict(os.environ, PYTHONPATH=str(ROOT), ONEDNN_MAX_CPU_ISA="AVX2")
    rows = {}
    for arch in archs:
        cmd = [sys.executable, __file__, "--one", arch, "--work", str(work)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
            line = [x for x in r.stdout.splitlines() if x.startswith("ROW ")]
            rows[arch] = json.loads(line[-1][4:]) if line else {
                "arch": arch, "error": ((r.stderr or r.stdout).strip().splitlines() or ["failed"])[-1][:300]}
        except subprocess.TimeoutExpired:
            rows[arch] = {"arch": arch, "error": f"timeout after {a.timeout} s"}
        print(json.dumps(rows[arch], default=str), flush=True)
    work.mkdir(parents=True, exist_ok=True)
    (work / "results.json").write_text(json.dumps(rows, indent=1, default=str))
    print(f"\n{'architecture':12} {'pynative':>12} {'graph':>12}  seconds / problem")
    counts = {"pynative": 0, "graph": 0}
    for arch in archs:
        r = rows[arch]
        cells = []
        for m in counts:
            v = r.get(m)
            if isinstance(v, dict) and "max_abs_diff" in v:
                cells.append(f"{'pass' if v['pass'] else 'FAIL'} {v['max_abs_diff']:.1e}")
                counts[m] += bool(v["pass"])
            else:
                cells.append("FAIL" if v else "-")
        why = r.get("error") or (f"missing ops {r['missing']}" if r.get("missing") else "") or \
            (f"first bad node {r['first_bad']}" if r.get("first_bad") else "")
        for m in counts:
            if isinstance(r.get(m), dict) and "error" in r[m]:
                why = why or f"{m}: {r[m]['error'][:200]}"
        print(f"{arch:12} {cells[0]:>12} {cells[1]:>12}  {r.get('seconds', '')} {why}")
    n = len(archs)
    print(f"\npass: PYNATIVE {counts['pynative']}/{n}, GRAPH {counts['graph']}/{n}")
    return 0 if all(counts[m] == n for m in counts) else 1


if __name__ == "__main__":
    sys.exit(main())
