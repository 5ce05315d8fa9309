"""A fourth corpus: NumPy/SciPy programs in the style of published JAX/autograd tutorial
code -- a VAE, GP regression, a Bayesian net sampled by HMC, MAML, a transformer held in
a class, GloVe, k-means, SciPy-fitted softmax regression with ``functools.partial``,
a 2-D convnet, PCA by power iteration, actor-critic -- written for this repository, run
unchanged by myc: see README.md here and docs/realworld.md."""

PROGRAMS = (
    "vae", "gp_regression", "bnn_hmc", "maml", "transformer", "glove", "soft_kmeans",
    "softmax_lbfgs", "conv2d", "pca_power", "actor_critic",
)
