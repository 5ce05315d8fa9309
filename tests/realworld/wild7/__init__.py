"""A seventh corpus: NumPy programs in the styles users bring from PyTorch and JAX --
models as classes (``Module``/``Sequential``, ``__call__``, ``isinstance``), an
optimizer class driving ``myc.grad``, SciPy's optimizers with ``jac=``/``hessp=``/
``hess=``, an integrator taking the dynamics as a function, samplers taking
``log_prob`` (a class, ``functools.partial``), pytrees with ``has_aux``, a
``@dataclass`` transformer block with properties and keyword calls, a hand-rolled
``scan``, kernels composed by operator overloading and training loops with callbacks
-- written for this repository, run unchanged by myc: see README.md here and
docs/realworld.md."""

PROGRAMS = (
    "mlp_module", "adam_class", "scipy_newton", "rk4_fit", "hmc_class",
    "langevin_partial", "pytree_jax", "dataclass_transformer", "scan_rnn",
    "gp_kernels", "callbacks_closures",
)
