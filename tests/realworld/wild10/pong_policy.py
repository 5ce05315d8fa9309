"""A policy-gradient network in the style of the well-known "pong from pixels" script:
a two-layer policy with the hidden ReLU written ``h[h < 0] = 0``, an episode played by
a loop that samples ``action = 2 if rng.uniform() < aprob else 3`` and appends
observations, hidden states, ``y - aprob`` and rewards to lists, ``np.vstack`` of the
episode lists, ``discount_rewards`` running backwards with the reset at each nonzero
reward, the standardized returns, and the hand-written ``policy_backward`` with
``np.outer``.  The game is replaced by a toy: the "frame" is a fixed feature row per
step and the reward is +1/-1 when the action matches a hidden rule.  ``myc.grad`` of
the surrogate (the log-likelihood of the sampled actions weighted by the advantages)
equals the script's own backward pass (tests)."""

import numpy as np

H = 6  # hidden units
D = 8  # input size
gamma = 0.99


def init_model(seed=2):
    rng = np.random.default_rng(seed)
    model = {}
    model["W1"] = rng.standard_normal((H, D)) / np.sqrt(D)  # "Xavier" initialization
    model["W2"] = rng.standard_normal(H) / np.sqrt(H)
    return model


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))  # sigmoid "squashing" function to interval [0,1]


def discount_rewards(r):
    """take 1D float array of rewards and compute discounted reward"""
    discounted_r = np.zeros_like(r)
    running_add = 0
    for t in reversed(range(0, r.size)):
        if r[t] != 0:
            running_add = 0  # reset the sum, since this was a game boundary
        running_add = running_add * gamma + r[t]
        discounted_r[t] = running_add
    return discounted_r


def policy_forward(model, x):
    h = np.dot(model["W1"], x)
    h[h < 0] = 0  # ReLU nonlinearity
    logp = np.dot(model["W2"], h)
    p = sigmoid(logp)
    return p, h  # return probability of taking action 2, and hidden state


def policy_backward(model, epx, eph, epdlogp):
    """backward pass. (eph is array of intermediate hidden states)"""
    dW2 = np.dot(eph.T, epdlogp).ravel()
    dh = np.outer(epdlogp, model["W2"])
    dh[eph <= 0] = 0  # backpro prelu
    dW1 = np.dot(dh.T, epx)
    return {"W1": dW1, "W2": dW2}


def play_episode(model, frames, rng):
    xs, hs, dlogps, drs, ys = [], [], [], [], []
    for t in range(frames.shape[0]):
        x = frames[t]
        aprob, h = policy_forward(model, x)
        action = 2 if rng.uniform() < aprob else 3  # roll the dice!
        xs.append(x)  # observation
        hs.append(h)  # hidden state
        y = 1 if action == 2 else 0  # a "fake label"
        ys.append(y)
        dlogps.append(y - aprob)  # grad that encourages the action that was taken
        reward = 0.0
        if t % 5 == 4:  # a point ends every five frames
            reward = 1.0 if (x[0] > 0) == (action == 2) else -1.0
        drs.append(reward)
    epx = np.vstack(xs)
    eph = np.vstack(hs)
    epdlogp = np.vstack(dlogps)
    epr = np.vstack(drs)
    return epx, eph, epdlogp, epr, np.array(ys)


def advantages(epr):
    discounted_epr = discount_rewards(epr)
    # standardize the rewards to be unit normal (helps control the gradient estimator variance)
    discounted_epr -= np.mean(discounted_epr)
    discounted_epr /= np.std(discounted_epr)
    return discounted_epr


def surrogate(model, frames, rng):
    """The log-likelihood of the actions taken, weighted by the advantages: its gradient
    is what the script's ``policy_backward(eph, epdlogp * discounted_epr)`` computes."""
    epx, eph, epdlogp, epr, ys = play_episode(model, frames, rng)
    adv = advantages(epr).ravel()
    h = np.dot(epx, model["W1"].T)
    h[h < 0] = 0
    p = sigmoid(np.dot(h, model["W2"]))
    loglik = ys * np.log(p) + (1 - ys) * np.log(1 - p)
    return np.sum(loglik * adv)


def hand_gradient(model, frames, rng):
    epx, eph, epdlogp, epr, ys = play_episode(model, frames, rng)
    discounted_epr = advantages(epr)
    epdlogp *= discounted_epr  # modulate the gradient with advantage (PG magic happens right here.)
    return policy_backward(model, epx, eph, epdlogp)


def make_frames(T=20, seed=5):
    return np.random.default_rng(seed).standard_normal((T, D))


def case():
    return dict(fn=surrogate, args=(init_model(), make_frames(), np.random.default_rng(11)),
                argnums=0)
