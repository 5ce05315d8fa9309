"""A tenth corpus: reinforcement learning and sequence/scientific teaching code -- a
pong-style policy gradient with its hand-written backward pass, REINFORCE with a softmax
policy and an environment class, linear TD(lambda), tabular Q-learning, an LSTM with
hand-written backpropagation through time, attention from scratch, a Kalman filter with
missing observations, a Hopfield network, Metropolis sampling, an explicit heat-equation
stepper, the logistic map's Lyapunov exponent and Gym-style value iteration -- written
for this repository (none copied), run unchanged by myc: see README.md here and
docs/realworld.md."""

PROGRAMS = (
    "pong_policy", "reinforce_chain", "td_lambda", "q_learning", "lstm_bptt",
    "attention_scratch", "kalman_missing", "hopfield", "metropolis", "heat_ftcs",
    "logistic_lyapunov", "value_iteration",
)
