"""A small decoder-only transformer (GPT) for character-level language modelling,
after karpathy/nanoGPT's model.py."""
import math
from dataclasses import dataclass

import mindspore as ms
from mindspore import nn, ops
import _ms_compat


@dataclass
class GPTConfig:
    block_size: int = 256
    vocab_size: int = 65
    n_layer: int = 6
    n_head: int = 6
    n_embd: int = 384
    dropout: float = 0.2
    bias: bool = True


class CausalSelfAttention(nn.Cell):

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        # key, query, value projections for all heads, but in a batch
        self.c_attn = nn.Dense(config.n_embd, 3 * config.n_embd, has_bias=bool(config.bias))
        # output projection
        self.c_proj = nn.Dense(config.n_embd, config.n_embd, has_bias=bool(config.bias))
        # regularization
        self.attn_dropout = nn.Dropout(p=config.dropout)
        self.resid_dropout = nn.Dropout(p=config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        # causal mask to ensure that attention is only applied to the left in the input sequence
        # _ms_compat.register_buffer (helper): torch saves persistent buffers: a Parameter with requires_grad=False
        _ms_compat.register_buffer(self, "bias", ops.tril(ops.ones((config.block_size, config.block_size)))
                             .view(1, 1, config.block_size, config.block_size))
        self.set_train(True)  # msmigrate: torch modules start in training mode (MindSpore cells: inference mode)

    def construct(self, x):
        B, T, C = x.shape  # batch size, sequence length, embedding dimensionality (n_embd)

        # calculate query, key, values for all heads in batch and move head forward to be the batch dim
        q, k, v = ops.split(self.c_attn(x), self.n_embd, axis=2)
        # _ms_compat.floordiv (helper): a // b, also on two ints inside GRAPH mode
        k = ops.swapaxes(k.view(B, T, self.n_head, _ms_compat.floordiv(C, self.n_head)), 1, 2)  # (B, nh, T, hs)
        q = ops.swapaxes(q.view(B, T, self.n_head, _ms_compat.floordiv(C, self.n_head)), 1, 2)  # (B, nh, T, hs)
        v = ops.swapaxes(v.view(B, T, self.n_head, _ms_compat.floordiv(C, self.n_head)), 1, 2)  # (B, nh, T, hs)

        # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
        # _ms_compat.matmul (helper): torch.matmul / `a @ b`; of values that are no tensor (NumPy arrays, a `@` the
        # converter could not type), the `@` oper...
        att = (_ms_compat.matmul(q, ops.swapaxes(k, -2, -1))) * (1.0 / math.sqrt(k.shape[-1]))
        att = ops.masked_fill(att, self.bias[:, :, :T, :T] == 0, ops.cast(float('-inf'), att.dtype))
        # _ms_compat.softmax (helper): ops.softmax, but a slice of all -inf gives torch's nan (MindSpore's CPU kernel:
        # 0, and garbage after it)
        att = _ms_compat.softmax(att, axis=-1)
        att = self.attn_dropout(att)
        y = _ms_compat.matmul(att, v)  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = ops.swapaxes(y, 1, 2).view(B, T, C)  # re-assemble all head outputs side by side

        # output projection
        y = self.resid_dropout(self.c_proj(y))
        return y


class MLP(nn.Cell):

    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Dense(config.n_embd, 4 * config.n_embd, has_bias=bool(config.bias))
        self.gelu = nn.GELU(approximate=False)
        self.c_proj = nn.Dense(4 * config.n_embd, config.n_embd, has_bias=bool(config.bias))
        self.dropout = nn.Dropout(p=config.dropout)
        self.set_train(True)  # msmigrate: torch modules start in training mode (MindSpore cells: inference mode)

    def construct(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        x = self.dropout(x)
        return x


class Block(nn.Cell):

    def __init__(self, config):
        super().__init__()
        # _ms_compat.LayerNorm (helper): torch's normalized_shape, axes counted from the input's rank (MindSpore:
        # begin_norm_axis)
        self.ln_1 = _ms_compat.LayerNorm(config.n_embd, eps=1e-05)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = _ms_compat.LayerNorm(config.n_embd, eps=1e-05)
        self.mlp = MLP(config)

    def construct(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Cell):

    def __init__(self, config):
        super().__init__()
        assert config.vocab_size is not None
        assert config.block_size is not None
        self.config = config

        self.wte = nn.Embedding(config.vocab_size, config.n_embd, embedding_table=ms.common.initializer.Normal(1.0))
        self.wpe = nn.Embedding(config.block_size, config.n_embd, embedding_table=ms.common.initializer.Normal(1.0))
        self.drop = nn.Dropout(p=config.dropout)
        self.h = nn.CellList([Block(config) for _ in range(config.n_layer)])
        self.ln_f = _ms_compat.LayerNorm(config.n_embd, eps=1e-05)
        self.lm_head = nn.Dense(config.n_embd, config.vocab_size, has_bias=False)

        # init all weights
        # _ms_compat.module_apply (helper): torch's order: every sub-module, children first, then the module itself
        _ms_compat.module_apply(self, self._init_weights)
        # apply special scaled init to the residual projections, per GPT-2 paper
        # _ms_compat.named_parameters (helper): torch's names (LayerNorm weight/bias) and no buffers, unlike
        # parameters_and_names()
        for pn, p in _ms_compat.named_parameters(self):
            if pn.endswith('c_proj.weight'):
                # _ms_compat.normal_ (helper): fills a Parameter or a plain Tensor (param.data)
                _ms_compat.normal_(p, mean=0.0, std=0.02/math.sqrt(2 * config.n_layer))
        self.set_train(True)  # msmigrate: torch modules start in training mode (MindSpore cells: inference mode)

    def _init_weights(self, module):
        if isinstance(module, nn.Dense):
            module.weight.set_data(ms.common.initializer.initializer(ms.common.initializer.Normal(sigma=0.02, mean=0.0), module.weight.shape, module.weight.dtype))
            if module.bias is not None:
                module.bias.set_data(ms.common.initializer.initializer(ms.common.initializer.Zero(), module.bias.shape, module.bias.dtype))
        elif isinstance(module, nn.Embedding):
            module.embedding_table.set_data(ms.common.initializer.initializer(ms.common.initializer.Normal(sigma=0.02, mean=0.0), module.embedding_table.shape, module.embedding_table.dtype))

    def construct(self, idx, targets=None):
        b, t = idx.shape
        assert t <= self.config.block_size, f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}"
        pos = ops.arange(0, t, dtype=ms.int64)  # shape (t)

        # forward the GPT model itself
        tok_emb = self.wte(idx)  # token embeddings of shape (b, t, n_embd)
        pos_emb = self.wpe(pos)  # position embeddings of shape (t, n_embd)
        x = self.drop(tok_emb + pos_emb)
        for block in self.h:
            x = block(x)
        x = self.ln_f(x)
        logits = self.lm_head(x)

        if targets is not None:
            # _ms_compat.cross_entropy (helper): torch's F.cross_entropy
            loss = _ms_compat.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1), ignore_index=-1)
        else:
            loss = None

        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        # start with all of the candidate parameters
        param_dict = {pn: p for pn, p in _ms_compat.named_parameters(self)}
        # filter out those that do not require grad
        # _ms_compat.requires_grad_of (helper): torch's `x.requires_grad`: a Parameter's flag; on a computed tensor
        # whether MindSpore is recording a gradient now (in...
        param_dict = {pn: p for pn, p in param_dict.items() if bool(_ms_compat.requires_grad_of(p, 'model:149'))}
        # create optim groups. Any parameters that is 2D will be weight decayed, otherwise no.
        # i.e. all weight tensors in matmuls + embeddings decay, all biases and layernorms don't.
        decay_params = [p for n, p in param_dict.items() if p.ndim >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.ndim < 2]
        optim_groups = [
            {'params': decay_params, 'weight_decay': weight_decay},
            {'params': nodecay_params, 'weight_decay': 0.0}
        ]
        # _ms_compat.numel (helper): torch's `.numel()` of a tensor or of a torch.Size (`shape.numel()`, `[y.shape for y
        # in ys]`'s items): a converted tor...
        num_decay_params = sum(_ms_compat.numel(p) for p in decay_params)
        num_nodecay_params = sum(_ms_compat.numel(p) for p in nodecay_params)
        print(f"num decayed parameter tensors: {len(decay_params)}, with {_ms_compat.format_value(num_decay_params):,} parameters")
        print(f"num non-decayed parameter tensors: {len(nodecay_params)}, with {_ms_compat.format_value(num_nodecay_params):,} parameters")
        # _ms_compat.AdamW (helper): torch's update (mindspore.experimental.optim.Adam adds eps before the bias
        # correction)
        optimizer = _ms_compat.AdamW(optim_groups, lr=learning_rate, betas=betas)
        return optimizer

    def generate(self, idx, max_new_tokens, temperature=1.0):
        """Take a conditioning sequence of indices idx (LongTensor of shape (b,t)) and complete
        the sequence max_new_tokens times, feeding the predictions back into the model each time."""
        for _ in range(max_new_tokens):
            # if the sequence context is growing too long we must crop it at block_size
            idx_cond = idx if idx.shape[1] <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            # pluck the logits at the final step and scale by desired temperature
            logits = logits[:, -1, :] / temperature
            probs = _ms_compat.softmax(logits, axis=-1)
            idx_next = ops.multinomial(probs, 1, False).astype(ms.int64)
            # _ms_compat.cat (helper): torch.cat(tensors, dim): ops.cat of the operands in their promoted dtype
            # (MindSpore's Concat kernel takes one: segmen...
            idx = _ms_compat.cat((idx, idx_next), axis=1)
        # _ms_compat.no_grad_value (helper): The value with no gradient flowing through it, as torch's no_grad made it:
        # tensors (also in tuples and lists) through...
        return _ms_compat.no_grad_value(idx)
