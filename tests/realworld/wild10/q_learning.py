"""Tabular Q-learning with epsilon-greedy exploration on a small gridworld, the way RL
course notebooks write it: ``Q = np.zeros((n_states, n_actions))``, ``if rng.random()
< epsilon: a = rng.integers(n_actions) else: a = np.argmax(Q[s])``, the update ``Q[s,
a] += alpha * (r + gamma * np.max(Q[s_next]) * (not done) - Q[s, a])``, and a
``step`` function on a grid with walls.  The rewards per cell are the parameters: the
objective is the greedy value of the start state after a few episodes, differentiated
through the learning (argmax choices are piecewise constant)."""

import numpy as np

ROWS, COLS = 3, 4
ACTIONS = [(-1, 0), (1, 0), (0, -1), (0, 1)]  # up, down, left, right
GOAL = (0, 3)


def step(state, action, cell_reward):
    r, c = divmod(state, COLS)
    dr, dc = ACTIONS[action]
    nr, nc = r + dr, c + dc
    if not (0 <= nr < ROWS and 0 <= nc < COLS) or (nr, nc) == (1, 1):  # off grid or wall
        nr, nc = r, c
    next_state = nr * COLS + nc
    done = (nr, nc) == GOAL
    reward = cell_reward[next_state] - 0.04
    return next_state, reward, done


def q_learning(cell_reward, rng, episodes=6, alpha=0.5, gamma=0.9, epsilon=0.3,
               max_steps=15):
    Q = np.zeros((ROWS * COLS, len(ACTIONS)))
    for episode in range(episodes):
        s = 2 * COLS  # bottom-left corner
        for t in range(max_steps):
            if rng.random() < epsilon:
                a = rng.integers(len(ACTIONS))
            else:
                a = np.argmax(Q[s])
            s_next, r, done = step(s, a, cell_reward)
            target = r + gamma * np.max(Q[s_next]) * (not done)
            Q[s, a] += alpha * (target - Q[s, a])
            s = s_next
            if done:
                break
    return Q


def start_value(cell_reward, rng):
    Q = q_learning(cell_reward, rng)
    return np.max(Q[2 * COLS]) + 0.1 * np.sum(Q)


def case():
    cell_reward = np.zeros(ROWS * COLS)
    cell_reward[GOAL[0] * COLS + GOAL[1]] = 1.0
    cell_reward[1 * COLS + 3] = -1.0
    cell_reward += np.random.default_rng(3).normal(scale=0.05, size=ROWS * COLS)
    return dict(fn=start_value, args=(cell_reward, np.random.default_rng(8)), argnums=0)
