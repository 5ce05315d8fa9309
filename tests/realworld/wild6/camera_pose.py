"""Camera pose refinement by reprojection error, as structure-from-motion tutorials
write it: an axis-angle rotation turned into a matrix by Rodrigues' formula (the skew
matrix as an ``np.array`` literal of the vector's entries, ``theta = np.linalg.norm``),
points moved by ``X @ R.T + t``, projected through an intrinsics matrix ``K`` and
divided by depth ``p[:, :2] / p[:, 2:3]``, and a Huber loss by ``np.where`` on the
residual norms; the pose is one 6-vector sliced ``pose[:3]``, ``pose[3:]``."""

import numpy as np

import myc


def rodrigues(rvec):
    theta = np.linalg.norm(rvec)
    if theta < 1e-12:
        return np.eye(3)
    k = rvec / theta
    Kx = np.array([[0.0, -k[2], k[1]],
                   [k[2], 0.0, -k[0]],
                   [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(theta) * Kx + (1 - np.cos(theta)) * (Kx @ Kx)


def project(pose, X, K):
    R, t = rodrigues(pose[:3]), pose[3:]
    p = (X @ R.T + t) @ K.T
    return p[:, :2] / p[:, 2:3]


def huber(r, delta=1.0):
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta))


def reprojection_loss(pose, X, uv, K, delta=2.0):
    residual = project(pose, X, K) - uv
    norms = np.sqrt(np.sum(residual ** 2, axis=1))
    return np.mean(huber(norms, delta))


def make_scene(n=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3)) + np.array([0, 0, 6.0])
    K = np.array([[300.0, 0, 160], [0, 300.0, 120], [0, 0, 1]])
    true_pose = np.array([0.05, -0.1, 0.02, 0.2, -0.1, 0.3])
    uv = project(true_pose, X, K) + rng.normal(scale=0.5, size=(n, 2))
    uv[0] += 25.0                                   # one outlier
    return X, uv, K


def case():
    X, uv, K = make_scene()
    return dict(fn=reprojection_loss, args=(np.array([0.02, -0.05, 0.0, 0.1, 0.0, 0.2]),
                                            X, uv, K), argnums=0)


if __name__ == "__main__":
    X, uv, K = make_scene()
    pose = np.zeros(6)
    g = myc.value_and_grad(reprojection_loss)
    for _ in range(500):
        v, d = g(pose, X, uv, K)
        pose = pose - np.array([1e-5] * 3 + [1e-3] * 3) * d
    print(v, pose)
