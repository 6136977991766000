"""Task data as rows (`Rows`) from the sources besides CSV/TSV/JSONL: Parquet files and 🤗 datasets (hub ids,
`save_to_disk` folders, data folders), named `<source>[:<config>][@<split>]` (docs/finetuning.md). The rows are
what a CSV or JSONL file gives the task's reader, so its checks and messages are the same.

Example:
>>> import tempfile
>>> import pyarrow as pa, pyarrow.parquet as pq
>>> path = os.path.join(tempfile.mkdtemp(), "train.parquet")
>>> pq.write_table(pa.table({"text": ["good", "bad"], "label": ["pos", "neg"]}), path)
>>> rows = read_table(path)
>>> rows.columns, rows[1], rows.line_numbers
(('text', 'label'), {'text': 'bad', 'label': 'neg'}, ('row 0', 'row 1'))
>>> parse_source("nyu-mll/glue:sst2@validation"), with_split("conll2003", "dev"), with_split(path, "dev") == path
(('nyu-mll/glue', 'sst2', 'validation'), 'conll2003@dev', True)
"""

import json
import os
import re

import pyarrow.parquet as pq

from electra_tf.util.atomic import read_json

DATASETS_HINT = 'pip install datasets, or pip install ".[datasets]" in an electra_tf checkout'
_SOURCE = re.compile(r"^(?P<location>[^@]+?)(?::(?P<config>[\w.-]+))?(?:@(?P<split>[\w.-]+))?$")
_HUB_ID = re.compile(r"^[\w.-]+(?:/[\w.-]+)?$")
_FILE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".txt", ".parquet")  # a missing one is a missing file
# What `save_to_disk` writes beside the data: a DatasetDict's, a Dataset's.
_SAVED_MARKS = ("dataset_dict.json", "state.json")


class Rows(list):
    """The rows of a source as dicts (a list), with where each row is (`line_numbers`: a file's line, or `row
    <index>`), the source's column names in order (`columns`), the class names of its `ClassLabel` columns
    (`class_names`) and how its values are named in messages (`value_kind`: "JSON " for files)."""

    def __init__(self, rows, line_numbers, columns, class_names=None, value_kind="JSON "):
        super().__init__(rows)
        self.line_numbers = tuple(line_numbers)
        self.columns = tuple(columns)
        self.class_names = class_names or {}
        self.value_kind = value_kind


def require_columns(rows, names, path, flag=None):
    """Refuses `rows` without every column of `names`, naming the `flag` that chose them and the source's
    columns."""
    missing = [name for name in names if name not in rows.columns]
    if missing:
        via = f" (--{flag})" if flag else ""
        raise ValueError(f"{path}: missing column(s) {missing}{via}; the file has {list(rows.columns)}")


def parse_source(source):
    """`(location, config, split)` of a source `<id or folder>[:<config>][@<split>]` (an existing path is all
    location); a name that is no path and holds `@` or `:` otherwise is refused."""
    match = None if os.path.exists(source) or "://" in source else _SOURCE.match(source)
    if (match is None or ":" in match["location"]) and not os.path.exists(source) and re.search("[@:]", source) \
            and not source.lower().endswith(_FILE_SUFFIXES):
        raise ValueError(f"{source}: no such file or folder, nor a dataset as <id or folder>[:<config>][@<split>] "
                         "(a config or split is a name: letters, digits, '_', '.', '-')")
    return (match["location"], match["config"], match["split"]) if match else (source, None, None)


def is_table(source):
    """Whether `source` is read here: a Parquet file, a folder, or a hub dataset id (a name that is no path
    here and has no file suffix), rather than as the task's file format."""
    location = parse_source(source)[0]
    if location.endswith(".parquet") or os.path.isdir(location):
        return True
    return not os.path.exists(location) and bool(_HUB_ID.match(location)) and \
        not location.lower().endswith(_FILE_SUFFIXES)


def with_split(source, split):
    """`source` with `@<split>` when it is a dataset (a folder or hub id) that names no split itself."""
    location, _, named = parse_source(source)
    return source if named or _one_table(location) or not is_table(source) else f"{source}@{split}"


def _one_table(location):
    """What `location` is when it is one table, without configurations or splits: a Parquet file or a folder
    `Dataset.save_to_disk` wrote; else None."""
    if location.endswith(".parquet"):
        return "a Parquet file"
    return "a Dataset.save_to_disk folder" if os.path.isfile(os.path.join(location, _SAVED_MARKS[1])) else None


def read_table(source):
    """The rows of `source` (a Parquet file, a dataset folder or a hub id) as `Rows`."""
    location, config, split = parse_source(source)
    if _one_table(location) and (config or split):
        raise ValueError(f"{source}: {_one_table(location)} is one table, without configurations or splits; give "
                         f"{location}")
    if config and os.path.isfile(os.path.join(location, _SAVED_MARKS[0])):
        raise ValueError(f"{source}: a DatasetDict.save_to_disk folder has splits, not configurations; give "
                         f"{location}{f'@{split}' if split else ''}")
    if location.endswith(".parquet"):
        if not os.path.exists(location):
            raise FileNotFoundError(f"{source}: no such file or folder")
        try:
            table = pq.read_table(location)
        except Exception as e:  # noqa: BLE001 (pyarrow raises several kinds for a file that is not Parquet)
            raise ValueError(f"{source}: not a Parquet file ({type(e).__name__}: "
                             f"{(str(e).splitlines() or [''])[0]})") from None
        metadata = json.loads((table.schema.metadata or {}).get(b"huggingface", b"{}"))  # what `datasets` wrote
        features = metadata.get("info", {}).get("features") or {}
        return _rows(table.to_pylist(), table.column_names, features)
    dataset = _split(source, _load(source, location, config), split)
    return _rows(dataset.to_list(), dataset.column_names, dataset.features.to_dict())


def _load(source, location, config):
    """The `Dataset` or `DatasetDict` at `location` (a folder, or a hub id), or a ValueError saying why not."""
    try:
        import datasets  # deliberate: an optional extra, imported only for a dataset source (it takes a second)
    except ImportError:
        what = "reading a 🤗 dataset folder needs" if os.path.exists(location) else \
            "no such file or folder, and reading it as a 🤗 hub dataset id needs"
        raise ValueError(f"{source}: {what} the datasets package ({DATASETS_HINT})") from None
    saved = any(os.path.isfile(os.path.join(location, mark)) for mark in _SAVED_MARKS)
    if saved:
        _refuse_empty_splits(source, location)
    try:
        if saved:
            return datasets.load_from_disk(location)
        return datasets.load_dataset(location, config)
    except (OSError, ValueError, RuntimeError) as e:  # not found, offline: FileNotFoundError, ConnectionError
        cause = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
        if os.path.isdir(location):
            raise ValueError(f"{source}: 🤗 datasets cannot read this folder ({cause})") from None
        offline = datasets.config.HF_HUB_OFFLINE
        raise ValueError(f"{source}: no such file or folder, and no hub dataset {location!r} "
                         + ("in the Hugging Face cache (offline: HF_HUB_OFFLINE is set; load it once with network)"
                            if offline else "that 🤗 datasets could load") + f" ({cause})") from None


def _refuse_empty_splits(source, location):
    """Refuses a `save_to_disk` folder holding a split saved with no rows: it has no data file, and datasets'
    `load_from_disk` fails on it (and so on the folder) with an IndexError."""
    for name in ("", *sorted(os.listdir(location))):
        state = os.path.join(location, name, _SAVED_MARKS[1])
        if os.path.isfile(state) and read_json(state, expect=dict).get("_data_files", True) == []:
            what = f"its split {name!r} was" if name else "it was"
            raise ValueError(f"{source}: {what} saved with no rows, which 🤗 datasets cannot read back (no "
                             "examples); save the dataset without it")


def _split(source, dataset, split):
    """The split of a `DatasetDict` the source names (`dev` is also `validation` or `valid`); a `Dataset` as
    it is."""
    if not isinstance(dataset, dict):
        return dataset
    if split is None and len(dataset) == 1:
        return next(iter(dataset.values()))
    names = [split] + [split.replace("dev", alias, 1) for alias in ("validation", "valid") if "dev" in split] \
        if split else []
    found = next((name for name in names if name in dataset), None)
    if found is None:
        raise ValueError(f"{source}: no split {split!r}; it has {sorted(dataset)}: name one as <source>@<split>")
    return dataset[found]


def _class_names(feature):
    """The names of a `ClassLabel` feature (as `Features.to_dict()` writes it), or of one inside sequences."""
    while True:
        if isinstance(feature, list) and len(feature) == 1:
            feature = feature[0]
        elif isinstance(feature, dict) and "feature" in feature:
            feature = feature["feature"]
        else:
            break
    return tuple(feature["names"]) if isinstance(feature, dict) and feature.get("_type") == "ClassLabel" else None


def _named(value, names):
    """Class ids (an id, or lists of them) as their names; -1 (no label) as None."""
    if isinstance(value, list):
        return [_named(item, names) for item in value]
    return names[value] if isinstance(value, int) and 0 <= value < len(names) else None


def _rows(records, columns, features):
    """`Rows` of `records` (dicts), class ids read as names; a class column of -1 only is left out."""
    class_names = {column: names for column in columns if (names := _class_names(features.get(column)))}
    unlabelled = {column for column in class_names if records and all(row[column] == -1 for row in records)}
    columns = [column for column in columns if column not in unlabelled]
    rows = [{column: _named(row[column], class_names[column]) if column in class_names else row[column]
             for column in columns} for row in records]
    return Rows(rows, [f"row {i}" for i in range(len(rows))], columns, class_names, value_kind="value of type ")
