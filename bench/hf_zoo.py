"""Hugging Face transformers models through the graph-capture route (`msmigrate trace`).

Each architecture is a tiny random config built from its config class (no downloads), with seeded
weights. It is traced with msmigrate.trace (torch.export -> model.py + model.ckpt) on realistic
inputs: token ids drawn over the whole vocabulary and attention masks with padding (left padding for
decoder LMs, right padding for encoders). The written model is then run in a process that never
imports torch, in PYNATIVE and GRAPH mode, against torch's logits (max|d| <= 1e-4 * max(1, max|y|)).

The model keeps its Hugging Face defaults (use_cache=True for decoders), as a new user would get it.

    python bench/hf_zoo.py                       # all
    python bench/hf_zoo.py --archs bert,gpt2 --work /tmp/hz
    python bench/hf_zoo.py --generate            # gpt2, llama, qwen2, mistral, t5: greedy generate() with a KV
                                                 # cache, tokens against HF's; decode-step ms GRAPH vs torch
    python bench/hf_zoo.py --finetune [--optimizer sgd]   # bert_cls, gpt2, llama (--archs: also roberta_cls,
                                                 # qwen2): 5 fine-tuning steps (AdamW by default), traced training
                                                 # forward vs torch: per-step loss and first-step gradients,
                                                 # PYNATIVE and GRAPH
    python bench/hf_zoo.py --hf-dir              # bert, gpt2 (--archs: any text or vision model of ARCHS):
                                                 # save_pretrained folder -> `msmigrate hf` CLI -> torch-free
                                                 # check; causal LMs also greedy generate() against HF's

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
    # more of the same families, outside the acceptance list (--archs gemma,phi3,...): what generalises
    "gemma": ("GemmaForCausalLM", "GemmaConfig", dict(_DEC, head_dim=8), "decoder", "logits"),
    "gemma2": ("Gemma2ForCausalLM", "Gemma2Config", dict(_DEC, head_dim=8, sliding_window=8), "decoder", "logits"),
    "phi3": ("Phi3ForCausalLM", "Phi3Config", dict(_DEC, pad_token_id=0), "decoder", "logits"),
    "qwen3": ("Qwen3ForCausalLM", "Qwen3Config", dict(_DEC, head_dim=8), "decoder", "logits"),
    "distilbert": ("DistilBertForMaskedLM", "DistilBertConfig",
                   dict(vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=37, max_position_embeddings=64),
                   "encoder", "logits"),
    "electra": ("ElectraForSequenceClassification", "ElectraConfig", dict(_TEXT, embedding_size=16, num_labels=3),
                "encoder", "logits"),
    "deit": ("DeiTForImageClassificationWithTeacher", "DeiTConfig", dict(_VIS, num_labels=10), "image", "logits"),
    "bart": ("BartForConditionalGeneration", "BartConfig",
             dict(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                  decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, max_position_embeddings=64,
                  pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2), "seq2seq", "logits"),
}
EXTRA = ["gemma", "gemma2", "phi3", "qwen3", "distilbert", "electra", "deit", "bart"]
DEFAULT = [a for a in ARCHS if a != "mixtral" and a not in EXTRA]


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


GEN_ARCHS = ["gpt2", "llama", "qwen2", "mistral", "t5"]   # --archs: also gemma, gemma2, phi3, qwen3, bart
NEW_TOKENS = 16


def _torch_step_ms(step_module, step_args, reps=20):
    """Median wall time (ms) of torch's decode step on the traced step's own inputs."""
    import torch

    times = []
    with torch.no_grad():
        step_module(*step_args)
        for _ in range(reps):
            t = time.perf_counter()
            step_module(*step_args)
            times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2] * 1000


def gen_one(name: str, work: Path) -> dict:
    """Greedy generate() of NEW_TOKENS tokens with transformers, then the traced model's generate()
    (prefill graph + decode step with the KV cache in and out) in a process without torch, PYNATIVE and
    GRAPH: the tokens must be identical. The decode step's time is measured on the same inputs in
    torch (here) and in MindSpore GRAPH mode (the child), one right after the other."""
    hide_torchvision()
    import numpy as np
    import torch
    import transformers

    from msmigrate.trace import trace_model
    from msmigrate.trace.hf import causal_lm_graphs, seq2seq_graphs

    torch.manual_seed(0)
    model = getattr(transformers, ARCHS[name][0])(_config(name)).eval()
    seq2seq = ARCHS[name][3] == "seq2seq"
    if seq2seq:  # T5's initialisation makes a tiny model emit token 0 every time: weights of std 1 vary
        wg = torch.Generator().manual_seed(2)
        with torch.no_grad():
            for prm in model.parameters():
                prm.normal_(0, 1.0, generator=wg)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ if seq2seq else 8), generator=g)
    mask = padded_mask(BATCH, ids.shape[1], left=not seq2seq)
    gc = model.generation_config
    with torch.no_grad():
        ref = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False)
    if seq2seq:
        net, dyn, step = seq2seq_graphs(model)
        args = (ids, mask, torch.full((BATCH, 1), gc.decoder_start_token_id, dtype=torch.long))
    else:
        net, dyn, step = causal_lm_graphs(model)
        args = (ids, mask)
    decode = step(*args)
    out = work / f"gen_{name}"
    res = trace_model(net, args, out, dynamic_shapes=dyn, generate="seq2seq" if seq2seq else True, validate=False,
                      decode=decode, source=f"transformers.{ARCHS[name][0]} (tiny config), generate with a KV cache")
    row = {"arch": name, "notes": res.notes, "missing": [m[0] for m in res.missing], "logits_check": res.check,
           "torch_step_ms": round(_torch_step_ms(decode[0], decode[1]), 3)}
    if res.missing or not (out / "model.py").exists():
        return row
    eos = gc.eos_token_id
    np.savez(out / "gen-io.npz", ids=ids.numpy(), mask=mask.numpy(), ref=ref.numpy(),
             eos=np.array(-1 if eos is None else np.atleast_1d(eos)[0]),
             pad=np.array(-1 if gc.pad_token_id is None else gc.pad_token_id),
             start=np.array(-1 if not seq2seq else gc.decoder_start_token_id),
             forced_bos=np.array(-1 if gc.forced_bos_token_id is None else gc.forced_bos_token_id),
             forced_eos=np.array(-1 if gc.forced_eos_token_id is None else np.atleast_1d(gc.forced_eos_token_id)[0]))
    env = dict(os.environ, PYTHONPATH=str(ROOT), ONEDNN_MAX_CPU_ISA="AVX2")
    r = subprocess.run([sys.executable, __file__, "--gen-check", str(out)], capture_output=True, text=True, env=env,
                       timeout=1200)
    line = [x for x in r.stdout.splitlines() if x.startswith("GEN ")]
    row.update(json.loads(line[-1][4:]) if line else {"error": (r.stderr or r.stdout).strip()[-400:]})
    if "graph_step_ms" in row:
        row["step_ratio"] = round(row["graph_step_ms"] / row["torch_step_ms"], 2)
    return row


def _torch_free_model(out: Path):
    """The written model.py imported in this process after torch has been made unimportable."""
    sys.modules["torch"] = None
    import importlib.util

    spec = importlib.util.spec_from_file_location("traced_model", out / "model.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["traced_model"] = mod
    spec.loader.exec_module(mod)
    return mod


def gen_check(out: Path) -> dict:
    """In a process where torch cannot be imported: the traced model.py's generate() against HF's tokens,
    and the decode step's median time in GRAPH mode on the recorded step inputs (trace-io.npz)."""
    mod = _torch_free_model(out)
    import mindspore as ms
    import numpy as np

    io = np.load(out / "gen-io.npz")
    eos = None if int(io["eos"]) < 0 else int(io["eos"])
    pad = None if int(io["pad"]) < 0 else int(io["pad"])
    res = {}
    for mode in ("pynative", "graph"):
        ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
        try:
            net = mod.create_model()
            start = int(io["start"]) if "start" in io.files else -1
            extra = {"decoder_start_token_id": start} if start >= 0 else {}
            for key in ("forced_bos", "forced_eos"):   # BART-style configs (transformers' logits processors)
                if key in io.files and int(io[key]) >= 0:
                    extra[key + "_token_id"] = int(io[key])
            got = mod.generate(net, io["ids"], io["mask"], max_new_tokens=NEW_TOKENS, eos_token_id=eos,
                               pad_token_id=pad, **extra)
            ref = io["ref"]
            same = got.shape == ref.shape and bool((got == ref).all())
            prompt = 1 if start >= 0 else io["ids"].shape[1]   # an encoder-decoder returns the decoder ids
            res[mode] = {"identical": same, "new_tokens": int(got.shape[1] - prompt)}
            if not same:
                res[mode]["got"] = got[:, prompt:].tolist()
                res[mode]["ref"] = ref[:, prompt:].tolist()
        except Exception as exc:  # noqa: BLE001
            res[mode] = {"identical": False, "error": f"{type(exc).__name__}: {str(exc).strip()[:300]}"}
    try:  # decode-step time, GRAPH mode, compiled as generate() compiles it (dynamic batch and cache length)
        tio = np.load(out / "trace-io.npz")
        xs = [ms.Tensor(tio[f"s{i}"]) for i in range(len([k for k in tio.files if k[0] == "s" and k[1:].isdigit()]))]
        step = mod.create_decode_step(mod.create_model())
        step.set_inputs(*mod.decode_step_inputs(xs))
        step(*xs)[0].asnumpy()
        times = []
        for _ in range(20):
            t = time.perf_counter()
            step(*xs)[0].asnumpy()
            times.append(time.perf_counter() - t)
        res["graph_step_ms"] = round(sorted(times)[len(times) // 2] * 1000, 3)
    except Exception as exc:  # noqa: BLE001
        res["step_error"] = f"{type(exc).__name__}: {str(exc).strip()[:300]}"
    return res


FT_ARCHS = {   # name -> (transformers class, config of ARCHS, task): dropout set to 0 (its masks are random)
    "bert_cls": ("BertForSequenceClassification", "bert", "classify"),
    "gpt2": ("GPT2LMHeadModel", "gpt2", "lm"),
    "llama": ("LlamaForCausalLM", "llama", "lm"),
    "roberta_cls": ("RobertaForSequenceClassification", "roberta", "classify"),
    "qwen2": ("Qwen2ForCausalLM", "qwen2", "lm"),
}
FT_DEFAULT = ["bert_cls", "gpt2", "llama"]
FT_STEPS, FT_LABELS = 5, 3
FT_HP = {"adamw": dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01), "sgd": dict(lr=0.1, momentum=0.9)}


def no_dropout(config):
    """Every dropout probability of a transformers config (and of its sub-configs) set to 0."""
    for key, value in list(vars(config).items()):
        if isinstance(value, float) and ("dropout" in key or key.endswith("pdrop")):
            setattr(config, key, 0.0)
        elif hasattr(value, "to_dict") and hasattr(value, "model_type"):
            no_dropout(value)
    return config


def ft_one(name: str, work: Path, optimizer: str) -> dict:
    """FT_STEPS optimizer steps of a tiny Hugging Face model (loss from `labels`: class ids for a sequence
    classifier, the input ids with padding ignored (-100) for a causal LM) in torch and, traced in training
    mode, in MindSpore (msmigrate.trace.finetune): per-step losses and first-step gradients."""
    hide_torchvision()
    import torch
    import transformers

    from msmigrate.trace.finetune import finetune_check

    cls_name, cfg_of, task = FT_ARCHS[name]
    config = no_dropout(_config(cfg_of))
    if task == "classify":
        config.num_labels = FT_LABELS
    torch.manual_seed(0)
    model = getattr(transformers, cls_name)(config)
    g = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(FT_STEPS):
        ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
        mask = padded_mask(BATCH, SEQ, left=False)
        labels = (torch.randint(0, FT_LABELS, (BATCH,), generator=g) if task == "classify"
                  else ids.masked_fill(mask == 0, -100))
        batches.append((ids, mask, labels))

    class Loss(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.model = m

        def forward(self, input_ids, attention_mask, labels):
            return self.model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss

    t = time.perf_counter()
    row = finetune_check(Loss(model), batches, work / f"ft_{name}", optimizer=optimizer, hp=FT_HP[optimizer],
                         source=f"transformers.{cls_name} (tiny config, dropout 0), loss from labels")
    row.update(arch=name, optimizer=optimizer, seconds=round(time.perf_counter() - t, 1))
    return row


def main_finetune(a, work: Path) -> int:
    archs = [x for x in a.archs.split(",") if x in FT_ARCHS] if a.archs != ",".join(DEFAULT) else FT_DEFAULT
    env = dict(os.environ, PYTHONPATH=str(ROOT), ONEDNN_MAX_CPU_ISA="AVX2")
    rows = {}
    for arch in archs:
        cmd = [sys.executable, __file__, "--ft-one", arch, "--optimizer", a.optimizer, "--work", str(work)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
            line = [x for x in r.stdout.splitlines() if x.startswith("ROW ")]
            rows[arch] = json.loads(line[-1][4:]) if line else {
                "arch": arch, "error": ((r.stderr or r.stdout).strip().splitlines() or ["failed"])[-1][:300]}
        except subprocess.TimeoutExpired:
            rows[arch] = {"arch": arch, "error": f"timeout after {a.timeout} s"}
        print(json.dumps(rows[arch], default=str), flush=True)
    print(f"\nfine-tuning, {FT_STEPS} steps of {a.optimizer} {FT_HP[a.optimizer]}, batch {BATCH}x{SEQ} with padding; "
          f"max over steps of |loss_ms - loss_torch| / |loss_torch| (pass <= 1e-4), first-step gradients "
          f"max|d| / max|g_torch|")
    print(f"{'architecture':12} {'mode':9} {'loss rel diff':>14} {'grad rel diff':>14}  result / problem")
    ok = 0
    for arch in archs:
        r = rows[arch]
        passed = bool(r.get("ok"))
        ok += passed
        for mode in ("pynative", "graph"):
            m = r.get(mode) or {}
            why = r.get("error") or (f"missing {r['missing']}" if r.get("missing") else "") or m.get("error", "")
            loss = f"{max(m['loss_rel_diff']):.1e}" if m.get("loss_rel_diff") else "-"
            grad = f"{m['grad_rel_diff']:.1e}" if "grad_rel_diff" in m else "-"
            print(f"{arch:12} {mode:9} {loss:>14} {grad:>14}  {'pass' if m.get('pass') else 'FAIL'} {why[:200]}")
    print(f"\nfine-tuning steps match torch in both modes: {ok}/{len(archs)}")
    return 0 if ok == len(archs) else 1


HF_DIR_DEFAULT = ["bert", "gpt2"]


def hf_dir_one(name: str, work: Path) -> dict:
    """A tiny model written by save_pretrained (with a BERT WordPiece tokenizer for the encoders),
    converted by the `msmigrate hf` command line in its own process; the command's own torch-free check
    (PYNATIVE and GRAPH logits, and the decode step of a causal LM) is read back, and for a causal LM
    the written generate() is run in a process without torch against HF's greedy tokens (gen_check)."""
    hide_torchvision()
    import numpy as np
    import torch
    import transformers

    cls_name, _, _, kind, _ = ARCHS[name]
    torch.manual_seed(0)
    model = getattr(transformers, cls_name)(_config(name)).eval()
    src, out = work / f"hf_{name}" / "src", work / f"hf_{name}" / "out"
    model.save_pretrained(src)
    if kind == "encoder":
        vocab = src / "vocab.txt"
        vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                                    + [f"w{i}" for i in range(VOCAB - 5)]) + "\n")
        transformers.BertTokenizer(str(vocab)).save_pretrained(src)
    env = dict(os.environ, PYTHONPATH=str(ROOT), ONEDNN_MAX_CPU_ISA="AVX2")
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "msmigrate.cli", "hf", str(src), "-o", str(out)], capture_output=True,
                       text=True, env=env, timeout=1800, cwd=str(ROOT))
    row = {"arch": name, "rc": r.returncode, "seconds": round(time.perf_counter() - t, 1),
           "written": sorted(p.name for p in out.iterdir()) if out.is_dir() else []}
    line = [x for x in r.stdout.splitlines() if "torch-free check: " in x]
    if line:
        row["check"] = json.loads(line[-1].split("torch-free check: ", 1)[1])
    else:
        row["error"] = (r.stderr or r.stdout).strip()[-400:]
    row["lines"] = [x for x in r.stdout.splitlines() if x.startswith("msmigrate hf: ") and "check:" not in x]
    if kind == "encoder" and r.returncode == 0:   # another batch and sequence length than the traced 2x12
        g = torch.Generator().manual_seed(5)
        ids, mask = torch.randint(0, VOCAB, (3, 7), generator=g), padded_mask(3, 7, left=False)
        with torch.no_grad():
            y = getattr(model(input_ids=ids, attention_mask=mask), ARCHS[name][4])
        np.savez(out / "other-io.npz", x0=ids.numpy(), x1=mask.numpy(), y=y.numpy())
        r2 = subprocess.run([sys.executable, __file__, "--len-check", str(out)], capture_output=True, text=True,
                            env=env, timeout=1200)
        line = [x for x in r2.stdout.splitlines() if x.startswith("LEN ")]
        row["other_shape"] = json.loads(line[-1][4:]) if line else {"error": (r2.stderr or r2.stdout).strip()[-400:]}
    if kind == "decoder" and r.returncode == 0:   # greedy tokens of the written generate() against HF's
        g = torch.Generator().manual_seed(1)
        ids = torch.randint(0, VOCAB, (BATCH, 8), generator=g)
        mask = padded_mask(BATCH, 8, left=True)
        gc = model.generation_config
        with torch.no_grad():
            ref = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=NEW_TOKENS, do_sample=False)
        np.savez(out / "gen-io.npz", ids=ids.numpy(), mask=mask.numpy(), ref=ref.numpy(),
                 eos=np.array(-1 if gc.eos_token_id is None else np.atleast_1d(gc.eos_token_id)[0]),
                 pad=np.array(-1 if gc.pad_token_id is None else gc.pad_token_id), start=np.array(-1))
        r = subprocess.run([sys.executable, __file__, "--gen-check", str(out)], capture_output=True, text=True,
                           env=env, timeout=1200)
        line = [x for x in r.stdout.splitlines() if x.startswith("GEN ")]
        row["generate"] = json.loads(line[-1][4:]) if line else {"error": (r.stderr or r.stdout).strip()[-400:]}
    return row


def len_check(out: Path) -> dict:
    """Torch-free: the written model on other-io.npz (batch 3, sequence 7), PYNATIVE and GRAPH."""
    mod = _torch_free_model(out)
    import mindspore as ms
    import numpy as np

    io = np.load(out / "other-io.npz")
    tol = 1e-4 * max(1.0, float(np.abs(io["y"]).max()))
    res = {"shape": list(io["x0"].shape)}
    for mode in ("pynative", "graph"):
        ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
        try:
            got = mod.create_model()(ms.Tensor(io["x0"]), ms.Tensor(io["x1"]))
            got = got[0] if isinstance(got, (tuple, list)) else got
            d = float(np.abs(got.asnumpy() - io["y"]).max())
            res[mode] = {"max_abs_diff": d, "pass": d <= tol}
        except Exception as exc:  # noqa: BLE001
            res[mode] = {"pass": False, "error": f"{type(exc).__name__}: {str(exc).strip()[:300]}"}
    return res


def _rows_of_subprocesses(flag: str, archs, work: Path, timeout: int) -> dict:
    """One subprocess per architecture (`flag ARCH`), its last `ROW {json}` line, printed as it comes."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), ONEDNN_MAX_CPU_ISA="AVX2")
    rows = {}
    for arch in archs:
        cmd = [sys.executable, __file__, flag, arch, "--work", str(work)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
            line = [x for x in r.stdout.splitlines() if x.startswith("ROW ")]
            rows[arch] = json.loads(line[-1][4:]) if line else {
                "arch": arch, "error": ((r.stderr or r.stdout).strip().splitlines() or ["failed"])[-1][:300]}
        except subprocess.TimeoutExpired:
            rows[arch] = {"arch": arch, "error": f"timeout after {timeout} s"}
        print(json.dumps(rows[arch], default=str), flush=True)
    return rows


def main_hf_dir(a, work: Path) -> int:
    archs = [x for x in a.archs.split(",") if x in ARCHS] if a.archs != ",".join(DEFAULT) else HF_DIR_DEFAULT
    rows = _rows_of_subprocesses("--hf-one", archs, work, a.timeout)
    print("\n`msmigrate hf` on a save_pretrained folder; the converted side checked in processes where torch cannot "
          "be imported (max|d| of the logits, PYNATIVE / GRAPH; causal LMs: decode step, and greedy generate() of "
          f"{NEW_TOKENS} tokens against HF's; text encoders: also batch 3, sequence 7, not the traced 2x12)")
    print(f"{'architecture':12} {'rc':>3} {'pynative':>12} {'graph':>12} {'step graph':>12} {'generate':>10} "
          f"{'3x7 (PYN / GRAPH)':>19}  problem")
    ok = 0
    for arch in archs:
        r = rows[arch]
        c = r.get("check") or {}

        def cell(m):
            v = c.get(m)
            return f"{'pass' if v.get('pass') else 'FAIL'} {v['max_abs_diff']:.1e}" if v and "max_abs_diff" in v \
                else ("FAIL" if v else "-")
        gen = r.get("generate")
        gcell = "-" if gen is None else ("identical" if all((gen.get(m) or {}).get("identical")
                                                             for m in ("pynative", "graph")) else "DIFFERENT")
        other = r.get("other_shape")
        ocell = "-" if other is None else " / ".join(
            f"{'pass' if (other.get(m) or {}).get('pass') else 'FAIL'} {(other.get(m) or {}).get('max_abs_diff', 0):.1e}"
            for m in ("pynative", "graph"))
        passed = (r.get("rc") == 0 and bool(c.get("ok")) and gcell != "DIFFERENT"
                  and (other is None or all((other.get(m) or {}).get("pass") for m in ("pynative", "graph"))))
        ok += passed
        why = r.get("error", "") or ("" if passed else json.dumps(
            {k: r[k] for k in ("other_shape", "generate", "check") if r.get(k)})[:300])
        print(f"{arch:12} {r.get('rc', '-')!s:>3} {cell('pynative'):>12} {cell('graph'):>12} {cell('step_graph'):>12} "
              f"{gcell:>10} {ocell:>19}  {why}")
    print(f"\nmsmigrate hf end to end: {ok}/{len(archs)}")
    return 0 if ok == len(archs) else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--work", default=str(ROOT / "bench" / "_work" / "hf_zoo"))
    p.add_argument("--archs", default=",".join(DEFAULT))
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--generate", action="store_true", help="greedy generation of the decoder LMs instead")
    p.add_argument("--gen-one", help=argparse.SUPPRESS)
    p.add_argument("--gen-check", help=argparse.SUPPRESS)
    p.add_argument("--finetune", action="store_true", help="fine-tuning steps (bert_cls, gpt2, llama) instead")
    p.add_argument("--optimizer", default="adamw", choices=sorted(FT_HP), help="with --finetune")
    p.add_argument("--ft-one", help=argparse.SUPPRESS)
    p.add_argument("--hf-dir", action="store_true", help="`msmigrate hf` on save_pretrained folders (bert, gpt2)")
    p.add_argument("--hf-one", help=argparse.SUPPRESS)
    p.add_argument("--len-check", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    work = Path(a.work)
    if a.one:
        print("ROW " + json.dumps(one(a.one, work), default=str), flush=True)
        return 0
    if a.gen_one:
        print("ROW " + json.dumps(gen_one(a.gen_one, work), default=str), flush=True)
        return 0
    if a.gen_check:
        print("GEN " + json.dumps(gen_check(Path(a.gen_check))), flush=True)
        return 0
    if a.ft_one:
        print("ROW " + json.dumps(ft_one(a.ft_one, work, a.optimizer), default=str), flush=True)
        return 0
    if a.len_check:
        print("LEN " + json.dumps(len_check(Path(a.len_check))), flush=True)
        return 0
    if a.hf_one:
        print("ROW " + json.dumps(hf_dir_one(a.hf_one, work), default=str), flush=True)
        return 0
    if a.generate:
        return main_generate(a, work)
    if a.hf_dir:
        return main_hf_dir(a, work)
    if a.finetune:
        return main_finetune(a, work)
    archs = [x for x in a.archs.split(",") if x]
    rows = _rows_of_subprocesses("--one", archs, work, a.timeout)
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


def main_generate(a, work: Path) -> int:
    archs = ([x for x in a.archs.split(",") if ARCHS.get(x, ("",) * 5)[3] in ("decoder", "seq2seq")]
             if a.archs != ",".join(DEFAULT) else GEN_ARCHS)
    env = dict(os.environ, PYTHONPATH=str(ROOT), ONEDNN_MAX_CPU_ISA="AVX2")
    rows = {}
    for arch in archs:
        cmd = [sys.executable, __file__, "--gen-one", arch, "--work", str(work)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
            line = [x for x in r.stdout.splitlines() if x.startswith("ROW ")]
            rows[arch] = json.loads(line[-1][4:]) if line else {
                "arch": arch, "error": ((r.stderr or r.stdout).strip().splitlines() or ["failed"])[-1][:300]}
        except subprocess.TimeoutExpired:
            rows[arch] = {"arch": arch, "error": f"timeout after {a.timeout} s"}
        print(json.dumps(rows[arch], default=str), flush=True)
    print(f"\ngreedy generate(), {NEW_TOKENS} new tokens, batch {BATCH} left-padded, KV cache (prefill + decode "
          f"step); decode-step median ms, GRAPH mode vs torch eager on the same inputs, measured in the same run")
    print(f"{'architecture':12} {'pynative':>10} {'graph':>10} {'ms graph':>9} {'ms torch':>9} {'ratio':>6}  problem")
    ok = 0
    for arch in archs:
        r = rows[arch]
        cells = [("identical" if (r.get(m) or {}).get("identical") else "DIFFERENT" if r.get(m) else "-")
                 for m in ("pynative", "graph")]
        why = r.get("error") or r.get("step_error") or (f"missing {r['missing']}" if r.get("missing") else "")
        for m in ("pynative", "graph"):
            if isinstance(r.get(m), dict) and r[m].get("error"):
                why = why or f"{m}: {r[m]['error'][:200]}"
        ok += all((r.get(m) or {}).get("identical") for m in ("pynative", "graph"))
        print(f"{arch:12} {cells[0]:>10} {cells[1]:>10} {r.get('graph_step_ms', '-'):>9} "
              f"{r.get('torch_step_ms', '-'):>9} {r.get('step_ratio', '-'):>6}  {why}")
    print(f"\nidentical tokens in both modes: {ok}/{len(archs)}")
    return 0 if ok == len(archs) else 1


if __name__ == "__main__":
    sys.exit(main())
