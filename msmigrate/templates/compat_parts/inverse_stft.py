"""torch.istft: MindSpore 2.10 has no inverse short-time Fourier transform. torch's algorithm: each frame's
inverse FFT times the window, overlap-added at hop_length, divided by the overlap-added squared window,
centre padding cut off; differentiable (irfft, a segment sum)."""


def istft(x, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False, onesided=None,
          length=None, return_complex=False):
    """torch.istft(x, n_fft, ...): x (freq, frames) or (batch, freq, frames), complex."""
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win_length = n_fft if win_length is None else int(win_length)
    unbatched = x.ndim == 2
    if unbatched:
        x = x.expand_dims(0)
    if window is None:
        window = ops.ones(win_length, ms.float32 if x.dtype == ms.complex64 else ms.float64)
    if win_length < n_fft:      # centred in n_fft, as torch pads it
        left = (n_fft - win_length) // 2
        window = pad_constant(window, (left, n_fft - win_length - left))
    onesided = x.shape[-2] != n_fft if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    spec = x.swapaxes(-1, -2)                                       # (batch, frames, freq)
    envelope_window = window
    if return_complex:
        frames = ops.ifft(spec, n_fft, -1, norm)
        window = window.astype(frames.dtype)
    else:
        if not onesided:
            spec = spec[..., :n_fft // 2 + 1]
        frames = ops.irfft(spec, n_fft, -1, norm)
    batch, count = frames.shape[0], frames.shape[1]
    frames = frames * window
    total = n_fft + hop * (count - 1)
    # overlap-add: sample k of frame f lands on f * hop + k
    positions = (np.arange(count)[:, None] * hop + np.arange(n_fft)[None, :]).reshape(-1)
    ids = ms.Tensor(positions.astype(np.int32))
    y = ops.unsorted_segment_sum(frames.reshape(batch, -1).swapaxes(0, 1), ids, total).swapaxes(0, 1)
    envelope = ops.unsorted_segment_sum(ops.tile(envelope_window * envelope_window, (count,)), ids, total)
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + int(length)
    end = min(end, total)
    y, envelope = y[:, start:end], envelope[start:end]
    if bool((ops.abs(envelope) < 1e-11).any()):
        raise RuntimeError("istft: window overlap add min < 1e-11 (the window and hop_length do not satisfy NOLA)")
    y = y / envelope.astype(y.dtype)
    if length is not None and y.shape[-1] < int(length):
        y = pad_constant(y, (0, int(length) - y.shape[-1]))     # not the pad kernel (its gradient in a graph)
    return y[0] if unbatched else y
