"""A run's vocabulary identity: a resume or a start from weights trained with a vocabulary of the same size but other
tokens (two words swapped) is refused in one line naming both files, unless --allow_vocabulary_change says it is
meant; runs that recorded no vocabulary keep resuming, with one warning; a fine-tuning's `--init_checkpoint` whose
vocab.txt is not the one its run recorded is refused."""

import json
import os
import shutil

import numpy as np
import pytest

from electra_tf.config import load_run_config, run_config_vocabulary
from electra_tf.finetuning.run import RunOptions as FinetuningOptions
from electra_tf.finetuning.run import run_finetuning
from electra_tf.models.encoder import ElectraModel
from electra_tf.pretraining.run import RunOptions, run_pretraining
from electra_tf.pretraining.vocabulary_identity import check_model_vocabulary, recorded_vocabulary
from electra_tf.text.vocabulary import load_vocabulary, save_vocabulary, vocabulary_hash


def _configs(vocabulary, train_steps=1):
    model, pretraining = load_run_config("electra_tiny")
    return (model.replace(vocab_size=len(vocabulary)),
            pretraining.replace(train_steps=train_steps, max_seq_length=32, batch_size=4, warmup_steps=0))


def _run(model_dir, vocab_file, text, train_steps=1, **options):
    vocabulary = load_vocabulary(vocab_file)
    return run_pretraining(*_configs(vocabulary, train_steps), RunOptions(
        model_dir=str(model_dir), vocab_file=vocab_file, train_text_files=text, **options), vocabulary)


@pytest.fixture(scope="module")
def finished(tmp_path_factory, fixture_vocab):
    """A finished one-step run on the fixture vocabulary, and a copy of that vocabulary with two words swapped."""
    folder = tmp_path_factory.mktemp("identity")
    tokens = load_vocabulary(fixture_vocab)
    swapped = [*tokens]
    swapped[1000], swapped[1001] = tokens[1001], tokens[1000]
    save_vocabulary(swapped, str(folder / "swapped.txt"))
    assert _run(folder / "run", fixture_vocab, fixture_vocab).step == 1
    return folder / "run", str(folder / "swapped.txt")


def test_a_run_records_its_vocabulary(finished, fixture_vocab):
    model_dir, _ = finished
    wanted = vocabulary_hash(fixture_vocab)
    assert run_config_vocabulary(str(model_dir / "run_config.json")) == wanted
    assert run_config_vocabulary(str(model_dir / "final" / "run_config.json")) == wanted
    assert not (model_dir / "config.json").exists()


def test_a_resume_with_other_tokens_is_refused_naming_both_files_unless_meant(finished, fixture_vocab, tmp_path,
                                                                              capsys):
    model_dir, swapped = finished
    copy = tmp_path / "run"
    shutil.copytree(model_dir, copy)
    with pytest.raises(ValueError) as refused:
        _run(copy, swapped, fixture_vocab, train_steps=2)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"--vocab_file={swapped} (sha256 ")
    assert f"is not the vocabulary the run in {copy} was trained with ({copy / 'run_config.json'}: sha256 " in message
    assert message.endswith("--allow_vocabulary_change to train on with these tokens at its embedding rows")
    assert json.loads((copy / "final" / "run_config.json").read_text())["pretraining"]["train_steps"] == 1
    result = _run(copy, swapped, fixture_vocab, train_steps=2, allow_vocabulary_change=True)
    assert result.step == 2 and "warning:" not in capsys.readouterr().out
    assert run_config_vocabulary(str(copy / "run_config.json")) == vocabulary_hash(swapped)  # now this run's


def test_a_run_that_recorded_no_vocabulary_resumes_with_one_warning(finished, fixture_vocab, tmp_path, capsys):
    model_dir, _ = finished
    copy = tmp_path / "run"
    shutil.copytree(model_dir, copy)
    values = json.loads((copy / "run_config.json").read_text())
    del values["vocabulary"]
    (copy / "config.json").write_text(json.dumps(values))  # as runs wrote it before: config.json, no vocabulary
    (copy / "run_config.json").unlink()
    capsys.readouterr()
    assert _run(copy, fixture_vocab, fixture_vocab).step == 1  # already complete
    warnings = [line for line in capsys.readouterr().out.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: {copy / 'config.json'} records no vocabulary (the run began before runs recorded "
                        f"theirs): {fixture_vocab} is taken to be the one it was trained with"]
    assert run_config_vocabulary(str(copy / "run_config.json")) == vocabulary_hash(fixture_vocab)


def test_an_init_checkpoint_of_other_tokens_is_refused_unless_meant_then_rows_follow_their_tokens(
        finished, fixture_vocab, tmp_path, capsys):
    model_dir, swapped = finished
    for start in (model_dir, model_dir / "final"):  # another run's folder, or its final models
        with pytest.raises(ValueError, match=rf"^--vocab_file={swapped} \(sha256 \w+\) is not the vocabulary "
                                             rf"--init_checkpoint {start} was trained with \({start}/run_config.json: "
                                             r"sha256 \w+\); pass that vocab.txt, or --allow_vocabulary_change"):
            _run(tmp_path / "new", swapped, fixture_vocab, init_checkpoint=str(start))
        assert not (tmp_path / "new").exists()
    capsys.readouterr()
    started = _run(tmp_path / "meant", swapped, fixture_vocab, init_checkpoint=str(model_dir),
                   allow_vocabulary_change=True)
    assert started.step == 1
    assert f"vocabulary change: {len(load_vocabulary(swapped))} of the {len(load_vocabulary(swapped))} tokens of " \
        f"{swapped} keep their embedding rows of {model_dir} (matched by token), 0 are initialised anew" \
        in capsys.readouterr().out
    old, new = (ElectraModel.from_pretrained(str(folder / "final")).embedding.word_embeddings.embeddings.numpy()
                for folder in (model_dir, tmp_path / "meant"))
    # Each swapped word keeps its own trained row (then one training step moves every row a little).
    assert np.abs(new[1000] - old[1001]).max() < 0.2 * np.abs(new[1000] - old[1000]).max()
    assert np.abs(new[1001] - old[1000]).max() < 0.2 * np.abs(new[1001] - old[1001]).max()


def test_a_finetuning_init_checkpoint_whose_vocab_txt_was_replaced_is_refused(finished, tmp_path):
    model_dir, swapped = finished
    final = tmp_path / "final"
    shutil.copytree(model_dir / "final", final)
    check_model_vocabulary(str(final))  # as the run wrote it
    shutil.copyfile(swapped, final / "vocab.txt")
    message = (rf"^{final}/vocab.txt \(sha256 \w+\) is not the vocabulary --init_checkpoint {final} was trained with "
               rf"\({final}/run_config.json: sha256 \w+\); put back the vocab.txt its run wrote to {final} \(and to "
               r"fine-tune with other tokens, give them as --vocab_file with --allow_vocabulary_change\)$")
    with pytest.raises(ValueError, match=message):
        run_finetuning("sst2", FinetuningOptions(init_checkpoint=str(final), output_dir=str(tmp_path / "out")))
    assert not (tmp_path / "out").exists()
    (final / "run_config.json").write_text(json.dumps(  # a folder that records none: its vocab.txt is taken
        {key: value for key, value in json.loads((final / "run_config.json").read_text()).items()
         if key != "vocabulary"}))
    check_model_vocabulary(str(final))
    assert os.path.exists(final / "vocab.txt")


def test_a_hub_id_is_not_read_as_a_local_folder(tmp_path, monkeypatch, fixture_vocab):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "google").mkdir()
    shutil.copyfile(fixture_vocab, tmp_path / "google" / "vocab.txt")
    assert recorded_vocabulary("google/electra-small-discriminator") is None  # the hub's, not ./google's
    assert recorded_vocabulary("google") == (vocabulary_hash(fixture_vocab), os.path.join("google", "vocab.txt"))
