"""Karpathy's min-char-rnn.py loss function: dicts of per-step values keyed by time, one-hot by item writes."""
import numpy as np

vocab_size, hidden_size = 4, 5


def lossFun(inputs, targets, hprev, Wxh, Whh, Why, bh, by):
    """
    inputs,targets are both list of integers.
    hprev is Hx1 array of initial hidden state
    returns the loss
    """
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0
    # forward pass
    for t in range(len(inputs)):
        xs[t] = np.zeros((vocab_size, 1))  # encode in 1-of-k representation
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t-1]) + bh)  # hidden state
        ys[t] = np.dot(Why, hs[t]) + by  # unnormalized log probabilities for next chars
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))  # probabilities for next chars
        loss += -np.log(ps[t][targets[t], 0])  # softmax (cross-entropy loss)
    return loss


def cases():
    rs = np.random.RandomState(43)
    data = "abcabdcab"
    chars = sorted(set(data))
    char_to_ix = {ch: i for i, ch in enumerate(chars)}
    seq_length = 4
    inputs = [char_to_ix[ch] for ch in data[0:seq_length]]
    targets = [char_to_ix[ch] for ch in data[1:seq_length + 1]]
    Wxh = rs.randn(hidden_size, vocab_size) * 0.3
    Whh = rs.randn(hidden_size, hidden_size) * 0.3
    Why = rs.randn(vocab_size, hidden_size) * 0.3
    bh = np.zeros((hidden_size, 1))
    by = np.zeros((vocab_size, 1))
    hprev = 0.1 * rs.randn(hidden_size, 1)
    return [(lossFun, (inputs, targets, hprev, Wxh, Whh, Why, bh, by))]
