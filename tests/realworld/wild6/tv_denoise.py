"""Total-variation image denoising with a learned regularisation weight (a bilevel
problem, as in "learning the regulariser" tutorials): the smoothed isotropic TV energy
by ``np.diff`` along both axes with ``np.pad(..., mode="edge")`` kept to the image's
shape, its gradient written by hand (the adjoint of the differences by ``np.diff`` of a
zero-padded array), gradient descent on a copy ``u = f.copy()`` updated in place
``u -= step * g`` inside ``while it < max_iter and change > tol``; the reconstruction's
error against the clean image, differentiated with respect to ``log_lam`` through all
the inner steps."""

import numpy as np

import myc


def tv_grad(u, eps=1e-2):
    dx = np.diff(np.pad(u, ((0, 1), (0, 0)), mode="edge"), axis=0)
    dy = np.diff(np.pad(u, ((0, 0), (0, 1)), mode="edge"), axis=1)
    mag = np.sqrt(dx ** 2 + dy ** 2 + eps ** 2)
    px, py = dx / mag, dy / mag
    div = np.diff(np.pad(px, ((1, 0), (0, 0))), axis=0) + \
        np.diff(np.pad(py, ((0, 0), (1, 0))), axis=1)
    return -div


def tv_energy(u, f, lam, eps=1e-2):
    dx = np.diff(np.pad(u, ((0, 1), (0, 0)), mode="edge"), axis=0)
    dy = np.diff(np.pad(u, ((0, 0), (0, 1)), mode="edge"), axis=1)
    return 0.5 * np.sum((u - f) ** 2) + lam * np.sum(np.sqrt(dx ** 2 + dy ** 2 + eps ** 2))


def denoise(f, lam, step=0.02, max_iter=60, tol=1e-6):
    u = f.copy()
    it, change = 0, np.inf
    while it < max_iter and change > tol:
        g = (u - f) + lam * tv_grad(u)
        u -= step * g
        change = np.max(np.abs(step * g))
        it += 1
    return u


def recon_error(log_lam, noisy, clean):
    u = denoise(noisy, np.exp(log_lam))
    return np.mean((u - clean) ** 2)


def make_images(n=10, sigma=0.2, seed=0):
    rng = np.random.default_rng(seed)
    clean = np.zeros((n, n))
    clean[2:7, 3:8] = 1.0
    clean[n // 2:, :2] = 0.5
    return clean + sigma * rng.normal(size=clean.shape), clean


def case():
    noisy, clean = make_images()
    return dict(fn=recon_error, args=(np.log(0.1), noisy, clean), argnums=0)


if __name__ == "__main__":
    noisy, clean = make_images()
    log_lam = np.log(0.02)
    g = myc.value_and_grad(recon_error)
    for _ in range(20):
        v, d = g(log_lam, noisy, clean)
        log_lam -= 2.0 * d
    print(v, np.exp(log_lam))
