import mindspore as ms
from mindspore import nn, ops
import _ms_compat


class RNNModel(nn.Cell):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(p=dropout)
        self.encoder = nn.Embedding(ntoken, ninp, embedding_table=ms.common.initializer.Normal(1.0))
        # _ms_compat.LSTM (helper): torch.nn.LSTM: torch's arguments; an unbatched input (seq, features) is a batch of
        # one (recurrent.py)
        self.rnn = _ms_compat.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Dense(nhid, ntoken)

        # Optionally tie weights as in:
        # "Using the Output Embedding to Improve Language Models" (Press & Wolf 2016)
        # https://arxiv.org/abs/1608.05859
        # and
        # "Tying Word Vectors and Word Classifiers: A Loss Framework for Language Modeling" (Inan et al. 2016)
        # https://arxiv.org/abs/1611.01462
        if tie_weights:
            if nhid != ninp:
                raise ValueError('When using the tied flag, nhid must be equal to emsize')
            self.decoder.weight = self.encoder.embedding_table

        self.init_weights()

        self.nhid = nhid
        self.nlayers = nlayers
        self.set_train(True)  # msmigrate: torch modules start in training mode (MindSpore cells: inference mode)

    def init_weights(self):
        initrange = 0.1
        # _ms_compat.uniform_ (helper): fills a Parameter or a plain Tensor, drawn from the initializers' own NumPy
        # stream
        _ms_compat.uniform_(self.encoder.embedding_table, -initrange, initrange)
        self.decoder.bias.set_data(ms.common.initializer.initializer(ms.common.initializer.Zero(), self.decoder.bias.shape, self.decoder.bias.dtype))
        _ms_compat.uniform_(self.decoder.weight, -initrange, initrange)

    def construct(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        # _ms_compat.log_softmax (helper): torch.log_softmax as x - logsumexp(x): ops.log_softmax computes a float64
        # input in float32 (off by ~3e-6)
        return _ms_compat.log_softmax(decoded, axis=1), hidden

    def init_hidden(self, bsz):
        weight = self.encoder.embedding_table
        return (ops.zeros((self.nlayers, bsz, self.nhid), weight.dtype),
                ops.zeros((self.nlayers, bsz, self.nhid), weight.dtype))
