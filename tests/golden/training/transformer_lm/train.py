"""Train a character-level GPT on a text file (after karpathy/nanoGPT, shakespeare_char).

    python train.py --data input.txt --max-iters 5000 --save ckpt.pt

--data is a plain text file; the vocabulary is its set of characters, the first 90% trains.
"""
import argparse
import json
import math
import os
import time

import numpy as np
import mindspore as ms
from mindspore import ops
import _ms_compat

from model import GPT, GPTConfig

# msmigrate: GRAPH_MODE compiles the train step (fast); PYNATIVE_MODE runs op by op (debugging)
# msmigrate: the device comes from MS_DEVICE_TARGET (CPU, GPU or Ascend)
ms.set_context(mode=ms.GRAPH_MODE)
# _ms_compat.set_device (helper): warns instead of raising once MindSpore's runtime has started
_ms_compat.set_device(os.environ.get('MS_DEVICE_TARGET', 'CPU'))
# msmigrate: MindSpore's CPU convolutions are ~100x slower with oneDNN's AVX-512 path
os.environ.setdefault('ONEDNN_MAX_CPU_ISA', 'AVX2')

parser = argparse.ArgumentParser(description='character-level GPT')
parser.add_argument('--data', default='input.txt', help='a text file')
parser.add_argument('--block-size', type=int, default=256, help='context length')
parser.add_argument('--batch-size', type=int, default=64)
parser.add_argument('--n-layer', type=int, default=6)
parser.add_argument('--n-head', type=int, default=6)
parser.add_argument('--n-embd', type=int, default=384)
parser.add_argument('--dropout', type=float, default=0.2)
parser.add_argument('--lr', type=float, default=1e-3, help='peak learning rate')
parser.add_argument('--weight-decay', type=float, default=1e-1)
parser.add_argument('--beta2', type=float, default=0.99)
parser.add_argument('--grad-clip', type=float, default=1.0, help='clip gradients at this norm (0: off)')
parser.add_argument('--warmup-iters', type=int, default=100)
parser.add_argument('--epochs', '--max-iters', type=int, default=5000, dest='max_iters',
                    help='optimizer steps in all (this trainer samples batches, it has no epochs)')
parser.add_argument('--max-steps', type=int, default=0, help='stop early after this many steps (0: no limit)')
parser.add_argument('--eval-interval', type=int, default=250)
parser.add_argument('--eval-iters', type=int, default=200)
parser.add_argument('--log-interval', type=int, default=10)
parser.add_argument('--seed', type=int, default=1337)
parser.add_argument('--deterministic', action='store_true',
                    help='reproducible run: batch offsets drawn from numpy.random.default_rng(--seed) instead of '
                         'torch.randint, and dropout off, so two runs from the same --init-weights compute the '
                         'same losses')
parser.add_argument('--init-weights', default='', help='state_dict (saved with torch.save) to start from')
parser.add_argument('--metrics', default='', help='append one JSON line per optimizer step to this file')
parser.add_argument('--save', default='', help='save a checkpoint (model, optimizer, iter) here')
parser.add_argument('--sample-len', type=int, default=200, help='characters to sample after training (0: none)')
args = parser.parse_args()

# _ms_compat.manual_seed (helper): torch.manual_seed: mindspore.set_seed, less its np.random.seed (torch's leaves NumPy
# alone): a NumPy stream the progr...
_ms_compat.manual_seed(seed=args.seed)
rng = np.random.default_rng(args.seed)
# _ms_compat.backend (helper): torch.cuda's queries as properties of MindSpore's context (readable in GRAPH mode)
device = 'cuda' if _ms_compat.backend.on_accelerator else 'cpu'

# data: characters to integers
with open(args.data, 'r', encoding='utf-8') as f:
    text = f.read()
chars = sorted(list(set(text)))
vocab_size = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}
encode = lambda s: [stoi[c] for c in s]
decode = lambda l: ''.join([itos[i] for i in l])
data = ms.Tensor(encode(text), dtype=ms.int64)
n = int(0.9 * len(data))
train_data = data[:n]
val_data = data[n:]
print(f"{len(text):,} characters, vocabulary of {vocab_size}")


def get_batch(split):
    # generate a small batch of data of inputs x and targets y
    data = train_data if split == 'train' else val_data
    if args.deterministic:
        ix = ms.Tensor.from_numpy(rng.integers(0, len(data) - args.block_size, (args.batch_size,)))
    else:
        ix = ops.randint(0, len(data) - args.block_size, (args.batch_size,))
    x = ops.stack([data[i:i + args.block_size] for i in ix])
    y = ops.stack([data[i + 1:i + args.block_size + 1] for i in ix])
    return x, y


config = GPTConfig(block_size=args.block_size, vocab_size=vocab_size, n_layer=args.n_layer, n_head=args.n_head,
                   n_embd=args.n_embd, dropout=0.0 if args.deterministic else args.dropout, bias=True)
model = GPT(config)
if args.init_weights:
    # _ms_compat.load_state_dict (helper): takes torch's names and layouts and writes in place, so a compiled step sees
    # the values
    # _ms_compat.load (helper): reads torch.save files without torch or running pickled code, and MindSpore checkpoints
    _ms_compat.load_state_dict(model, _ms_compat.load(args.init_weights))
print(f"{sum(_ms_compat.numel(p) for p in _ms_compat.parameters(model)) / 1e6:.2f}M parameters")

optimizer = model.configure_optimizers(args.weight_decay, args.lr, (0.9, args.beta2))


def lr_lambda(it):
    """Linear warmup for warmup_iters steps, then cosine decay to 10% of the peak."""
    if it < args.warmup_iters:
        return (it + 1) / (args.warmup_iters + 1)
    progress = (it - args.warmup_iters) / max(1, args.max_iters - args.warmup_iters)
    return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


# _ms_compat.LambdaLR (helper): torch's formula, written into the lr Parameters between steps (nothing recompiles)
scheduler = _ms_compat.LambdaLR(optimizer, lr_lambda)


def estimate_loss():
    out = {}
    model.set_train(False)
    for split in ['train', 'val']:
        losses = ops.zeros(args.eval_iters, dtype=ms.float32)
        for k in range(args.eval_iters):
            X, Y = get_batch(split)
            logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = _ms_compat.reduce_mean(losses).item()
    model.set_train(True)
    return _ms_compat.no_grad_value(out)


metrics = open(args.metrics, 'a') if args.metrics else None
model.set_train(True)
t0 = time.time()

# msmigrate: the forward computation of the training step (differentiated by grad_fn)
def forward_fn(xb, yb):
    logits, loss = model(xb, yb)
    return loss
# _ms_compat.value_and_grad_reached (helper): ms.value_and_grad; op by op a parameter the loss did not use gets None, as
# torch's .grad, and the optimizer skips it
grad_fn = _ms_compat.value_and_grad_reached(forward_fn, optimizer.parameters)

# msmigrate: one optimizer step, compiled into a graph in GRAPH mode (PYNATIVE: op by op)
def train_step(xb, yb):
    loss, grads = grad_fn(xb, yb)
    if args.grad_clip > 0:
        # _ms_compat.clip_grad_norm (helper): torch's scaling, max_norm / (total_norm + 1e-6), and the total norm
        # returned
        grads, grad_norm = _ms_compat.clip_grad_norm(grads, args.grad_clip)
    optimizer(grads)
    return loss
# _ms_compat.compile_step (helper): compiled once per model and optimizer in GRAPH mode, not again each epoch; op by op
# in PYNATIVE mode
train_step = _ms_compat.compile_step(train_step)
for it in range(args.max_iters):
    if it % args.eval_interval == 0 and it > 0:
        losses = estimate_loss()
        print(f"step {it}: train loss {_ms_compat.format_value(losses['train']):.4f}, val loss {_ms_compat.format_value(losses['val']):.4f}")
        if metrics is not None:
            metrics.write(json.dumps({'iter': it, 'train_loss': losses['train'], 'val_loss': losses['val']}) + '\n')

    xb, yb = get_batch('train')
    loss = train_step(xb, yb)
    scheduler.step()

    if metrics is not None:
        metrics.write(json.dumps({'step': it + 1, 'loss': loss.item(), 'lr': scheduler.get_last_lr()[0]}) + '\n')
    if it % args.log_interval == 0:
        t1 = time.time()
        print(f"iter {it}: loss {loss.item():.4f}, lr {_ms_compat.format_value(scheduler.get_last_lr()[0]):.2e}, time {(t1 - t0) * 1000:.0f}ms")
        t0 = t1
    if args.max_steps and it + 1 >= args.max_steps:
        break

if metrics is not None:
    metrics.close()
if args.save:
    # _ms_compat.save (helper): nested dicts, lists and numbers at exactly this path (save_checkpoint: flat, appends
    # .ckpt)
    # _ms_compat.state_dict (helper): also answers torch's names (Cell.state_dict: gamma, beta, moving_mean...);
    # optimizers in torch's layout
    _ms_compat.save({'model': _ms_compat.state_dict(model), 'optimizer': _ms_compat.state_dict(optimizer), 'iter': it + 1,
                'config': vars(config)}, args.save)
if args.sample_len > 0:
    model.set_train(False)
    context = ops.zeros((1, 1), dtype=ms.int64)
    print(decode(model.generate(context, max_new_tokens=args.sample_len)[0].tolist()))
