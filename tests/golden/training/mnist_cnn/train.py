"""Train a CNN on MNIST (after pytorch/examples/mnist/main.py).

    python train.py --data ~/datasets --epochs 14 --save mnist_cnn.pt

--data is the directory holding MNIST/raw/*-ubyte, as torchvision downloads it.
"""
import argparse
import json
import time

import mindspore as ms
from mindspore import ops
import os
import _ms_compat

from model import Net

# msmigrate: GRAPH_MODE compiles the train step (fast); PYNATIVE_MODE runs op by op (debugging)
# msmigrate: the device comes from MS_DEVICE_TARGET (CPU, GPU or Ascend)
ms.set_context(mode=ms.GRAPH_MODE)
# _ms_compat.set_device (helper): warns instead of raising once MindSpore's runtime has started
_ms_compat.set_device(os.environ.get('MS_DEVICE_TARGET', 'CPU'))
# msmigrate: MindSpore's CPU convolutions are ~100x slower with oneDNN's AVX-512 path
os.environ.setdefault('ONEDNN_MAX_CPU_ISA', 'AVX2')


def train(args, model, device, train_loader, optimizer, epoch, step, metrics=None):
    model.set_train(True)

    # msmigrate: the forward computation of the training step (differentiated by grad_fn)
    def forward_fn(data, target):
        output = model(data)
        # _ms_compat.nll_loss (helper): torch's F.nll_loss: each target class's log-probability gathered, weighted,
        # ignore_index left out; the mean divides b...
        loss = _ms_compat.nll_loss(output, target)
        return loss
    # _ms_compat.value_and_grad_reached (helper): ms.value_and_grad; op by op a parameter the loss did not use gets
    # None, as torch's .grad, and the optimizer skips it
    grad_fn = _ms_compat.value_and_grad_reached(forward_fn, optimizer.parameters)

    # msmigrate: one optimizer step, compiled into a graph in GRAPH mode (PYNATIVE: op by op)
    def train_step(data, target):
        loss, grads = grad_fn(data, target)
        optimizer(grads)
        return loss
    # _ms_compat.compile_step (helper): compiled once per model and optimizer in GRAPH mode, not again each epoch; op by
    # op in PYNATIVE mode
    train_step = _ms_compat.compile_step(train_step)
    for batch_idx, (data, target) in enumerate(train_loader):
        loss = train_step(data, target)
        step += 1
        if metrics is not None:
            metrics.write(json.dumps({"step": step, "epoch": epoch, "loss": loss.item()}) + "\n")
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))
        if args.dry_run or (args.max_steps and step >= args.max_steps):
            break
    return step


def test(model, device, test_loader):
    model.set_train(False)
    test_loss = 0
    correct = 0
    _ms_loop_fn1 = lambda _ms_r: _ms_compat.reduce_sum(_ms_r)
    _ms_loop_fn2 = lambda _ms_r: _ms_r.sum()
    for data, target in test_loader:
        output = model(data)
        test_loss += _ms_compat.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
        pred = ops.argmax(output, dim=1, keepdim=True)  # get the index of the max log-probability
        # _ms_compat.on_tensor (helper): tensor_form(x) for a MindSpore tensor, method(x) (the call as written)
        # otherwise
        correct += _ms_compat.on_tensor(pred.eq(ops.reshape(target, pred.shape)), _ms_loop_fn1, _ms_loop_fn2).item()

    test_loss /= len(test_loader.dataset)
    accuracy = 100. * correct / len(test_loader.dataset)
    # _ms_compat.format_value (helper): `{value:.4f}`: a 0-d tensor's number (torch's self.item().__format__(spec));
    # anything else as it is
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        _ms_compat.format_value(test_loss), correct, len(test_loader.dataset), _ms_compat.format_value(accuracy)))
    return test_loss, accuracy


def main():
    parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
    parser.add_argument('--data', default='../data', help='directory holding MNIST/raw (default: ../data)')
    parser.add_argument('--batch-size', type=int, default=64, metavar='N',
                        help='input batch size for training (default: 64)')
    parser.add_argument('--test-batch-size', type=int, default=1000, metavar='N',
                        help='input batch size for testing (default: 1000)')
    parser.add_argument('--epochs', type=int, default=14, metavar='N',
                        help='number of epochs to train (default: 14)')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR',
                        help='learning rate (default: 1.0)')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M',
                        help='learning rate step gamma (default: 0.7)')
    parser.add_argument('--no-cuda', action='store_true', default=False,
                        help='disables CUDA training')
    parser.add_argument('--dry-run', action='store_true', default=False,
                        help='quickly check a single pass')
    parser.add_argument('--max-steps', type=int, default=0, metavar='N',
                        help='stop after N optimizer steps in all (default: 0, no limit)')
    parser.add_argument('--seed', type=int, default=1, metavar='S',
                        help='random seed (default: 1)')
    parser.add_argument('--log-interval', type=int, default=10, metavar='N',
                        help='how many batches to wait before logging training status')
    parser.add_argument('--deterministic', action='store_true', default=False,
                        help='reproducible run: batches in file order (no shuffling) and dropout off, so two '
                             'runs from the same --init-weights compute the same losses')
    parser.add_argument('--init-weights', default='', metavar='PATH',
                        help='start from this state_dict (saved with torch.save) instead of a random init')
    parser.add_argument('--metrics', default='', metavar='FILE',
                        help='append one JSON line per optimizer step (and per evaluation) to FILE')
    parser.add_argument('--save', default='', metavar='PATH',
                        help='save the trained model state_dict to PATH')
    args = parser.parse_args()
    # _ms_compat.backend (helper): torch.cuda's queries as properties of MindSpore's context (readable in GRAPH mode)
    use_cuda = not args.no_cuda and _ms_compat.backend.on_accelerator

    # _ms_compat.manual_seed (helper): torch.manual_seed: mindspore.set_seed, less its np.random.seed (torch's leaves
    # NumPy alone): a NumPy stream the progr...
    _ms_compat.manual_seed(seed=args.seed)

    # _ms_compat.Device (helper): torch.device as a string with .type and .index: MindSpore places tensors by its
    # context
    device = _ms_compat.Device("cuda" if use_cuda else "cpu")

    train_kwargs = {'batch_size': args.batch_size, 'shuffle': not args.deterministic}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_cuda:
        cuda_kwargs = {'num_workers': 1,
                       'pin_memory': True}
        train_kwargs.update(cuda_kwargs)
        test_kwargs.update(cuda_kwargs)

    # _ms_compat.transforms (helper): torchvision's results: PIL images through PIL, tensors [..., C, H, W]
    # (dataset.vision: HWC)
    transform = _ms_compat.transforms.Compose([
        _ms_compat.transforms.ToTensor(),
        _ms_compat.transforms.Normalize((0.1307,), (0.3081,))
    ])
    # _ms_compat.datasets (helper): reads torchvision's files and gives (PIL image, int label) samples
    dataset1 = _ms_compat.datasets.MNIST(args.data, train=True, download=False, transform=transform)
    dataset2 = _ms_compat.datasets.MNIST(args.data, train=False, transform=transform)
    # _ms_compat.DataLoader (helper): torch's loop: len(), samplers, workers, collate, batches of mindspore Tensors
    train_loader = _ms_compat.DataLoader(dataset1, **train_kwargs)
    test_loader = _ms_compat.DataLoader(dataset2, **test_kwargs)

    if args.deterministic:
        model = Net(dropout1=0.0, dropout2=0.0)
    else:
        model = Net()
    if args.init_weights:
        # _ms_compat.load_state_dict (helper): takes torch's names and layouts and writes in place, so a compiled step
        # sees the values
        # _ms_compat.load (helper): reads torch.save files without torch or running pickled code, and MindSpore
        # checkpoints
        _ms_compat.load_state_dict(model, _ms_compat.load(args.init_weights))
    # _ms_compat.Adadelta (helper): torch's param_groups: frozen parameters left out, group['lr'] = x seen by a compiled
    # step
    optimizer = _ms_compat.Adadelta(model.trainable_params(), lr=args.lr)

    metrics = open(args.metrics, 'a') if args.metrics else None
    # _ms_compat.StepLR (helper): torch's formula, written into the lr Parameters between steps (nothing recompiles)
    scheduler = _ms_compat.StepLR(optimizer, step_size=1, gamma=args.gamma)
    step = 0
    for epoch in range(1, args.epochs + 1):
        start = time.time()
        step = train(args, model, device, train_loader, optimizer, epoch, step, metrics)
        test_loss, accuracy = test(model, device, test_loader)
        scheduler.step()
        if metrics is not None:
            metrics.write(json.dumps({"epoch": epoch, "test_loss": test_loss, "accuracy": accuracy,
                                      "lr": scheduler.get_last_lr()[0], "seconds": time.time() - start}) + "\n")
        if args.dry_run or (args.max_steps and step >= args.max_steps):
            break

    if metrics is not None:
        metrics.close()
    if args.save:
        # _ms_compat.save (helper): nested dicts, lists and numbers at exactly this path (save_checkpoint: flat, appends
        # .ckpt)
        # _ms_compat.state_dict (helper): also answers torch's names (Cell.state_dict: gamma, beta, moving_mean...);
        # optimizers in torch's layout
        _ms_compat.save(_ms_compat.state_dict(model), args.save)


if __name__ == '__main__':
    main()
