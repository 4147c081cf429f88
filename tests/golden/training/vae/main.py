"""Variational autoencoder on MNIST (after pytorch/examples/vae).

    python main.py --data ../data --epochs 10 --save vae.pt

--data is the directory holding MNIST/raw/*-ubyte, as torchvision downloads it.
"""
from __future__ import print_function
import argparse
import json
import os

import numpy as np
import mindspore as ms
from mindspore import ops
import _ms_compat

from model import VAE, loss_function

# msmigrate: GRAPH_MODE compiles the train step (fast); PYNATIVE_MODE runs op by op (debugging)
# msmigrate: the device comes from MS_DEVICE_TARGET (CPU, GPU or Ascend)
ms.set_context(mode=ms.GRAPH_MODE)
# _ms_compat.set_device (helper): warns instead of raising once MindSpore's runtime has started
_ms_compat.set_device(os.environ.get('MS_DEVICE_TARGET', 'CPU'))
# msmigrate: MindSpore's CPU convolutions are ~100x slower with oneDNN's AVX-512 path
os.environ.setdefault('ONEDNN_MAX_CPU_ISA', 'AVX2')

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
# _ms_compat.backend (helper): torch.cuda's queries as properties of MindSpore's context (readable in GRAPH mode)
args.cuda = not args.no_cuda and _ms_compat.backend.on_accelerator

# _ms_compat.manual_seed (helper): torch.manual_seed: mindspore.set_seed, less its np.random.seed (torch's leaves NumPy
# alone): a NumPy stream the progr...
_ms_compat.manual_seed(seed=args.seed)
rng = np.random.default_rng(args.seed)

# _ms_compat.Device (helper): torch.device as a string with .type and .index: MindSpore places tensors by its context
device = _ms_compat.Device("cuda" if args.cuda else "cpu")

kwargs = {'num_workers': 1, 'pin_memory': True} if args.cuda else {}
# _ms_compat.DataLoader (helper): torch's loop: len(), samplers, workers, collate, batches of mindspore Tensors
# _ms_compat.datasets (helper): reads torchvision's files and gives (PIL image, int label) samples
# _ms_compat.transforms (helper): torchvision's results: PIL images through PIL, tensors [..., C, H, W] (dataset.vision:
# HWC)
train_loader = _ms_compat.DataLoader(
    _ms_compat.datasets.MNIST(args.data, train=True, download=False,
                   transform=_ms_compat.transforms.ToTensor()),
    batch_size=args.batch_size, shuffle=not args.deterministic, **kwargs)
test_loader = _ms_compat.DataLoader(
    _ms_compat.datasets.MNIST(args.data, train=False, transform=_ms_compat.transforms.ToTensor()),
    batch_size=args.batch_size, shuffle=False, **kwargs)

model = VAE(latent=args.latent)
if args.init_weights:
    # _ms_compat.load_state_dict (helper): takes torch's names and layouts and writes in place, so a compiled step sees
    # the values
    # _ms_compat.load (helper): reads torch.save files without torch or running pickled code, and MindSpore checkpoints
    _ms_compat.load_state_dict(model, _ms_compat.load(args.init_weights))
# _ms_compat.Adam (helper): torch's update (mindspore.experimental.optim.Adam adds eps before the bias correction)
optimizer = _ms_compat.Adam(model.trainable_params(), lr=args.lr)
metrics = open(args.metrics, 'a') if args.metrics else None
global_step = 0


def noise(n):
    """The reparameterisation noise: None lets the model draw it (torch.randn_like)."""
    if not args.deterministic:
        return None
    return ms.Tensor.from_numpy(rng.standard_normal((n, args.latent)).astype('float32'))


def train(epoch):
    global global_step
    model.set_train(True)
    train_loss = 0

    # msmigrate: the forward computation of the training step (differentiated by grad_fn)
    def forward_fn(data, eps):
        recon_batch, mu, logvar = model(data, eps)
        loss = loss_function(recon_batch, data, mu, logvar)
        return loss
    # _ms_compat.value_and_grad_reached (helper): ms.value_and_grad; op by op a parameter the loss did not use gets
    # None, as torch's .grad, and the optimizer skips it
    grad_fn = _ms_compat.value_and_grad_reached(forward_fn, optimizer.parameters)

    # msmigrate: one optimizer step, compiled into a graph in GRAPH mode (PYNATIVE: op by op)
    def train_step(data, eps):
        loss, grads = grad_fn(data, eps)
        optimizer(grads)
        return loss
    # _ms_compat.compile_step (helper): compiled once per model and optimizer in GRAPH mode, not again each epoch; op by
    # op in PYNATIVE mode
    train_step = _ms_compat.compile_step(train_step)
    for batch_idx, (data, _) in enumerate(train_loader):
        eps = noise(data.shape[0])
        loss = train_step(data, eps)
        train_loss += loss.item()
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
    model.set_train(False)
    test_loss = 0
    for i, (data, _) in enumerate(test_loader):
        recon_batch, mu, logvar = model(data, noise(data.shape[0]))
        test_loss += loss_function(recon_batch, data, mu, logvar).item()

    test_loss /= len(test_loader.dataset)
    # _ms_compat.format_value (helper): `{value:.4f}`: a 0-d tensor's number (torch's self.item().__format__(spec));
    # anything else as it is
    print('====> Test set loss: {:.4f}'.format(_ms_compat.format_value(test_loss)))
    return test_loss


if __name__ == "__main__":
    for epoch in range(1, args.epochs + 1):
        train(epoch)
        test_loss = test(epoch)
        if metrics is not None:
            metrics.write(json.dumps({'epoch': epoch, 'test_loss': test_loss}) + '\n')
        sample = ops.randn((16, args.latent))
        sample = model.decode(sample)
        print('sample mean intensity: {:.4f}'.format((_ms_compat.reduce_mean(sample) if _ms_compat.is_tensor(sample) else sample.mean()).item()))
        # msmigrate: torch.no_grad(): values computed without gradient, as in torch
        # _ms_compat.no_grad_value (helper): The value with no gradient flowing through it, as torch's no_grad made it:
        # tensors (also in tuples and lists) through...
        sample = _ms_compat.no_grad_value(sample)
        if args.max_steps and global_step >= args.max_steps:
            break
    if metrics is not None:
        metrics.close()
    if args.save:
        # _ms_compat.save (helper): nested dicts, lists and numbers at exactly this path (save_checkpoint: flat, appends
        # .ckpt)
        # _ms_compat.state_dict (helper): also answers torch's names (Cell.state_dict: gamma, beta, moving_mean...);
        # optimizers in torch's layout
        _ms_compat.save(_ms_compat.state_dict(model), args.save)
