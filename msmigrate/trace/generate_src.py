"""The greedy `generate()` that `msmigrate trace` appends to the model.py of a causal LM whose traced
forward is (input_ids, attention_mask) -> logits with dynamic batch and sequence dims."""

GENERATE = '''def generate(net, input_ids, attention_mask=None, max_new_tokens=16, eos_token_id=None, pad_token_id=None):
    """Greedy decoding on the traced forward (ids, mask) -> logits, as transformers' generate() with
    do_sample=False: each step runs the whole sequence again (no KV cache; position ids come from the
    mask inside the graph), takes the argmax at the last position and appends it. A row that produced
    eos_token_id continues with pad_token_id; decoding stops early when every row has."""
    ids = np.asarray(input_ids, dtype=np.int64)
    mask = np.ones_like(ids) if attention_mask is None else np.asarray(attention_mask, dtype=np.int64)
    eos = [] if eos_token_id is None else [int(t) for t in np.atleast_1d(eos_token_id)]
    pad = eos[0] if pad_token_id is None and eos else pad_token_id
    done = np.zeros(len(ids), dtype=bool)
    if ms.get_context("mode") == ms.GRAPH_MODE:  # one compiled graph for every length
        net.set_inputs(Tensor(shape=[None, None], dtype=ms.int64), Tensor(shape=[None, None], dtype=ms.int64))
    for _ in range(max_new_tokens):
        logits = net(Tensor(ids), Tensor(mask))
        logits = logits[0] if isinstance(logits, (tuple, list)) else logits
        nxt = logits.asnumpy()[:, -1].argmax(-1).astype(np.int64)
        if eos:
            nxt = np.where(done, pad, nxt)
            done |= np.isin(nxt, eos)
        ids = np.concatenate([ids, nxt[:, None]], 1)
        mask = np.concatenate([mask, np.ones_like(nxt[:, None])], 1)
        if eos and done.all():
            break
    return ids
'''
