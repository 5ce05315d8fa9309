"""A second corpus: NumPy/SciPy programs in the style of published autodiff examples
(HMC, SVGD, normalizing flows, t-SNE, a Kalman filter, attention, ...), written for this
repository, run unchanged by myc: see README.md here and docs/realworld.md."""

PROGRAMS = (
    "hmc", "svgd", "planar_flow", "tsne", "kalman", "attention", "matrix_factorization",
    "skipgram", "black_scholes", "count_glm", "logistic_lbfgs", "conv1d", "gp_marginal",
    "adam_mlp",
)
