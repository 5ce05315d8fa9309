"""Maximum-entropy inverse reinforcement learning (Ziebart) on a small gridworld: a
linear reward of one-hot state features, soft value iteration ``Q = r + gamma *
P @ V`` by ``np.einsum('sat,t->sa', P, V)`` and ``V = logsumexp(Q, axis=1)`` in a
``for`` loop that ``break``s once ``np.max(np.abs(V_new - V)) < tol``, the stochastic policy
``np.exp(Q - V[:, None])``, expected state visitations by a forward pass over a horizon
(``D[t + 1] = ...`` into a preallocated array), and the demonstrations' negative
log-likelihood; differentiated with respect to the reward weights through the
value iteration."""

import numpy as np
from scipy.special import logsumexp

import myc


def gridworld(size=3, slip=0.1):
    n = size * size
    moves = [(0, 1), (1, 0), (0, -1), (-1, 0)]
    P = np.zeros((n, len(moves), n))
    for s in range(n):
        r, c = divmod(s, size)
        for a, (dr, dc) in enumerate(moves):
            r2, c2 = min(max(r + dr, 0), size - 1), min(max(c + dc, 0), size - 1)
            P[s, a, r2 * size + c2] += 1.0 - slip
            P[s, a, s] += slip
    return P


def soft_value_iteration(reward, P, gamma=0.9, tol=1e-8, max_iter=500):
    V = np.zeros(P.shape[0])
    for _ in range(max_iter):
        Q = reward[:, None] + gamma * np.einsum("sat,t->sa", P, V)
        V_new = logsumexp(Q, axis=1)
        if np.max(np.abs(V_new - V)) < tol:
            V = V_new
            break
        V = V_new
    return Q - V[:, None]


def visitation(log_pi, P, start, horizon):
    D = np.zeros((horizon, P.shape[0]))
    D[0] = start
    pi = np.exp(log_pi)
    for t in range(horizon - 1):
        D[t + 1] = np.einsum("s,sa,sat->t", D[t], pi, P)
    return D.sum(axis=0)


def demo_nll(theta, features, P, demos, gamma=0.9):
    reward = features @ theta
    log_pi = soft_value_iteration(reward, P, gamma)
    states, actions = demos[:, 0], demos[:, 1]
    return -np.mean(log_pi[states, actions]) + 1e-3 * theta @ theta


def make_demos(P, seed=0, n=30):
    rng = np.random.default_rng(seed)
    goal = P.shape[0] - 1
    pairs = []
    for _ in range(n):
        s = int(rng.integers(P.shape[0]))
        a = 0 if s % 3 < 2 and rng.random() < 0.6 else 1
        if s == goal:
            a = int(rng.integers(4))
        pairs.append([s, a])
    return np.array(pairs)


def case():
    P = gridworld()
    features = np.eye(P.shape[0])
    theta = np.linspace(-0.5, 0.5, P.shape[0])
    return dict(fn=demo_nll, args=(theta, features, P, make_demos(P)), argnums=0)


if __name__ == "__main__":
    P = gridworld()
    features, demos = np.eye(P.shape[0]), make_demos(P)
    theta = np.zeros(P.shape[0])
    g = myc.grad(demo_nll)
    for _ in range(100):
        theta = theta - 1.0 * g(theta, features, P, demos)
    log_pi = myc.jit(soft_value_iteration)(features @ theta, P)
    print(theta.reshape(3, 3), myc.jit(visitation)(log_pi, P, np.ones(9) / 9, 10))
