"""A ninth corpus: "from scratch" teaching code as it is written on GitHub and in
courses -- the deep-learning course's L-layer networks (parameter dicts keyed
``"W" + str(l)``, cache tuples appended to lists, hand-written backward passes), the
"Neural Networks from Scratch" classes that store ``self.output`` in ``forward``,
ML-from-scratch activation and loss classes, k-means, logistic regression with
``np.c_``/``np.r_``, PCA by ``eigh``, Gaussian naive Bayes, im2col convolution and batch
normalization with running statistics -- written for this repository (none copied),
run unchanged by myc: see README.md here and docs/realworld.md."""

PROGRAMS = (
    "dlai_deep_nn", "dlai_regularization", "nnfs_classes", "mlfs_layers", "two_layer_blog",
    "logreg_scratch", "kmeans_scratch", "pca_eigh", "naive_bayes", "conv_im2col",
    "batchnorm_running",
)
