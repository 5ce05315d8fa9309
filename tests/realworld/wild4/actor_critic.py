"""Advantage actor-critic on a toy chain world: the parameters a nested dict
(``{"policy": {...}, "value": {...}}``), a softmax policy over per-state logits and a
linear critic on one-hot states, returns-to-go by a reversed loop with a discount,
advantages from the critic, log-probabilities picked by index, an entropy bonus and
the critic's squared error; episodes rolled out in NumPy with a ``default_rng``."""

import numpy as np

import myc

N_STATES, N_ACTIONS = 5, 2


def policy_logits(params, states):
    return params["policy"]["W"][states] + params["policy"]["b"]


def value(params, states):
    onehot = np.eye(N_STATES)[states]
    return onehot @ params["value"]["w"] + params["value"]["c"]


def returns_to_go(rewards, gamma=0.9):
    out = np.zeros(len(rewards))
    running = 0.0
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def a2c_loss(params, states, actions, rewards, beta=0.01, c_value=0.5):
    logits = policy_logits(params, states)
    logits = logits - np.max(logits, axis=1, keepdims=True)
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    G = returns_to_go(rewards)
    v = value(params, states)
    adv = G - v
    picked = logp[np.arange(len(actions)), actions]
    policy_loss = -np.mean(picked * adv)
    entropy = -np.mean(np.sum(np.exp(logp) * logp, axis=1))
    value_loss = np.mean(adv ** 2)
    return policy_loss + c_value * value_loss - beta * entropy


def rollout(params, rng, T=12):
    s, states, actions, rewards = 0, [], [], []
    for _ in range(T):
        lg = params["policy"]["W"][s] + params["policy"]["b"]
        p = np.exp(lg - lg.max())
        a = rng.choice(N_ACTIONS, p=p / p.sum())
        states.append(s)
        actions.append(a)
        s = min(s + 1, N_STATES - 1) if a == 1 else max(s - 1, 0)
        rewards.append(1.0 if s == N_STATES - 1 else 0.0)
    return np.array(states), np.array(actions), np.array(rewards)


def init_params(seed=0):
    r = np.random.default_rng(seed)
    return {"policy": {"W": 0.1 * r.standard_normal((N_STATES, N_ACTIONS)),
                       "b": np.zeros(N_ACTIONS)},
            "value": {"w": 0.1 * r.standard_normal(N_STATES), "c": 0.0}}


def train(episodes=30, lr=0.1):
    params, rng = init_params(), np.random.default_rng(1)
    g = myc.grad(a2c_loss)
    for _ in range(episodes):
        grads = g(params, *rollout(params, rng))
        params = {k: {n: params[k][n] - lr * grads[k][n] for n in params[k]} for k in params}
    return params


def case():
    params = init_params()
    return dict(fn=a2c_loss, args=(params, *rollout(params, np.random.default_rng(4))),
                argnums=0)


if __name__ == "__main__":
    print(train())
