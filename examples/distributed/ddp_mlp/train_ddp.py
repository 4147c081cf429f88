"""Data-parallel training with DistributedDataParallel, launched by torchrun.

    torchrun --nproc_per_node=2 train_ddp.py --epochs 3 --save ddp_mlp.pt

Each process trains a replica of the model on its shard of the data (DistributedSampler);
DDP averages the gradients across processes, so every replica takes the same optimizer step.
Rank 0 logs and writes the checkpoint. Runs on CPU (gloo) or GPUs (nccl).
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class MLP(nn.Module):
    def __init__(self, in_features=20, hidden=64, classes=4, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.drop(F.relu(self.fc2(x)))
        return self.head(x)


def make_datasets(n_train, n_val, in_features, classes, seed):
    """Synthetic train and validation sets, the same in every process (seeded NumPy)."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((in_features, classes)).astype(np.float32)
    sets = []
    for n in (n_train, n_val):
        x = rng.standard_normal((n, in_features)).astype(np.float32)
        y = (x @ w).argmax(axis=1).astype(np.int64)
        sets.append(TensorDataset(torch.from_numpy(x), torch.from_numpy(y)))
    return sets


def setup():
    """torchrun sets RANK, LOCAL_RANK and WORLD_SIZE for every process it starts."""
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend=backend)
    local_rank = int(os.environ["LOCAL_RANK"])
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    return dist.get_rank(), dist.get_world_size(), local_rank, device


def evaluate(model, loader, device, world_size):
    """Mean loss and accuracy over the whole validation set, summed across processes."""
    model.eval()
    totals = torch.zeros(3)
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.cross_entropy(logits, y, reduction="sum")
            correct = (logits.argmax(dim=1) == y).sum()
            totals = totals + torch.stack([loss, correct.float(), torch.tensor(float(y.shape[0]))])
    dist.all_reduce(totals, op=dist.ReduceOp.SUM)
    return (totals[0] / totals[2]).item(), (totals[1] / totals[2]).item()


def main():
    parser = argparse.ArgumentParser(description="DDP training of an MLP on synthetic data")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16, help="samples per process and step")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--deterministic", action="store_true",
                        help="dropout off, so runs with different process counts compute the same steps")
    parser.add_argument("--init-weights", default="", help="start from this state_dict (torch.save)")
    parser.add_argument("--save", default="ddp_mlp.pt", help="where rank 0 saves the trained state_dict")
    parser.add_argument("--metrics", default="", help="rank 0 appends one JSON line per step to this file")
    parser.add_argument("--log-every", type=int, default=4)
    args = parser.parse_args()

    rank, world_size, local_rank, device = setup()
    torch.manual_seed(args.seed)

    train_set, val_set = make_datasets(args.samples, args.samples // 4, 20, 4, seed=args.seed)
    train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True,
                                       seed=args.seed, drop_last=True)
    val_sampler = DistributedSampler(val_set, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=train_sampler, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, sampler=val_sampler)

    model = MLP(dropout=0.0 if args.deterministic else 0.1).to(device)
    if args.init_weights:
        model.load_state_dict(torch.load(args.init_weights, map_location=device))
    model = DDP(model, device_ids=[local_rank] if torch.cuda.is_available() else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    metrics = open(args.metrics, "a") if (args.metrics and rank == 0) else None
    step = 0
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)      # a different shuffle every epoch, the same on every rank
        model.train()
        start = time.time()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            step += 1
            # the mean loss over all processes, for logging
            global_loss = loss.detach().clone()
            dist.all_reduce(global_loss, op=dist.ReduceOp.SUM)
            global_loss = global_loss / world_size
            if metrics is not None:
                metrics.write(json.dumps({"step": step, "loss": global_loss.item()}) + "\n")
            if rank == 0 and step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {global_loss.item():.4f}")
        val_loss, val_acc = evaluate(model, val_loader, device, world_size)
        if rank == 0:
            print(f"epoch {epoch}: val loss {val_loss:.4f} acc {val_acc:.3f} ({time.time() - start:.1f}s)")
            if metrics is not None:
                metrics.write(json.dumps({"epoch": epoch, "val_loss": val_loss, "val_acc": val_acc}) + "\n")

    if rank == 0:
        torch.save(model.module.state_dict(), args.save)
        print(f"saved {args.save}")
    dist.barrier()                          # nobody exits before the checkpoint is written
    if metrics is not None:
        metrics.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
