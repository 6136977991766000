"""A bad corpus file ends the Beam runners (shards and vocabulary) in the local builder's own line, naming the
file and its line, row or column, after "the Beam pipeline (...) failed: ", not the library error underneath
(`EOFError`'s "Compressed file ended ...", `JSONDecodeError`'s "Invalid control character ...")."""

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from electra_tf.data.beam_pipeline import build_pretraining_shards_on_beam
from electra_tf.data.beam_vocabulary import learn_vocabulary_on_beam
from electra_tf.data.corpus_readers import check_parts, corpus_texts
from electra_tf.data.pretraining_data import build_pretraining_shards
from electra_tf.text.vocabulary_learning import build_vocabulary


def write_bad_inputs(folder):
    lines = [f"Sentence number {i} of the corpus." for i in range(2000)]
    for name, text in (("text.txt.gz", "\n".join(lines)), ("rows.jsonl.gz", "\n".join(json.dumps({"text": line})
                                                                                      for line in lines))):
        whole = gzip.compress((text + "\n").encode())
        (folder / name).write_bytes(whole[: len(whole) // 2])
    pq.write_table(pa.table({"text": [1, 2, 3]}), folder / "numbers.parquet")
    pq.write_table(pa.table({"text": ["A first document.", None]}), folder / "nulls.parquet")
    pq.write_table(pa.table({"text": ["A first document.", "A second.", None]}), folder / "unmarked_nulls.parquet",
                   write_statistics=False)
    (folder / "broken.jsonl").write_text('{"text": "Fine."}\n{"text": "cut\n', encoding="utf-8")
    (folder / "no_field.jsonl").write_text('{"text": "Fine."}\n{"body": "No text field."}\n', encoding="utf-8")
    return sorted(str(path) for path in folder.iterdir())


def local_line(build):
    with pytest.raises(ValueError) as error:
        build()
    return str(error.value)


def test_the_beam_runners_name_a_bad_file_as_the_local_builder_does(tmp_path, fixture_vocab):
    (tmp_path / "in").mkdir()
    for path in write_bad_inputs(tmp_path / "in"):
        local = local_line(lambda: build_pretraining_shards([path], fixture_vocab, str(tmp_path / "local")))
        assert local.startswith(path) and "\n" not in local, local
        words_here = local_line(lambda: build_vocabulary(corpus_texts(check_parts([path])), 100))
        assert words_here == local  # electra-build-vocab's local runner reads as the shard builder does
        shards = local_line(lambda: build_pretraining_shards_on_beam([path], fixture_vocab, str(tmp_path / "beam")))
        words = local_line(lambda: learn_vocabulary_on_beam([path], str(tmp_path / "vocab.txt"), 100))
        if "parquet" in path and "unmarked" not in path:  # refused before the pipeline, by both runners
            assert shards == words == local
        else:
            assert shards == f"the Beam pipeline (pre-training shards) failed: {local}"
            assert words == f"the Beam pipeline (vocabulary) failed: {local}"
