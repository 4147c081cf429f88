"""`tokenizer(texts, return_tensors="pt")` (msmigrate/hf_return_tensors.py): a real Hugging Face tokenizer, built
from a small vocabulary file of ours, asked for torch tensors in the original and for NumPy arrays made MindSpore
tensors in the conversion; the ids, masks and dtypes torch gets, and a model's names in the same file are sites."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
ms = pytest.importorskip("mindspore")

from .harness import load_converted, load_torch  # noqa: E402

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a", "dog"]

SRC = '''
import torch
from transformers import BertTokenizer


def encode(vocab_file, texts):
    tok = BertTokenizer(vocab_file)
    enc = tok(texts, padding=True, return_tensors="pt")
    return enc.input_ids, enc["attention_mask"], (enc.input_ids * enc.attention_mask).sum(dim=1)
'''

# converted only: a torch model class of transformers (not run on the torch side, where importing one can need
# torchvision's compiled ops)
MODEL = '''
import torch
from transformers import AutoTokenizer, BertConfig, BertModel


def build(layers):
    return BertModel(BertConfig(num_hidden_layers=layers))
'''


def test_tokenizer_asked_for_torch_tensors_gives_mindspore_tensors_of_the_same_values(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    texts = ["the cat sat on the mat", "a dog"]
    want = load_torch(SRC)["encode"](str(vocab), texts)
    mod, code, sites = load_converted(SRC)
    got = mod.encode(str(vocab), texts)
    for g, w in zip(got, want):
        assert isinstance(g, ms.Tensor)
        assert g.dtype == ms.int64 and w.dtype.is_floating_point is False
        np.testing.assert_array_equal(g.asnumpy(), w.numpy())
    assert 'return_tensors="np"' in code and "_ms_compat.ms_tensors(" in code, code
    assert [(s.api, s.status) for s in sites if s.api.startswith("transformers")] == [
        ("transformers: return_tensors='pt'", "converted")]


def test_torch_model_of_transformers_is_a_site_that_raises_naming_the_line():
    mod, code, sites = load_converted(MODEL)
    assert {s.api: s.status for s in sites}.get("transformers.BertModel") == "todo"    # not copied through
    head = code.split("def build")[0]
    assert "AutoTokenizer, BertConfig" in head and "BertModel" not in head, code   # it left the import
    with pytest.raises(Exception, match="transformers.BertModel") as info:
        mod.build(1)
    assert type(info.value).__name__ == "MigrationError"
