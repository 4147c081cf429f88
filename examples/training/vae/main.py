"""Variational autoencoder on MNIST (after pytorch/examples/vae).

    python main.py --data ../data --epochs 10 --save vae.pt

--data is the directory holding MNIST/raw/*-ubyte, as torchvision downloads it.
"""
from __future__ import print_function
import argparse
import json
import os

import numpy as np
import torch
import torch.utils.data
from torch import optim
from torchvision import datasets, transforms

from model import VAE, loss_function

parser = argparse.ArgumentParser(description='VAE MNIST Example')
parser.add_argument('--data', type=str, default='../data',
                    help='directory holding MNIST/raw (default: ../data)')
parser.add_argument('--batch-size', type=int, default=128, metavar='N',
                    help='input batch size for training (default: 128)')
parser.add_argument('--epochs', type=int, default=10, metavar='N',
                    help='number of epochs to train (default: 10)')
parser.add_argument('--lr', type=float, default=1e-3, metavar='LR',
                    help='learning rate (default: 1e-3)')
parser.add_argument('--latent', type=int, default=20, metavar='N',
                    help='size of the latent code (default: 20)')
parser.add_argument('--no-cuda', action='store_true', default=False,
                    help='disables CUDA training')
parser.add_argument('--seed', type=int, default=1, metavar='S',
                    help='random seed (default: 1)')
parser.add_argument('--log-interval', type=int, default=10, metavar='N',
                    help='how many batches to wait before logging training status')
parser.add_argument('--max-steps', type=int, default=0, metavar='N',
                    help='stop after N optimizer steps in all (default: 0, no limit)')
parser.add_argument('--deterministic', action='store_true', default=False,
                    help='reproducible run: batches in file order (no shuffling), and the noise of the '
                         'reparameterisation drawn from numpy.random.default_rng(--seed) instead of torch\'s '
                         'generator, so two runs from the same --init-weights compute the same losses')
parser.add_argument('--init-weights', type=str, default='', metavar='PATH',
                    help='state_dict (saved with torch.save) to start from')
parser.add_argument('--metrics', type=str, default='', metavar='FILE',
                    help='append one JSON line per optimizer step to FILE')
parser.add_argument('--save', type=str, default='', metavar='PATH',
                    help='save the trained model state_dict to PATH')
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()

torch.manual_seed(args.seed)
rng = np.random.default_rng(args.seed)

device = torch.device("cuda" if args.cuda else "cpu")

kwargs = {'num_workers': 1, 'pin_memory': True} if args.cuda else {}
train_loader = torch.utils.data.DataLoader(
    datasets.MNIST(args.data, train=True, download=False,
                   transform=transforms.ToTensor()),
    batch_size=args.batch_size, shuffle=not args.deterministic, **kwargs)
test_loader = torch.utils.data.DataLoader(
    datasets.MNIST(args.data, train=False, transform=transforms.ToTensor()),
    batch_size=args.batch_size, shuffle=False, **kwargs)

model = VAE(latent=args.latent).to(device)
if args.init_weights:
    model.load_state_dict(torch.load(args.init_weights, map_location=device))
optimizer = optim.Adam(model.parameters(), lr=args.lr)
metrics = open(args.metrics, 'a') if args.metrics else None
global_step = 0


def noise(n):
    """The reparameterisation noise: None lets the model draw it (torch.randn_like)."""
    if not args.deterministic:
        return None
    return torch.from_numpy(rng.standard_normal((n, args.latent)).astype('float32')).to(device)


def train(epoch):
    global global_step
    model.train()
    train_loss = 0
    for batch_idx, (data, _) in enumerate(train_loader):
        data = data.to(device)
        eps = noise(data.size(0))
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data, eps)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        global_step += 1
        if metrics is not None:
            metrics.write(json.dumps({'step': global_step, 'epoch': epoch,
                                      'loss': loss.item() / len(data)}) + '\n')
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader),
                loss.item() / len(data)))
        if args.max_steps and global_step >= args.max_steps:
            break

    print('====> Epoch: {} Average loss: {:.4f}'.format(
          epoch, train_loss / len(train_loader.dataset)))


def test(epoch):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for i, (data, _) in enumerate(test_loader):
            data = data.to(device)
            recon_batch, mu, logvar = model(data, noise(data.size(0)))
            test_loss += loss_function(recon_batch, data, mu, logvar).item()

    test_loss /= len(test_loader.dataset)
    print('====> Test set loss: {:.4f}'.format(test_loss))
    return test_loss


if __name__ == "__main__":
    for epoch in range(1, args.epochs + 1):
        train(epoch)
        test_loss = test(epoch)
        if metrics is not None:
            metrics.write(json.dumps({'epoch': epoch, 'test_loss': test_loss}) + '\n')
        with torch.no_grad():
            sample = torch.randn(16, args.latent).to(device)
            sample = model.decode(sample).cpu()
            print('sample mean intensity: {:.4f}'.format(sample.mean().item()))
        if args.max_steps and global_step >= args.max_steps:
            break
    if metrics is not None:
        metrics.close()
    if args.save:
        torch.save(model.state_dict(), args.save)
