"""A text file read in pieces (`part_pieces`) gives the documents of the file read whole, in order."""

import random

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
    for name in ("corpus.txt.gz", "corpus.jsonl", "corpus.parquet", "tfds:imdb_reviews"):
        assert part_pieces(name, piece_bytes=100) == [None]
    (tmp_path / "empty.txt").write_text("")
    assert part_pieces(str(tmp_path / "empty.txt")) == [(0, None)]
