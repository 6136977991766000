"""Corpus files the shard builder cannot read as text end in one line naming the file (and the column or row),
exit 2, before anything is written where the problem can be seen first: a truncated or damaged `.gz`, a Parquet
text column of non-strings or holding nulls (as a JSONL text that is null: an error, not a silent drop)."""

import gzip
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from electra_tf.data.corpus_readers import check_parts, read_part


def _build(run_tool, vocab, corpus, output):
    return run_tool("build_pretraining_data", f"--input_files={corpus}", f"--vocab_file={vocab}",
                    f"--output_dir={output}", "--max_seq_length=32", "--num_shards=1")


@pytest.mark.parametrize("name", ["corpus.txt.gz", "corpus.jsonl.gz"])
def test_a_truncated_gzip_corpus_is_named_in_one_line(tmp_path, fixture_vocab, run_tool, name):
    lines = [f'{{"text": "Sentence number {i} of the corpus."}}' if "jsonl" in name else f"Sentence number {i}."
             for i in range(2000)]
    whole = gzip.compress(("\n".join(lines) + "\n").encode())
    corpus = tmp_path / name
    corpus.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match=f"^{corpus}: a truncated or damaged gzip file "):
        list(read_part(str(corpus)))
    code, _, err = _build(run_tool, fixture_vocab, corpus, tmp_path / "data")
    assert code == 2 and err.strip().startswith(f"error: {corpus}: a truncated or damaged gzip file"), err[-2000:]
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not [name for name in os.listdir(tmp_path / "data") if "tfrecord" in name]


def test_a_parquet_text_column_of_numbers_is_refused_before_anything_is_written(tmp_path, fixture_vocab, run_tool):
    corpus = tmp_path / "numbers.parquet"
    pq.write_table(pa.table({"text": [1, 2, 3]}), corpus)
    message = f"{corpus}: column 'text' holds int64 values, not text; pass --text_field=<a column of strings>"
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        check_parts([str(corpus)])
    code, _, err = _build(run_tool, fixture_vocab, corpus, tmp_path / "data")
    assert code == 2 and err.strip() == f"error: {message}", err[-2000:]
    assert not (tmp_path / "data").exists()


def test_a_null_parquet_text_is_an_error_naming_its_row_as_a_null_jsonl_text_is(tmp_path, fixture_vocab, run_tool):
    corpus = tmp_path / "nulls.parquet"
    pq.write_table(pa.table({"text": ["A first document.", None, "A third one."]}), corpus)
    message = (f"{corpus}: 1 null text(s) in column 'text' (the first at row 1); drop those rows (or fill them) "
               "and build again")
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_parts([str(corpus)])
    code, _, err = _build(run_tool, fixture_vocab, corpus, tmp_path / "data")
    assert code == 2 and err.strip() == f"error: {message}", err[-2000:]
    unmarked = tmp_path / "nulls_without_statistics.parquet"  # found as it is read, then
    pq.write_table(pa.table({"text": ["A first document.", "A second.", None]}), unmarked, write_statistics=False)
    with pytest.raises(ValueError, match=f"{unmarked}: a null text in column 'text' at row 2; drop those rows"):
        list(read_part(check_parts([str(unmarked)])[0]))
    jsonl = tmp_path / "nulls.jsonl"
    jsonl.write_text('{"text": "A first document."}\n{"text": null}\n')
    with pytest.raises(ValueError, match=f"{jsonl}, line 2: no string field 'text'"):
        list(read_part(str(jsonl)))
