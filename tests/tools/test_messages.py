"""What the tools say where a user would otherwise wonder: a flag that cannot work, Ctrl-C in a fine-tune, a trial
folder given where its model is. (The tools run in-process; tiny models from `tests/conftest.py`.)"""

import pytest

from electra_tf import ElectraForSequenceClassification, ElectraTokenizer, finetuning
from electra_tf.checkpoints.sources import HUGGINGFACE, OURS, detect_format
from electra_tf.checkpoints.convert import load_model
from electra_tf.tools.common import INTERRUPTED_EXIT_CODE


def _finetune_flags(tmp_path, model_dir):
    train = tmp_path / "train.csv"
    train.write_text("text,label\n" + "".join(f"word {i},{i % 2}\n" for i in range(8)), encoding="utf-8")
    return ["--task=text_classification", f"--train_file={train}", f"--init_checkpoint={model_dir}",
            f"--output_dir={tmp_path}/out", "--batch_size=4", "--max_seq_length=16"]


def test_keep_best_without_dev_data_is_refused_before_any_work(tmp_path, tiny_pretrained_dir, refused, run_tool):
    refused(run_tool("run_finetuning", *_finetune_flags(tmp_path, tiny_pretrained_dir), "--keep_best"),
            "--keep_best keeps the model of the best dev score, and there is no labelled dev data: give --dev_file")
    assert not (tmp_path / "out" / "trial_0").exists()


@pytest.mark.parametrize("task, option_flags, expected", [
    ("rte", ["--tfds", "--tfds_data_dir=/tfds"], {"tfds": True, "tfds_data_dir": "/tfds"}),
    ("text_classification", ["--text_columns=a,b", "--label_column=y", "--label_names=p,q", "--regression"],
     {"text_columns": ["a", "b"], "label_column": "y", "label_names": ["p", "q"], "regression": True}),
    ("conll2003", ["--tag_column=2"], {"tag_column": 2})])
def test_each_option_flag_reaches_its_task(tmp_path, tiny_pretrained_dir, run_tool, monkeypatch, task,
                                           option_flags, expected):
    seen = []

    def stop_once_made(*args, **kwargs):
        seen.append(finetuning.registry.make_task(*args, **kwargs).options)
        raise ValueError("made")

    monkeypatch.setattr(finetuning, "make_task", stop_once_made)  # what the tool imports afresh
    flags = [f"--task={task}", f"--init_checkpoint={tiny_pretrained_dir}", f"--output_dir={tmp_path}/out"]
    assert run_tool("run_finetuning", *flags, *option_flags)[0] == 2
    assert {name: getattr(seen[0], name) for name in expected} == expected


def test_an_option_flag_for_a_task_that_does_not_take_it_is_refused(tmp_path, tiny_pretrained_dir, refused,
                                                                     run_tool):
    refused(run_tool("run_finetuning", *_finetune_flags(tmp_path, tiny_pretrained_dir), "--tag_column=2", "--tfds"),
            "--tfds, --tag_column: not an option of task 'text_classification' (its options: --text_columns, "
            "--label_column, --label_names, --regression)")
    assert not (tmp_path / "out").exists()


def test_ctrl_c_in_a_fine_tune_says_the_trial_starts_over(tmp_path, tiny_pretrained_dir, run_tool, monkeypatch):
    def interrupted_training(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(finetuning, "finetune", interrupted_training)  # the tool imports it afresh, patched
    code, _, err = run_tool("run_finetuning", *_finetune_flags(tmp_path, tiny_pretrained_dir))
    assert code == INTERRUPTED_EXIT_CODE
    assert (f"interrupted: finished trials are kept; {tmp_path}/out/trial_0 is unfinished and starts again from its "
            "beginning when the same command is re-run") in err, err[-2000:]


@pytest.mark.parametrize("head", ["huggingface", "original"])
def test_a_trial_folder_stands_for_its_model(tmp_path, tiny_pretrained_dir, head):
    """`electra-export --model=<output_dir>/trial_0` (and from_pretrained) find `trial_0/model`, as pre-training's
    `<model_dir>` finds `final/`: a Hugging Face folder for a Hugging Face head, ours (`model.keras`) else."""
    classifier = ElectraForSequenceClassification.from_pretrained(tiny_pretrained_dir, num_labels=2, head=head)
    classifier.save_pretrained(str(tmp_path / "trial_0" / "model"), label_names=["no", "yes"])
    model_folder = tmp_path / "trial_0" / "model"
    expected = (HUGGINGFACE, str(model_folder)) if head == "huggingface" else (OURS, str(model_folder / "model.keras"))
    assert detect_format(tmp_path / "trial_0") == expected
    model, info = load_model(str(tmp_path / "trial_0"))
    assert info["label_names"] == ["no", "yes"] and model.count_params() == classifier.count_params()
    assert ElectraTokenizer.from_pretrained(str(tmp_path / "trial_0")).vocabulary_size() == model.config.vocab_size


def test_build_vocab_says_where_it_is_and_why_the_vocabulary_is_small(tmp_path, run_tool):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"the cat number {i % 7} sat on the mat.\n" for i in range(200)), encoding="utf-8")
    code, out, err = run_tool("build_vocab", f"--input_files={corpus}", f"--output={tmp_path}/vocab.txt",
                              "--vocab_size=8000", "--held_out_every=0")  # (the held-out report: test_unknown_rate)
    assert code == 0, err[-2000:]
    lines = out.splitlines()
    assert lines[0] == "counting the corpus's words…"
    assert lines[1].startswith("14 distinct words (1,800 in all, 14 of them seen 10+ times) counted in ")
    assert lines[1].endswith("learning up to 8,000 WordPiece tokens (tensorflow-text's learner, one call)…")
    size = len((tmp_path / "vocab.txt").read_text(encoding="utf-8").splitlines())
    assert lines[2].startswith(f"learned {size} tokens in ")
    assert lines[2].endswith(" s: 20 characters (each seen 1+ times), 9 ## forms of characters (those seen inside "
                             "words), 6 longer pieces")
    assert lines[3] == (f"note: {size} tokens, not 8,000: every character seen 1+ times has its token, and the "
                        "learner keeps a longer piece only if the corpus has it 10+ times; a larger corpus gives "
                        "more (or ask for fewer)")
    assert lines[4] == ("[UNK] rate: 0.00% of the tokens of the corpus's first 6,400 characters "
                        "(learned from: a flattering figure)")
    assert lines[5].startswith(f"{size} tokens from 1 file(s) → ")
