"""Fine-tuning with another vocabulary than the checkpoint's: refused in one line naming both unless
--allow_vocabulary_change, which keeps the embedding row of each token both vocabularies hold (matched by token,
wherever its id) and initialises the others anew; a task made with another tokenizer than the model's is refused."""

import numpy as np
import pytest

from electra_tf import finetuning as finetuning_package
from electra_tf.checkpoints.tokenizer_files import load_tokenizer
from electra_tf.config import FinetuningConfig
from electra_tf.finetuning import finetune, make_task
from electra_tf.finetuning.run import RunOptions, run_finetuning
from electra_tf.models.encoder import ElectraModel
from electra_tf.text.tokenizer import WordPieceTokenizer
from electra_tf.text.vocabulary import load_vocabulary, save_vocabulary

SETTINGS = {"epochs": 1.0, "batch_size": 4, "max_seq_length": 16}


class Started(Exception):
    """What the replaced `finetune` raises once it has seen where a trial starts (the training is tested elsewhere)."""


@pytest.fixture(scope="module")
def changed(tmp_path_factory, tiny_pretrained_dir):
    """The checkpoint's vocabulary with two words swapped, one replaced and one added; a small training file."""
    folder = tmp_path_factory.mktemp("change")
    tokens = load_vocabulary(tiny_pretrained_dir + "/vocab.txt")
    new = [*tokens, "zzznewword"]
    new[1000], new[1001], new[1002] = tokens[1001], tokens[1000], "zzzother"
    save_vocabulary(new, str(folder / "vocab.txt"))
    words = " ".join(tokens[1000:1004])
    (folder / "train.csv").write_text("text,label\n" + "".join(f"{words} {i},{i % 2}\n" for i in range(8)))
    return str(folder / "vocab.txt"), str(folder / "train.csv"), tokens, new


def test_another_vocabulary_is_refused_naming_both_unless_meant_then_rows_follow_their_tokens(
        changed, tiny_pretrained_dir, tmp_path, capsys, monkeypatch):
    vocab_file, train, tokens, new = changed
    options = {"init_checkpoint": tiny_pretrained_dir, "train_file": train, "vocab_file": vocab_file}
    with pytest.raises(ValueError) as refused:
        run_finetuning("text_classification", RunOptions(output_dir=str(tmp_path / "refused"), **options), **SETTINGS)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"--vocab_file={vocab_file} (sha256 ")
    assert f"is not the vocabulary --init_checkpoint {tiny_pretrained_dir} was trained with " \
        f"({tiny_pretrained_dir}/vocab.txt: sha256 " in message
    assert message.endswith("pass --allow_vocabulary_change to keep the embedding rows of the tokens both hold and "
                            "initialise the others anew")
    assert not (tmp_path / "refused").exists()

    output, started = tmp_path / "meant", []

    def finetune(task, init_checkpoint, *args, **kwargs):
        started.append((init_checkpoint, task.tokenizer.get_vocabulary()))
        raise Started

    monkeypatch.setattr(finetuning_package, "finetune", finetune)
    with pytest.raises(Started):  # (a seed other than the tiny checkpoint's own random draw: new rows differ)
        run_finetuning("text_classification", RunOptions(output_dir=str(output), allow_vocabulary_change=True,
                                                         **options), seed=7, **SETTINGS)
    start = output / "start"
    assert started == [(str(start), new)]  # the trial starts from the re-mapped encoder, with the new tokens
    assert f"vocabulary change: {len(new) - 2} of the {len(new)} tokens of {vocab_file} keep their embedding rows of " \
        f"{tiny_pretrained_dir} (matched by token), 2 are initialised anew; the trials start from {start}" \
        in capsys.readouterr().out
    before = ElectraModel.from_pretrained(tiny_pretrained_dir).embedding.word_embeddings.embeddings.numpy()
    after = ElectraModel.from_pretrained(str(start)).embedding.word_embeddings.embeddings.numpy()
    assert after.shape == (len(new), before.shape[1])
    np.testing.assert_array_equal(after[[1000, 1001]], before[[1001, 1000]])  # each word keeps its own row
    np.testing.assert_array_equal(after[:1000], before[:1000])
    assert not np.allclose(after[1002], before[1002]) and np.abs(after[-1]).max() > 0  # new rows, drawn anew
    assert load_vocabulary(str(start / "vocab.txt")) == new


def test_a_flag_without_a_vocabulary_and_a_task_of_another_tokenizer_are_refused(changed, tiny_pretrained_dir,
                                                                                  tmp_path, run_tool, refused):
    vocab_file, train, tokens, _ = changed
    tool = ("run_finetuning", "--task=text_classification", f"--init_checkpoint={tiny_pretrained_dir}",
            f"--output_dir={tmp_path / 'run'}", f"--train_file={train}")
    refused(run_tool(*tool, f"--vocab_file={vocab_file}"), f"--vocab_file={vocab_file} (sha256 ")
    refused(run_tool(*tool, "--allow_vocabulary_change"),
            "--allow_vocabulary_change fine-tunes with the tokens of --vocab_file: give it")
    assert not (tmp_path / "run").exists()
    with pytest.raises(ValueError, match="^--allow_vocabulary_change fine-tunes with the tokens of --vocab_file"):
        RunOptions(init_checkpoint=tiny_pretrained_dir, output_dir="o", allow_vocabulary_change=True)
    swapped = [*tokens]
    swapped[1000], swapped[1001] = tokens[1001], tokens[1000]
    config = FinetuningConfig.for_task("text_classification", "small", **SETTINGS)
    task = make_task(config, WordPieceTokenizer(swapped, **_casing(tiny_pretrained_dir)), files={"train": train})
    with pytest.raises(ValueError, match=rf"^the task's tokenizer \(sha256 \w+\) is not the vocabulary the model "
                                         rf"{tiny_pretrained_dir} was trained with \({tiny_pretrained_dir}/vocab.txt: "
                                         r"sha256 \w+\); make the task with the model's own tokenizer"):
        finetune(task, tiny_pretrained_dir, task.load("train"))


def _casing(folder):
    tokenizer = load_tokenizer(folder)
    return {"lowercase": tokenizer.lowercase, "strip_accents": tokenizer.strip_accents}
