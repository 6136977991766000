"""Shared tiny fixtures. (The two logical CPU devices are set up by the root conftest.py.)"""

import numpy as np
import pytest

from electra_tf import ElectraConfig, PretrainingConfig

# Token ids of a tiny vocabulary: [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4, words from 5.
PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIAL_IDS = (PAD, CLS, SEP, MASK)
VOCAB_SIZE = 60


@pytest.fixture
def tiny_config():
    return ElectraConfig(vocab_size=VOCAB_SIZE, embedding_size=16, hidden_size=32, num_layers=2,
                         num_heads=2, intermediate_size=64, hidden_dropout=0.0, attention_dropout=0.0)


@pytest.fixture
def tiny_pretraining_config():
    return PretrainingConfig(max_seq_length=16, generator_hidden_size=0.5, learning_rate=1e-3)


def random_batch(batch_size=8, seq_length=16, seed=0, min_length=6):
    """Packed-looking examples: [CLS] words [SEP] then padding, with segment B on some."""
    rng = np.random.default_rng(seed)
    ids = np.zeros((batch_size, seq_length), np.int32)
    types = np.zeros_like(ids)
    for row in range(batch_size):
        length = int(rng.integers(min_length, seq_length + 1))
        ids[row, :length] = rng.integers(5, VOCAB_SIZE, size=length)
        ids[row, 0], ids[row, length - 1] = CLS, SEP
        if length >= 8 and row % 2:
            middle = length // 2
            ids[row, middle] = SEP
            types[row, middle + 1:length] = 1
    return {"input_ids": ids, "attention_mask": (ids != PAD).astype(np.int32), "token_type_ids": types}


FIXTURE_VOCAB = "tests/fixtures/tokenizer/vocab.txt"


def write_pretrained_dir(folder, hidden_size=32, seed=0):
    """A tiny pre-trained model folder as tools/run_pretraining.py writes `final/` (random weights, real vocab)."""
    import os
    import shutil

    import keras

    from electra_tf import ElectraDiscriminator, save_run_config
    from electra_tf.vocabulary import load_vocabulary

    keras.utils.set_random_seed(seed)
    config = ElectraConfig(vocab_size=len(load_vocabulary(FIXTURE_VOCAB)), embedding_size=16,
                           hidden_size=hidden_size, num_layers=2, num_heads=2, intermediate_size=2 * hidden_size,
                           max_position_embeddings=128)
    os.makedirs(folder, exist_ok=True)
    ElectraDiscriminator(config).save(os.path.join(folder, "discriminator.keras"))
    save_run_config(os.path.join(folder, "config.json"), config, PretrainingConfig())
    shutil.copyfile(FIXTURE_VOCAB, os.path.join(folder, "vocab.txt"))
    return str(folder)


@pytest.fixture(scope="session")
def tiny_pretrained_dir(tmp_path_factory):
    return write_pretrained_dir(tmp_path_factory.mktemp("pretrained") / "final")
