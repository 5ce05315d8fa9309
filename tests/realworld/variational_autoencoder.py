"""A variational autoencoder: encoder and decoder are lists of (W, b) pairs with batch
normalisation, the encoder's output split into mean and log standard deviation, one
reparameterised draw per image with ``rs.randn(*mean.shape)``, a Bernoulli decoder
over +-1 pixels, and a Monte Carlo KL term; the parameters are a (decoder, encoder)
tuple."""

import itertools

import numpy as np
import numpy.random as npr
from scipy.special import expit as sigmoid
from scipy.stats import norm

from myc import grad
from myc.misc.optimizers import adam


def diag_normal_logpdf(x, mean, log_sd):
    return np.sum(norm.logpdf(x, mean, np.exp(log_sd)), axis=-1)


def halves(out):
    d = np.shape(out)[-1] // 2
    return out[:, :d], out[:, d:]


def reparam_draw(mean, log_sd, rs):
    return mean + np.exp(log_sd) * rs.randn(*mean.shape)


def pm1_bernoulli_logpmf(pixels, logits):
    return np.sum(-np.logaddexp(0, -pixels * logits), axis=-1)


def relu(u):
    return np.maximum(0, u)


def random_layers(scale, widths, rs=None):
    rs = npr.RandomState(0) if rs is None else rs
    return [(scale * rs.randn(fan_in, fan_out), scale * rs.randn(fan_out))
            for fan_in, fan_out in itertools.pairwise(widths)]


def standardise(h):
    centred = h - np.mean(h, axis=0, keepdims=True)
    return centred / (1 + np.std(h, axis=0, keepdims=True))


def net(layers, x):
    for W, b in layers[:-1]:
        x = relu(standardise(np.dot(x, W) + b))
    W_out, b_out = layers[-1]
    return np.dot(x, W_out) + b_out


def sample_images(dec, n, latent_dim, rs):
    return sigmoid(net(dec, rs.randn(n, latent_dim)))


def elbo(dec, enc, images, rs):
    mean, log_sd = halves(net(enc, images))
    z = reparam_draw(mean, log_sd, rs)
    log_q = diag_normal_logpdf(z, mean, log_sd)
    log_prior = diag_normal_logpdf(z, 0, 0)
    log_lik = pm1_bernoulli_logpmf(images, net(dec, z))
    return np.mean(log_prior + log_lik - log_q)


def case():
    latent_dim, pixels, batch = 2, 6, 4
    rs = npr.RandomState(3)
    images = np.where(rs.rand(8, pixels) > 0.5, 1.0, -1.0)  # stand-in for binarised MNIST
    params0 = (random_layers(0.1, [latent_dim, 5, 4, pixels]),
               random_layers(0.1, [pixels, 4, 5, 2 * latent_dim]))
    n_batches = int(np.ceil(len(images) / batch))

    def rows(i):
        j = i % n_batches
        return slice(j * batch, (j + 1) * batch)

    noise_rs = npr.RandomState(0)

    def loss(params, i):
        dec, enc = params
        return -elbo(dec, enc, images[rows(i)], noise_rs) / pixels

    return dict(fn=loss, args=(params0, 0), argnums=0,
                train=lambda steps: adam(grad(loss), params0, step_size=0.001,
                                         num_iters=steps))
