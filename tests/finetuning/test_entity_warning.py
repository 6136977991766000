"""A tagging run whose dev entity F1 stays near zero says so, as a classification run that predicts one class."""

import pathlib

CHINESE = pathlib.Path(__file__).parents[1] / "fixtures" / "chinese"


def test_a_tagging_run_that_finds_no_entity_says_so(tiny_pretrained_dir, tmp_path, run_tool):
    code, out, err = run_tool("run_finetuning", "--task=conll2003", f"--train_file={CHINESE / 'ner_train.txt'}",
                              f"--dev_file={CHINESE / 'ner_dev.txt'}", f"--init_checkpoint={tiny_pretrained_dir}",
                              f"--output_dir={tmp_path / 'ner'}", "--max_seq_length=48", "--epochs=1",
                              "--batch_size=16", "--learning_rate=1e-7")  # a rate that cannot learn
    assert code in (0, None), err[-2000:]
    warning = next(line for line in out.splitlines() if line.startswith("warning: dev entity F1 is "))
    assert "the model finds almost no entity; try a higher --learning_rate (this run: 1e-07)" in warning
