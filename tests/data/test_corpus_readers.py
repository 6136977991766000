"""A file read in pieces (`part_pieces`: text, JSONL, Parquet) gives the documents of the file read whole, in
order."""

import json
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from electra_tf.data.corpus_readers import CorpusStats, part_pieces, read_part


def read_in_pieces(path, piece_bytes):
    stats, documents = CorpusStats(), []
    for piece in part_pieces(str(path), piece_bytes=piece_bytes):
        documents += read_part(str(path), stats=stats, piece=piece)
    return documents, stats


@pytest.mark.parametrize("seed", range(2))
def test_the_pieces_of_a_text_file_hold_its_documents_once_each(tmp_path, seed):
    rng = random.Random(seed)
    lines = []
    for _ in range(300):  # documents of 1-4 lines, ended by 1-3 blank lines (some of spaces, one of a no-break
        lines += [" ".join(rng.choice(["ab", "c", "déjà", "x" * 30]) for _ in range(rng.randint(1, 12)))
                  for _ in range(rng.randint(1, 4))]  # space, which is blank to the reader, not to bytes.strip)
        lines += [rng.choice(["", "  ", "\u00a0"]) for _ in range(rng.randint(1, 3))]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines[rng.randint(0, 3):]), encoding="utf-8")  # may start with a blank line
    whole = list(read_part(str(path)))
    for piece_bytes in (7, 50, 333, 4096, 10**9):
        documents, stats = read_in_pieces(path, piece_bytes)
        assert documents == whole, piece_bytes
        assert stats.documents == len(whole) and stats.lines_read == len(path.read_bytes().splitlines())
    assert len(part_pieces(str(path), piece_bytes=333)) > 20 and len(whole) > 250


def test_pieces_are_only_cut_in_uncompressed_text_files_of_documents(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("one\n\ntwo\n" * 100)
    assert part_pieces(str(path), piece_bytes=100)[:2] == [(0, 100), (100, 200)]
    assert part_pieces(str(path), blanks_separate_docs=False, piece_bytes=100) == [None]
    for name in ("corpus.txt.gz", "corpus.jsonl.gz", "tfds:imdb_reviews"):
        assert part_pieces(name, piece_bytes=100) == [None]
    (tmp_path / "empty.txt").write_text("")
    assert part_pieces(str(tmp_path / "empty.txt")) == [(0, None)]


def test_the_pieces_of_a_jsonl_file_hold_its_documents_once_each(tmp_path):
    rng = random.Random(0)
    line = lambda: " ".join(rng.choice(["ab", "déjà", "x" * 30]) for _ in range(rng.randint(1, 9)))  # noqa: E731
    rows = [json.dumps({"text": "\n".join(line() for _ in range(rng.randint(1, 3))), "id": i}) for i in range(200)]
    rows[::17] = [" "] * len(rows[::17])  # blank lines, skipped
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    whole = list(read_part(str(path)))
    for piece_bytes in (7, 50, 333, 4096, 10**9):
        assert read_in_pieces(path, piece_bytes)[0] == whole, piece_bytes
    assert len(part_pieces(str(path), piece_bytes=333)) > 20 and len(whole) == 200 - len(rows[::17])


def test_a_bad_jsonl_line_is_named_by_its_number_in_the_file_from_any_piece(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"text": f"document {i}"}) + "\n" for i in range(40)) + "{not json\n")
    with pytest.raises(ValueError, match=r"corpus.jsonl, line 41: not a JSON object"):
        read_in_pieces(path, 100)


def test_the_pieces_of_a_parquet_file_are_runs_of_its_row_groups(tmp_path):
    path = tmp_path / "corpus.parquet"
    texts = [f"document {i}\nits second line" for i in range(50)]
    pq.write_table(pa.table({"text": texts}), path, row_group_size=4)  # 13 row groups
    whole = list(read_part(str(path)))
    assert whole == [text.split("\n") for text in texts]
    assert part_pieces(str(path), piece_bytes=1) == [(group, group + 1) for group in range(13)]
    assert part_pieces(str(path), piece_bytes=10**9) == [(0, 13)]
    for piece_bytes in (1, 300, 1000, 10**9):
        assert read_in_pieces(path, piece_bytes)[0] == whole, piece_bytes
    assert 1 < len(part_pieces(str(path), piece_bytes=300)) < 13
    pq.write_table(pa.table({"text": pa.array([], pa.string())}), tmp_path / "empty.parquet")
    assert [list(read_part(str(tmp_path / "empty.parquet"), piece=piece))
            for piece in part_pieces(str(tmp_path / "empty.parquet"))] == [[]]
