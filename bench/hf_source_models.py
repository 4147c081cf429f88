"""Bench (not CI): bert, gpt2 and llama from the transformers source that bench/library_imports.py
converted (WORK/ms/transformers), built from small configs and run without torch, against
transformers under torch with the same weights (msmigrate.weights).

    python bench/library_imports.py --packages transformers
    python bench/hf_source_models.py [--work DIR] [--models bert,gpt2,llama,gpt2_lm,llama_lm,roberta,qwen2,...]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.timm_models import env, result  # noqa: E402

# model -> (config class, model class, config arguments)
MODELS = {
    "bert": ("BertConfig", "BertModel", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                             num_attention_heads=2, intermediate_size=37)),
    "gpt2": ("GPT2Config", "GPT2Model", dict(vocab_size=99, n_embd=32, n_layer=2, n_head=2, n_positions=64)),
    "llama": ("LlamaConfig", "LlamaModel", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                                num_attention_heads=2, num_key_value_heads=2,
                                                intermediate_size=37, max_position_embeddings=64)),
    # the language-model heads (their output: logits)
    "gpt2_lm": ("GPT2Config", "GPT2LMHeadModel", dict(vocab_size=99, n_embd=32, n_layer=2, n_head=2, n_positions=64)),
    "llama_lm": ("LlamaConfig", "LlamaForCausalLM", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                                         num_attention_heads=2, num_key_value_heads=2,
                                                         intermediate_size=37, max_position_embeddings=64)),
    # not converted by library_imports.py by default: --models bert,gpt2,llama,roberta,... there
    "roberta": ("RobertaConfig", "RobertaModel", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                                      num_attention_heads=2, intermediate_size=37)),
    "qwen2": ("Qwen2Config", "Qwen2Model", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                                num_attention_heads=2, num_key_value_heads=1,
                                                intermediate_size=37, max_position_embeddings=64)),
    "mistral": ("MistralConfig", "MistralModel", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                                      num_attention_heads=2, num_key_value_heads=1,
                                                      intermediate_size=37, max_position_embeddings=64)),
    "qwen2_moe": ("Qwen2MoeConfig", "Qwen2MoeModel", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                                          num_attention_heads=2, num_key_value_heads=1,
                                                          intermediate_size=37, moe_intermediate_size=16,
                                                          shared_expert_intermediate_size=24, num_experts=4,
                                                          num_experts_per_tok=2, max_position_embeddings=64)),
    # more families taking input_ids alone (library_imports.py --models with their directory names:
    # distilbert,albert,electra,opt,bloom,gpt_neox,phi,gemma,t5,bart,deberta_v2,gptj,falcon)
    "distilbert": ("DistilBertConfig", "DistilBertModel", dict(vocab_size=99, dim=32, n_layers=2, n_heads=2,
                                                               hidden_dim=37, max_position_embeddings=64)),
    "albert": ("AlbertConfig", "AlbertModel", dict(vocab_size=99, embedding_size=16, hidden_size=32,
                                                   num_hidden_layers=2, num_attention_heads=2, intermediate_size=37)),
    "electra": ("ElectraConfig", "ElectraModel", dict(vocab_size=99, embedding_size=16, hidden_size=32,
                                                      num_hidden_layers=2, num_attention_heads=2, intermediate_size=37)),
    "opt": ("OPTConfig", "OPTModel", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, ffn_dim=37,
                                          num_attention_heads=2, word_embed_proj_dim=32, max_position_embeddings=64)),
    "bloom": ("BloomConfig", "BloomModel", dict(vocab_size=99, hidden_size=32, n_layer=2, n_head=2)),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXModel", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                                       num_attention_heads=2, intermediate_size=37,
                                                       max_position_embeddings=64)),
    "phi": ("PhiConfig", "PhiModel", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                          intermediate_size=37, max_position_embeddings=64)),
    "gemma": ("GemmaConfig", "GemmaModel", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                                num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                                                intermediate_size=37, max_position_embeddings=64)),
    "t5_encoder": ("T5Config", "T5EncoderModel", dict(vocab_size=99, d_model=32, d_kv=16, d_ff=37, num_layers=2,
                                                      num_heads=2)),
    "bart": ("BartConfig", "BartModel", dict(vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2,
                                             encoder_attention_heads=2, decoder_attention_heads=2,
                                             encoder_ffn_dim=37, decoder_ffn_dim=37, max_position_embeddings=64)),
    "deberta_v2": ("DebertaV2Config", "DebertaV2Model", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                                             num_attention_heads=2, intermediate_size=37)),
    "gptj": ("GPTJConfig", "GPTJModel", dict(vocab_size=99, n_embd=32, n_layer=2, n_head=2, rotary_dim=8,
                                             n_positions=64)),
    "falcon": ("FalconConfig", "FalconModel", dict(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                                                   num_attention_heads=2)),
}

REFERENCE = r"""
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from bench.data_speed import import_torchvision
import_torchvision()
import torch, transformers
work, models = sys.argv[2], json.loads(sys.argv[3])
ids = np.random.default_rng(0).integers(0, 99, (2, 7)).astype(np.int64)
np.save(f"{work}/ids.npy", ids)
out = {}
for name, (cfg, cls, kw) in models.items():
    try:
        torch.manual_seed(0)
        net = getattr(transformers, cls)(getattr(transformers, cfg)(**kw)).eval()
        with torch.no_grad():
            res = net(torch.from_numpy(ids))
            np.save(f"{work}/{name}.want.npy", (res.logits if "logits" in res else res.last_hidden_state).numpy())
        torch.save(net.state_dict(), f"{work}/{name}.pth")
        out[name] = None
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"[:300]
print("RESULT " + json.dumps(out))
"""

CONVERTED = r"""
import json, sys, traceback
sys.modules["torch"] = None
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import numpy as np
import mindspore as ms
from msmigrate.weights import load_torch_state_dict
work, models = sys.argv[3], json.loads(sys.argv[4])
out = {}
try:
    import transformers
except Exception as e:
    print("RESULT " + json.dumps({n: {"ok": False, "step": "import", "error": f"{type(e).__name__}: {e}"[:300],
                                      "at": ""} for n in models}))
    raise SystemExit
ids = ms.Tensor(np.load(f"{work}/ids.npy"))
for name, (cfg, cls, kw) in models.items():
    step = "build"
    try:
        net = getattr(transformers, cls)(getattr(transformers, cfg)(**kw))
        step = "weights"
        load_torch_state_dict(net, f"{work}/{name}.pth")
        net.set_train(False)
        step = "forward"
        res = net(ids)
        got = (res.logits if "logits" in res else res.last_hidden_state).asnumpy()
        want = np.load(f"{work}/{name}.want.npy")
        out[name] = {"ok": True, "max_abs_diff": float(np.abs(got - want).max()), "scale": float(np.abs(want).max())}
    except Exception as e:
        tb = traceback.extract_tb(e.__traceback__)[-1]
        out[name] = {"ok": False, "step": step,
                     "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300],
                     "at": f"{tb.filename}:{tb.lineno}"}
print("RESULT " + json.dumps(out))
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=ROOT / "bench" / "_work" / "library_imports")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="max |diff| relative to the output's scale")
    ap.add_argument("--models", default="bert,gpt2,llama,gpt2_lm,llama_lm", help=f"of {', '.join(MODELS)}")
    a = ap.parse_args(argv)
    models = {n: MODELS[n] for n in a.models.split(",")}
    work = a.work.resolve()
    if not (work / "ms" / "transformers" / "__init__.py").exists():
        print(f"no converted transformers under {work / 'ms'}: run bench/library_imports.py --packages transformers")
        return 2
    models_dir = work / "hf_models"
    models_dir.mkdir(parents=True, exist_ok=True)
    ref = result(subprocess.run([sys.executable, "-c", REFERENCE, str(ROOT), str(models_dir), json.dumps(models)],
                                capture_output=True, text=True, env=env()))
    names = {n: v for n, v in models.items() if ref.get(n) is None}
    for n in models:
        if ref.get(n):
            print(f"{n}: reference failed under torch: {ref[n]}")
    got = result(subprocess.run([sys.executable, "-c", CONVERTED, str(ROOT), str(work / "ms"), str(models_dir),
                                 json.dumps(names)], capture_output=True, text=True, env=env(), cwd=str(models_dir)))
    matched = 0
    for n in names:
        r = got[n]
        if r["ok"]:
            good = r["max_abs_diff"] <= a.tolerance * r["scale"]
            matched += good
            print(f"{n}: builds, runs; max |diff| vs torch {r['max_abs_diff']:.2e} (scale {r['scale']:.2f}) "
                  f"{'MATCH' if good else 'MISMATCH'}")
        else:
            print(f"{n}: fails at {r['step']}: {r['error']} ({r['at']})")
    print(f"transformers source models: {len(names)} built under torch; {sum(got[n]['ok'] for n in names)} run "
          f"converted; {matched} match torch")
    return 0 if matched == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
