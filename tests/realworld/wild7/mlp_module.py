"""A classifier written the way PyTorch users write models, in NumPy: a ``Module`` base
class whose ``__call__`` forwards to ``forward``, ``Linear`` and ``Tanh`` layers, a
``Sequential(*layers)`` container looping ``for layer in self.layers: x = layer(x)``,
``parameters()`` collecting arrays from ``vars(self)``, and a loss taking the model
object; the gradient (an object of the model's class) is pulled into a dict of named
gradients, as ``named_parameters()`` would give."""

import numpy as np

import myc


class Module:
    def __call__(self, x):
        return self.forward(x)


class Linear(Module):
    def __init__(self, n_in, n_out, rng):
        scale = np.sqrt(1.0 / n_in)
        self.weight = rng.uniform(-scale, scale, size=(n_out, n_in))
        self.bias = np.zeros(n_out)

    def forward(self, x):
        return x @ self.weight.T + self.bias


class Tanh(Module):
    def forward(self, x):
        return np.tanh(x)


class Sequential(Module):
    def __init__(self, *layers):
        self.layers = list(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def cross_entropy(logits, target):
    return -np.mean(log_softmax(logits)[np.arange(len(target)), target])


def loss_fn(model, x, y, weight_decay=1e-3):
    penalty = sum(np.sum(layer.weight ** 2) for layer in model.layers
                  if isinstance(layer, Linear))
    return cross_entropy(model(x), y) + weight_decay * penalty


def named_parameters(model):
    out = {}
    for i, layer in enumerate(model.layers):
        for name, value in vars(layer).items():
            out[f"layers.{i}.{name}"] = value
    return out


def make_data(n=48, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    y = (x[:, 0] + 0.5 * x[:, 1] ** 2 > 0.3).astype(int) + (x[:, 2] > 0.8)
    return x, y


def make_model(seed=1):
    rng = np.random.default_rng(seed)
    return Sequential(Linear(4, 16, rng), Tanh(), Linear(16, 16, rng), Tanh(),
                      Linear(16, 3, rng))


def train(model, x, y, lr=0.5, steps=30):
    grad_fn = myc.grad(loss_fn)
    for _ in range(steps):
        grads = named_parameters(grad_fn(model, x, y))
        for name, p in named_parameters(model).items():
            p -= lr * grads[name]          # in place, as optimizer.step() does
    return model


def case():
    x, y = make_data()
    return dict(fn=loss_fn, args=(make_model(), x, y), argnums=0)


if __name__ == "__main__":
    x, y = make_data()
    model = make_model()
    print(loss_fn(model, x, y), loss_fn(train(model, x, y), x, y))
