"""A fifth corpus: NumPy/SciPy programs in the styles of course assignments, blog posts
and library examples -- CS231n layer functions with cache tuples, Karpathy's min-char-rnn,
a JAX-examples MLP over ``params[:-1]``, DP-SGD with clipped per-example gradients, kernel
ridge regression, differentiable EM for a Gaussian mixture, a GRU in a dataclass, an
n-body simulation, Bayesian linear regression's evidence, ranking losses, RealNVP
couplings and black-box VI with a generator made inside -- written for this repository,
run unchanged by myc: see README.md here and docs/realworld.md."""

PROGRAMS = (
    "cs231n_net", "min_char_rnn", "mnist_mlp", "dp_sgd", "kernel_ridge", "gmm_em",
    "gru_dataclass", "nbody", "bayes_linreg", "ranking", "realnvp", "bbvi_rng",
)
