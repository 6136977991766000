"""Sentence(-pair) classification and regression data: GLUE (TSV files or TFDS) and CSV/TSV/JSONL files, read as
`TextExamples` (texts, label ids or scores, -1 when unlabelled, and the ids GLUE submissions need), tokenized
later, in-graph, by `classification_dataset`.

Example:
>>> examples = TextExamples(texts=(("a good film", "dull"),), labels=np.array([1, 0]), ids=("0", "1"))
>>> len(examples), examples.num_segments
(2, 1)
"""

import csv
import dataclasses
import io
import json
import math
import os
import unicodedata

import numpy as np
import tensorflow as tf
from absl import logging

from electra_tf.data import batching
from electra_tf.data.tasks.tables import Rows, is_table, read_table, require_columns
from electra_tf.data.tfds_source import load_split

UNLABELLED = -1


@dataclasses.dataclass(frozen=True)
class TextExamples:
    """Texts (`num_segments` tuples of strings), labels (int ids or float scores; -1: none) and ids."""

    texts: tuple
    labels: np.ndarray
    ids: tuple

    def __post_init__(self):
        if not self.texts or any(len(column) != len(self.labels) for column in self.texts):
            raise ValueError("every text column needs one entry per label")
        if len(self.ids) != len(self.labels):
            raise ValueError("need one id per example")

    def __len__(self):
        return len(self.labels)

    @property
    def num_segments(self):
        return len(self.texts)

    @property
    def labelled(self):
        return bool(len(self)) and not np.any(self.labels == UNLABELLED)

    def subset(self, indices):
        """The examples at `indices`, in that order."""
        return TextExamples(tuple(tuple(column[i] for i in indices) for column in self.texts), self.labels[indices],
                            tuple(self.ids[i] for i in indices))

    def swapped(self):
        """Both orders of every pair (the original's `double_unordered` for MRPC and STS-B)."""
        if self.num_segments != 2:
            raise ValueError("only sentence pairs can be swapped")
        first, second = self.texts
        return TextExamples((first + second, second + first), np.concatenate([self.labels, self.labels]),
                            self.ids + self.ids)


@dataclasses.dataclass(frozen=True)
class GlueDataset:
    """A GLUE dataset: its labels (`None`: regression), metrics, and where its columns are in TSV (`tsv_header`
    for CoLA's headerless files) and TFDS; `splits` maps our split names to (TSV file, TFDS split)."""

    name: str
    label_names: tuple | None
    metrics: tuple
    tsv_text: tuple
    tsv_label: str
    tfds_text: tuple
    splits: dict
    tsv_header: tuple | None = None
    double_unordered: bool = False
    epochs: int = 3

    @property
    def num_labels(self):
        return 1 if self.label_names is None else len(self.label_names)


# Each split's file in a GLUE folder and its TFDS name.
_SPLITS = {"train": ("train.tsv", "train"), "dev": ("dev.tsv", "validation"), "test": ("test.tsv", "test")}
_MNLI_SPLITS = {"train": ("train.tsv", "train"),
                "dev": ("dev_matched.tsv", "validation_matched"),
                "dev_mismatched": ("dev_mismatched.tsv", "validation_mismatched"),
                "test": ("test_matched.tsv", "test_matched"),
                "test_mismatched": ("test_mismatched.tsv", "test_mismatched")}
_NLI = ("entailment", "neutral", "contradiction")  # TFDS's order

# Label names are in TFDS's class order, so a TFDS label id is our id; the
# strings are what the GLUE files (and the submission server) use.
GLUE_TASKS = {task.name: task for task in (
    GlueDataset("cola", ("0", "1"), ("mcc", "accuracy"), ("sentence",), "label", ("sentence",), _SPLITS,
             tsv_header=("source", "label", "original_label", "sentence")),
    GlueDataset("sst2", ("0", "1"), ("accuracy",), ("sentence",), "label", ("sentence",), _SPLITS),
    GlueDataset("mrpc", ("0", "1"), ("accuracy", "f1"), ("#1 String", "#2 String"), "Quality",
             ("sentence1", "sentence2"), _SPLITS, double_unordered=True),
    GlueDataset("stsb", None, ("pearson", "spearman"), ("sentence1", "sentence2"), "score",
             ("sentence1", "sentence2"), _SPLITS, double_unordered=True, epochs=10),
    GlueDataset("qqp", ("0", "1"), ("accuracy", "f1"), ("question1", "question2"), "is_duplicate",
             ("question1", "question2"), _SPLITS),
    GlueDataset("mnli", _NLI, ("accuracy",), ("sentence1", "sentence2"), "gold_label", ("premise", "hypothesis"),
             _MNLI_SPLITS),
    GlueDataset("qnli", ("entailment", "not_entailment"), ("accuracy",), ("question", "sentence"), "label",
             ("question", "sentence"), _SPLITS),
    GlueDataset("rte", ("entailment", "not_entailment"), ("accuracy",), ("sentence1", "sentence2"), "label",
             ("sentence1", "sentence2"), _SPLITS, epochs=10),
    GlueDataset("wnli", ("0", "1"), ("accuracy",), ("sentence1", "sentence2"), "label", ("sentence1", "sentence2"),
             _SPLITS),
    # The diagnostic set: MNLI's labels, test split only (predict with an MNLI model).
    GlueDataset("ax", _NLI, ("accuracy",), ("sentence1", "sentence2"), "label", ("premise", "hypothesis"),
             {"test": ("diagnostic.tsv", "test")}),
)}
# The GLUE download names some folders differently.
GLUE_FOLDERS = {"cola": "CoLA", "sst2": "SST-2", "mrpc": "MRPC", "stsb": "STS-B", "qqp": "QQP", "mnli": "MNLI",
                "qnli": "QNLI", "rte": "RTE", "wnli": "WNLI", "ax": "diagnostic"}


def glue_task(name):
    key = name.lower().replace("-", "")
    key = {"sst": "sst2", "sts": "stsb"}.get(key, key)
    if key not in GLUE_TASKS:
        raise ValueError(f"unknown GLUE task {name!r}; known: {sorted(GLUE_TASKS)}")
    return GLUE_TASKS[key]


def _read_text(path):
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            data = f.read()
    except tf.errors.NotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except tf.errors.PermissionDeniedError:
        raise PermissionError(f"{path}: permission denied (cannot read it)") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 (byte {error.start})") from None
    if not text.strip():
        raise ValueError(f"{path}: empty file")
    return text


# csv's default field limit (128 KiB) refuses a long review or article; a field past this one is no text but
# a quote left open that swallowed the rest of the file.
CSV_FIELD_LIMIT = 64 * 1024 * 1024


def _jsonl_rows(path, text):
    rows, line_numbers = [], []
    for line_number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{line_number}: not JSON ({error.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{line_number}: expected a JSON object per line")
            rows.append(row)
            line_numbers.append(line_number)
    return Rows(rows, line_numbers, rows[0] if rows else ())


def _csv_rows(path, text, file_format, header):
    """Every record checked: as many fields as the header (a comma or tab inside an unquoted field shifts
    the columns), quotes closed, the header's names unique."""
    options = {"delimiter": "\t", "quoting": csv.QUOTE_NONE} if file_format == "tsv" else {}
    separator = "a tab" if file_format == "tsv" else 'a comma (quote it: "Hello, world")'
    csv.field_size_limit(CSV_FIELD_LIMIT)  # (process-wide: csv has no per-reader limit)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True, **options)
    records, line_numbers, line = [], [], 1
    try:
        for record in reader:
            if record:
                records.append(record)
                line_numbers.append(line)
            line = reader.line_num + 1
    except csv.Error as error:
        cause = (f"a field longer than {CSV_FIELD_LIMIT / 2 ** 20:g} MiB" if "field limit" in str(error)
                 else f"{error}")
        raise ValueError(f"{path}:{line}: not readable as {file_format.upper()} ({cause}): is a quote left "
                         "open? Close it, or double a quote inside a quoted field (\"\")") from None
    if header is None:
        if not records:
            return Rows([], [], ())
        header, records, line_numbers = records[0], records[1:], line_numbers[1:]
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise ValueError(f"{path}:1: the header names column(s) {repeated} more than once; give each column "
                         "its own name")
    for record, line in zip(records, line_numbers):
        if len(record) != len(header):
            raise ValueError(f"{path}:{line}: {len(record)} field(s), but the header has {len(header)} "
                             f"({list(header)}): does a field hold {separator}, or is one missing?")
    return Rows([dict(zip(header, record)) for record in records], line_numbers, header)


def read_rows(path, file_format=None, header=None):
    """`Rows` of a CSV, TSV (as GLUE writes it: quotes are plain characters) or JSONL file, a Parquet file or a 🤗
    dataset; `header` names the columns of a file without a header line. Bad rows are a ValueError naming the line.
    """
    if file_format is None and is_table(path):
        return read_table(path)
    file_format = file_format or os.path.splitext(path)[1].lstrip(".").lower()
    if file_format not in ("csv", "tsv", "jsonl"):
        raise ValueError(f"{path}: unknown format {file_format!r}; use csv, tsv or jsonl")
    text = _read_text(path)
    return _jsonl_rows(path, text) if file_format == "jsonl" else _csv_rows(path, text, file_format, header)


def _cells(rows, name, path):
    """`(line, value)` of column `name` in every row; a row without it is refused."""
    for row, line in zip(rows, rows.line_numbers):
        if row.get(name) is None:
            raise ValueError(f"{path}:{line}: no {name!r} (missing or null); give every row one, or remove it")
        yield line, row[name]


def is_blank(text):
    """Whether `text` holds nothing the tokenizer keeps (whitespace, controls, zero-width characters, U+FFFD).

    >>> is_blank(" \\u200b\\u200d\\ufeff"), is_blank("a\\u200b")
    (True, False)
    """
    return all(unicodedata.category(c)[0] in "CZ" or c == "\ufffd" for c in text)


def _text_column(rows, name, path):
    column = []
    for line, value in _cells(rows, name, path):
        if not isinstance(value, str):
            raise ValueError(f"{path}:{line}: {name!r} is a {rows.value_kind}{type(value).__name__}, not a text; "
                             "write it as a string")
        if is_blank(value):
            raise ValueError(f"{path}:{line}: {name!r} is empty (or holds only invisible characters)")
        column.append(value)
    return tuple(column)


def _label_text(value, line, path, name, value_kind="JSON "):
    """A class label as text: strings stripped, JSON numbers as written without a needless `.0`."""
    if isinstance(value, bool):
        value = json.dumps(value)
    elif isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError(f"{path}:{line}: {name!r} is {value}, not a class; give the row its label")
        value = str(int(value)) if float(value).is_integer() else repr(value)
    elif not isinstance(value, str):
        raise ValueError(f"{path}:{line}: {name!r} is a {value_kind}{type(value).__name__}, not a label")
    label = value.strip()
    if not label or label.lower() in ("nan", "null", "none"):
        raise ValueError(f"{path}:{line}: {name!r} is {value!r}, a missing value, not a class; give the row its "
                         "label, or remove it")
    return label


def _class_labels(rows, name, path):
    """The label column as class names. Labels written differently (`1`, `"1"` and `1.0` in JSONL;
    `class` and `class ` with a space) are one class, which a warning says."""
    labels, spellings = [], {}
    for line, value in _cells(rows, name, path):
        label = _label_text(value, line, path, name, rows.value_kind)
        spellings.setdefault(label, set()).add(json.dumps(value))
        labels.append(label)
    merged = {label: sorted(forms) for label, forms in spellings.items() if len(forms) > 1}
    if merged:
        logging.warning("%s: labels written differently are read as one class: %s", path,
                        "; ".join(f"{label!r} (from {', '.join(forms)})" for label, forms in merged.items()))
    return tuple(labels)


def _scores(rows, name, path):
    scores = []
    for line, value in _cells(rows, name, path):
        try:
            score = float(value) if not isinstance(value, bool) else None
        except (TypeError, ValueError):
            score = None
        if score is None:
            raise ValueError(f"{path}:{line}: regression label {value!r} is not a number")
        if not math.isfinite(score):
            raise ValueError(f"{path}:{line}: regression label {value!r} is not a finite number; fix or remove "
                             "the row")
        scores.append(score)
    return np.asarray(scores, np.float32)


class UnknownLabelsError(ValueError):
    """Labels outside the declared set; `unknown` lists them."""

    def __init__(self, message, unknown):
        super().__init__(message)
        self.unknown = unknown


def label_ids(values, label_names, source):
    """Label strings → ids in `label_names`; unknown labels are an `UnknownLabelsError` listing them."""
    index = {name: i for i, name in enumerate(label_names)}
    unknown = sorted({str(v) for v in values} - set(index))
    if unknown:
        raise UnknownLabelsError(f"{source}: labels {unknown[:10]} are not in the declared set "
                                 f"{list(label_names)}", unknown)
    return np.asarray([index[str(v)] for v in values], np.int32)


def check_label_names(label_names):
    """Refuses a declared label set with a name twice (or blank): ids would be ambiguous."""
    repeated = sorted({name for name in label_names if list(label_names).count(name) > 1})
    if repeated:
        raise ValueError(f"label_names {list(label_names)} name {repeated} more than once; name each class once")
    if any(not str(name).strip() for name in label_names):
        raise ValueError(f"label_names {list(label_names)} hold a blank name")


def read_text_file(path, text_columns, label_column=None, label_names=None, id_column=None, file_format=None,
                   regression=False, label_optional=False):
    """Text classification examples and their label names from a CSV, TSV or JSONL file, a Parquet file or a 🤗
    dataset: one or two `text_columns`; `label_names` None: a `ClassLabel`'s, else those in the file, sorted;
    `label_optional`: a file without `label_column` is unlabelled. Bad input is a ValueError naming the line.

    Example:
    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "reviews.jsonl")
    >>> _ = open(path, "w").write('{"text": "great", "stars": "pos"}\\n{"text": "bad", "stars": "neg"}\\n')
    >>> examples, names = read_text_file(path, ["text"], "stars")
    >>> names, examples.labels.tolist()
    (('neg', 'pos'), [1, 0])
    """
    if len(text_columns) not in (1, 2):
        raise ValueError(f"text_columns: one column (single texts) or two (pairs), got {list(text_columns)}")
    if label_names is not None:
        check_label_names(label_names)
    rows = read_rows(path, file_format)
    if not rows:
        raise ValueError(f"{path}: no examples")
    require_columns(rows, list(text_columns), path, "text_columns")
    if label_optional and label_column not in rows.columns:
        label_column = None
    if label_column is not None:
        require_columns(rows, [label_column], path, "label_column")
    texts = tuple(_text_column(rows, name, path) for name in text_columns)
    ids = tuple(str(value) for _, value in _cells(rows, id_column, path)) if id_column else \
        tuple(str(i) for i in range(len(rows)))
    if label_column is None:
        return TextExamples(texts, np.full(len(rows), UNLABELLED, np.int32), ids), label_names
    if regression:
        return TextExamples(texts, _scores(rows, label_column, path), ids), None
    values = _class_labels(rows, label_column, path)
    label_names = tuple(label_names) if label_names is not None else \
        rows.class_names.get(label_column) or tuple(sorted(set(values)))
    return TextExamples(texts, label_ids(values, label_names, path), ids), label_names


def read_glue_tsv(data_dir, task, split):
    """A GLUE split from the files of the GLUE download (`data_dir/<Task>/<split>.tsv`, or `data_dir/<split>.tsv`)."""
    task = glue_task(task) if isinstance(task, str) else task
    if split not in task.splits:
        raise ValueError(f"{task.name} has splits {sorted(task.splits)}, not {split!r}")
    filename = task.splits[split][0]
    candidates = [os.path.join(data_dir, GLUE_FOLDERS[task.name], filename), os.path.join(data_dir, filename)]
    path = next((p for p in candidates if tf.io.gfile.exists(p)), None)
    if path is None:
        raise FileNotFoundError(f"{task.name} {split}: none of {candidates} exists")
    is_test = split.startswith("test")
    header = task.tsv_header if task.tsv_header and not is_test else None
    rows = read_rows(path, "tsv", header=header)
    if not rows:
        raise ValueError(f"{path}: no examples")
    require_columns(rows, task.tsv_text, path)  # test files name their text columns as train/dev do
    texts = tuple(_text_column(rows, name, path) for name in task.tsv_text)
    if is_test:
        id_column = "index" if "index" in rows.columns else "id"
        require_columns(rows, [id_column], path)
        ids = tuple(value for _, value in _cells(rows, id_column, path))
        return TextExamples(texts, np.full(len(rows), UNLABELLED, np.int32), ids)
    require_columns(rows, [task.tsv_label], path)
    labels = _scores(rows, task.tsv_label, path) if task.label_names is None else \
        label_ids(_class_labels(rows, task.tsv_label, path), task.label_names, path)
    return TextExamples(texts, labels, tuple(str(i) for i in range(len(rows))))


def read_glue_tfds(task, split, data_dir=None):
    """A GLUE split from TensorFlow Datasets (`glue/<task>`); test labels are -1, as TFDS stores them."""
    task = glue_task(task) if isinstance(task, str) else task
    if split not in task.splits:
        raise ValueError(f"{task.name} has splits {sorted(task.splits)}, not {split!r}")
    dataset = load_split(f"glue/{task.name}", task.splits[split][1], data_dir)
    texts = [[] for _ in task.tfds_text]
    labels, ids = [], []
    for example in dataset.as_numpy_iterator():
        for column, key in zip(texts, task.tfds_text):
            column.append(example[key].decode("utf-8"))
        labels.append(example["label"])
        ids.append(str(example["idx"]))
    if not labels:
        raise ValueError(f"glue/{task.name} {split}: no examples")
    dtype = np.float32 if task.label_names is None else np.int32
    return TextExamples(tuple(map(tuple, texts)), np.asarray(labels, dtype), tuple(ids))


def token_lengths(examples, tokenizer, batch_size=1024):
    """Each example's tokens over all its texts (before truncation), int array `[N]`."""
    lengths = [sum(tokenizer(tf.constant(column[start:start + batch_size])).row_lengths().numpy()
                   for column in examples.texts) for start in range(0, len(examples), batch_size)]
    return np.concatenate(lengths) if lengths else np.zeros(0, np.int64)


def packed_lengths(examples, tokenizer, sequence_length):
    """Each example's length packed as `[CLS] A [SEP] (B [SEP])`, at most `sequence_length`."""
    return np.minimum(token_lengths(examples, tokenizer) + 1 + examples.num_segments, sequence_length)


def count_truncated(examples, tokenizer, sequence_length):
    """How many examples do not fit in `sequence_length` tokens (they are truncated, longest segment first)."""
    return int(np.sum(token_lengths(examples, tokenizer) > sequence_length - 1 - examples.num_segments))


def classification_dataset(examples, tokenizer, sequence_length=128, batch_size=32, shuffle=False, seed=0,
                           pad_to_max_length=True):
    """`(inputs, labels)` batches (`batching.batch_examples`), tokenized in-graph and truncated; labels are class
    ids (int32) or scores (float32, `[batch, 1]`), -1 when unlabelled."""
    labels = examples.labels if examples.labels.dtype != np.float32 else examples.labels[:, None]
    dataset = tf.data.Dataset.from_tensor_slices((tuple(np.asarray(c, object) for c in examples.texts), labels))
    keys = None if pad_to_max_length else batching.bucket_keys(packed_lengths(examples, tokenizer, sequence_length))
    dataset = batching.batch_examples(dataset, batch_size, shuffle, seed, keys)
    encode = tokenizer.encode_function(sequence_length, len(examples.texts) == 2, pad_to_max_length)
    return dataset.map(lambda texts, batch_labels: (encode(*texts), batch_labels), num_parallel_calls=tf.data.AUTOTUNE,
                       deterministic=True).prefetch(tf.data.AUTOTUNE)
