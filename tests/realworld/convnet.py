"""A LeNet-style convolutional classifier whose layers are objects: each layer class
reserves its slice of one flat weight vector through a small index-keeping class (a
dict keyed by the layer objects themselves) and applies itself in ``forward``; the
convolution is autograd's ``convolve`` with ``axes=``/``dot_axes=``, which SciPy's
lacks (``myc.misc.signal``, where ``autograd.scipy.signal`` was)."""

import numpy as np
import numpy.random as npr

from myc import grad
from myc.misc.signal import convolve


class Slots:
    """Named slices of a flat parameter vector."""

    def __init__(self):
        self.where = {}
        self.size = 0

    def reserve(self, key, shape):
        begin = self.size
        self.size += int(np.prod(shape))
        self.where[key] = (slice(begin, self.size), shape)

    def read(self, flat, key):
        span, shape = self.where[key]
        return np.reshape(flat[span], shape)


def lse(x, axis, keepdims=False):
    top = np.max(x)
    return top + np.log(np.sum(np.exp(x - top), axis=axis, keepdims=keepdims))


class Conv:
    def __init__(self, kernel, n_filters):
        self.kernel = kernel
        self.n_filters = n_filters

    def allocate(self, in_shape):
        self.slots = Slots()
        self.slots.reserve("kernels", (in_shape[0], self.n_filters) + self.kernel)
        self.slots.reserve("offsets", (1, self.n_filters, 1, 1))
        out_hw = tuple(a - k + 1 for a, k in zip(in_shape[1:], self.kernel, strict=True))
        return self.slots.size, (self.n_filters,) + out_hw

    def forward(self, x, flat):
        # x: [image, channel in, y, x]; kernels: [channel in, channel out, y, x]; the
        # convolution runs over y, x and contracts the input channels
        k = self.slots.read(flat, "kernels")
        mixed = convolve(x, k, axes=([2, 3], [2, 3]), dot_axes=([1], [0]), mode="valid")
        return mixed + self.slots.read(flat, "offsets")


class Pool:
    def __init__(self, window):
        self.window = window

    def allocate(self, in_shape):
        return 0, [in_shape[0]] + [s // w for s, w in zip(in_shape[1:], self.window,
                                                           strict=True)]

    def forward(self, x, flat):
        shape = x.shape[:2]
        for i in (0, 1):
            shape += (x.shape[i + 2] // self.window[i], self.window[i])
        return np.max(np.max(x.reshape(shape), axis=3), axis=4)


class Dense:
    def __init__(self, width):
        self.width = width

    def allocate(self, in_shape):
        self.slots = Slots()
        self.slots.reserve("weights", (int(np.prod(in_shape)), self.width))
        self.slots.reserve("offsets", (self.width,))
        return self.slots.size, (self.width,)

    def forward(self, x, flat):
        if x.ndim > 2:
            x = x.reshape((x.shape[0], int(np.prod(x.shape[1:]))))
        z = np.dot(x, self.slots.read(flat, "weights")) + self.slots.read(flat, "offsets")
        return self.activate(z)


class TanhDense(Dense):
    def activate(self, z):
        return np.tanh(z)


class LogSoftmaxDense(Dense):
    def activate(self, z):
        return z - lse(z, axis=1, keepdims=True)


def assemble(in_shape, stack, l2):
    slots = Slots()
    shape = in_shape
    for layer in stack:
        n, shape = layer.allocate(shape)
        slots.reserve(layer, (n,))

    def log_probs(flat, images):
        h = images
        for layer in stack:
            h = layer.forward(h, slots.read(flat, layer))
        return h

    def loss(flat, images, onehot):
        return l2 * np.dot(flat, flat) - np.sum(log_probs(flat, images) * onehot)

    def error_rate(flat, images, onehot):
        guess = np.argmax(log_probs(flat, images), axis=1)
        return np.mean(np.argmax(onehot, axis=1) != guess)

    return slots.size, log_probs, loss, error_rate


def case():
    stack = [Conv((3, 3), 2), Pool((2, 2)), TanhDense(4), LogSoftmaxDense(3)]
    rs = npr.RandomState(0)
    n, _, loss, _ = assemble((1, 6, 6), stack, 1.0)
    flat = rs.randn(n) * 0.1
    images = rs.rand(4, 1, 6, 6)
    onehot = np.eye(3)[rs.randint(0, 3, 4)]
    return dict(fn=loss, args=(flat, images, onehot), argnums=0, gradient=grad(loss, argnum=0))
