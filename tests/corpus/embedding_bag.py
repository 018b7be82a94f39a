"""A bag-of-embeddings text classifier: per-document sums of token embeddings by np.add.at (fastText style)."""
import numpy as np


def embedding_bag(E, tokens, offsets, n_docs):
    """Sum the embeddings of each document's tokens; offsets[i] is document i's first token."""
    doc_ids = np.zeros(len(tokens), dtype=int)
    doc_ids[offsets[1:]] = 1
    doc_ids = np.cumsum(doc_ids)
    sums = np.zeros((n_docs, E.shape[1]))
    np.add.at(sums, doc_ids, E[tokens])
    counts = np.bincount(doc_ids, minlength=n_docs)[:, None]
    return sums / counts


def accumulate(total, x):
    total += x


def bag_classifier_loss(E, W, tokens, offsets, labels):
    h = embedding_bag(E, tokens, offsets, len(labels))
    logits = h @ W
    logits = logits - logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(len(labels)), labels])


def pooled_loss(E, W, tokens, offsets, labels):
    """The same pooling written as a loop that accumulates into a buffer through a helper."""
    n_docs = len(labels)
    loss = 0.0
    for d in range(n_docs):
        end = offsets[d + 1] if d + 1 < n_docs else len(tokens)
        h = np.zeros(E.shape[1])
        for tok in tokens[offsets[d]:end]:
            accumulate(h, E[tok])
        h = h / (end - offsets[d])
        logits = h @ W
        loss = loss - (logits[labels[d]] - np.log(np.sum(np.exp(logits))))
    return loss / n_docs


def cases():
    rs = np.random.RandomState(50)
    vocab, dim, n_cls = 6, 3, 2
    E, W = rs.randn(vocab, dim), rs.randn(dim, n_cls)
    tokens = np.array([0, 3, 3, 1, 5, 2, 4])
    offsets = np.array([0, 3, 5])
    labels = np.array([1, 0, 1])
    return [(bag_classifier_loss, (E, W, tokens, offsets, labels)),
            (pooled_loss, (E, W, tokens, offsets, labels))]
