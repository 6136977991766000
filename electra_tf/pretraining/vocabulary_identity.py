"""Which vocabulary a run or model folder was trained with (the sha256 its run config records, else its
`vocab.txt`'s), and the check that a run starting from it, resuming it or fine-tuning it reads the same tokens: one
of the same size with other lines would silently give each word another word's embedding.

Example:
>>> import os, tempfile
>>> from electra_tf.text.vocabulary import save_vocabulary, vocabulary_hash
>>> folder, tokens = tempfile.mkdtemp(), ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]
>>> save_vocabulary(tokens, os.path.join(folder, "vocab.txt"))
>>> trained = recorded_vocabulary(folder)
>>> trained == (vocabulary_hash(tokens), os.path.join(folder, "vocab.txt"))
True
>>> check_same_vocabulary("--vocab_file=swapped.txt", vocabulary_hash(tokens[:5] + ["b", "a"]), trained,
...                       "the start", "pass that vocabulary")  # doctest: +ELLIPSIS
Traceback (most recent call last):
ValueError: --vocab_file=swapped.txt (sha256 ...) is not the vocabulary the start was trained with (.../vocab.txt: \
sha256 ...); pass that vocabulary
"""

import os

import numpy as np

from electra_tf.checkpoints.ours import RUN_MODEL_FOLDERS, candidate_folders, run_config_file
from electra_tf.config import run_config_vocabulary
from electra_tf.text.vocabulary import VOCAB_FILE, load_vocabulary, vocabulary_hash


def recorded_vocabulary(path):
    """`(sha256, file)` of the vocabulary the run or model at `path` (a folder, or a checkpoint prefix) was trained
    with; None when no local file says (a hub id, a bare checkpoint)."""
    folder = _run_folder(path)
    if folder is None:  # a hub id
        return None
    for candidate in (folder, *(os.path.join(folder, name) for name in RUN_MODEL_FOLDERS)):
        recorded = recorded_in_run_config(candidate)
        if recorded:
            return recorded
        if os.path.isfile(os.path.join(candidate, VOCAB_FILE)):
            return vocabulary_hash(os.path.join(candidate, VOCAB_FILE)), os.path.join(candidate, VOCAB_FILE)
    return None


def _run_folder(path):
    """The folder of the run or model at `path`; None for what is no local path (a hub id)."""
    if os.path.isdir(path):
        folder = path
    elif os.path.isfile(path) or os.path.isfile(path + ".index"):  # a file, or a checkpoint prefix
        folder = os.path.dirname(path)
    else:
        return None
    return os.path.dirname(folder) if os.path.basename(folder) == "checkpoints" else folder


def trained_tokens(path):
    """The tokens the run or model at `path` was trained with (a `vocab.txt` of the recorded hash); None when only
    their hash is known."""
    recorded, folder = recorded_vocabulary(path), _run_folder(path)
    for candidate in ([] if recorded is None else candidate_folders(folder)):
        vocab_file = os.path.join(candidate, VOCAB_FILE)
        if os.path.isfile(vocab_file) and vocabulary_hash(vocab_file) == recorded[0]:
            return load_vocabulary(vocab_file)
    return None


def vocabulary_rows(networks, vocab_size):
    """`(variable, its value now)` of each variable of `networks` with one row per token (word embeddings, output
    biases): taken from a new model, the rows `remap_start` gives the tokens a start did not hold."""
    found = {}
    for network in networks:
        for variable in network.weights:
            per_token = "word_embeddings" in variable.path or variable.path.endswith("output_bias")
            if per_token and variable.shape and variable.shape[0] == vocab_size:
                found.setdefault(id(variable), (variable, variable.numpy()))
    return list(found.values())


def remap_start(rows, init_checkpoint, tokens, vocab_file):
    """After a start from `init_checkpoint`, trained with other tokens than `tokens`: each of `rows` keeps the row of
    every token both vocabularies hold (matched by token) and the new row of the others; returns the line saying so
    (where the start's tokens are unknown, each id keeps its row)."""
    old = trained_tokens(init_checkpoint)
    if old is None:
        return (f"vocabulary change: the tokens {init_checkpoint} was trained with are not beside it (only their "
                f"hash): each id keeps its trained row under the token of {vocab_file} at that id")
    kept = 0
    for variable, fresh in rows:
        table, kept = remapped_rows(variable.numpy(), old, tokens, fresh)
        variable.assign(table)
    return (f"vocabulary change: {kept} of the {len(tokens)} tokens of {vocab_file} keep their embedding rows of "
            f"{init_checkpoint} (matched by token), {len(tokens) - kept} are initialised anew")


def recorded_in_run_config(folder):
    """`(sha256, file)` of the vocabulary the run config of `folder` records, or None."""
    config_file = run_config_file(folder)
    try:
        recorded = run_config_vocabulary(config_file) if os.path.isfile(config_file) else None
    except ValueError:  # not a run config: a Hugging Face folder's config.json
        return None
    return (recorded, config_file) if recorded else None


def check_same_vocabulary(named, sha256, trained, what, fix):
    """Refuses, in one line naming both files, the vocabulary `named` (of `sha256`) when it is not the one `what`
    was `trained` with (`recorded_vocabulary`'s answer; None: unknown, accepted); `fix` says what to do."""
    if trained is not None and trained[0] != sha256:
        raise ValueError(f"{named} (sha256 {sha256[:12]}) is not the vocabulary {what} was trained with "
                         f"({trained[1]}: sha256 {trained[0][:12]}); {fix}")


def check_model_vocabulary(path):
    """Refuses the model at `path` (a fine-tuning's `--init_checkpoint`) when the `vocab.txt` its tokenizer would
    read is not the vocabulary its run config records."""
    for folder in candidate_folders(path):
        vocab_file = os.path.join(folder, VOCAB_FILE)
        if os.path.isfile(vocab_file):
            check_same_vocabulary(vocab_file, vocabulary_hash(vocab_file), recorded_in_run_config(folder),
                                  f"--init_checkpoint {path}", f"put back the vocab.txt its run wrote to {folder} (and "
                                  "to fine-tune with other tokens, give them as --vocab_file with "
                                  "--allow_vocabulary_change)")
            return


def remapped_rows(rows, tokens, new_tokens, fresh):
    """The table `rows` of `tokens` for `new_tokens`: a token both hold keeps its row, the others take theirs of
    `fresh`. Returns the table and how many rows were kept.

    >>> table, kept = remapped_rows(np.array([[1.0], [2.0], [3.0]]), ["a", "b", "c"], ["c", "new", "a"],
    ...                             fresh=np.zeros((3, 1)))
    >>> table.ravel().tolist(), kept
    ([3.0, 0.0, 1.0], 2)
    """
    index = {token: i for i, token in enumerate(tokens)}
    pairs = [(i, index[token]) for i, token in enumerate(new_tokens) if token in index]
    table = np.array(fresh, copy=True)
    if pairs:
        new_ids, old_ids = map(list, zip(*pairs))
        table[new_ids] = np.asarray(rows)[old_ids]
    return table, len(pairs)
