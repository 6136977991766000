"""Sentence(-pair) classification and regression data: GLUE (TSV files or TFDS) and CSV/TSV/JSONL files.

Every reader returns `TextExamples`: one or two columns of text, label ids
(class index, a float score for regression, -1 when the split has no
labels) and the example ids that GLUE submission files need. Tokenization
happens later, in-graph, in `classification_dataset`.

Example:
>>> examples = TextExamples(texts=(("a good film", "dull"),), labels=np.array([1, 0]), ids=("0", "1"))
>>> len(examples), examples.num_segments
(2, 1)
"""

import csv
import dataclasses
import io
import json
import os

import numpy as np
import tensorflow as tf

from electra_tf import featurize
from electra_tf.data import batching
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
class GlueTask:
    """A GLUE task: its labels (`None`: regression), metrics, and where its columns are in TSV and TFDS.

    `tsv_text`/`tsv_label` name TSV header fields (CoLA's train/dev files
    have no header: `tsv_header` gives one). `splits` maps our split names
    to (TSV file, TFDS split).
    """

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


def _splits(train="train", dev="dev", test="test"):
    return {"train": (f"{train}.tsv", "train"), "dev": (f"{dev}.tsv", "validation"), "test": (f"{test}.tsv", "test")}


_MNLI_SPLITS = {"train": ("train.tsv", "train"),
                "dev": ("dev_matched.tsv", "validation_matched"),
                "dev_mismatched": ("dev_mismatched.tsv", "validation_mismatched"),
                "test": ("test_matched.tsv", "test_matched"),
                "test_mismatched": ("test_mismatched.tsv", "test_mismatched")}
_NLI = ("entailment", "neutral", "contradiction")  # TFDS's order

# Label names are in TFDS's class order, so a TFDS label id is our id; the
# strings are what the GLUE files (and the submission server) use.
GLUE_TASKS = {task.name: task for task in (
    GlueTask("cola", ("0", "1"), ("mcc", "accuracy"), ("sentence",), "label", ("sentence",), _splits(),
             tsv_header=("source", "label", "original_label", "sentence")),
    GlueTask("sst2", ("0", "1"), ("accuracy",), ("sentence",), "label", ("sentence",), _splits()),
    GlueTask("mrpc", ("0", "1"), ("accuracy", "f1"), ("#1 String", "#2 String"), "Quality",
             ("sentence1", "sentence2"), _splits(), double_unordered=True),
    GlueTask("stsb", None, ("pearson", "spearman"), ("sentence1", "sentence2"), "score",
             ("sentence1", "sentence2"), _splits(), double_unordered=True, epochs=10),
    GlueTask("qqp", ("0", "1"), ("accuracy", "f1"), ("question1", "question2"), "is_duplicate",
             ("question1", "question2"), _splits()),
    GlueTask("mnli", _NLI, ("accuracy",), ("sentence1", "sentence2"), "gold_label", ("premise", "hypothesis"),
             _MNLI_SPLITS),
    GlueTask("qnli", ("entailment", "not_entailment"), ("accuracy",), ("question", "sentence"), "label",
             ("question", "sentence"), _splits()),
    GlueTask("rte", ("entailment", "not_entailment"), ("accuracy",), ("sentence1", "sentence2"), "label",
             ("sentence1", "sentence2"), _splits(), epochs=10),
    GlueTask("wnli", ("0", "1"), ("accuracy",), ("sentence1", "sentence2"), "label", ("sentence1", "sentence2"),
             _splits()),
    # The diagnostic set: MNLI's labels, test split only (predict with an MNLI model).
    GlueTask("ax", _NLI, ("accuracy",), ("sentence1", "sentence2"), "label", ("premise", "hypothesis"),
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
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 (byte {error.start})") from None
    if not text.strip():
        raise ValueError(f"{path}: empty file")
    return text


def read_rows(path, file_format=None, header=None):
    """Rows of a CSV, TSV or JSONL file as dicts (format from the extension unless given).

    TSV is read as GLUE writes it: tab-separated, quotes are plain characters.
    `header` names the columns of a file that has no header line.
    """
    file_format = file_format or os.path.splitext(path)[1].lstrip(".").lower()
    text = _read_text(path)
    if file_format == "jsonl":
        rows = []
        for line_number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path}:{line_number}: not JSON ({error.msg})") from None
                if not isinstance(row, dict):
                    raise ValueError(f"{path}:{line_number}: expected a JSON object per line")
                rows.append(row)
        return rows
    if file_format not in ("csv", "tsv"):
        raise ValueError(f"{path}: unknown format {file_format!r}; use csv, tsv or jsonl")
    options = {"delimiter": "\t", "quoting": csv.QUOTE_NONE} if file_format == "tsv" else {}
    lines = list(csv.reader(io.StringIO(text, newline=""), **options))
    if header is None:
        header, lines = lines[0], lines[1:]
    return [dict(zip(header, line)) for line in lines if line]


def _columns(rows, names, path):
    missing = [name for name in names if rows and name not in rows[0]]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; the file has {sorted(rows[0])}")
    columns = []
    for name in names:
        column = []
        for number, row in enumerate(rows, 1):
            value = row.get(name)
            if value is None:
                raise ValueError(f"{path}: row {number} has no {name!r}")
            column.append(str(value))
        columns.append(tuple(column))
    return tuple(columns)


def label_ids(values, label_names, source):
    """Label strings → ids in `label_names` (`None`: float scores); unknown labels are an error listing them."""
    if label_names is None:
        try:
            return np.asarray([float(v) for v in values], np.float32)
        except ValueError:
            bad = next(v for v in values if not _is_float(v))
            raise ValueError(f"{source}: regression label {bad!r} is not a number") from None
    index = {name: i for i, name in enumerate(label_names)}
    unknown = sorted({str(v) for v in values} - set(index))
    if unknown:
        raise ValueError(f"{source}: labels {unknown[:10]} are not in the declared set {list(label_names)}")
    return np.asarray([index[str(v)] for v in values], np.int32)


def _is_float(value):
    try:
        float(value)
    except ValueError:
        return False
    return True


def _check_texts(texts, source):
    for column in texts:
        for number, text in enumerate(column, 1):
            if not text.strip():
                raise ValueError(f"{source}: example {number} has an empty text")


def read_text_file(path, text_columns, label_column=None, label_names=None, id_column=None, file_format=None,
                   regression=False):
    """Text classification examples from a CSV, TSV or JSONL file.

    Args:
        text_columns: one column (single sentences) or two (pairs).
        label_column: the label's column; `None` for unlabelled data.
        label_names: the declared label set; taken from the file (sorted)
            when `None`. Labels outside it are an error.
        regression: labels are float scores.

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
    rows = read_rows(path, file_format)
    if not rows:
        raise ValueError(f"{path}: no examples")
    texts = _columns(rows, list(text_columns), path)
    _check_texts(texts, path)
    ids = _columns(rows, [id_column], path)[0] if id_column else tuple(str(i) for i in range(len(rows)))
    if label_column is None:
        return TextExamples(texts, np.full(len(rows), UNLABELLED, np.int32), ids), label_names
    (values,) = _columns(rows, [label_column], path)
    if regression:
        return TextExamples(texts, label_ids(values, None, path), ids), None
    label_names = tuple(label_names) if label_names is not None else tuple(sorted(set(values)))
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
    texts = _columns(rows, task.tsv_text, path)  # test files name their text columns as train/dev do
    if is_test:
        ids = _columns(rows, ["index" if "index" in rows[0] else "id"], path)[0]
        return TextExamples(texts, np.full(len(rows), UNLABELLED, np.int32), ids)
    (values,) = _columns(rows, [task.tsv_label], path)
    return TextExamples(texts, label_ids(values, task.label_names, path), tuple(str(i) for i in range(len(rows))))


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
                           drop_remainder=False, pad_to_max_length=True):
    """`(inputs, labels)` batches, tokenized in-graph; long examples are truncated (`count_truncated`).

    Inputs are the model's `input_ids`, `attention_mask`, `token_type_ids`, padded to `sequence_length`, or
    with `pad_to_max_length=False` length-aware (`electra_tf.data.batching`: training batches grouped by
    length, endless; evaluation batches each padded to its longest); labels are class ids (int32) or
    scores (float32, `[batch, 1]`), -1 when unlabelled.
    """
    labels = examples.labels if examples.labels.dtype != np.float32 else examples.labels[:, None]
    dataset = tf.data.Dataset.from_tensor_slices((tuple(np.asarray(c, object) for c in examples.texts), labels))
    if shuffle and not pad_to_max_length:
        keys = batching.bucket_keys(packed_lengths(examples, tokenizer, sequence_length))
        dataset = batching.bucketed_batches(dataset, keys, batch_size, seed)
    else:
        if shuffle:
            dataset = dataset.shuffle(min(len(examples), 10_000), seed=seed, reshuffle_each_iteration=True)
        dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)

    def encode(texts, batch_labels):
        pairs = texts[1] if len(texts) == 2 else None
        return featurize.encode(tokenizer, sequence_length, texts[0], pairs, pad_to_max_length), batch_labels

    return dataset.map(encode, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).prefetch(tf.data.AUTOTUNE)
