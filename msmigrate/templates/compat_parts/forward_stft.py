"""torch.stft: MindSpore 2.10's ops.stft has other arguments and outputs (no window centring, pad modes or
return_complex), so torch's algorithm: the signal padded by n_fft // 2 on each side (center, pad_mode), frames of
n_fft every hop_length, times the window (win_length centred in n_fft), each frame's rfft (fft when two-sided),
as (freq, frames); normalized scales by n_fft ** -0.5. Differentiable (gather, rfft)."""


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None):
    """torch.stft(x, n_fft, ...): x (length,) or (batch, length); complex (…, freq, frames), or its real and
    imaginary parts stacked last for return_complex=False."""
    complex_input = input.dtype in (ms.complex64, ms.complex128)
    if return_complex is None:
        if not complex_input and (window is None or window.dtype not in (ms.complex64, ms.complex128)):
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win_length = n_fft if win_length is None else int(win_length)
    unbatched = input.ndim == 1
    x = input.expand_dims(0) if unbatched else input
    if center:
        side = n_fft // 2
        if pad_mode == "constant":      # concatenation, not the pad kernel (its gradient in a compiled step)
            x = pad_constant(x, (side, side))
        else:
            x = ops.pad(x.expand_dims(1), (side, side), mode=pad_mode).squeeze(1)
    real_type = ms.float64 if x.dtype in (ms.float64, ms.complex128) else ms.float32
    if window is None:
        window = ops.ones(win_length, real_type)
    if win_length < n_fft:      # centred in n_fft, as torch pads it
        left = (n_fft - win_length) // 2
        window = pad_constant(window, (left, n_fft - win_length - left))
    if complex_input and window.dtype != x.dtype:     # MindSpore's CPU Mul takes no complex-real pair
        window = window.astype(x.dtype)
    count = 1 + (x.shape[-1] - n_fft) // hop
    starts = ops.arange(0, count * hop, hop).expand_dims(1)
    frames = ops.gather(x, starts + ops.arange(0, n_fft).expand_dims(0), 1) * window    # (batch, frames, n_fft)
    if onesided is None:
        onesided = not complex_input and window.dtype not in (ms.complex64, ms.complex128)
    norm = "ortho" if normalized else "backward"
    if onesided:
        spec = ops.rfft(frames, n_fft, -1, norm)
    else:
        spec = ops.fft(frames if frames.dtype in (ms.complex64, ms.complex128) else
                       frames.astype(ms.complex128 if real_type == ms.float64 else ms.complex64), n_fft, -1, norm)
    spec = spec.swapaxes(-1, -2)
    if unbatched:
        spec = spec.squeeze(0)
    return spec if return_complex else ops.view_as_real(spec)
