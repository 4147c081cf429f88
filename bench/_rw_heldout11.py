"""The `heldout11` set of bench/real_world.py (`--set heldout11`): a repository the converter was never run on,
converted as a new user would convert it, its models trained for a few steps through short drivers (our code, the
repository's own modules and data, trained as its train.py scripts train them).

    python bench/real_world.py --mirrors /work/.mirror --set heldout11 [--only charrnn_generation,masked_seq]

- spro/practical-pytorch, five drivers, each written into the program's own directory next to its modules, with
  the repository's data/ beside it (the modules read ../data/names/*.txt at import, as the repository lays out):
  - charrnn_generation: char-rnn-generation's RNN (Embedding, a 2-layer GRU fed one character at a time, Linear),
    trained as train.py trains it (`decoder.zero_grad()`, `loss += criterion(output, target[c])` over a random
    chunk of text, Adam) on the names data; greedy generation from a prime string printed. (helpers.py needs
    the unidecode package, not installed here: the driver turns text into indexes of string.printable itself.)
  - charrnn_classification: char-rnn-classification's data.py (one-hot letters written into torch.zeros one by
    one, categories read by glob at import) and RNN (Linear layers over torch.cat, nn.LogSoftmax() without a
    dim), trained as train.py trains it (random pairs, NLLLoss, SGD); the top-3 log-probabilities of names, as
    predict.py's evaluate() and topk compute them, printed.
  - charrnn_predict: the same training, then train.py's end and predict.py: the model saved whole
    (`torch.save(rnn, 'char-rnn-classification.pt')`) and predict.py imported, which loads it at import
    (`rnn = torch.load(...)`) and predicts three names.
  - conditional_charrnn: conditional-char-rnn's data.py (random_training_set: one-hot category and characters,
    a LongTensor target ending in EOS) and RNN (category, input and hidden joined by torch.cat, three Linear
    layers), trained as train.py trains it (loss summed over the characters, CrossEntropyLoss, Adam); a greedy
    generation printed.
  - masked_seq: seq2seq-translation's masked_cross_entropy.sequence_mask (torch.range, expand, comparison) masking
    a padded batch's per-token losses in a small GRU tagger of ours, gathered from log_softmax as
    masked_cross_entropy does (masked_cross_entropy itself calls .cuda() unconditionally: it cannot run on a CPU).
  (train.py itself is not run: `loss.data[0]` on a 0-dim tensor, which torch 0.4 turned into an error.)
- lucidrains/DALLE-pytorch, bentrevett/pytorch-image-classification and lyeoni/pytorch-mnist-GAN, also unused, are
  not in the set: dalle_pytorch imports omegaconf, taming-transformers, axial_positional_embedding and
  rotary_embedding_torch at import (none installed here), and the other two hold their models in notebooks only.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

PRACTICAL = "spro+practical-pytorch@c520c52e68e945d88fff563dba1c028b6ec0197b"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("charrnn_generation", PRACTICAL, "char-rnn-generation,data", "char-rnn-generation/driver.py", [], None),
    ("charrnn_classification", PRACTICAL, "char-rnn-classification,data", "char-rnn-classification/driver.py", [],
     None),
    ("charrnn_predict", PRACTICAL, "char-rnn-classification,data", "char-rnn-classification/driver.py", [], None),
    ("conditional_charrnn", PRACTICAL, "conditional-char-rnn,data", "conditional-char-rnn/driver.py", [], None),
    ("masked_seq", PRACTICAL, "seq2seq-translation/masked_cross_entropy.py", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the repository's modules.
DRIVERS = {
    "charrnn_generation": '''
import random
import string
import torch
import torch.nn as nn
from model import *

all_characters = string.printable
text = open("../data/names/English.txt").read()


def char_tensor(chunk):
    return torch.tensor([all_characters.index(c) for c in chunk], dtype=torch.long)


chunk_len = 12
decoder = RNN(len(all_characters), 16, len(all_characters), 2)
decoder_optimizer = torch.optim.Adam(decoder.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
for epoch in range(4):
    start = random.randint(0, len(text) - chunk_len - 1)
    chunk = text[start:start + chunk_len + 1]
    inp, target = char_tensor(chunk[:-1]), char_tensor(chunk[1:])
    hidden = decoder.init_hidden()
    decoder.zero_grad()
    loss = 0
    for c in range(chunk_len):
        output, hidden = decoder(inp[c], hidden)
        loss += criterion(output, target[c].unsqueeze(0))
    loss.backward()
    decoder_optimizer.step()
    print("loss", loss.item() / chunk_len)

with torch.no_grad():
    hidden = decoder.init_hidden()
    prime = char_tensor("Wh")
    _, hidden = decoder(prime[0], hidden)
    inp, predicted, score = prime[1], "Wh", 0.0
    for p in range(8):
        output, hidden = decoder(inp, hidden)
        top_i = int(output.view(-1).argmax())
        score += float(output.view(-1)[top_i])
        predicted += all_characters[top_i]
        inp = char_tensor(all_characters[top_i])
    print("generated", predicted)
    print("VALUE generation_score", score)
''',
    "charrnn_classification": '''
import random
import torch
from data import *
from model import *

rnn = RNN(n_letters, 32, n_categories)
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.05)
criterion = nn.NLLLoss()
for epoch in range(4):
    category = all_categories[random.randint(0, len(all_categories) - 1)]
    line = category_lines[category][random.randint(0, len(category_lines[category]) - 1)]
    category_tensor = Variable(torch.LongTensor([all_categories.index(category)]))
    line_tensor = Variable(lineToTensor(line))
    hidden = rnn.initHidden()
    optimizer.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    optimizer.step()
    top_n, top_i = output.data.topk(1)
    print("loss", loss.item(), line, all_categories[top_i[0][0]])

with torch.no_grad():
    total = 0.0
    for name in ("Dovesky", "Jackson", "Satoshi"):
        hidden = rnn.initHidden()
        line_tensor = lineToTensor(name)
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        topv, topi = output.topk(3, 1, True)
        total += float(topv.sum())
    print("VALUE top3_sum", total)
''',
    "charrnn_predict": '''
import random
import torch
from data import *
from model import *

# train.py's end and predict.py: the model saved whole, predict.py loading it at import
rnn = RNN(n_letters, 32, n_categories)
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.05)
criterion = nn.NLLLoss()
for epoch in range(2):
    category = all_categories[random.randint(0, len(all_categories) - 1)]
    line_tensor = Variable(lineToTensor(random.choice(category_lines[category])))
    hidden = rnn.initHidden()
    optimizer.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, torch.LongTensor([all_categories.index(category)]))
    loss.backward()
    optimizer.step()
    print("loss", loss.item())

torch.save(rnn, "char-rnn-classification.pt")
from predict import predict

total = 0.0
for name in ("Dovesky", "Jackson", "Satoshi"):
    total += sum(float(value) for value, category in predict(name))
print("VALUE predict_sum", total)
''',
    "conditional_charrnn": '''
import torch
import torch.nn as nn
from data import *
from model import *

rnn = RNN(n_categories, n_letters, 32, n_letters)
optimizer = torch.optim.Adam(rnn.parameters(), lr=5e-3)
criterion = nn.CrossEntropyLoss()
for epoch in range(4):
    category_tensor, input_line_tensor, target_line_tensor = random_training_set()
    hidden = rnn.init_hidden()
    optimizer.zero_grad()
    loss = 0
    for i in range(input_line_tensor.size()[0]):
        output, hidden = rnn(category_tensor, input_line_tensor[i], hidden)
        loss += criterion(output, target_line_tensor[i].unsqueeze(0))
    loss.backward()
    optimizer.step()
    print("loss", loss.item() / input_line_tensor.size()[0])

with torch.no_grad():
    category_input = make_category_input(all_categories[0])
    chars_input = make_chars_input("A")
    hidden = rnn.init_hidden()
    output_str, score = "A", 0.0
    for i in range(10):
        output, hidden = rnn(category_input, chars_input[0], hidden)
        top_i = int(output.view(-1).argmax())
        score += float(output.view(-1)[top_i])
        if top_i == EOS:
            break
        output_str += all_letters[top_i]
        chars_input = make_chars_input(all_letters[top_i])
    print("generated", output_str)
    print("VALUE generation_score", score)
''',
    "masked_seq": '''
import torch
import torch.nn as nn
from torch.nn import functional
from masked_cross_entropy import sequence_mask


class Tagger(nn.Module):
    def __init__(self, vocab=12, hidden=16):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, input_seqs):              # (max_len, batch), as seq2seq-translation-batched's encoder
        outputs, hidden = self.gru(self.embedding(input_seqs))
        return self.out(outputs).transpose(0, 1).contiguous()    # (batch, max_len, vocab)


def masked_loss(logits, target, lengths):
    length = torch.LongTensor(lengths)
    log_probs_flat = functional.log_softmax(logits.view(-1, logits.size(-1)), dim=1)
    losses = -torch.gather(log_probs_flat, dim=1, index=target.view(-1, 1)).view(*target.size())
    mask = sequence_mask(sequence_length=length, max_len=target.size(1))
    return (losses * mask.float()).sum() / length.float().sum()


lengths = [6, 4, 3]
inputs = torch.randint(1, 12, (6, 3))
targets = torch.randint(1, 12, (3, 6))
for b, n in enumerate(lengths):
    inputs[n:, b] = 0
    targets[b, n:] = 0
model = Tagger()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(4):
    optimizer.zero_grad()
    loss = masked_loss(model(inputs), targets, lengths)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
print("VALUE mask_sum", float(sequence_mask(torch.LongTensor(lengths)).sum()))
''',
}
