"""Linear TD(lambda) on the textbook's random walk, as course notebooks write it:
states 1..n between two terminals, one-hot features, an eligibility trace ``z = gamma
* lam * z + x``, the update ``w += alpha * delta * z``, episodes drawn by
``rng.choice([-1, 1])`` from a Generator passed in, and the root-mean-square error
against the true values ``np.arange(1, n + 1) / (n + 1)``.  The objective is that error
after a few episodes as a function of the initial weights and the step size: myc
differentiates through the learning itself."""

import numpy as np

N_STATES = 5


def feature(s):
    x = np.zeros(N_STATES)
    if 1 <= s <= N_STATES:
        x[s - 1] = 1.0
    return x


def td_lambda_episode(w, alpha, lam, rng, gamma=1.0):
    s = (N_STATES + 1) // 2
    z = np.zeros_like(w)
    while True:
        s_next = s + rng.choice([-1, 1])
        reward = 1.0 if s_next == N_STATES + 1 else 0.0
        x = feature(s)
        x_next = feature(s_next)
        delta = reward + gamma * w @ x_next - w @ x
        z = gamma * lam * z + x
        w = w + alpha * delta * z
        s = s_next
        if s == 0 or s == N_STATES + 1:
            break
    return w


def rms_error(w):
    true_values = np.arange(1, N_STATES + 1) / (N_STATES + 1)
    return np.sqrt(np.mean((w - true_values) ** 2))


def learn(params, rng, episodes=4, lam=0.8):
    w, log_alpha = params
    alpha = np.exp(log_alpha)
    for _ in range(episodes):
        w = td_lambda_episode(w, alpha, lam, rng)
    return rms_error(w)


def case():
    params = (np.full(N_STATES, 0.5), np.log(0.1))
    return dict(fn=learn, args=(params, np.random.default_rng(9)), argnums=0)
