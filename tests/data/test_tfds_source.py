"""TensorFlow Datasets that cannot be had (offline, a module missing) give one clear error, and nothing is left."""

import pytest
import tensorflow_datasets as tfds

from electra_tf.data.tfds_source import load_split


@pytest.fixture
def offline(monkeypatch):
    """TFDS's downloads fail as they do without network; everything TFDS imports on the way is really imported."""
    def refuse(*args, **kwargs):
        raise OSError("offline: no route to host")

    for method in ("download", "download_and_extract"):
        monkeypatch.setattr(tfds.download.DownloadManager, method, refuse)


def test_preparing_offline_imports_what_it_needs_and_says_what_to_do(offline, tmp_path):
    with pytest.raises(ValueError) as error:
        load_split("glue/rte", "train", data_dir=str(tmp_path))
    message = str(error.value)
    assert message.startswith(f"glue/rte (split train): TensorFlow Datasets has not prepared it in {tmp_path}")
    assert "OSError: offline: no route to host" in message and "tfds build glue/rte" in message
    assert "\n" not in message


def test_a_missing_optional_module_is_named(monkeypatch):
    def load(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'apache_beam'", name="apache_beam")

    monkeypatch.setattr(tfds, "load", load)
    with pytest.raises(ValueError, match=r"^wikipedia: TensorFlow Datasets needs the module 'apache_beam' to "
                                         r"prepare it \(pip install apache_beam\)$"):
        load_split("wikipedia", "train")


def test_the_tools_end_with_one_line_and_leave_nothing(offline, tmp_path, run_tool, tiny_pretrained_dir):
    output = tmp_path / "out"
    code, _, err = run_tool("run_finetuning", "--task=rte", "--tfds", f"--tfds_data_dir={tmp_path / 'tfds'}",
                            f"--init_checkpoint={tiny_pretrained_dir}", f"--output_dir={output}")
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: glue/rte (split train): TensorFlow ")
    assert not output.exists()
    code, _, err = run_tool("run_finetuning", "--task=rtee", f"--init_checkpoint={tiny_pretrained_dir}",
                            f"--output_dir={output}")
    assert code == 2 and err.startswith("error: unknown task 'rtee'; the tasks are: chunk, cola, conll2003")
    assert err.count("\n") == 1 and not output.exists()
