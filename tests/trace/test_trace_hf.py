"""The graph-capture route on the constructs Hugging Face transformers models are made of (msmigrate
trace), each written here as a minimal torch module: submodules whose names are Python parameters,
keywords, digits or nn.Cell's own attributes; KV-cache style empty tensors lifted as constants;
cumulative sums over booleans. Each is traced, the written model.py + model.ckpt run in a process that
never imports torch (PYNATIVE and GRAPH), and compared with torch."""
from __future__ import annotations

import torch
from torch import nn

from msmigrate.trace import trace_model


def _assert_all_modes(res):
    assert not res.missing, res.missing
    assert res.first_bad is None, res.first_bad
    assert res.check and res.check.get("ok"), res.check
    for mode in ("pynative", "graph"):
        assert res.check[mode]["pass"], (mode, res.check)
    assert res.ok


def _ckpt_names(path):
    import mindspore as ms

    return set(ms.load_checkpoint(str(path)).keys())


# Keywords (`lambda`, `def`) are left out: torch.export's own run_decompositions writes `self.lambda.x`
# into Python source and fails with a SyntaxError (torch/fx/graph_module.py) before msmigrate sees the graph.
CLASHING = ["self", "cls", "1", "construct", "cells", "phase", "insert_child_to_cell"]


class Clashing(nn.Module):
    """A tree whose member names are a Python parameter (BERT's `attention.self`), keywords, a digit and
    names nn.Cell uses itself; one of them holds a bare Parameter, another a Parameter named `construct`."""

    def __init__(self):
        super().__init__()
        for name in CLASHING:
            inner = nn.Module()
            inner.add_module("self", nn.Linear(4, 4))
            self.add_module(name, inner)
        holder = nn.Module()
        holder.register_parameter("construct", nn.Parameter(torch.randn(4)))
        self.add_module("lambda_holder", holder)

    def forward(self, x):
        for name in CLASHING:
            x = torch.tanh(getattr(getattr(self, name), "self")(x))
        return x * getattr(self.lambda_holder, "construct")


def test_member_names_that_clash_with_python_and_cell(tmp_path):
    torch.manual_seed(0)
    m = Clashing()
    res = trace_model(m, (torch.randn(3, 4),), tmp_path / "clash")
    _assert_all_modes(res)
    assert set(m.state_dict()) == _ckpt_names(tmp_path / "clash" / "model.ckpt")
    src = (tmp_path / "clash" / "model.py").read_text()
    assert "self.self.self" in src and "torch_names(self" in src


class MaskPositions(nn.Module):
    """Position ids from a padded mask the way HF's RoBERTa and mask code compute them: cumulative sums
    over a boolean and over an int32 tensor."""

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(50, 8)
        self.pos = nn.Embedding(16, 8)

    def forward(self, ids, mask):
        keep = mask.bool()
        pos = torch.cumsum(keep, dim=1) * keep                   # bool cumsum -> int64
        pos2 = torch.cumsum(mask.int(), dim=-1).type_as(mask)    # int32 cumsum -> int64
        seen = keep.cumsum(-1) > 0                               # bool cumsum compared
        h = self.tok(ids) + self.pos(pos) + self.pos(pos2)
        return h * seen.unsqueeze(-1)


def test_boolean_and_int_cumsum(tmp_path):
    from msmigrate.trace.core import example_inputs

    torch.manual_seed(0)
    m = MaskPositions()
    ids, mask = example_inputs(m, ["3,9:int64", "3,9:mask_left"])
    res = trace_model(m, (ids, mask), tmp_path / "cs")
    _assert_all_modes(res)


def test_example_inputs_are_realistic():
    from msmigrate.trace.core import example_inputs

    m = MaskPositions()
    ids, mask, left, x = example_inputs(m, ["4,20:ids", "3,10:mask", "3,10:mask_left", "2,5"])
    assert ids.dtype == torch.int64 and int(ids.max()) < 50 and len(set(ids.flatten().tolist())) > 10
    assert mask.tolist()[0] == [1] * 10 and mask.tolist()[1] == [1] * 7 + [0] * 3 and mask.tolist()[2][-1] == 0
    assert left.tolist()[1] == [0] * 3 + [1] * 7
    assert x.dtype == torch.float32 and x.shape == (2, 5)


class EmptyCache(nn.Module):
    """A KV cache the way transformers' DynamicLayer starts one: `torch.tensor([])` made inside forward
    (torch.export lifts it as a constant) and concatenated with the first keys along the sequence."""

    def __init__(self):
        super().__init__()
        self.k = nn.Linear(8, 8)

    def forward(self, x):
        keys = torch.tensor([], dtype=x.dtype)
        keys = torch.cat([keys, self.k(x)], dim=-2)
        return torch.softmax(x @ keys.transpose(-1, -2), -1) @ keys


def test_empty_lifted_constant_of_a_kv_cache(tmp_path):
    torch.manual_seed(0)
    m = EmptyCache()
    res = trace_model(m, (torch.randn(2, 5, 8),), tmp_path / "kv")
    _assert_all_modes(res)
    assert set(m.state_dict()) == _ckpt_names(tmp_path / "kv" / "model.ckpt")


def test_msmigrate_hf_causal_lm_folder_and_greedy_generate(tmp_path):
    """`msmigrate hf` on a save_pretrained folder of a tiny Llama: model.py + model.ckpt checked in a
    torch-free process, then the emitted generate() gives transformers' greedy tokens (left padding)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from msmigrate.trace.core import padding_mask
    from msmigrate.trace.hf import _hide_broken_torchvision

    _hide_broken_torchvision([])
    import transformers

    root = Path(__file__).resolve().parents[2]
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=61, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, intermediate_size=48, max_position_embeddings=64)
    model = transformers.LlamaForCausalLM(cfg).eval()
    src, out = tmp_path / "src", tmp_path / "out"
    model.save_pretrained(src)
    (src / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 64}))
    ids = torch.randint(0, 61, (2, 6), generator=torch.Generator().manual_seed(3))
    mask = padding_mask((2, 6), left=True)
    with torch.no_grad():
        eos = model.generation_config.eos_token_id
        ref = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=8, do_sample=False,
                             eos_token_id=eos, pad_token_id=0)
    r = subprocess.run([sys.executable, "-m", "msmigrate.cli", "hf", str(src), "-o", str(out)], capture_output=True,
                       text=True, cwd=root, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert '"ok": true' in r.stdout
    check = json.loads(r.stdout.split("torch-free check: ", 1)[1].splitlines()[0])
    assert check["step_pynative"]["pass"] and check["step_graph"]["pass"], check   # the KV-cache decode step
    for f in ("model.py", "model.ckpt", "trace-report.md", "generation_config.json", "tokenizer_config.json"):
        assert (out / f).exists(), f
    assert set(model.state_dict()) <= _ckpt_names(out / "model.ckpt")   # the HF keys, no wrapper prefix
    code = (f"import sys; sys.modules['torch'] = None; sys.path.insert(0, {str(out)!r}); import numpy as np; "
            f"import model as m; net = m.create_model(); ids, mask = np.array({ids.tolist()}), np.array({mask.tolist()}); "
            f"kw = dict(max_new_tokens=8, eos_token_id={eos!r}, pad_token_id=0); "
            f"print(m.generate(net, ids, mask, **kw).tolist()); "
            f"print(m.generate(net, ids, mask, do_sample=True, top_k=1, temperature=0.5, seed=4, **kw).tolist()); "
            f"kw['max_new_tokens'] = 4; "
            f"print(m.generate(net, ids, mask, do_sample=True, top_p=0.9, temperature=1.5, seed=7, **kw).tolist()); "
            f"print(m.generate(net, ids, mask, do_sample=True, top_p=0.9, temperature=1.5, seed=7, **kw).tolist())")
    g = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert g.returncode == 0, g.stderr[-2000:]
    greedy, top1, sampled, again = (json.loads(x) for x in g.stdout.strip().splitlines()[-4:])
    assert greedy == ref.tolist()      # the KV-cache decoding gives transformers' greedy tokens
    assert top1 == greedy              # top-k 1 leaves only the argmax to draw
    assert sampled == again            # one seed, one sequence
    assert [row[:10] for row in greedy] != sampled and sampled[0][:6] == ids.tolist()[0] and 6 < len(sampled[0]) <= 10


def test_hf_task_reads_forward_through_transformers_decorators():
    """transformers wraps forward in decorators whose code takes (*args, **kwargs): the task `msmigrate hf`
    picks comes from the signature as written, so BERT and ViT are traced (they were refused before)."""
    from msmigrate.trace.hf import _hide_broken_torchvision, hf_task

    _hide_broken_torchvision([])
    import transformers as t

    assert "input_ids" not in t.BertModel.forward.__code__.co_varnames   # the wrapper, not BERT's forward
    assert hf_task(t.BertModel, t.BertConfig()) == "text"
    assert hf_task(t.BertForMaskedLM, t.BertConfig()) == "text"
    assert hf_task(t.ViTForImageClassification, t.ViTConfig()) == "vision"
    assert hf_task(t.CLIPModel, t.CLIPConfig()) is None          # text and image inputs: refused with a message


def test_sampling_filters_restrict_the_draw():
    """The emitted select_tokens(): after top-k only the k largest logits are drawn, after top-p only the
    smallest set of tokens whose probability reaches p; a seeded ops.Multinomial repeats its draws."""
    import mindspore as ms
    import numpy as np
    from mindspore import Tensor, ops

    from msmigrate.trace.generate_src import SELECT_TOKENS

    ns = {"np": np, "ms": ms, "ops": ops, "Tensor": Tensor}
    exec(SELECT_TOKENS, ns)  # noqa: S102 - the code model.py carries
    select = ns["select_tokens"]
    probs = np.array([0.05, 0.4, 0.1, 0.3, 0.15], np.float32)   # sorted: 1 (0.4), 3 (0.3), 4 (0.15), 2, 0
    logits = Tensor(np.log(np.tile(probs, (400, 1))))
    assert select(logits).tolist() == [1] * 400

    def drawn(**kw):
        return select(logits, True, sampler=ops.Multinomial(seed=11, seed2=0), **kw)

    k2 = drawn(top_k=2)
    assert set(k2.tolist()) == {1, 3} and 0.33 < (k2 == 3).mean() < 0.53   # 0.3 / 0.7 = 0.43 of the draws
    p8 = drawn(top_p=0.8)                          # 0.4 + 0.3 < 0.8 <= 0.4 + 0.3 + 0.15: three tokens
    assert set(p8.tolist()) == {1, 3, 4}
    assert set(drawn(top_p=0.3).tolist()) == {1}   # the most likely token always stays
    assert set(drawn(temperature=0.01, top_k=5).tolist()) == {1}   # (0.3/0.4)**100 per draw
    everything = drawn()
    assert set(everything.tolist()) == {0, 1, 2, 3, 4}
    assert (drawn(top_k=2) == k2).all()            # the same seed draws the same tokens


def test_forced_tokens_as_transformers_logits_processors():
    """The emitted force_tokens() against transformers' ForcedBOS/ForcedEOS logits processors followed by
    greedy argmax (BART's config sets both; without them bart's last generated token differed)."""
    import numpy as np
    from transformers.generation.logits_process import (ForcedBOSTokenLogitsProcessor,
                                                        ForcedEOSTokenLogitsProcessor)

    from msmigrate.trace.generate_src import FORCE_TOKENS

    ns = {"np": np}
    exec(FORCE_TOKENS, ns)  # noqa: S102 - the code model.py carries
    force = ns["force_tokens"]
    scores = torch.randn(3, 11, generator=torch.Generator().manual_seed(3))
    for cur_len in (1, 2, 5, 6):
        ids = torch.zeros(3, cur_len, dtype=torch.long)
        for bos, eos in ((0, 2), (None, [7, 4]), (5, None), (None, None)):
            ref = scores.clone()
            if bos is not None:
                ref = ForcedBOSTokenLogitsProcessor(bos)(ids, ref)
            if eos is not None:
                ref = ForcedEOSTokenLogitsProcessor(max_length=7, eos_token_id=eos)(ids, ref)
            got = force(scores.numpy().argmax(-1).astype(np.int64), cur_len, 7, bos, eos)
            assert got.tolist() == ref.argmax(-1).tolist(), (cur_len, bos, eos)


class FullyMaskedRows(nn.Module):
    """Attention over a left-padded batch: the padding queries may attend to nothing (torch gives 0)."""

    def forward(self, q, mask):
        keep = mask.bool()[:, None, None, :] & mask.bool()[:, None, :, None]
        keep = keep & torch.ones(q.shape[2], q.shape[2], dtype=torch.bool).tril()
        a = torch.nn.functional.scaled_dot_product_attention(q, q * 2, q + 1, attn_mask=keep)
        f = torch.zeros(keep.shape).masked_fill(~keep, float("-inf"))
        return a + torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=f)


def test_sdpa_rows_with_nothing_to_attend(tmp_path):
    from msmigrate.trace.core import padding_mask

    q = torch.randn(2, 4, 5, 8, generator=torch.Generator().manual_seed(0))
    res = trace_model(FullyMaskedRows(), (q, padding_mask((2, 5), left=True)), tmp_path / "sdpa")
    _assert_all_modes(res)


class Router(nn.Module):
    """A mixture-of-experts router: top-k of the softmax scores, and a sort of the scores."""

    def forward(self, x):
        w, idx = torch.topk(torch.softmax(x, -1), 2, dim=-1)
        s, order = torch.sort(x, dim=-1, descending=True)
        return w * idx + s[..., :2] + order[..., :2]


def test_topk_and_sort(tmp_path):
    x = torch.randn(3, 5, 6, generator=torch.Generator().manual_seed(0))   # distinct values: no ties
    res = trace_model(Router(), (x,), tmp_path / "router")
    _assert_all_modes(res)
