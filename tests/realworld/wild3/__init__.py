"""A third corpus: NumPy/SciPy programs in the style of published autodiff examples that
fill tables in nested loops, iterate to convergence, integrate ODEs and draw inside the
objective (soft-DTW, a CRF, HMM forward-backward, Sinkhorn, a Laplace GP classifier,
RK4 and ``odeint`` fits, REINFORCE, ...), written for this repository, run unchanged by
myc: see README.md here and docs/realworld.md."""

PROGRAMS = (
    "soft_dtw", "crf", "hmm_posterior", "sinkhorn", "gp_laplace", "neural_ode",
    "lotka_volterra", "reinforce", "lstm_list", "mdn", "advi_logreg", "heat_stencil",
    "poisson_newton",
)
