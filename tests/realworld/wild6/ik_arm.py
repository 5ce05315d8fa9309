"""Inverse kinematics of a planar robot arm by damped least squares (Levenberg-
Marquardt), as robotics course notebooks write it: forward kinematics by
``np.cumsum(theta)`` of the joint angles and ``np.cumsum`` of the link vectors, the
analytic Jacobian's columns ``J[:, i] = ...`` written into ``np.zeros((2, n))`` in a
loop (from the reversed partial sums), the update ``np.linalg.solve(J.T @ J + mu *
np.eye(n), J.T @ err)`` in ``while np.linalg.norm(err) > tol and it < max_iter``;
calibration differentiates the final reach error plus a joint-effort term with
respect to the link lengths through the solver's iterations."""

import numpy as np

import myc


def joint_positions(theta, lengths):
    phi = np.cumsum(theta)
    steps = np.stack([lengths * np.cos(phi), lengths * np.sin(phi)], axis=1)
    return np.vstack([np.zeros((1, 2)), np.cumsum(steps, axis=0)])


def jacobian(theta, lengths):
    pts = joint_positions(theta, lengths)
    n = len(theta)
    J = np.zeros((2, n))
    for i in range(n):
        r = pts[-1] - pts[i]
        J[:, i] = [-r[1], r[0]]
    return J


def solve_ik(target, lengths, theta0, mu=1e-2, tol=1e-9, max_iter=30):
    theta = theta0.copy()
    err = target - joint_positions(theta, lengths)[-1]
    it = 0
    while np.linalg.norm(err) > tol and it < max_iter:
        J = jacobian(theta, lengths)
        theta = theta + np.linalg.solve(J.T @ J + mu * np.eye(len(theta)), J.T @ err)
        err = target - joint_positions(theta, lengths)[-1]
        it += 1
    return theta, err


def calibration_loss(lengths, targets, theta0, effort=0.05, max_iter=8):
    total = 0.0
    for target in targets:
        theta, err = solve_ik(target, lengths, theta0, max_iter=max_iter)
        total += err @ err + effort * np.sum(np.diff(theta) ** 2)
    return total / len(targets)


def case():
    targets = np.array([[1.2, 0.9], [0.4, 1.6], [-0.8, 1.1]])
    return dict(fn=calibration_loss, args=(np.array([0.8, 0.7, 0.5]), targets,
                                           np.array([0.3, 0.4, 0.2])), argnums=0)


if __name__ == "__main__":
    targets = np.array([[1.2, 0.9], [0.4, 1.6], [-0.8, 1.1]])
    theta, err = myc.jit(solve_ik)(targets[0], np.array([0.8, 0.7, 0.5]),
                                   np.array([0.3, 0.4, 0.2]))
    print(theta, err)
