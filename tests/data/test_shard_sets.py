"""A shard set is checked whole before anything reads it: against its folder's manifest.json, or, without one,
against its shards' `-of-N` names (a build stopped part-way leaves 2 of 8 shards and no manifest)."""

import re
import shutil

import pytest

from electra_tf.data.tfrecord_dataset import pretraining_dataset
from electra_tf.data.pretraining_data import MANIFEST, build_pretraining_shards, shard_name

SEQ = 32


@pytest.fixture(scope="module")
def shards(tmp_path_factory, fixture_vocab):
    folder = tmp_path_factory.mktemp("shard_set")
    corpus = folder / "corpus.txt"
    corpus.write_text("".join(f"the cat sat on the mat number {i}. it was a good day.\n\n" for i in range(40)))
    build_pretraining_shards([str(corpus)], fixture_vocab, str(folder / "all"), max_seq_length=SEQ, num_shards=8)
    return folder / "all"


def copy_of(shards, folder, indices, manifest):
    folder.mkdir()
    for i in indices:
        shutil.copy(shards / shard_name(i, 8), folder)
    if manifest:
        shutil.copy(shards / MANIFEST, folder)
    return folder


def test_two_of_eight_shards_without_a_manifest_are_refused_naming_the_missing_ones(shards, tmp_path, run_tool,
                                                                                    fixture_vocab):
    partial = copy_of(shards, tmp_path / "partial", [0, 1], manifest=False)
    message = (f"{partial}: an incomplete shard set: 6 of the 8 shards pretrain_data.tfrecord-*-of-00008 are missing "
               "(e.g. ['pretrain_data.tfrecord-00002-of-00008', 'pretrain_data.tfrecord-00003-of-00008', "
               "'pretrain_data.tfrecord-00004-of-00008']) and there is no manifest.json")
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        pretraining_dataset(str(partial), batch_size=2, seq_length=SEQ)
    code, out, err = run_tool("run_pretraining", "--config=electra_tiny", f"--vocab_file={fixture_vocab}",
                              f"--train_files={partial}", f"--model_dir={tmp_path / 'run'}", f"--max_seq_length={SEQ}",
                              "--batch_size=2", "--train_steps=2")
    assert code == 2 and err.strip().splitlines() == [f"error: {message} (a build that did not finish?); run the "
                                                      "same electra-build-pretraining-data command again to finish it"]
    assert not (tmp_path / "run").exists(), "nothing is written before the check"


def test_with_a_manifest_every_listed_shard_is_there_and_no_other(shards, tmp_path):
    missing = copy_of(shards, tmp_path / "missing", range(7), manifest=True)
    with pytest.raises(ValueError, match=r"missing: 1 of the 8 shards its manifest\.json lists are missing "
                                         r"\(e\.g\. \['pretrain_data\.tfrecord-00007-of-00008'\]\)"):
        pretraining_dataset(str(missing), batch_size=2, seq_length=SEQ)
    mixed = copy_of(shards, tmp_path / "mixed", range(8), manifest=True)
    shutil.copy(shards / shard_name(0, 8), mixed / shard_name(0, 3))  # a shard of another build
    with pytest.raises(ValueError, match=r"mixed: 1 file\(s\) not among the shards its manifest\.json lists "
                                         r"\(another build's\? e\.g\. \['pretrain_data\.tfrecord-00000-of-00003'\]\)"):
        pretraining_dataset(f"{mixed}/*", batch_size=2, seq_length=SEQ)


def test_a_whole_set_and_part_of_a_whole_folder_are_read(shards):
    assert next(iter(pretraining_dataset(str(shards), batch_size=2, seq_length=SEQ)))["input_ids"].shape == (2, SEQ)
    # some shards of a complete folder (train on 0-6, evaluate on 7): the folder is whole, the choice deliberate
    pretraining_dataset(f"{shards}/*-0000[0-6]-of-*", batch_size=2, seq_length=SEQ, training=False)
