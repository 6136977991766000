"""Fine-tuning with another vocabulary than the checkpoint's, when meant (`--allow_vocabulary_change`): the trials
start from the checkpoint's encoder with the rows of the tokens both vocabularies hold (matched by string), the
others initialised anew, written once as `<output_dir>/start` (docs/finetuning.md).

Example:
>>> tokens = changed_vocabulary("runs/small/final", "vocab_new.txt", allowed=True)  # doctest: +SKIP
>>> start_folder("runs/small/final", tokens, "vocab_new.txt", "runs/sst2", seed=0)  # doctest: +SKIP
vocabulary change: 1416 of the 1420 tokens of vocab_new.txt keep their embedding rows of runs/small/final \
(matched by token), 4 are initialised anew; the trials start from runs/sst2/start
'runs/sst2/start'
"""

import os

import keras

from electra_tf.checkpoints.tokenizer_files import load_tokenizer
from electra_tf.models.encoder import ElectraModel
from electra_tf.pretraining.vocabulary_identity import check_same_vocabulary, recorded_vocabulary, remapped_rows
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import load_vocabulary, vocabulary_hash

# The folder, in a run's output_dir, that its trials start from when the vocabulary changed.
START = "start"


def changed_vocabulary(init_checkpoint, vocab_file, allowed):
    """The tokens of `vocab_file` when they are not those `init_checkpoint` was trained with (None when they are,
    or without a `vocab_file`); refused in one line naming both unless `allowed` (`--allow_vocabulary_change`)."""
    if vocab_file is None:
        return None
    tokens, own = load_vocabulary(vocab_file), load_tokenizer(init_checkpoint).get_vocabulary()
    if tokens == own:
        return None
    if not allowed:
        recorded = recorded_vocabulary(init_checkpoint) or (vocabulary_hash(own), f"{init_checkpoint}'s vocabulary")
        check_same_vocabulary(f"--vocab_file={vocab_file}", vocabulary_hash(tokens), recorded,
                              f"--init_checkpoint {init_checkpoint}",
                              "leave out --vocab_file to fine-tune with its own, or pass --allow_vocabulary_change to "
                              "keep the embedding rows of the tokens both hold and initialise the others anew")
    return tokens


def start_folder(init_checkpoint, tokens, vocab_file, output_dir, seed, report=print):
    """Where the trials start: `init_checkpoint` itself, or for other `tokens` (`changed_vocabulary`'s) the folder
    `<output_dir>/start` written here, the checkpoint's encoder with its embedding rows re-mapped to `tokens` (the
    new rows drawn with `seed`) beside their vocab.txt (the checkpoint's casing)."""
    if tokens is None:
        return init_checkpoint
    own = load_tokenizer(init_checkpoint)
    encoder = ElectraModel.from_pretrained(init_checkpoint, preprocessor=None)
    keras.utils.set_random_seed(seed)
    changed = ElectraModel(encoder.config.replace(vocab_size=len(tokens)))
    table = changed.embedding.word_embeddings.embeddings
    for variable, value in zip(changed.weights, encoder.weights, strict=True):
        if variable is not table:
            variable.assign(value)
    rows, kept = remapped_rows(encoder.embedding.word_embeddings.embeddings.numpy(), own.get_vocabulary(), tokens,
                               fresh=table.numpy())
    table.assign(rows)
    folder = os.path.join(output_dir, START)
    changed.save_pretrained(folder, tokenizer=WordPieceTokenizer(tokens, lowercase=own.lowercase,
                                                                 strip_accents=own.strip_accents),
                            base_model=init_checkpoint)
    report(f"vocabulary change: {kept} of the {len(tokens)} tokens of {vocab_file} keep their embedding rows of "
           f"{init_checkpoint} (matched by token), {len(tokens) - kept} are initialised anew; the trials start from "
           f"{folder}")
    return folder
