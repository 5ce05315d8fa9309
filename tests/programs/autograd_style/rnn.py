"""A recurrent network: dict parameters, hidden states and outputs collected in lists."""

import numpy as np


def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def rnn_predict(params, inputs):
    def update_rnn(input, hiddens):
        return np.tanh(concat_and_multiply(params["change"], input, hiddens))

    def hiddens_to_output_probs(hiddens):
        output = concat_and_multiply(params["predict"], hiddens)
        return output - np.log(np.sum(np.exp(output), axis=1, keepdims=True))

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params["init hiddens"], num_sequences, axis=0)
    output = [hiddens_to_output_probs(hiddens)]
    for input in inputs:
        hiddens = update_rnn(input, hiddens)
        output.append(hiddens_to_output_probs(hiddens))
    return output


def rnn_log_likelihood(params, inputs, targets):
    logprobs = rnn_predict(params, inputs)
    loglik = 0.0
    num_time_steps, num_examples, _ = inputs.shape
    for t in range(num_time_steps):
        loglik += np.sum(logprobs[t] * targets[t])
    return -loglik / (num_time_steps * num_examples)


def stacked_outputs(params, inputs):
    return np.stack(rnn_predict(params, inputs))


_rs = np.random.RandomState(2)
_D, _H, _O = 3, 4, 3
PARAMS = {"init hiddens": 0.3 * _rs.randn(1, _H),
          "change": 0.3 * _rs.randn(_D + _H + 1, _H),
          "predict": 0.3 * _rs.randn(_H + 1, _O)}
INPUTS = _rs.randn(5, 2, _D)
TARGETS = np.eye(_O)[_rs.randint(0, _O, (5, 2))]
CASE = dict(fn=rnn_log_likelihood, args=(PARAMS, INPUTS, TARGETS), argnums=0)
