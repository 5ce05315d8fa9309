"""Programs written for myc in the style of the HIPS/autograd examples (re-expressed,
not copied): models whose parameters are lists of ``(W, b)`` pairs, dicts and
namedtuples, with list outputs built by ``append``, comprehensions, ``zip`` and
``sum``.  Each module defines ``CASE``: the function to differentiate, its arguments
and ``argnums``; ``tests/test_autograd_style.py`` runs them unchanged under CPython and
myc, and checks their gradients by finite differences."""

MODULES = ("logistic_regression", "neural_net", "rnn", "mixture_model", "kernel_regression",
           "variational_inference", "neural_ode", "hmm_forward", "autoencoder")
