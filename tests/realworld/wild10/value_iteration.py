"""Value iteration on a FrozenLake-style table, as RL tutorials write it against the
Gym convention: ``P[s][a]`` is a list of ``(prob, next_state, reward, done)`` tuples
built by Python loops, the Bellman backup ``sum(prob * (reward + gamma * V[s_] * (not
done)) for prob, s_, reward, done in P[s][a])`` over actions, ``V[s] = max(...)`` in
place, ``delta = max(delta, abs(v - V[s]))`` and ``while True: ... if delta < theta:
break``, then the greedy policy by ``np.argmax``.  The per-state rewards are the
parameters: the objective is the start state's value (differentiated through the
sweeps; the number of sweeps is held where the tolerance is met)."""

import numpy as np

NROW, NCOL = 3, 3
HOLES = {4}
GOAL = 8


def build_transitions(reward, slip=0.2):
    nS, nA = NROW * NCOL, 4
    P = {s: {a: [] for a in range(nA)} for s in range(nS)}
    moves = [(0, -1), (1, 0), (0, 1), (-1, 0)]  # left, down, right, up
    for s in range(nS):
        row, col = divmod(s, NCOL)
        for a in range(nA):
            if s in HOLES or s == GOAL:
                P[s][a].append((1.0, s, 0.0, True))
                continue
            for b, prob in ((a, 1 - slip), ((a + 1) % 4, slip / 2), ((a - 1) % 4, slip / 2)):
                dr, dc = moves[b]
                nr = min(max(row + dr, 0), NROW - 1)
                nc = min(max(col + dc, 0), NCOL - 1)
                s_ = nr * NCOL + nc
                done = s_ in HOLES or s_ == GOAL
                P[s][a].append((prob, s_, reward[s_], done))
    return P


def value_iteration(P, nS, nA, gamma=0.9, theta=1e-8):
    V = np.zeros(nS)
    while True:
        delta = 0
        for s in range(nS):
            v = V[s]
            V[s] = max(sum(prob * (r + gamma * V[s_] * (not done))
                           for prob, s_, r, done in P[s][a]) for a in range(nA))
            delta = max(delta, abs(v - V[s]))
        if delta < theta:
            break
    policy = np.zeros(nS, dtype=int)
    for s in range(nS):
        q = [sum(prob * (r + gamma * V[s_] * (not done)) for prob, s_, r, done in P[s][a])
             for a in range(nA)]
        policy[s] = np.argmax(q)
    return V, policy


def start_value(reward):
    P = build_transitions(reward)
    V, policy = value_iteration(P, NROW * NCOL, 4)
    return V[0] + 0.5 * V[3]


def case():
    reward = np.full(NROW * NCOL, -0.02)
    reward[GOAL] = 1.0
    reward[4] = -1.0
    # (equal step costs make actions tie exactly: max's derivative is then CPython's
    # first action's, where central differences average two: jitter breaks the ties)
    reward += np.random.default_rng(5).normal(scale=0.01, size=NROW * NCOL)
    return dict(fn=start_value, args=(reward,), argnums=0, fd_tol=1e-4)
