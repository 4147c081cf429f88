"""mindspore.scipy.linalg, which `import mindspore` does not load: torch.linalg.eigh/lu_factor/lu_solve/lstsq convert
to its functions (2-D inputs; a batch raises MindSpore's ValueError)."""
import mindspore.scipy.linalg as ms_scipy_linalg
