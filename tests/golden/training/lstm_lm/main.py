# coding: utf-8
"""Word-level LSTM language model (after pytorch/examples/word_language_model).

    python main.py --data ./data/wikitext-2 --epochs 40 --tied --save model.pt

--data holds train.txt, valid.txt and test.txt (tokenised text, one sentence a line).
"""
import argparse
import json
import math
import os
import time

import mindspore as ms
from mindspore import ops
import _ms_compat

import data
import model

# msmigrate: GRAPH_MODE compiles the train step (fast); PYNATIVE_MODE runs op by op (debugging)
# msmigrate: the device comes from MS_DEVICE_TARGET (CPU, GPU or Ascend)
ms.set_context(mode=ms.GRAPH_MODE)
# _ms_compat.set_device (helper): warns instead of raising once MindSpore's runtime has started
_ms_compat.set_device(os.environ.get('MS_DEVICE_TARGET', 'CPU'))
# msmigrate: MindSpore's CPU convolutions are ~100x slower with oneDNN's AVX-512 path
os.environ.setdefault('ONEDNN_MAX_CPU_ISA', 'AVX2')

parser = argparse.ArgumentParser(description='PyTorch Wikitext-2 LSTM Language Model')
parser.add_argument('--data', type=str, default='./data/wikitext-2',
                    help='location of the data corpus')
parser.add_argument('--emsize', type=int, default=200,
                    help='size of word embeddings')
parser.add_argument('--nhid', type=int, default=200,
                    help='number of hidden units per layer')
parser.add_argument('--nlayers', type=int, default=2,
                    help='number of layers')
parser.add_argument('--lr', type=float, default=20,
                    help='initial learning rate')
parser.add_argument('--optimizer', type=str, default='sgd', choices=['sgd', 'adam'],
                    help='sgd (the learning rate is divided by 4 when validation loss stops improving) or adam')
parser.add_argument('--clip', type=float, default=0.25,
                    help='gradient clipping')
parser.add_argument('--epochs', type=int, default=40,
                    help='upper epoch limit')
parser.add_argument('--batch-size', type=int, default=20, metavar='N',
                    help='batch size')
parser.add_argument('--bptt', type=int, default=35,
                    help='sequence length')
parser.add_argument('--dropout', type=float, default=0.2,
                    help='dropout applied to layers (0 = no dropout)')
parser.add_argument('--tied', action='store_true',
                    help='tie the word embedding and softmax weights')
parser.add_argument('--seed', type=int, default=1111,
                    help='random seed')
parser.add_argument('--log-interval', type=int, default=200, metavar='N',
                    help='report interval')
parser.add_argument('--max-steps', type=int, default=0, metavar='N',
                    help='stop after N optimizer steps in all (0: no limit)')
parser.add_argument('--dry-run', action='store_true',
                    help='verify the code and the model')
parser.add_argument('--deterministic', action='store_true',
                    help='reproducible run: dropout off (the batches are always in corpus order), so two runs '
                         'from the same --init-weights compute the same losses')
parser.add_argument('--init-weights', type=str, default='',
                    help='state_dict (saved with torch.save) to start from')
parser.add_argument('--metrics', type=str, default='',
                    help='append one JSON line per optimizer step to this file')
parser.add_argument('--save', type=str, default='model.pt',
                    help='path to save the final model')
args = parser.parse_args()

# Set the random seed manually for reproducibility.
# _ms_compat.manual_seed (helper): torch.manual_seed: mindspore.set_seed, less its np.random.seed (torch's leaves NumPy
# alone): a NumPy stream the progr...
_ms_compat.manual_seed(seed=args.seed)
# _ms_compat.Device (helper): torch.device as a string with .type and .index: MindSpore places tensors by its context
# _ms_compat.backend (helper): torch.cuda's queries as properties of MindSpore's context (readable in GRAPH mode)
device = _ms_compat.Device("cuda" if _ms_compat.backend.on_accelerator else "cpu")

###############################################################################
# Load data
###############################################################################

corpus = data.Corpus(args.data)

# Starting from sequential data, batchify arranges the dataset into columns.
# For instance, with the alphabet as the sequence and batch size 4, we'd get
# ┌ a g m s ┐
# │ b h n t │
# │ c i o u │
# │ d j p v │
# │ e k q w │
# └ f l r x ┘.
# These columns are treated as independent by the model, which means that the
# dependence of e. g. 'g' on 'f' can not be learned, but allows more efficient
# batch processing.


def batchify(data, bsz):
    # Work out how cleanly we can divide the dataset into bsz parts.
    nbatch = data.shape[0] // bsz
    # Trim off any extra elements that wouldn't cleanly fit (remainders).
    data = ops.narrow(data, 0, 0, nbatch * bsz)
    # Evenly divide the data across the bsz batches.
    data = ops.t(data.view(bsz, -1))
    return data


eval_batch_size = 10
train_data = batchify(corpus.train, args.batch_size)
val_data = batchify(corpus.valid, eval_batch_size)
test_data = batchify(corpus.test, eval_batch_size)

###############################################################################
# Build the model
###############################################################################

ntokens = len(corpus.dictionary)
dropout = 0.0 if args.deterministic else args.dropout
model = model.RNNModel(ntokens, args.emsize, args.nhid, args.nlayers, dropout, args.tied)
if args.init_weights:
    # _ms_compat.load_state_dict (helper): takes torch's names and layouts and writes in place, so a compiled step sees
    # the values
    # _ms_compat.load (helper): reads torch.save files without torch or running pickled code, and MindSpore checkpoints
    _ms_compat.load_state_dict(model, _ms_compat.load(args.init_weights))

# _ms_compat.NLLLoss (helper): torch.nn.NLLLoss through _ms_compat.nll_loss (mindspore.nn.NLLLoss's one-hot product: nan
# beside a -inf log-probability)
criterion = _ms_compat.NLLLoss()
lr = args.lr
if args.optimizer == 'adam':
    # _ms_compat.Adam (helper): torch's update (mindspore.experimental.optim.Adam adds eps before the bias correction)
    optimizer = _ms_compat.Adam(model.trainable_params(), lr=lr)
else:
    # _ms_compat.SGD (helper): torch's param_groups: frozen parameters left out, group['lr'] = x seen by a compiled step
    optimizer = _ms_compat.SGD(model.trainable_params(), lr=lr)
metrics = open(args.metrics, 'a') if args.metrics else None
global_step = 0

###############################################################################
# Training code
###############################################################################


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""

    if isinstance(h, ms.Tensor):
        return ops.stop_gradient(h)
    else:
        return tuple(repackage_hidden(v) for v in h)


# get_batch subdivides the source data into chunks of length args.bptt.
# If source is equal to the example output of the batchify function, with
# a bptt-limit of 2, we'd get the following two Variables for i = 0:
# ┌ a g m s ┐ ┌ b h n t ┐
# └ b h n t ┘ └ c i o u ┘
# Note that despite the name of the function, the subdivison of data is not
# done along the batch dimension (i.e. dimension 1), since that was handled
# by the batchify function. The chunks are along dimension 0, corresponding
# to the seq_len dimension in the LSTM.

def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target


def evaluate(data_source):
    # Turn on evaluation mode which disables dropout.
    model.set_train(False)
    total_loss = 0.
    hidden = model.init_hidden(eval_batch_size)
    for i in range(0, data_source.shape[0] - 1, args.bptt):
        data, targets = get_batch(data_source, i)
        output, hidden = model(data, hidden)
        hidden = repackage_hidden(hidden)
        total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train():
    global global_step
    # Turn on training mode which enables dropout.
    model.set_train(True)
    total_loss = 0.
    start_time = time.time()
    hidden = model.init_hidden(args.batch_size)

    # msmigrate: the forward computation of the training step (differentiated by grad_fn)
    def forward_fn(data, hidden, targets):
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        return loss, hidden
    # _ms_compat.value_and_grad_reached (helper): ms.value_and_grad; op by op a parameter the loss did not use gets
    # None, as torch's .grad, and the optimizer skips it
    grad_fn = _ms_compat.value_and_grad_reached(forward_fn, optimizer.parameters, has_aux=True)

    # msmigrate: one optimizer step, compiled into a graph in GRAPH mode (PYNATIVE: op by op)
    def train_step(data, hidden, targets):
        (loss, hidden), grads = grad_fn(data, hidden, targets)
        # _ms_compat.clip_grad_norm (helper): torch's scaling, max_norm / (total_norm + 1e-6), and the total norm
        # returned
        grads, grad_norm = _ms_compat.clip_grad_norm(grads, args.clip)
        optimizer(grads)
        return loss, hidden
    # _ms_compat.compile_step (helper): compiled once per model and optimizer in GRAPH mode, not again each epoch; op by
    # op in PYNATIVE mode
    train_step = _ms_compat.compile_step(train_step)
    for batch, i in enumerate(range(0, train_data.shape[0] - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        # Starting each batch, we detach the hidden state from how it was previously produced.
        # If we didn't, the model would try backpropagating all the way to start of the dataset.
        hidden = repackage_hidden(hidden)
        loss, hidden = train_step(data, hidden, targets)

        global_step += 1
        total_loss += loss.item()
        if metrics is not None:
            metrics.write(json.dumps({'step': global_step, 'epoch': epoch, 'loss': loss.item(),
                                      'lr': lr}) + '\n')

        if batch % args.log_interval == 0 and batch > 0:
            cur_loss = total_loss / args.log_interval
            elapsed = time.time() - start_time
            print('| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | ms/batch {:5.2f} | '
                  'loss {:5.2f} | ppl {:8.2f}'.format(
                      epoch, batch, len(train_data) // args.bptt, lr,
                      elapsed * 1000 / args.log_interval, cur_loss, math.exp(cur_loss)))
            total_loss = 0
            start_time = time.time()
        if args.dry_run or (args.max_steps and global_step >= args.max_steps):
            break


# Loop over epochs.
best_val_loss = None

# At any point you can hit Ctrl + C to break out of training early.
try:
    for epoch in range(1, args.epochs+1):
        epoch_start_time = time.time()
        train()
        val_loss = evaluate(val_data)
        print('-' * 89)
        print('| end of epoch {:3d} | time: {:5.2f}s | valid loss {:5.2f} | '
              'valid ppl {:8.2f}'.format(epoch, (time.time() - epoch_start_time),
                                         val_loss, math.exp(val_loss)))
        print('-' * 89)
        if metrics is not None:
            metrics.write(json.dumps({'epoch': epoch, 'val_loss': val_loss, 'val_ppl': math.exp(val_loss)}) + '\n')
        # Save the model if the validation loss is the best we've seen so far.
        if not best_val_loss or val_loss < best_val_loss:
            # _ms_compat.save (helper): nested dicts, lists and numbers at exactly this path (save_checkpoint: flat,
            # appends .ckpt)
            # _ms_compat.state_dict (helper): also answers torch's names (Cell.state_dict: gamma, beta, moving_mean...);
            # optimizers in torch's layout
            _ms_compat.save(_ms_compat.state_dict(model), args.save)
            best_val_loss = val_loss
        elif args.optimizer == 'sgd':
            # Anneal the learning rate if no improvement has been seen in the validation dataset.
            lr /= 4.0
            for group in optimizer.param_groups:
                group['lr'] = lr
        if args.dry_run or (args.max_steps and global_step >= args.max_steps):
            break
except KeyboardInterrupt:
    print('-' * 89)
    print('Exiting from training early')

# Load the best saved model.
_ms_compat.load_state_dict(model, _ms_compat.load(args.save))
# Run on test data.
test_loss = evaluate(test_data)
print('=' * 89)
# _ms_compat.format_value (helper): `{value:.4f}`: a 0-d tensor's number (torch's self.item().__format__(spec));
# anything else as it is
print('| End of training | test loss {:5.2f} | test ppl {:8.2f}'.format(
    _ms_compat.format_value(test_loss), math.exp(test_loss)))
print('=' * 89)
if metrics is not None:
    metrics.write(json.dumps({'test_loss': test_loss, 'test_ppl': math.exp(test_loss)}) + '\n')
    metrics.close()
