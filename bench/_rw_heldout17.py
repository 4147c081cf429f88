"""The `heldout17` set of bench/real_world.py (`--set heldout17`): two repositories the converter was never run on,
converted as a new user would convert them, their own train.py run as written with small flags on synthetic data
written in the real on-disk format their utils.load_data reads.

    python bench/real_world.py --mirrors /work/.mirror --set heldout17 [--only gcn_train,spgat_train]

- tkipf/pygcn:
  - gcn_train: pygcn/train.py as it is (the pygcn package beside it, as `setup.py install` would make it
    importable), flags --no-cuda --seed 7 --epochs 6 --hidden 8: utils.load_data reads ../data/cora/cora.content and
    cora.cites (np.genfromtxt), builds scipy.sparse csr/coo matrices, row-normalizes them (sp.diags, dot) and turns
    the adjacency into a torch sparse tensor (`torch.sparse.FloatTensor(indices, values, torch.Size(shape))` from
    `torch.from_numpy`); the GCN's GraphConvolution does `torch.spmm(adj, torch.mm(input, self.weight))` and its
    Parameters are made from uninitialised `torch.FloatTensor(n, m)` filled by `.data.uniform_`; Adam with weight
    decay, nll_loss over `output[idx_train]`, the validation forward in eval mode, accuracy's `.max(1)[1].type_as`.
- Diego999/pyGAT:
  - gat_train: train.py as it is, flags --no-cuda --seed 7 --epochs 6 --hidden 4 --nb_heads 2 --patience 100: the
    dense GAT (GraphAttentionLayer: `torch.where(adj > 0, e, -9e15 * ones_like(e))`, softmax over rows, heads
    registered by add_module from a plain list, torch.cat of the heads), Variable(...) of the data, torch.save of
    the state_dict each epoch, glob/os.remove of the older files, load_state_dict(torch.load(best)) and the test.
  - spgat_train: the same with --sparse: SpGAT's SpGraphAttentionLayer (`adj.nonzero().t()` of the dense
    adjacency, edge features gathered by `h[edge[0, :], :]`, `torch.exp(-leakyrelu(a.mm(edge_h).squeeze()))`) and
    SpecialSpmmFunction, a custom torch.autograd.Function whose forward builds
    `torch.sparse_coo_tensor(indices, values, shape)` and multiplies it with a dense matrix, its backward gathering
    the gradient of the values from `grad_output.matmul(b.t())` at `a._indices()` and `a.t().matmul(grad_output)`.

Data (both repositories): 1500 nodes (their loaders index the nodes 0..1499: idx_test = range(500, 1500)), 12
binary features, 4 classes, 3000 random citations, written as cora.content / cora.cites where each loader reads
them (pygcn: ../data/cora/ from the script's directory; pyGAT: ./data/cora/). Dropout is off (the runner's).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

import numpy as np

PYGCN = "tkipf+pygcn@1600b5b748b3976413d1e307540ccc62605b4d6d"
PYGAT = "Diego999+pyGAT@3664f2dc90cbf971564c0bf186dc794f12446d0c"


def write_cora(directory: Path, n_nodes=1500, n_features=12, n_classes=4, n_edges=3000, seed=0):
    """cora.content (`<paper id> <feature 0/1>... <class label>` per line) and cora.cites (`<cited id> <citing id>`)
    under DIRECTORY: random paper ids, features and citations from a fixed seed."""
    rng = np.random.RandomState(seed)
    ids = rng.choice(np.arange(1000, 1000000), size=n_nodes, replace=False)
    features = (rng.rand(n_nodes, n_features) < 0.3).astype(int)
    features[np.arange(n_nodes), rng.randint(0, n_features, n_nodes)] = 1     # no empty row
    classes = [f"Class_{c}" for c in "ABCDEFGH"[:n_classes]]
    labels = rng.randint(0, n_classes, n_nodes)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "cora.content", "w") as f:
        for i in range(n_nodes):
            f.write("\t".join([str(ids[i]), *map(str, features[i]), classes[labels[i]]]) + "\n")
    src = rng.randint(0, n_nodes, n_edges)
    dst = (src + rng.randint(1, n_nodes, n_edges)) % n_nodes     # no self-citation
    with open(directory / "cora.cites", "w") as f:
        for a, b in zip(src, dst):
            f.write(f"{ids[a]}\t{ids[b]}\n")


def _pygcn_data(root):
    """pygcn's load_data(path="../data/cora/") from the script's directory RUN/SIDE/x/prog: RUN/SIDE/x/data/cora."""
    write_cora(Path(root).parent / "x" / "data" / "cora")


def _pygat_data(root):
    """pyGAT's load_data(path="./data/cora/") from the script's directory: RUN/SIDE/x/prog/data/cora."""
    write_cora(Path(root).parent / "x" / "prog" / "data" / "cora")


_GAT_ARGS = ["--no-cuda", "--seed", "7", "--epochs", "6", "--hidden", "4", "--nb_heads", "2", "--patience", "100"]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("gcn_train", PYGCN, "pygcn,pygcn/train.py", "train.py",
     ["--no-cuda", "--seed", "7", "--epochs", "6", "--hidden", "8"], _pygcn_data),
    ("gat_train", PYGAT, "layers.py,models.py,utils.py,train.py", "train.py", _GAT_ARGS, _pygat_data),
    ("spgat_train", PYGAT, "layers.py,models.py,utils.py,train.py", "train.py", _GAT_ARGS + ["--sparse"],
     _pygat_data),
]

DEPS: dict = {}

DRIVERS: dict = {}
