"""REINFORCE with a linear-softmax policy, as tutorials write it for a small discrete
environment: the environment is a Python class with ``reset()``/``step(action)``
returning ``(state, reward, done)``, the policy is ``softmax(theta.T @ phi(s))`` with
one-hot features ``np.eye(n)[s]``, actions drawn by ``rng.choice(n_actions, p=probs)``
from a Generator passed in, the returns built backwards with ``returns.insert(0, G)``
and normalized, and the hand-written score ``np.outer(phi, onehot - probs)``.  The loss
``-sum(log pi(a|s) * G)`` is differentiated by ``myc.grad`` and compared with the
tutorial's own gradient (tests)."""

import numpy as np


class ChainEnv:
    """A corridor of ``n`` cells: action 1 moves right, 0 moves left; reaching the
    right end pays 1 and ends the episode; each step costs 0.01."""

    def __init__(self, n=5, max_steps=12):
        self.n = n
        self.max_steps = max_steps

    def reset(self):
        self.state = 0
        self.t = 0
        return self.state

    def step(self, action):
        self.t += 1
        if action == 1:
            self.state = min(self.state + 1, self.n - 1)
        else:
            self.state = max(self.state - 1, 0)
        done = self.state == self.n - 1 or self.t >= self.max_steps
        reward = 1.0 if self.state == self.n - 1 else -0.01
        return self.state, reward, done


def softmax(z):
    e = np.exp(z - np.max(z))
    return e / e.sum()


def features(s, n):
    return np.eye(n)[s]


def policy(theta, s, n):
    return softmax(theta.T @ features(s, n))


def run_episode(theta, env, rng):
    states, actions, rewards = [], [], []
    s = env.reset()
    done = False
    while not done:
        probs = policy(theta, s, env.n)
        a = rng.choice(len(probs), p=probs)
        s_next, r, done = env.step(a)
        states.append(s)
        actions.append(a)
        rewards.append(r)
        s = s_next
    return states, actions, rewards


def discounted_returns(rewards, gamma=0.9):
    returns = []
    G = 0.0
    for r in reversed(rewards):
        G = r + gamma * G
        returns.insert(0, G)
    returns = np.array(returns)
    return (returns - returns.mean()) / (returns.std() + 1e-9)


def reinforce_loss(theta, env, rng):
    states, actions, rewards = run_episode(theta, env, rng)
    returns = discounted_returns(rewards)
    loss = 0.0
    for s, a, G in zip(states, actions, returns):
        loss = loss - np.log(policy(theta, s, env.n)[a]) * G
    return loss


def reinforce_gradient(theta, env, rng):
    """The tutorial's score function: d log pi(a|s) / d theta = outer(phi, onehot - pi)."""
    states, actions, rewards = run_episode(theta, env, rng)
    returns = discounted_returns(rewards)
    grad = np.zeros_like(theta)
    for s, a, G in zip(states, actions, returns):
        probs = policy(theta, s, env.n)
        dsoftmax = -probs
        dsoftmax[a] += 1
        grad += np.outer(features(s, env.n), dsoftmax) * G
    return -grad


def case():
    theta = np.random.default_rng(4).normal(scale=0.3, size=(5, 2))
    return dict(fn=reinforce_loss, args=(theta, ChainEnv(), np.random.default_rng(21)),
                argnums=0)
