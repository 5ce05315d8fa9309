"""REINFORCE (the score-function policy gradient) on a contextual bandit: a softmax
policy over arms given a context, actions and rewards drawn inside the objective from a
``np.random.default_rng`` the caller passes in, a running-mean baseline, and the
surrogate loss whose gradient is the policy gradient estimate."""

import numpy as np
from scipy.special import log_softmax

import myc

ARM_MEANS = np.array([[0.2, 0.5, 0.9], [0.8, 0.3, 0.1]])


def policy_logits(theta, contexts):
    return contexts @ theta


def surrogate_loss(theta, contexts, rng, baseline=0.4):
    logp = log_softmax(policy_logits(theta, contexts), axis=1)
    probs = np.exp(logp)
    n, k = probs.shape
    actions = np.zeros(n, dtype=np.int64)
    for i in range(n):
        actions[i] = rng.choice(k, p=probs[i] / np.sum(probs[i]))
    mean_reward = contexts @ ARM_MEANS
    rewards = mean_reward[np.arange(n), actions] + 0.1 * rng.standard_normal(n)
    chosen = logp[np.arange(n), actions]
    return -np.mean(chosen * (rewards - baseline))


def make_contexts(n=12, seed=0):
    rng = np.random.default_rng(seed)
    c = rng.uniform(size=(n, 2))
    return c / np.sum(c, axis=1, keepdims=True)


def case():
    theta = np.array([[0.1, -0.2, 0.3], [0.0, 0.4, -0.1]])
    return dict(fn=surrogate_loss, args=(theta, make_contexts(), np.random.default_rng(7)),
                argnums=0)


def train(steps=200, lr=0.5, seed=3):
    rng = np.random.default_rng(seed)
    theta = np.zeros((2, 3))
    contexts = make_contexts()
    g = myc.grad(surrogate_loss)
    for _ in range(steps):
        theta = theta - lr * g(theta, contexts, rng)
    return theta, contexts


if __name__ == "__main__":
    theta, contexts = train()
    print(np.exp(log_softmax(policy_logits(theta, contexts), axis=1))[:3])
