# torchvision.utils.make_grid / save_image, computed in NumPy: the same grid values and the same
# image file as torchvision (GAN and VAE programs write their samples with them).
from PIL import Image as _PILImage


def _image_array(t):
    return t.asnumpy() if isinstance(t, ms.Tensor) else np.asarray(t)


def _grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    if isinstance(tensor, (list, tuple)):
        arr = np.stack([_image_array(t) for t in tensor], 0)
    else:
        arr = _image_array(tensor)
    if arr.ndim == 2:                      # one H x W image
        arr = arr[None]
    if arr.ndim == 3:                      # one image; a single channel becomes three
        if arr.shape[0] == 1:
            arr = np.concatenate((arr, arr, arr), 0)
        arr = arr[None]
    if arr.ndim == 4 and arr.shape[1] == 1:
        arr = np.concatenate((arr, arr, arr), 1)
    if normalize is True:
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")
        arr = arr.copy()

        def norm(img):
            low, high = value_range if value_range is not None else (float(img.min()), float(img.max()))
            np.clip(img, low, high, out=img)
            img -= low
            img /= max(high - low, 1e-5)
        if scale_each is True:
            for img in arr:
                norm(img)
        else:
            norm(arr)
    if arr.shape[0] == 1:
        return arr[0]
    nmaps = arr.shape[0]
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(arr.shape[2] + padding), int(arr.shape[3] + padding)
    grid = np.full((arr.shape[1], height * ymaps + padding, width * xmaps + padding), pad_value, dtype=arr.dtype)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid[:, y * height + padding:(y + 1) * height, x * width + padding:(x + 1) * width] = arr[k]
            k += 1
    return grid


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    """torchvision.utils.make_grid: a (C, H, W) tensor holding the images in rows of `nrow`."""
    return ms.Tensor(_grid(tensor, nrow, padding, normalize, value_range, scale_each, pad_value))


def save_image(tensor, fp, format=None, **kwargs):
    """torchvision.utils.save_image: make_grid, then the file torchvision writes (rounded to uint8)."""
    grid = _grid(tensor, **kwargs)
    ndarr = np.clip(grid * 255 + 0.5, 0, 255).transpose(1, 2, 0).astype(np.uint8)
    _PILImage.fromarray(ndarr).save(fp, format=format)
