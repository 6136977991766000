"""A tagging run trains enough steps by default (the settings chosen printed with their reasons), and one whose dev
entity F1 stays near zero says so, as a classification run that predicts one class."""

import json
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


def test_a_tagging_run_on_a_small_set_trains_enough_steps_by_default_and_says_why(write_pretrained_dir, tmp_path,
                                                                                   run_tool):
    files = [CHINESE / "ner_train.txt", CHINESE / "ner_dev.txt"]
    lines = [line for path in files for line in path.read_text(encoding="utf-8").splitlines() if line]
    characters = sorted({line.split("\t")[0] for line in lines})
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(f"{token}\n" for token in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *characters]),
                     encoding="utf-8")
    checkpoint = write_pretrained_dir(tmp_path / "pretrained", vocab_file=str(vocab))  # 32 wide, random weights
    code, out, err = run_tool("run_finetuning", "--task=conll2003", f"--train_file={files[0]}",
                              f"--dev_file={files[1]}", f"--init_checkpoint={checkpoint}",
                              f"--output_dir={tmp_path / 'ner'}", "--max_seq_length=48")
    assert code in (0, None), err[-2000:]
    # The paper's 3 epochs of 60 sentences are 3 steps of 32, which tag everything O.
    assert ("defaults (set a flag to change one): --learning_rate=0.0024 (the paper's rate for the model's width, 32: "
            "3e-4 at 256, 1e-4 at 768, 5e-5 at 1024); --layerwise_lr_decay=0.8 (the paper's: 0.9 for Large); "
            "--epochs=200 (tagging trains at least 200 steps: 60 examples make 1 batch of 32 an epoch)") in out
    assert "200 steps in all" in out and sum(line.startswith("dev at step ") for line in out.splitlines()) == 10
    results = json.loads((tmp_path / "ner" / "results.json").read_text())
    assert results["defaults"]["epochs"]["value"] == 200.0 and results["model_size"] == "custom"
    assert results["dev"]["dev"]["f1"]["median"] > 0.5 and "warning: dev entity F1" not in out
