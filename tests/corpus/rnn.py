"""A character-level recurrent neural net, in the style of autograd's examples/rnn.py."""
import numpy as np


def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)   # Output ranges from 0 to 1.


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def create_rnn_params(input_size, state_size, output_size,
                      param_scale=0.1, rs=np.random.RandomState(0)):
    return {'init hiddens': rs.randn(1, state_size) * param_scale,
            'change':       rs.randn(input_size + state_size + 1, state_size) * param_scale,
            'predict':      rs.randn(state_size + 1, output_size) * param_scale}


def rnn_predict(params, inputs):
    def update_rnn(input, hiddens):
        return np.tanh(concat_and_multiply(params['change'], input, hiddens))

    def hiddens_to_output_probs(hiddens):
        output = concat_and_multiply(params['predict'], hiddens)
        return output - logsumexp(output, axis=1, keepdims=True)     # Normalize log-probs.

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params['init hiddens'], num_sequences, axis=0)
    output = [hiddens_to_output_probs(hiddens)]

    for input in inputs:  # Iterate over time steps.
        hiddens = update_rnn(input, hiddens)
        output.append(hiddens_to_output_probs(hiddens))
    return output


def logsumexp(X, axis, keepdims=False):
    max_X = np.max(X, axis=axis, keepdims=True)
    return max_X + np.log(np.sum(np.exp(X - max_X), axis=axis, keepdims=keepdims))


def rnn_log_likelihood(params, inputs, targets):
    logprobs = rnn_predict(params, inputs)
    loglik = 0.0
    num_time_steps, num_examples, _ = inputs.shape
    for t in range(num_time_steps):
        loglik += np.sum(logprobs[t] * targets[t])
    return loglik / (num_time_steps * num_examples)


def training_loss(params, inputs, targets):
    return -rnn_log_likelihood(params, inputs, targets)


def cases():
    rs = np.random.RandomState(2)
    params = create_rnn_params(input_size=3, state_size=4, output_size=3, param_scale=0.5)
    seq = rs.randint(0, 3, size=(4, 2))
    inputs = np.eye(3)[seq]             # (time, examples, one-hot)
    targets = np.eye(3)[np.roll(seq, -1, axis=0)]
    return [(training_loss, (params, inputs, targets))]
