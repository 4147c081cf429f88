"""The `heldout6` set of bench/real_world.py (`--set heldout6`): repositories the converter was never run on,
converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout6 [--only rasbt_gpt,performer]

- rasbt/LLMs-from-scratch: the book's package (pkg/llms_from_scratch) through drivers: GPTModel (ch04) trained
  by ch05's train_model_simple (evaluation under no_grad with eval()/train(), greedy samples printed after each
  epoch) on a character tokenizer and a sliding-window Dataset of our own (ch02's imports tiktoken, which is
  not installed), then ch05's generate(); and Qwen3Model (RoPE, RMSNorm, grouped-query attention with
  qk-norm), dense and with its mixture-of-experts feed-forward (topk routing, torch.unique over the chosen
  experts, index_add_). The chapters' own scripts (gpt_train.py...) import tiktoken and download their text.
- lucidrains/ema-pytorch: EMA (deepcopy of the model, lerp_ of its parameters after each optimizer step through
  `self.inplace_lerp = partial(inplace_lerp, ...)`) and, as ema_posthoc, PostHocEMA (Karras EMAs checkpointed
  with torch.save to a folder, a model synthesized from them by torch.load and a least-squares solve), through
  drivers.
- davda54/sam: SAM (sharpness-aware minimization, sam.py: an Optimizer subclass with first_step()/second_step()
  around two forward/backward passes per batch, adaptive, over torch.optim.SGD) through a driver.
- lucidrains/tab-transformer-pytorch at a85dfa9 (0.3.0, the last release before it imports
  hyper_connections / x_mlps_pytorch / discrete_continuous_embed_readout, none installed): TabTransformer
  (shared category embeddings, continuous mean/std buffer) and FTTransformer through a driver.
- lucidrains/performer-pytorch at dd827c9 (2020-11; later versions import local_attention and
  axial_positional_embedding, not installed): PerformerLM with FAVOR+ (a Gaussian orthogonal random projection
  drawn by torch.randn and torch.qr at every forward), the causal variant in plain torch (its cumsum form,
  the CUDA kernel not importable) and generalized attention with GLU feed-forward, through a driver;
  performer_reversible: the causal model on reversible layers (a custom autograd Function recomputing forward
  in backward under saved RNG states: torch.cuda._initialized, fork_rng, get/set_device_states).
- lucidrains/linear-attention-transformer at ab7693e (2020-06; later versions import local_attention,
  axial_positional_embedding, product_key_memory and linformer, not installed): LinearAttentionTransformerLM
  (causal linear attention, local windowed heads with look-around, axial positional embedding, chunked
  feed-forward, one shared key/value head: an einsum equation chosen by a flag) through a driver;
  linear_reversible: the same on reversible layers (performer's reversible.py).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

RASBT = "rasbt+LLMs-from-scratch"
EMA = "lucidrains+ema-pytorch"
SAM = "davda54+sam"
TAB = "lucidrains+tab-transformer-pytorch@a85dfa9a623d5d7ee18d8b85f2ff3eb3fc9e8b29"
PERFORMER = "lucidrains+performer-pytorch@dd827c96b2a8b7186d39ac073790e281943e00de"
LINEAR = "lucidrains+linear-attention-transformer@ab7693ec84fa91600e7f898b2d2290daeb34bbec"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("rasbt_gpt", RASBT, "pkg/llms_from_scratch", "driver.py", [], None),
    ("rasbt_qwen3", RASBT, "pkg/llms_from_scratch", "driver.py", [], None),
    ("ema", EMA, "ema_pytorch", "driver.py", [], None),
    ("ema_posthoc", EMA, "ema_pytorch", "driver.py", [], None),
    ("sam", SAM, "sam.py", "driver.py", [], None),
    ("tab_transformer", TAB, "tab_transformer_pytorch", "driver.py", [], None),
    ("performer", PERFORMER, "performer_pytorch", "driver.py", [], None),
    ("performer_reversible", PERFORMER, "performer_pytorch", "driver.py", [], None),
    ("linear_attention", LINEAR, "linear_attention_transformer", "driver.py", [], None),
    ("linear_reversible", LINEAR, "linear_attention_transformer", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "rasbt_gpt": '''
import torch
from torch.utils.data import Dataset, DataLoader
from llms_from_scratch.ch04 import GPTModel
from llms_from_scratch.ch05 import train_model_simple, generate, calc_loss_loader


class CharTokenizer:
    """stands in for tiktoken's GPT-2 encoding (encode/decode of the same signature)"""
    def __init__(self, text):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def encode(self, text, allowed_special=None):
        return [self.index[c] for c in text]

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


class WindowDataset(Dataset):
    def __init__(self, ids, max_length, stride):
        self.inputs = [torch.tensor(ids[i:i + max_length]) for i in range(0, len(ids) - max_length, stride)]
        self.targets = [torch.tensor(ids[i + 1:i + max_length + 1]) for i in range(0, len(ids) - max_length, stride)]

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, i):
        return self.inputs[i], self.targets[i]


text = "every effort moves you forward, and every step you take moves the model. " * 4
tokenizer = CharTokenizer(text)
ids = tokenizer.encode(text)
split = int(0.8 * len(ids))
train_loader = DataLoader(WindowDataset(ids[:split], 12, 12), batch_size=4, shuffle=True, drop_last=True)
val_loader = DataLoader(WindowDataset(ids[split:], 12, 12), batch_size=2, shuffle=False, drop_last=False)
cfg = {"vocab_size": len(tokenizer.chars), "context_length": 16, "emb_dim": 32, "n_heads": 4, "n_layers": 2,
       "drop_rate": 0.1, "qkv_bias": False}
torch.manual_seed(123)
model = GPTModel(cfg)
optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.1)
train_losses, val_losses, seen = train_model_simple(
    model, train_loader, val_loader, optimizer, "cpu", num_epochs=1, eval_freq=2, eval_iter=1,
    start_context="every eff", tokenizer=tokenizer)
for i, (t, v) in enumerate(zip(train_losses, val_losses)):
    print(f"VALUE train_loss{i}", t)
    print(f"VALUE val_loss{i}", v)
print("VALUE tokens_seen", seen[-1])
with torch.no_grad():
    print("VALUE val_loader_loss", calc_loss_loader(val_loader, model, "cpu"))
model.eval()
idx = torch.tensor([tokenizer.encode("every")])
out = generate(model, idx, max_new_tokens=6, context_size=cfg["context_length"], temperature=0.0)
print("VALUE greedy_ids", float(out.sum()))
''',
    "rasbt_qwen3": '''
import torch
import torch.nn.functional as F
from llms_from_scratch.qwen3 import Qwen3Model

base = {"vocab_size": 40, "context_length": 32, "emb_dim": 32, "n_heads": 4, "n_layers": 2, "hidden_dim": 48,
        "head_dim": 8, "qk_norm": True, "n_kv_groups": 2, "rope_base": 10000.0, "dtype": torch.float32}
moe = dict(base, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16)
tokens = torch.randint(0, 40, (2, 10))
for name, cfg in (("dense", base), ("moe", moe)):
    model = Qwen3Model(cfg)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    for step in range(3):
        optimizer.zero_grad()
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        print("loss", loss.item())
    with torch.no_grad():
        print("VALUE " + name + "_logits", float(model(tokens).abs().mean()))
''',
    "ema": '''
import torch
import torch.nn.functional as F
from torch import nn
from ema_pytorch import EMA

x = torch.randn(8, 6)
y = torch.randn(8, 2)


def make():
    return nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))


net = make()
ema = EMA(net, beta=0.9, update_after_step=0, update_every=1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for step in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    optimizer.step()
    ema.update()
    print("loss", loss.item())
ema.eval()
with torch.no_grad():
    print("VALUE ema_out", float(ema(x).abs().mean()))
    print("VALUE ema_decay", float(ema.get_current_decay()))
''',
    "ema_posthoc": '''
import torch
import torch.nn.functional as F
from torch import nn
from ema_pytorch import PostHocEMA

x = torch.randn(8, 6)
y = torch.randn(8, 2)
net = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
post = PostHocEMA(net, sigma_rels=(0.05, 0.28), update_every=1, checkpoint_every_num_steps=1,
                  checkpoint_folder="./post-hoc-ema-checkpoints")
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(net(x), y)
    loss.backward()
    optimizer.step()
    post.update()
    print("loss", loss.item())
synthesized = post.synthesize_ema_model(sigma_rel=0.15)
synthesized.eval()
with torch.no_grad():
    print("VALUE synthesized_out", float(synthesized(x).abs().mean()))
''',
    "sam": '''
import torch
import torch.nn.functional as F
from torch import nn
from sam import SAM

x = torch.randn(8, 6)
y = torch.randn(8, 2)
net = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
optimizer = SAM(net.parameters(), torch.optim.SGD, rho=0.5, adaptive=True, lr=0.1, momentum=0.9, weight_decay=5e-4)
for step in range(4):
    loss = F.mse_loss(net(x), y)
    loss.backward()
    optimizer.first_step(zero_grad=True)
    F.mse_loss(net(x), y).backward()
    optimizer.second_step(zero_grad=True)
    print("loss", loss.item())
net.eval()
with torch.no_grad():
    print("VALUE sam_out", float(net(x).abs().mean()))
''',
    "tab_transformer": '''
import torch
import torch.nn.functional as F
from tab_transformer_pytorch import TabTransformer, FTTransformer

x_categ = torch.stack([torch.randint(0, n, (6,)) for n in (4, 3, 5)], dim=1)
x_cont = torch.randn(6, 3)
target = torch.randn(6, 1)
labels = torch.tensor([0, 1, 2, 1, 0, 2])
stats = torch.stack([x_cont.mean(0), x_cont.std(0)], dim=1)

tab = TabTransformer(categories=(4, 3, 5), num_continuous=3, dim=16, depth=2, heads=2, dim_head=8, dim_out=1,
                     mlp_hidden_mults=(4, 2), mlp_act=torch.nn.ReLU(), continuous_mean_std=stats)
optimizer = torch.optim.Adam(tab.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(tab(x_categ, x_cont), target)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
with torch.no_grad():
    pred, attns = tab(x_categ, x_cont, return_attn=True)
print("VALUE tab_pred", float(pred.abs().mean()))
print("VALUE tab_attn", float(attns.abs().sum()))

ft = FTTransformer(categories=(4, 3, 5), num_continuous=3, dim=16, depth=2, heads=2, dim_head=8, dim_out=3)
optimizer = torch.optim.AdamW(ft.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(ft(x_categ, x_cont), labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
with torch.no_grad():
    print("VALUE ft_logits", float(ft(x_categ, x_cont).abs().mean()))
''',
    "performer": '''
import torch
import torch.nn.functional as F
from performer_pytorch import PerformerLM

tokens = torch.randint(0, 20, (2, 12))
for name, kwargs in (("plain", {}),
                     ("causal", {"causal": True}),
                     ("generalized_glu", {"generalized_attention": True, "ff_glu": True, "ff_chunks": 2})):
    model = PerformerLM(num_tokens=20, max_seq_len=12, dim=16, depth=2, heads=2, nb_features=8, **kwargs)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(2):
        optimizer.zero_grad()
        logits = model(tokens)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, 20), tokens[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    model.fix_projection_matrices_()
    with torch.no_grad():
        print("VALUE " + name + "_logits", float(model(tokens).abs().mean()))
''',
    "performer_reversible": '''
import torch
import torch.nn.functional as F
from performer_pytorch import PerformerLM

tokens = torch.randint(0, 20, (2, 12))
model = PerformerLM(num_tokens=20, max_seq_len=12, dim=16, depth=2, heads=2, nb_features=8, causal=True,
                    reversible=True)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    logits = model(tokens)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 20), tokens[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
''',
    "linear_attention": '''
import torch
import torch.nn.functional as F
from linear_attention_transformer import LinearAttentionTransformerLM

tokens = torch.randint(0, 20, (2, 16))
for name, kwargs in (("causal_local", {"causal": True, "n_local_attn_heads": 1}),
                     ("chunked_one_kv_head", {"ff_chunks": 2, "one_kv_head": True})):
    model = LinearAttentionTransformerLM(num_tokens=20, dim=16, depth=2, max_seq_len=16, heads=2,
                                         local_attn_window_size=4, **kwargs)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        optimizer.zero_grad()
        logits = model(tokens)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, 20), tokens[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    with torch.no_grad():
        print("VALUE " + name + "_logits", float(model(tokens).abs().mean()))
''',
    "linear_reversible": '''
import torch
import torch.nn.functional as F
from linear_attention_transformer import LinearAttentionTransformerLM

tokens = torch.randint(0, 20, (2, 16))
model = LinearAttentionTransformerLM(num_tokens=20, dim=16, depth=2, max_seq_len=16, heads=2, reversible=True,
                                     local_attn_window_size=4)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    logits = model(tokens)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, 20), tokens[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
''',
}
