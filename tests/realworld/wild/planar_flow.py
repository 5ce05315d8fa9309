"""A stack of planar normalizing flows fitted by reverse KL to an unnormalized 2-D
density: each layer is a dict of parameters, the log-determinant accumulated in a loop."""

import numpy as np

import myc


def target_log_density(z):
    r = np.linalg.norm(z, axis=1)
    ring = -0.5 * ((r - 2.0) / 0.4) ** 2
    return ring + np.log(np.exp(-0.5 * ((z[:, 0] - 2) / 0.6) ** 2)
                         + np.exp(-0.5 * ((z[:, 0] + 2) / 0.6) ** 2))


class PlanarFlow:
    def __init__(self, dim, n_layers, seed=0):
        rs = np.random.RandomState(seed)
        self.dim = dim
        self.init = [dict(u=0.1 * rs.randn(dim), w=0.1 * rs.randn(dim), b=0.0)
                     for _ in range(n_layers)]

    @staticmethod
    def constrained_u(u, w):
        # keeps the layer invertible: w.u >= -1
        wu = np.dot(w, u)
        m = -1.0 + np.log1p(np.exp(wu))
        return u + (m - wu) * w / np.sum(w**2)

    def forward(self, layers, z):
        log_det = np.zeros(z.shape[0])
        for layer in layers:
            u = self.constrained_u(layer["u"], layer["w"])
            a = z @ layer["w"] + layer["b"]
            z = z + np.outer(np.tanh(a), u)
            psi = (1 - np.tanh(a) ** 2)[:, None] * layer["w"]
            log_det = log_det + np.log(np.abs(1 + psi @ u))
        return z, log_det


FLOW = PlanarFlow(2, 4)


def reverse_kl(layers, eps):
    base_logp = -0.5 * np.sum(eps**2, axis=1) - np.log(2 * np.pi)
    z, log_det = FLOW.forward(layers, eps)
    return np.mean(base_logp - log_det - target_log_density(z))


def case():
    eps = np.random.RandomState(1).randn(64, 2)
    layers = [{k: (v + 0.05 if k != "b" else 0.1 * i) for k, v in layer.items()}
              for i, layer in enumerate(FLOW.init)]
    return dict(fn=reverse_kl, args=(layers, eps), argnums=0)


if __name__ == "__main__":
    kl_grad = myc.value_and_grad(reverse_kl)
    layers, rs = FLOW.init, np.random.RandomState(0)
    for it in range(200):
        val, g = kl_grad(layers, rs.randn(128, 2))
        layers = [{k: p[k] - 0.05 * gp[k] for k in p} for p, gp in zip(layers, g)]
    print("KL", val)
