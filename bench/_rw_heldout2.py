"""The `heldout2` set of bench/real_world.py (`--set heldout2`): two repositories the converter was not
built against, run as a new user would.

    python bench/real_world.py --mirrors /work/.mirror --set heldout2 [--only cifar_main,nlp_nnlm]

- kuangliu/pytorch-cifar: main.py as written (SimpleDLA, SGD with momentum and weight decay, cosine
  schedule, CIFAR-10 through torchvision, synthetic python batches in ./data), and each architecture of its
  models/ package through a driver (our code: the package's constructor, main.py's optimizer, a few steps on
  a batch of 32x32 images).
- graykode/nlp-tutorial: the single-file programs (NNLM ... BERT), each on its own inline toy data.

Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

CIFAR = "kuangliu+pytorch-cifar"
NLP = "graykode+nlp-tutorial"

# pytorch-cifar's architectures: (program name, constructor expression in models/)
ARCHITECTURES = [
    ("cifar_vgg", "VGG('VGG11')"),
    ("cifar_resnet18", "ResNet18()"),
    ("cifar_resnet50", "ResNet50()"),
    ("cifar_preact_resnet", "PreActResNet18()"),
    ("cifar_googlenet", "GoogLeNet()"),
    ("cifar_densenet", "densenet_cifar()"),
    ("cifar_resnext", "ResNeXt29_2x64d()"),
    ("cifar_mobilenet", "MobileNet()"),
    ("cifar_mobilenetv2", "MobileNetV2()"),
    ("cifar_dpn", "DPN26()"),
    ("cifar_shufflenet", "ShuffleNetG2()"),
    ("cifar_shufflenetv2", "ShuffleNetV2(0.5)"),
    ("cifar_senet", "SENet18()"),
    ("cifar_efficientnet", "EfficientNetB0()"),
    ("cifar_regnet", "RegNetX_200MF()"),
    ("cifar_regnety", "RegNetY_400MF()"),
    ("cifar_dla", "DLA()"),
    ("cifar_pnasnet", "PNASNetA()"),
    ("cifar_lenet", "LeNet()"),
]

_ARCH_DRIVER = '''
import torch
import torch.nn as nn
import torch.optim as optim
from models import *

net = {ctor}
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
inputs = torch.randn(4, 3, 32, 32)
targets = torch.tensor([1, 0, 7, 3])
net.train()
for step in range(3):
    optimizer.zero_grad()
    outputs = net(inputs)
    loss = criterion(outputs, targets)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
net.eval()
with torch.no_grad():
    print("VALUE logits", float(net(inputs).abs().mean()))
'''

DRIVERS = {name: _ARCH_DRIVER.format(ctor=ctor) for name, ctor in ARCHITECTURES}
DEPS: dict = {}   # torchvision.datasets.CIFAR10 and transforms convert through _ms_compat

NLP_PROGRAMS = [
    ("nlp_nnlm", "1-1.NNLM", "NNLM.py"),
    ("nlp_word2vec", "1-2.Word2Vec", "Word2Vec-Skipgram(Softmax).py"),
    ("nlp_textcnn", "2-1.TextCNN", "TextCNN.py"),
    ("nlp_textrnn", "3-1.TextRNN", "TextRNN.py"),
    ("nlp_textlstm", "3-2.TextLSTM", "TextLSTM.py"),
    ("nlp_bilstm", "3-3.Bi-LSTM", "Bi-LSTM.py"),
    ("nlp_seq2seq", "4-1.Seq2Seq", "Seq2Seq.py"),
    ("nlp_seq2seq_attention", "4-2.Seq2Seq(Attention)", "Seq2Seq(Attention).py"),
    ("nlp_bilstm_attention", "4-3.Bi-LSTM(Attention)", "Bi-LSTM(Attention).py"),
    ("nlp_transformer", "5-1.Transformer", "Transformer.py"),
    ("nlp_transformer_greedy", "5-1.Transformer", "Transformer(Greedy_decoder).py"),
    ("nlp_bert", "5-2.BERT", "BERT.py"),
]

def cifar_in_program(root: Path):
    """CIFAR-10's python batches where main.py reads them: './data' in the program's directory (written into
    the torch copy, which the conversion copies). 32 training images: one batch of main.py's 128 per epoch."""
    from tests.corpus import write_cifar10
    prog = root.parent / "x" / "prog"
    if prog.is_dir():
        write_cifar10(prog / "data", n_train=32, n_test=16)


# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [("cifar_main", CIFAR, ".", "main.py", [], cifar_in_program)] + [
    (name, CIFAR, "models", "driver.py", [], None) for name, _ in ARCHITECTURES
] + [(name, NLP, d, script, [], None) for name, d, script in NLP_PROGRAMS]
