"""The greedy `generate()` that `msmigrate trace` appends to the model.py of a causal LM whose traced
forward is (input_ids, attention_mask) -> logits with dynamic batch and sequence dims."""

# Lines that several generate() functions below share. A template line holding only one of these names (at
# its indentation) stands for the lines (_expand), so that the emitted text is written once here.
_PARTS = {
    # the prompt as int64 arrays, the eos ids, the pad token
    "PROMPT_ARRAYS": '''\
    ids = np.asarray(input_ids, dtype=np.int64)
    mask = np.ones_like(ids) if attention_mask is None else np.asarray(attention_mask, dtype=np.int64)
    eos = [] if eos_token_id is None else [int(t) for t in np.atleast_1d(eos_token_id)]
    pad = eos[0] if pad_token_id is None and eos else pad_token_id
''',
    # a row that produced eos continues with pad
    "PAD_AFTER_EOS": '''\
        if eos:
            nxt = np.where(done, pad, nxt)
            done |= np.isin(nxt, eos)
''',
    # the decoders with a decode step: the sampler, the step, GRAPH mode's dynamic inputs of the model
    "DECODE_SETUP": '''\
    sampler = ops.Multinomial(seed=seed, seed2=0) if do_sample else None   # a fresh stream per call
    step = decode_step_of(net)
    graph = ms.get_context("mode") == ms.GRAPH_MODE
    if graph and net.get_inputs() is None:  # one compiled graph for every batch and length
''',
}


def _expand(template: str) -> str:
    for name, lines in _PARTS.items():
        indent = lines[:len(lines) - len(lines.lstrip(" "))]
        template = template.replace(f"{indent}{name}\n", lines)
        if name in template:
            raise ValueError(f"{name} in a generate() template at another indentation than its lines")
    return template


FORCE_TOKENS = '''def force_tokens(nxt, cur_len, max_length, forced_bos_token_id=None, forced_eos_token_id=None):
    """transformers' ForcedBOS / ForcedEOS logits processors (BART-style configs set them): the token at
    length 1 is forced_bos_token_id, the one at length max_length - 1 (the last) forced_eos_token_id; of a
    list of eos ids, the smallest, which is what greedy argmax over the allowed ids picks."""
    if forced_bos_token_id is not None and cur_len == 1:
        return np.full_like(nxt, int(forced_bos_token_id))
    if forced_eos_token_id is not None and cur_len == max_length - 1:
        return np.full_like(nxt, min(int(t) for t in np.atleast_1d(forced_eos_token_id)))
    return nxt
'''

GENERATE = FORCE_TOKENS + _expand('''

def generate(net, input_ids, attention_mask=None, max_new_tokens=16, eos_token_id=None, pad_token_id=None,
             forced_bos_token_id=None, forced_eos_token_id=None):
    """Greedy decoding on the traced forward (ids, mask) -> logits, as transformers' generate() with
    do_sample=False: each step runs the whole sequence again (no KV cache; position ids come from the
    mask inside the graph), takes the argmax at the last position and appends it. A row that produced
    eos_token_id continues with pad_token_id; decoding stops early when every row has. forced_bos_token_id /
    forced_eos_token_id: as the config's (force_tokens)."""
    PROMPT_ARRAYS
    done = np.zeros(len(ids), dtype=bool)
    if ms.get_context("mode") == ms.GRAPH_MODE:  # one compiled graph for every length
        net.set_inputs(Tensor(shape=[None, None], dtype=ms.int64), Tensor(shape=[None, None], dtype=ms.int64))
    max_length = ids.shape[1] + max_new_tokens
    for _ in range(max_new_tokens):
        logits = net(Tensor(ids), Tensor(mask))
        logits = logits[0] if isinstance(logits, (tuple, list)) else logits
        nxt = logits.asnumpy()[:, -1].argmax(-1).astype(np.int64)
        nxt = force_tokens(nxt, ids.shape[1], max_length, forced_bos_token_id, forced_eos_token_id)
        PAD_AFTER_EOS
        ids = np.concatenate([ids, nxt[:, None]], 1)
        mask = np.concatenate([mask, np.ones_like(nxt[:, None])], 1)
        if eos and done.all():
            break
    return ids
''')


# With a traced decode step (KV cache in and out): prefill once, then one position per step.
SELECT_TOKENS = '''def select_tokens(logits, do_sample=False, temperature=1.0, top_k=0, top_p=1.0, sampler=None):
    """The next token of each row from the last position's logits (batch, vocab), as transformers'
    generate(): greedy argmax, or sampling after temperature, then top-k, then top-p (nucleus) filtering;
    `sampler` draws from the filtered probabilities (a seeded MindSpore ops.Multinomial)."""
    scores = logits.asnumpy().astype(np.float32)
    if not do_sample:
        return scores.argmax(-1).astype(np.int64)
    scores = scores / np.float32(temperature)
    if top_k and top_k < scores.shape[-1]:
        kth = np.sort(scores, -1)[:, -top_k][:, None]          # ties with the k-th value are kept
        scores = np.where(scores < kth, -np.inf, scores)
    if top_p < 1.0:
        order = np.argsort(scores, -1, kind="stable")           # ascending
        ranked = np.take_along_axis(scores, order, -1)
        probs = np.exp(ranked - ranked[:, -1:])
        cum = np.cumsum(probs / probs.sum(-1, keepdims=True), -1)
        drop = cum <= 1.0 - top_p
        drop[:, -1] = False                                     # the most likely token always stays
        scores = np.where(np.take_along_axis(drop, np.argsort(order, -1), -1), -np.inf, scores)
    probs = ops.softmax(Tensor(scores), -1)
    return sampler(probs, 1).asnumpy()[:, 0].astype(np.int64)
'''

GENERATE_KV = FORCE_TOKENS + SELECT_TOKENS + _expand('''

def generate(net, input_ids, attention_mask=None, max_new_tokens=16, eos_token_id=None, pad_token_id=None,
             do_sample=False, temperature=1.0, top_k=50, top_p=1.0, seed=0, forced_bos_token_id=None,
             forced_eos_token_id=None):
    """Decoding as transformers' generate(): one prefill run of the model over the prompt (which returns
    the logits and every layer's key/value cache), then one DecodeStep run per new token on the cache
    (the cache grows by one position each step). Greedy, or with do_sample sampling after
    temperature / top_k / top_p (transformers' defaults: 1.0, 50, 1.0), drawn by a MindSpore
    ops.Multinomial seeded with `seed` (the same seed gives the same tokens). Left padding: the position ids come from the mask inside the graphs.
    A row that produced eos_token_id continues with pad_token_id; decoding stops early when all have.
    forced_bos_token_id / forced_eos_token_id: as the config's (force_tokens)."""
    PROMPT_ARRAYS
    done = np.zeros(len(ids), dtype=bool)
    DECODE_SETUP
        net.set_inputs(Tensor(shape=[None, None], dtype=ms.int64), Tensor(shape=[None, None], dtype=ms.int64))
    logits, *cache = net(Tensor(ids), Tensor(mask))
    if graph and step.get_inputs() is None:
        step.set_inputs(*decode_step_inputs([Tensor(ids[:, :1]), Tensor(mask)] + cache))
    max_length = ids.shape[1] + max_new_tokens
    for i in range(max_new_tokens):
        nxt = select_tokens(logits[:, -1], do_sample, temperature, top_k, top_p, sampler)
        nxt = force_tokens(nxt, ids.shape[1], max_length, forced_bos_token_id, forced_eos_token_id)
        PAD_AFTER_EOS
        ids = np.concatenate([ids, nxt[:, None]], 1)
        mask = np.concatenate([mask, np.ones_like(nxt[:, None])], 1)
        if i == max_new_tokens - 1 or (eos and done.all()):
            break
        logits, *cache = step(Tensor(nxt[:, None]), Tensor(mask), *cache)
    return ids
''')


# An encoder-decoder (T5...): the model graph runs the encoder and the first decoder position; the step
# takes the encoder's output and the decoder's self-attention cache.
GENERATE_SEQ2SEQ = FORCE_TOKENS + SELECT_TOKENS + _expand('''

def generate(net, input_ids, attention_mask=None, max_new_tokens=16, decoder_start_token_id=0, eos_token_id=None,
             pad_token_id=None, do_sample=False, temperature=1.0, top_k=50, top_p=1.0, seed=0,
             forced_bos_token_id=None, forced_eos_token_id=None):
    """Decoding as transformers' generate() for an encoder-decoder: the model graph encodes the input and
    runs the decoder on decoder_start_token_id (returning the logits, the encoder's output and the
    decoder's self-attention key/value cache); then one DecodeStep per new token (cross-attention keys
    are recomputed from the encoder's output in each step). Greedy, or sampled as select_tokens says with
    a MindSpore ops.Multinomial seeded by `seed`. Returns the decoder ids, the start token first; a row
    that produced eos_token_id continues with pad_token_id; decoding stops early when all rows have.
    forced_bos_token_id / forced_eos_token_id: as the config's (force_tokens; BART sets both)."""
    PROMPT_ARRAYS
    out = np.full((len(ids), 1), decoder_start_token_id, dtype=np.int64)
    done = np.zeros(len(ids), dtype=bool)
    DECODE_SETUP
        net.set_inputs(Tensor(shape=[None, None], dtype=ms.int64), Tensor(shape=[None, None], dtype=ms.int64),
                       Tensor(shape=[None, 1], dtype=ms.int64))
    logits, encoded, *cache = net(Tensor(ids), Tensor(mask), Tensor(out))
    if graph and step.get_inputs() is None:
        step.set_inputs(*decode_step_inputs([Tensor(out), encoded, Tensor(mask)] + cache))
    for i in range(max_new_tokens):
        nxt = select_tokens(logits[:, -1], do_sample, temperature, top_k, top_p, sampler)
        nxt = force_tokens(nxt, out.shape[1], 1 + max_new_tokens, forced_bos_token_id, forced_eos_token_id)
        PAD_AFTER_EOS
        out = np.concatenate([out, nxt[:, None]], 1)
        if i == max_new_tokens - 1 or (eos and done.all()):
            break
        logits, *cache = step(Tensor(nxt[:, None]), encoded, Tensor(mask), *cache)
    return out
''')
