"""Documents from the corpora users have (docs/data_at_scale.md): text files (gzip too; a blank line ends a
document), JSONL, Parquet and `tfds:<name>[:<split>]` parts, read by the local shard builder and the Beam
pipeline alike (`read_part`), and checked before anything is written (`check_parts`).

Example:
>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> with open(os.path.join(folder, "a.jsonl"), "w") as f:
...     _ = f.write('{"text": "One line.\\\\nTwo lines."}\\n{"text": "Another document."}\\n')
>>> parts = check_parts([os.path.join(folder, "a.jsonl")])
>>> list(read_part(parts[0]))
[['One line.', 'Two lines.'], ['Another document.']]
>>> document_hash(["One  line."]) == document_hash(["one line."])
True
"""

import contextlib
import gzip
import hashlib
import json
import os
import unicodedata
import zlib

import pyarrow as pa
import pyarrow.parquet as pq
import tensorflow as tf

from electra_tf.data.tfds_source import load_split
from electra_tf.text.vocabulary_learning import read_text_files

TFDS_PREFIX = "tfds:"
# Nominal size of a piece of a text file (`part_pieces`): small enough to spread a file over the workers,
# large enough that a piece's fixed costs (a tokenizer call's batch, an element per shard) stay small.
PIECE_BYTES = 4_000_000


class CorpusStats:
    """Counts kept while reading a corpus (documents, lines, undecodable lines, duplicates dropped)."""

    def __init__(self):
        self.documents = 0
        self.lines = 0
        self.lines_read = 0  # lines of text files read, blank ones too (to number lines across pieces)
        self.undecodable_lines = 0
        self.first_undecodable = None
        self.duplicate_documents = 0

    def warning(self):
        """The one-line warning about bytes that were not UTF-8, or None."""
        if not self.undecodable_lines:
            return None
        path, line = self.first_undecodable
        return (f"warning: {self.undecodable_lines} line(s) were not valid UTF-8; bad bytes were replaced "
                f"by U+FFFD (first: {path}, line {line})")


def part_kind(part):
    """'tfds', 'jsonl', 'parquet' or 'text', from a part's name."""
    if part.startswith(TFDS_PREFIX):
        return "tfds"
    name = part.lower().removesuffix(".gz")
    if name.endswith(".jsonl"):
        return "jsonl"
    if name.endswith(".parquet"):
        return "parquet"
    return "text"


def check_parts(parts, text_field="text"):
    """The parts (absolute paths, `tfds:` names as given); a ValueError naming the first that cannot be read."""
    checked = []
    for part in parts:
        if part_kind(part) == "tfds":
            checked.append(part)
            continue
        path = os.path.abspath(part)
        try:
            with open(path, "rb") as f:
                f.read(1)
        except IsADirectoryError:
            raise ValueError(f"{part}: a folder, not a corpus file") from None
        except OSError as e:
            raise ValueError(f"{part}: cannot be read ({e.strerror}); check the path and its permissions") from None
        if part_kind(part) == "parquet":
            _check_parquet_column(path, text_field)
        checked.append(path)
    if not checked:
        raise ValueError("no input files")
    return checked


def _check_parquet_column(path, text_field):
    """Refuses a Parquet file without a `text_field` column of strings (or bytes), or whose column holds nulls
    by its row groups' statistics (without statistics, `_parquet_texts` finds a null as it reads)."""
    try:
        schema = pq.read_schema(path)
    except Exception as e:  # noqa: BLE001 (pyarrow raises several kinds for a file that is not Parquet)
        raise ValueError(f"{path}: not a Parquet file ({type(e).__name__}: {str(e).splitlines()[0]})") from None
    if text_field not in schema.names:
        raise ValueError(f"{path}: no column {text_field!r} (it has {schema.names}); pass --text_field=<column>")
    column_type = schema.field(text_field).type
    value_type = column_type.value_type if pa.types.is_dictionary(column_type) else column_type
    if not any(is_text(value_type) for is_text in _TEXT_TYPES):
        raise ValueError(f"{path}: column {text_field!r} holds {column_type} values, not text; "
                         "pass --text_field=<a column of strings>")
    metadata = pq.ParquetFile(path).metadata
    index = schema.names.index(text_field)
    statistics = [metadata.row_group(g).column(index).statistics for g in range(metadata.num_row_groups)]
    nulls = sum(s.null_count for s in statistics if s is not None and s.has_null_count)
    if nulls:
        first = next(row for row, text in enumerate(_parquet_column(path, text_field)) if text is None)
        raise _null_texts_error(path, text_field, first, count=nulls)


# The Arrow types of a column `_parquet_texts` reads as text (strings; bytes are decoded as UTF-8).
_TEXT_TYPES = (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary, pa.types.is_large_binary,
               getattr(pa.types, "is_string_view", lambda _: False))


def _null_texts_error(path, text_field, row, count=None):
    """A null text is no document (as in a JSONL file, where it is an error too): the rows must be dropped."""
    found = (f"{count} null text(s) in column {text_field!r} (the first at row {row})" if count
             else f"a null text in column {text_field!r} at row {row}")
    return ValueError(f"{path}: {found}; drop those rows (or fill them) and build again")


def part_pieces(part, blanks_separate_docs=True, piece_bytes=None):
    """The pieces `read_part` can read `part` in, about `piece_bytes` each: byte ranges `(start, end)` of an
    uncompressed text (with blank-line documents) or JSONL file, row-group ranges of a Parquet file, else `[None]`.

    >>> part_pieces("corpus.txt.gz"), part_pieces(__file__, piece_bytes=4_000)[:2]
    ([None], [(0, 4000), (4000, 8000)])
    """
    kind, piece_bytes = part_kind(part), piece_bytes or PIECE_BYTES
    if kind == "parquet":
        return _row_group_pieces(part, piece_bytes)
    if kind not in ("text", "jsonl") or part.lower().endswith(".gz") or (kind == "text" and not blanks_separate_docs):
        return [None]
    starts = range(0, max(1, os.path.getsize(part)), piece_bytes)
    return [(start, start + starts.step) for start in starts[:-1]] + [(starts[-1], None)]


def _row_group_pieces(path, piece_bytes):
    """Runs `(first, end)` of consecutive row groups of a Parquet file, each at least `piece_bytes` (the last may
    be smaller); `[None]` for a file without row groups."""
    metadata = pq.ParquetFile(path).metadata
    pieces, first, size = [], 0, 0
    for group in range(metadata.num_row_groups):
        size += metadata.row_group(group).total_byte_size
        if size >= piece_bytes or group == metadata.num_row_groups - 1:
            pieces.append((first, group + 1))
            first, size = group + 1, 0
    return pieces or [None]


def read_part(part, blanks_separate_docs=True, text_field="text", tfds_data_dir=None, stats=None, piece=None):
    """Yields the documents (lists of non-empty, stripped lines) of one part, or of one of its pieces: a text
    piece begins after the first blank line at or after `start` (a JSONL piece, line), so the pieces' documents
    are the file's. Bytes that are not UTF-8 become U+FFFD, counted in `stats` with the first line concerned."""
    stats = stats if stats is not None else CorpusStats()
    kind = part_kind(part)
    if kind == "text":
        documents = _text_documents(part, blanks_separate_docs, stats, piece or (0, None))
    else:
        texts = (_tfds_texts(part, text_field, tfds_data_dir) if kind == "tfds"
                 else {"jsonl": _jsonl_texts, "parquet": _parquet_texts}[kind](part, text_field, piece))
        documents = (document for document in map(_lines, texts) if document)
    for document in documents:
        stats.documents += 1
        stats.lines += len(document)
        yield document


@contextlib.contextmanager
def _open(path):
    """The file `path` open for reading bytes (gzip by its name); what a damaged or truncated gzip stream raises
    while it is read is a ValueError naming the file."""
    try:
        with gzip.open(path, "rb") if path.lower().endswith(".gz") else open(path, "rb") as f:
            yield f
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise ValueError(f"{path}: a truncated or damaged gzip file ({e}); copy or download it again") from None


def _decode(raw, stats, path, number):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        stats.undecodable_lines += 1
        stats.first_undecodable = stats.first_undecodable or (path, number)
        return raw.decode("utf-8", errors="replace")


def _text_documents(path, blanks_separate_docs, stats, piece):
    document = []
    with _open(path) as f:
        for number, raw in enumerate(_piece_lines(f, piece, after_blank_line=True), 1):
            stats.lines_read += 1
            line = _decode(raw, stats, path, number).strip()
            if line:
                document.append(line)
            elif blanks_separate_docs and document:
                yield document
                document = []
    if document:
        yield document


def _piece_lines(f, piece, after_blank_line):
    """The lines (bytes) of the piece `(start, end)` of the open file `f` (see `read_part`)."""
    start, end = piece
    stop = _piece_start(f, end, after_blank_line) if end is not None else None
    position = _piece_start(f, start, after_blank_line)
    for raw in f:
        if stop is not None and position >= stop:
            return
        position += len(raw)
        yield raw


def _piece_start(f, start, after_blank_line):
    """Moves `f` to where a piece starting at `start` begins (the first line, or the end of the first blank line,
    starting at or after it) and returns that position."""
    f.seek(max(0, start - 1))
    if start == 0:
        return 0
    position = start - 1 + len(f.readline())  # the rest of the line holding byte start - 1
    while after_blank_line:
        raw = f.readline()
        position += len(raw)
        if not raw or not raw.decode("utf-8", errors="replace").strip():
            break
    return position


def _lines(text):
    return [line.strip() for line in text.splitlines() if line.strip()]


def _jsonl_texts(path, text_field, piece):
    piece = piece or (0, None)
    with _open(path) as f:
        for number, raw in enumerate(_piece_lines(f, piece, after_blank_line=False), 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise ValueError(f"{path}, line {_line_number(path, piece, number)}: not a JSON object ({e})") \
                    from None
            if not isinstance(record, dict) or not isinstance(record.get(text_field), str):
                raise ValueError(f"{path}, line {_line_number(path, piece, number)}: no string field "
                                 f"{text_field!r}; pass --text_field=<field>")
            yield record[text_field]


def _line_number(path, piece, number):
    """The number in the file of line `number` of a JSONL piece (for an error message: the lines before the
    piece are counted then)."""
    with _open(path) as f:
        begin = _piece_start(f, piece[0], after_blank_line=False)
        f.seek(0)
        return f.read(begin).count(b"\n") + number


def _parquet_texts(path, text_field, piece):
    _check_parquet_column(path, text_field)
    first, end = piece or (0, pq.ParquetFile(path).metadata.num_row_groups)
    for row, text in enumerate(_parquet_column(path, text_field, range(first, end)),
                               _rows_before(path, first)):
        if text is None:
            raise _null_texts_error(path, text_field, row)
        yield text if isinstance(text, str) else text.decode("utf-8", errors="replace")


def _parquet_column(path, text_field, groups=None):
    """The values of one column of a Parquet file, of its row groups `groups` (all by default), in order."""
    parquet = pq.ParquetFile(path)
    groups = list(range(parquet.metadata.num_row_groups) if groups is None else groups)
    for batch in parquet.iter_batches(row_groups=groups, columns=[text_field], batch_size=1024):
        yield from batch.column(0).to_pylist()


def _rows_before(path, group):
    """The number of rows of a Parquet file before its row group `group`."""
    metadata = pq.ParquetFile(path).metadata
    return sum(metadata.row_group(g).num_rows for g in range(group))


def _tfds_texts(part, text_field, data_dir):
    name, _, split = part[len(TFDS_PREFIX):].partition(":")
    dataset = load_split(name, split or "train", data_dir, shuffle_files=False)
    for record in dataset.as_numpy_iterator():
        if text_field not in record:
            raise ValueError(f"TFDS {name}/{split or 'train'} records have no {text_field!r} feature; "
                             f"they have {sorted(record)}; pass --text_field=<feature>")
        yield record[text_field].decode("utf-8", errors="replace")


def corpus_texts(parts, text_field="text", tfds_data_dir=None):
    """The corpus as a `tf.data.Dataset` of texts, to learn a vocabulary from: a plain text file whole (as
    `vocabulary_learning.build_vocabulary` reads files), a document of the other kinds as its lines."""
    plain = [part for part in parts if part_kind(part) == "text" and not part.lower().endswith(".gz")]
    others = [part for part in parts if part not in plain]
    texts = read_text_files(plain)
    if others:
        texts = texts.concatenate(tf.data.Dataset.from_generator(
            lambda: ("\n".join(document) for part in others
                     for document in read_part(part, text_field=text_field, tfds_data_dir=tfds_data_dir)),
            output_signature=tf.TensorSpec([], tf.string)))
    return texts


def document_hash(document):
    """A document's fingerprint for exact de-duplication: SHA-256 of its text after NFKC, case folding and
    collapsing whitespace (so copies that differ only in case or spacing count as one)."""
    text = " ".join(unicodedata.normalize("NFKC", " ".join(document)).casefold().split())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
