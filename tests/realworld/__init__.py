"""The HIPS/autograd examples re-expressed for myc (same models and constructs, our own
code, NumPy/SciPy/myc imports): see README.md here and docs/realworld.md."""

PROGRAMS = (
    "logistic_regression", "neural_net", "neural_net_regression", "rnn", "lstm", "gmm",
    "mixture_variational_inference", "gaussian_process", "deep_gaussian_process", "gplvm",
    "fluidsim", "hmm_em", "ode_net", "convnet", "bayesian_neural_net", "black_box_svi",
    "natural_gradient_black_box_svi", "variational_autoencoder", "negative_binomial_maxlike",
    "ica", "generative_adversarial_net", "rosenbrock",
)
