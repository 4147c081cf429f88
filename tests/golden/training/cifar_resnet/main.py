'''Train CIFAR10 with PyTorch (after kuangliu/pytorch-cifar).

    python main.py --data ~/datasets --epochs 200 --lr 0.1 --save checkpoint/ckpt.pth

--data is the directory holding cifar-10-batches-py/, as torchvision downloads it.
'''
import argparse
import json
import os
import time

import mindspore as ms
from mindspore import ops
import _ms_compat

from models import ResNet18

# msmigrate: GRAPH_MODE compiles the train step (fast); PYNATIVE_MODE runs op by op (debugging)
# msmigrate: the device comes from MS_DEVICE_TARGET (CPU, GPU or Ascend)
ms.set_context(mode=ms.GRAPH_MODE)
# _ms_compat.set_device (helper): warns instead of raising once MindSpore's runtime has started
_ms_compat.set_device(os.environ.get('MS_DEVICE_TARGET', 'CPU'))
# msmigrate: MindSpore's CPU convolutions are ~100x slower with oneDNN's AVX-512 path
os.environ.setdefault('ONEDNN_MAX_CPU_ISA', 'AVX2')

parser = argparse.ArgumentParser(description='PyTorch CIFAR10 Training')
parser.add_argument('--data', default='./data', help='directory holding cifar-10-batches-py')
parser.add_argument('--lr', default=0.1, type=float, help='learning rate')
parser.add_argument('--epochs', default=200, type=int, help='number of epochs')
parser.add_argument('--batch-size', default=128, type=int, help='training batch size')
parser.add_argument('--workers', default=2, type=int, help='data loading workers')
parser.add_argument('--momentum', default=0.9, type=float)
parser.add_argument('--wd', '--weight-decay', default=5e-4, type=float, dest='weight_decay')
parser.add_argument('--label-smoothing', default=0.1, type=float)
parser.add_argument('--sched', default='cosine', choices=['cosine', 'onecycle'],
                    help='cosine: CosineAnnealingLR stepped per epoch; onecycle: OneCycleLR stepped per batch')
parser.add_argument('--seed', default=0, type=int)
parser.add_argument('--log-interval', default=50, type=int, help='batches between log lines')
parser.add_argument('--max-steps', default=0, type=int, help='stop after this many optimizer steps (0: no limit)')
parser.add_argument('--deterministic', action='store_true',
                    help='reproducible run: no shuffling and no augmentation (RandomCrop/RandomHorizontalFlip '
                         'off), so runs from the same --init-weights see the same batches')
parser.add_argument('--init-weights', default='', help='state_dict (torch.save) to start from')
parser.add_argument('--resume', '-r', default='', help='resume from this checkpoint (saved by --save)')
parser.add_argument('--save', default='checkpoint/ckpt.pth', help='where the best checkpoint goes')
parser.add_argument('--metrics', default='', help='append one JSON line per optimizer step to this file')
args = parser.parse_args()

# _ms_compat.backend (helper): torch.cuda's queries as properties of MindSpore's context (readable in GRAPH mode)
device = 'cuda' if _ms_compat.backend.on_accelerator else 'cpu'
# _ms_compat.manual_seed (helper): torch.manual_seed: mindspore.set_seed, less its np.random.seed (torch's leaves NumPy
# alone): a NumPy stream the progr...
_ms_compat.manual_seed(seed=args.seed)
best_acc = 0  # best test accuracy
start_epoch = 0  # start from epoch 0 or last checkpoint epoch
global_step = 0

# Data
print('==> Preparing data..')
# _ms_compat.transforms (helper): torchvision's results: PIL images through PIL, tensors [..., C, H, W] (dataset.vision:
# HWC)
normalize = _ms_compat.transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010))
if args.deterministic:
    transform_train = _ms_compat.transforms.Compose([_ms_compat.transforms.ToTensor(), normalize])
else:
    transform_train = _ms_compat.transforms.Compose([
        _ms_compat.transforms.RandomCrop(32, padding=4),
        _ms_compat.transforms.RandomHorizontalFlip(),
        _ms_compat.transforms.ToTensor(),
        normalize,
    ])

transform_test = _ms_compat.transforms.Compose([
    _ms_compat.transforms.ToTensor(),
    normalize,
])

# _ms_compat.datasets (helper): reads torchvision's files and gives (PIL image, int label) samples
trainset = _ms_compat.datasets.CIFAR10(
    root=args.data, train=True, download=False, transform=transform_train)
# _ms_compat.DataLoader (helper): torch's loop: len(), samplers, workers, collate, batches of mindspore Tensors
trainloader = _ms_compat.DataLoader(
    trainset, batch_size=args.batch_size, shuffle=not args.deterministic, num_workers=args.workers,
    drop_last=True)

testset = _ms_compat.datasets.CIFAR10(
    root=args.data, train=False, download=False, transform=transform_test)
testloader = _ms_compat.DataLoader(
    testset, batch_size=100, shuffle=False, num_workers=args.workers)

classes = ('plane', 'car', 'bird', 'cat', 'deer',
           'dog', 'frog', 'horse', 'ship', 'truck')

# Model
print('==> Building model..')
net = ResNet18()
if device == 'cuda':
    # _ms_compat.DataParallel (helper): torch.nn.DataParallel: the wrapped network, run as it is on the device MindSpore
    # was given; device_ids, output_device...
    net = _ms_compat.DataParallel(net)

if args.init_weights:
    # _ms_compat.load_state_dict (helper): takes torch's names and layouts and writes in place, so a compiled step sees
    # the values
    # _ms_compat.load (helper): reads torch.save files without torch or running pickled code, and MindSpore checkpoints
    _ms_compat.load_state_dict(net, _ms_compat.load(args.init_weights))

# _ms_compat.CrossEntropyLoss (helper): takes int64 class indices and probabilities (nn.CrossEntropyLoss: int32 indices)
criterion = _ms_compat.CrossEntropyLoss(label_smoothing=args.label_smoothing)
# _ms_compat.SGD (helper): torch's param_groups: frozen parameters left out, group['lr'] = x seen by a compiled step
optimizer = _ms_compat.SGD(net.trainable_params(), lr=args.lr,
                      momentum=args.momentum, weight_decay=args.weight_decay)
if args.sched == 'onecycle':
    # _ms_compat.OneCycleLR (helper): torch's formula, written into the lr Parameters between steps (nothing recompiles)
    scheduler = _ms_compat.OneCycleLR(optimizer, max_lr=args.lr, epochs=args.epochs,
                                              steps_per_epoch=len(trainloader))
else:
    # _ms_compat.CosineAnnealingLR (helper): torch's formula, written into the lr Parameters between steps (nothing
    # recompiles)
    scheduler = _ms_compat.CosineAnnealingLR(optimizer, T_max=args.epochs)

if args.resume:
    # Load checkpoint.
    print('==> Resuming from checkpoint..')
    checkpoint = _ms_compat.load(args.resume)
    _ms_compat.load_state_dict(net, checkpoint['net'])
    _ms_compat.load_state_dict(optimizer, checkpoint['optimizer'])
    best_acc = checkpoint['acc']
    start_epoch = checkpoint['epoch'] + 1

metrics_file = open(args.metrics, 'a') if args.metrics else None


def log_metrics(**record):
    if metrics_file is not None:
        metrics_file.write(json.dumps(dict(record, time=time.time())) + '\n')
        metrics_file.flush()


# Training
def train(epoch):
    global global_step
    print('\nEpoch: %d' % epoch)
    net.set_train(True)
    train_loss = 0
    correct = 0
    total = 0

    # msmigrate: the forward computation of the training step (differentiated by grad_fn)
    def forward_fn(inputs, targets):
        outputs = net(inputs)
        loss = criterion(outputs, targets)
        return loss, outputs
    # _ms_compat.value_and_grad_reached (helper): ms.value_and_grad; op by op a parameter the loss did not use gets
    # None, as torch's .grad, and the optimizer skips it
    grad_fn = _ms_compat.value_and_grad_reached(forward_fn, optimizer.parameters, has_aux=True)

    # msmigrate: one optimizer step, compiled into a graph in GRAPH mode (PYNATIVE: op by op)
    def train_step(inputs, targets):
        (loss, outputs), grads = grad_fn(inputs, targets)
        optimizer(grads)
        return loss, outputs
    # _ms_compat.compile_step (helper): compiled once per model and optimizer in GRAPH mode, not again each epoch; op by
    # op in PYNATIVE mode
    train_step = _ms_compat.compile_step(train_step)
    _ms_loop_fn1 = lambda _ms_r: _ms_compat.reduce_sum(_ms_r)
    _ms_loop_fn2 = lambda _ms_r: _ms_r.sum()
    for batch_idx, (inputs, targets) in enumerate(trainloader):
        loss, outputs = train_step(inputs, targets)
        if args.sched == 'onecycle':
            scheduler.step()
        global_step += 1

        train_loss += loss.item()
        _, predicted = (ops.max(outputs, 1) if _ms_compat.is_tensor(outputs) else outputs.max(1))
        total += targets.shape[0]
        # _ms_compat.on_tensor (helper): tensor_form(x) for a MindSpore tensor, method(x) (the call as written)
        # otherwise
        correct += _ms_compat.on_tensor(predicted.eq(targets), _ms_loop_fn1, _ms_loop_fn2).item()
        log_metrics(step=global_step, epoch=epoch, loss=loss.item(), lr=scheduler.get_last_lr()[0])
        if batch_idx % args.log_interval == 0:
            print('[%d/%d] Loss: %.3f | Acc: %.3f%% (%d/%d)'
                  % (batch_idx, len(trainloader), train_loss/(batch_idx+1), 100.*correct/total, correct, total))
        if args.max_steps and global_step >= args.max_steps:
            break


def test(epoch):
    global best_acc
    net.set_train(False)
    test_loss = 0
    correct = 0
    total = 0
    _ms_loop_fn3 = lambda _ms_r: _ms_compat.reduce_sum(_ms_r)
    _ms_loop_fn4 = lambda _ms_r: _ms_r.sum()
    batch_idx = None
    for batch_idx, (inputs, targets) in enumerate(testloader):
        outputs = net(inputs)
        loss = criterion(outputs, targets)

        test_loss += loss.item()
        _, predicted = (ops.max(outputs, 1) if _ms_compat.is_tensor(outputs) else outputs.max(1))
        total += targets.shape[0]
        correct += _ms_compat.on_tensor(predicted.eq(targets), _ms_loop_fn3, _ms_loop_fn4).item()

    print('Test Loss: %.3f | Acc: %.3f%% (%d/%d)'
          % (test_loss/(batch_idx+1), 100.*correct/total, correct, total))
    log_metrics(epoch=epoch, test_loss=test_loss/(batch_idx+1), acc=100.*correct/total)

    # Save checkpoint.
    acc = 100.*correct/total
    if acc > best_acc:
        print('Saving..')
        # _ms_compat.state_dict (helper): also answers torch's names (Cell.state_dict: gamma, beta, moving_mean...);
        # optimizers in torch's layout
        state = {
            'net': _ms_compat.state_dict(net),
            'optimizer': _ms_compat.state_dict(optimizer),
            'acc': acc,
            'epoch': epoch,
        }
        if os.path.dirname(args.save) and not os.path.isdir(os.path.dirname(args.save)):
            os.makedirs(os.path.dirname(args.save))
        # _ms_compat.save (helper): nested dicts, lists and numbers at exactly this path (save_checkpoint: flat, appends
        # .ckpt)
        _ms_compat.save(state, args.save)
        best_acc = acc


for epoch in range(start_epoch, args.epochs):
    start = time.time()
    train(epoch)
    test(epoch)
    if args.sched == 'cosine':
        scheduler.step()
    print('epoch %d: %.1f s' % (epoch, time.time() - start))
    if args.max_steps and global_step >= args.max_steps:
        break

if metrics_file is not None:
    metrics_file.close()
