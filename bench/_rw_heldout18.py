"""The `heldout18` set of bench/real_world.py (`--set heldout18`): four small lucidrains packages the converter
was never run on, converted as a new user would convert them, each trained for a few steps through a short driver
(our code, the packages' documented entry points).

    python bench/real_world.py --mirrors /work/.mirror --set heldout18 [--only palm,tab_ft,slot_attention,moe]

- lucidrains/PaLM-pytorch: palm_pytorch.py's PaLM (parallel attention + SwiGLU feed-forward blocks, a bias-less
  LayerNorm whose beta is a register_buffer, rotary embeddings built by `einsum("i , j -> i j")`, multi-query
  attention, a causal mask `masked_fill(..., -torch.finfo(dtype).max)`, mask and rotary tables cached by
  re-registering non-persistent buffers that start as None, output projection tied to the embedding) inside
  autoregressive_wrapper.py's AutoregressiveWrapper, trained as the repo's train.py trains (gradient accumulation,
  clip_grad_norm_, Adam) on random byte windows of ours (train.py itself imports palm_pytorch.triton, whose
  kernels need a GPU); then generate() (top-k filtering by scatter_, torch.multinomial sampling, the eos mask by
  F.pad with a negative pad and cumsum) and palm_lite.py's PaLM (RMSNorm by torch.norm, ALiBi bias cached the same
  way) trained for two steps. The package's files are copied next to the driver (not palm_pytorch/triton/).
- lucidrains/tab-transformer-pytorch at a85dfa9 (0.3.0; every later commit imports hyper_connections,
  x_mlps_pytorch or discrete_continuous_embed_readout, none installed; heldout6 runs this commit with continuous
  statistics and shared category embeddings): TabTransformer without shared category embeddings and with no
  continuous_mean_std (a register_buffer of None), a categories-only TabTransformer (num_continuous=0) and a
  categories-only FTTransformer (its cat with the cls token, attention maps returned).
- lucidrains/slot-attention: SlotAttention (initial slots `mu + sigma * torch.randn(mu.shape)`, the noise aligned
  by the runner; GRUCell over the flattened slots, softmax over the slot axis, ReLU(inplace=True) in its MLP),
  MultiHeadSlotAttention (einops repeat / pack / unpack, a Rearrange layer used through map, F.normalize p=1)
  and AdaptiveSlotWrapper (a straight-through Gumbel one-hot from torch.rand_like, argmax and F.one_hot), each
  under a reconstruction loss of ours with Adam.
- lucidrains/mixture-of-experts: MoE and HeirarchicalMoE (Top2Gating: top-1 by topk, F.one_hot masks, the
  balancing loss, cumsum_exclusive by F.pad and cumsum with a tuple-of-slices index, safe_one_hot sized by a
  tensor's max, in-place `*=` and `/=` on gate tensors, combine/dispatch tensors by einsum with ellipses, experts
  as batched einsum weights initialised by uniform_) with the auxiliary loss added to an MSE of ours, Adam. The
  second-expert policy 'random' draws uniform_ (not aligned across the frameworks by the runner), so its
  threshold is set where every draw in [0, 1) passes (gate_2 / 1e-9 > 1); HeirarchicalMoE trains with 'all'
  and evaluates with 'none' (the 'threshold' policy fails in torch itself: `mask_2 *= (gate_2 > threshold)` lacks
  the unsqueeze the 'random' branch has).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

PALM = "lucidrains+PaLM-pytorch@7164d13d5a831647edb5838544017f387130f987"
TAB = "lucidrains+tab-transformer-pytorch@a85dfa9a623d5d7ee18d8b85f2ff3eb3fc9e8b29"
SLOT = "lucidrains+slot-attention@e66a1c4c94e5e91e9519213853259e55be3d0132"
MOE = "lucidrains+mixture-of-experts@0fb459faf558c8e77b0e018685c64d00571d4fd9"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("palm", PALM, "palm_pytorch/palm_pytorch.py,palm_pytorch/palm_lite.py,palm_pytorch/autoregressive_wrapper.py",
     "driver.py", [], None),
    ("tab_ft", TAB, "tab_transformer_pytorch", "driver.py", [], None),
    ("slot_attention", SLOT, "slot_attention", "driver.py", [], None),
    ("moe", MOE, "mixture_of_experts", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the packages' documented entry points.
DRIVERS = {
    "palm": '''
import torch
from palm_pytorch import PaLM
from palm_lite import PaLM as PaLMLite
from autoregressive_wrapper import AutoregressiveWrapper

SEQ_LEN = 16
data = torch.randint(0, 256, (400,)).to(torch.uint8)


def batch(n=2):
    rows = []
    for _ in range(n):
        start = torch.randint(0, data.size(0) - SEQ_LEN, (1,))
        rows.append(data[start: start + SEQ_LEN + 1].long())
    return torch.stack(rows)


model = AutoregressiveWrapper(PaLM(num_tokens=256, dim=32, depth=2, dim_head=8, heads=4, ff_mult=2),
                              max_seq_len=SEQ_LEN)
optim = torch.optim.Adam(model.parameters(), lr=2e-3)
for i in range(3):
    model.train()
    for __ in range(2):
        loss = model(batch())
        loss.backward()
    print("training loss", loss.item())
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optim.step()
    optim.zero_grad()
model.eval()
with torch.no_grad():
    val = batch()
    print("VALUE val_loss", float(model(val)))
    print("VALUE logits", float(model.net(val[:, :8]).abs().mean()))
sample = model.generate(val[:1, :4], 5, eos_token=val[0, 6].item())
print("VALUE sample_len", float(sample.shape[-1]))

lite = AutoregressiveWrapper(PaLMLite(num_tokens=256, dim=32, depth=2, dim_head=8, heads=4, ff_mult=2))
optim = torch.optim.Adam(lite.parameters(), lr=2e-3)
for i in range(2):
    loss = lite(batch())
    loss.backward()
    optim.step()
    optim.zero_grad()
    print("lite loss", loss.item())
''',
    "tab_ft": '''
import torch
import torch.nn.functional as F
from tab_transformer_pytorch import TabTransformer, FTTransformer

x_categ = torch.stack([torch.randint(0, n, (6,)) for n in (4, 3, 5)], dim=1)
x_cont = torch.randn(6, 2)
target = torch.randn(6, 1)
labels = torch.tensor([0, 1, 2, 1, 0, 2])

tab = TabTransformer(categories=(4, 3, 5), num_continuous=2, dim=16, depth=2, heads=2, dim_head=8, dim_out=1,
                     mlp_hidden_mults=(2,), use_shared_categ_embed=False, num_special_tokens=1)
optimizer = torch.optim.Adam(tab.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(tab(x_categ, x_cont), target)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())

only_categ = TabTransformer(categories=(4, 3, 5), num_continuous=0, dim=16, depth=1, heads=2, dim_head=8,
                            dim_out=3, shared_categ_dim_divisor=4.)
optimizer = torch.optim.SGD(only_categ.parameters(), lr=1e-2, momentum=0.9)
for step in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(only_categ(x_categ, torch.zeros(6, 0)), labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())

ft = FTTransformer(categories=(4, 3, 5), num_continuous=0, dim=16, depth=2, heads=2, dim_head=8, dim_out=3)
optimizer = torch.optim.AdamW(ft.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(ft(x_categ, torch.zeros(6, 0)), labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
with torch.no_grad():
    logits, attns = ft(x_categ, torch.zeros(6, 0), return_attn=True)
print("VALUE ft_logits", float(logits.abs().mean()))
print("VALUE ft_attn", float((attns * torch.arange(attns.shape[-1])).sum()))
''',
    "slot_attention": '''
import torch
import torch.nn.functional as F
from slot_attention import SlotAttention, MultiHeadSlotAttention, AdaptiveSlotWrapper

inputs = torch.randn(2, 12, 16)
target = torch.randn(2, 4, 16)

slot = SlotAttention(num_slots=4, dim=16, iters=3, hidden_dim=32)
optimizer = torch.optim.Adam(slot.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(slot(inputs), target)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
with torch.no_grad():
    print("VALUE slots_3", float(slot(inputs, num_slots=3).abs().mean()))

multi = MultiHeadSlotAttention(num_slots=4, dim=16, heads=2, dim_head=8, iters=2, hidden_dim=32)
optimizer = torch.optim.Adam(multi.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(multi(inputs), target)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())

adaptive = AdaptiveSlotWrapper(SlotAttention(num_slots=4, dim=16, iters=2, hidden_dim=32), temperature=0.5)
optimizer = torch.optim.Adam(adaptive.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    slots, keep = adaptive(inputs)
    loss = F.mse_loss(slots * keep[..., None], target) + keep.mean()
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
''',
    "moe": '''
import torch
import torch.nn.functional as F
from torch import nn
from mixture_of_experts import MoE, HeirarchicalMoE

x = torch.randn(2, 16, 8)
target = torch.randn(2, 16, 8)

moe = MoE(dim=8, num_experts=4, hidden_dim=16, activation=nn.LeakyReLU, second_threshold_train=1e-9,
          second_threshold_eval=1e-9, capacity_factor_train=1.0)
optimizer = torch.optim.Adam(moe.parameters(), lr=1e-2)
for step in range(3):
    optimizer.zero_grad()
    out, aux_loss = moe(x)
    loss = F.mse_loss(out, target) + aux_loss
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
moe.eval()
with torch.no_grad():
    out, aux_loss = moe(x)
print("VALUE moe_eval", float(out.abs().mean()))
print("VALUE moe_aux", float(aux_loss))

hmoe = HeirarchicalMoE(dim=8, num_experts=(2, 2), hidden_dim=16, second_policy_train="all",
                       second_policy_eval="none")
optimizer = torch.optim.Adam(hmoe.parameters(), lr=1e-2)
for step in range(3):
    optimizer.zero_grad()
    out, aux_loss = hmoe(x)
    loss = F.mse_loss(out, target) + aux_loss
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
hmoe.eval()
with torch.no_grad():
    out, aux_loss = hmoe(x)
print("VALUE hmoe_eval", float(out.abs().mean()))
''',
}
