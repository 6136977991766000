"""Raw text into an ONNX export: `text_model.onnx`, the model with the package's tokenizer in front of it as ONNX
and onnxruntime-extensions ops (docs/serving.md, "Raw text in", says how it works and where it differs).

Example:
>>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cafe", "fox", "##es", "."]
>>> graph = tokenizer_model(WordPieceTokenizer(vocabulary), max_seq_length=8)
>>> ids = run_model(graph, {"text": ["The Café foxes.", "thé"]})
>>> ids["input_ids"].tolist(), ids["attention_mask"].tolist()
([[2, 5, 6, 7, 8, 9, 3], [2, 5, 3, 0, 0, 0, 0]], [[1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0, 0]])
"""

import functools
import importlib
import importlib.util
import json
import os
from collections.abc import Iterable, Mapping

import numpy as np
import tensorflow as tf

from electra_tf.export.ids_folder import INFO_FILE
from electra_tf.models.base import INPUT_NAMES
from electra_tf.text.normalization import PUNCTUATION, bert_normalize
from electra_tf.text.tokenizer import MAX_CHARS_PER_WORD, SUFFIX_INDICATOR, UNKNOWN_TOKEN, WordPieceTokenizer
from electra_tf.util.atomic import read_json

TEXT_MODEL_FILE = "text_model.onnx"
# The models whose text inputs the tokenizer alone makes ids of (a tagger cuts words, QA a window, multiple
# choice pairs per choice: their text models are not written yet).
TEXT_TASKS = ("discriminator", "classification", "regression")
EXTENSIONS = "onnxruntime_extensions"
EXTENSIONS_DOMAIN = "ai.onnx.contrib"
EXTRA = 'text_model.onnx needs onnxruntime-extensions: pip install ".[onnx]" (or pip install onnxruntime-extensions)'
# Characters `StringMapping` looks up one by one: every UTF-8 character but a lower-case ASCII letter, a digit or
# a space (runs of those are left as they are). std::regex on bytes (the extensions' RE2 ops did nothing here).
MAPPED = r"([^a-z0-9 \x80-\xBF][\x80-\xBF]*)"
# Code points the table covers: planes 0-2 and plane 14 (tags, variation selectors). Planes 3-13 hold nothing the
# rules change; planes 15-16 are private use, which the rules remove: `PRIVATE_USE_PLANES`, their UTF-8 bytes.
TABLE_RANGES = ((0, 0x30000), (0xE0000, 0xE1000))
PRIVATE_USE_PLANES = r"\xF3[\xB0-\xBF][\x80-\xBF]{2}|\xF4[\x80-\x8F][\x80-\xBF]{2}"
# What a removed character is mapped to (`StringMapping` maps to non-empty text), then deleted.
REMOVED = "\x01"


def require(name, extra=EXTRA):
    """The module `name`, an optional dependency, or a one-line ValueError saying how to install it (`extra`).

    >>> require("onnx").__name__
    'onnx'
    """
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ValueError(f"{extra} ({name} is not installed)") from None


def text_model_wanted(task, wanted=None):
    """Whether to write `text_model.onnx` for `task`: `wanted` True (refused where it cannot be), False, or None (where
    it can be)."""
    reason = None
    if task.task not in TEXT_TASKS:
        reason = (f"a {task.task} model's serving_default cuts raw text its own way (words, answer windows or "
                  f"choices); text models are written for {', '.join(TEXT_TASKS)}")
    elif importlib.util.find_spec(EXTENSIONS) is None:
        reason = EXTRA
    if wanted and reason:
        raise ValueError(f"--text_model: {reason}")
    return reason is None if wanted is None else bool(wanted)


@functools.lru_cache(maxsize=4)
def character_table(lowercase, strip_accents):
    """Character → what the tokenizer's rules make of it between two letters (removed: `REMOVED`), where that is not
    itself, for the code points of `TABLE_RANGES` but tab, newline and return."""
    chars = [chr(c) for start, end in TABLE_RANGES for c in range(start, end)
             if not 0xD800 <= c < 0xE000 and chr(c) not in "\t\n\r"]
    between = tf.strings.regex_replace(bert_normalize(tf.strings.join(["a", tf.constant(chars), "a"]), lowercase,
                                                      strip_accents), PUNCTUATION, r" \0 ").numpy()
    table = {char: text.decode("utf-8")[1:-1] or REMOVED for char, text in zip(chars, between)}
    return {char: text for char, text in table.items() if text != char}


class _Graph:
    """Nodes and constants of one graph, named under `prefix` (so that they never meet the model's names)."""

    def __init__(self, prefix):
        self.prefix, self.nodes, self.constants = prefix, [], []

    def constant(self, value, dtype=np.int64):
        """The name of a constant tensor holding `value` (`dtype` object: strings)."""
        onnx = require("onnx")
        name = f"{self.prefix}constant_{len(self.constants)}"
        value = np.asarray([v.encode("utf-8") for v in value] if dtype is object else value, dtype)
        self.constants.append(onnx.numpy_helper.from_array(value, name))
        return name

    @staticmethod
    def tensor(value):
        """An int64 `[1]` tensor for an attribute (`ConstantOfShape`'s value)."""
        return require("onnx").numpy_helper.from_array(np.asarray([value], np.int64))

    def op(self, op_type, *inputs, outputs=1, domain="", **attributes):
        """Adds an `op_type` node; its output name, or a list of `outputs` names."""
        onnx = require("onnx")
        name = f"{self.prefix}{op_type}_{len(self.nodes)}"
        names = [f"{name}:{i}" for i in range(outputs)]
        self.nodes.append(onnx.helper.make_node(op_type, list(inputs), names, name=name, domain=domain,
                                                **attributes))
        return names[0] if outputs == 1 else names

    def custom(self, op_type, *inputs, outputs=1, **attributes):
        return self.op(op_type, *inputs, outputs=outputs, domain=EXTENSIONS_DOMAIN, **attributes)

    def replace(self, texts, pattern, rewrite):
        """std::regex (ECMAScript, on bytes) replacement in `[rows]` strings."""
        return self.custom("StringECMARegexReplace", texts, self.constant([pattern], object),
                           self.constant([rewrite], object))

    def rows(self, splits, count):
        """`[rows, longest row]` positions into the values of the ragged rows that `splits` delimit, and `count`
        (an index one past the values) where a row is shorter."""
        starts, lengths = self.starts_and_lengths(splits)
        longest = self.op("ReduceMax", self.op("Concat", lengths, self.constant([0]), axis=0), keepdims=0)
        columns = self.op("Unsqueeze", self.op("Range", self.constant(0), longest, self.constant(1)),
                          self.constant([0]))
        inside = self.op("Less", columns, self.column(lengths))
        return self.op("Where", inside, self.op("Add", self.column(starts), columns), count)

    def starts_and_lengths(self, splits, first=0):
        """Where each ragged row from row `first` on starts among the values, and its length."""
        starts = self.op("Slice", splits, self.constant([first]), self.constant([-1]))
        ends = self.op("Slice", splits, self.constant([first + 1]), self.constant([2 ** 62]))
        return starts, self.op("Sub", ends, starts)

    def counts(self, indices, size):
        """`[size]` (a `[1]` shape) int64: how many of `indices` hold each position."""
        ones = self.op("ConstantOfShape", self.op("Shape", indices), value=self.tensor(1))
        return self.op("ScatterElements", self.op("ConstantOfShape", size, value=self.tensor(0)), indices, ones,
                       reduction="add")

    def column(self, vector):
        """`[n]` → `[n, 1]`."""
        return self.op("Unsqueeze", vector, self.constant([1]))


def _normalized(graph, texts, lowercase, strip_accents):
    """`bert_normalize` of `[rows]` strings, with spaces around what `bert_pretokenize` splits off: each character
    but lower-case ASCII letters, digits and spaces looked up in `character_table` (the text cut into those
    characters and runs of the others, mapped, joined again)."""
    texts = graph.replace(graph.replace(texts, "[\t\n\r]", " "), PRIVATE_USE_PLANES, "")
    pieces, _, _, splits = graph.custom("StringECMARegexSplitWithOffsets", texts, graph.constant([MAPPED], object),
                                        graph.constant([MAPPED], object), outputs=4)
    table = character_table(bool(lowercase), bool(strip_accents))
    mapped = graph.custom("StringMapping", pieces, map="\n".join(f"{char}\t{text}" for char, text in table.items()))
    padded = graph.op("Gather", graph.op("Concat", mapped, graph.constant([""], object), axis=0),
                      graph.rows(splits, graph.op("Size", pieces)))
    return graph.replace(graph.custom("StringJoin", padded, graph.constant([""], object), graph.constant([1])),
                         REMOVED, "")


def _token_ids(graph, texts, tokenizer):
    """WordPiece ids of `[rows]` normalised strings (words: what spaces separate): `(ids, row splits)`. The
    extensions' WordPiece keeps the pieces it found before an unknown rest of a word (BERT makes the whole word
    one [UNK]), so a word ending in [UNK] keeps only that."""
    vocabulary = tokenizer.get_vocabulary()
    word_index, words, _ = graph.custom("StringSplit", texts, graph.constant([" "], object),
                                        graph.constant([True], np.bool_), outputs=3)
    word_rows = graph.op("Squeeze", graph.op("Slice", word_index, graph.constant([0]), graph.constant([1]),
                                             graph.constant([1])), graph.constant([1]))
    word_splits = graph.op("Concat", graph.constant([0]), graph.op(
        "CumSum", graph.counts(word_rows, graph.op("Shape", texts)), graph.constant(0)), axis=0)
    pieces, piece_splits, _, _ = graph.custom(
        "WordpieceTokenizer", words, graph.constant(np.zeros([0], np.int64)), outputs=4,
        vocab=json.dumps({token: index for index, token in enumerate(vocabulary)}),
        suffix_indicator=SUFFIX_INDICATOR, unknown_token=UNKNOWN_TOKEN, max_input_chars_per_word=MAX_CHARS_PER_WORD)
    ids = graph.op("LabelEncoder", pieces, domain="ai.onnx.ml", keys_strings=vocabulary,
                   values_int64s=list(range(len(vocabulary))), default_int64=tokenizer.unk_token_id)
    count = graph.op("Size", ids)
    starts, lengths = graph.starts_and_lengths(piece_splits)
    last = graph.op("Sub", graph.op("Add", starts, lengths), graph.constant(1))  # every word has a piece
    unknown = graph.op("Equal", graph.op("Gather", ids, last), graph.constant(tokenizer.unk_token_id))
    # Each piece's word: how many words end at or before it (a 1 at each word's end, summed).
    ends = graph.counts(graph.op("Add", starts, lengths),
                        graph.op("Reshape", graph.op("Add", count, graph.constant(1)), graph.constant([1])))
    word = graph.op("Slice", graph.op("CumSum", ends, graph.constant(0)), graph.constant([0]),
                    graph.op("Reshape", count, graph.constant([1])))
    keep = graph.op("Or", graph.op("Not", graph.op("Gather", unknown, word)),
                    graph.op("Equal", graph.op("Range", graph.constant(0), count, graph.constant(1)),
                             graph.op("Gather", last, word)))
    kept_lengths = graph.op("Where", unknown, graph.constant(1), lengths)
    totals = graph.op("Concat", graph.constant([0]), graph.op("CumSum", kept_lengths, graph.constant(0)), axis=0)
    return graph.op("Compress", ids, keep, axis=0), graph.op("Gather", totals, word_splits)


def _packed(graph, ids, splits, tokenizer, max_seq_length, pair):
    """`featurize.encode`'s int32 inputs (padded to the longest row) of the WordPiece ids of `[1 + batch]` texts
    (`pair`: `[1 + 2 batch]`, the texts then their pairs), the first row left out (an empty text, there so that no
    op sees an empty batch)."""
    count = graph.op("Size", ids)
    values = graph.op("Concat", ids, graph.constant([tokenizer.pad_token_id]), axis=0)  # `count`: padding
    starts, lengths = graph.starts_and_lengths(splits, first=1)
    if pair:
        (start_a, start_b), (length_a, length_b) = (graph.op("Split", x, outputs=2, axis=0) for x in (starts, lengths))
        budget = max_seq_length - 3
        keep_a = graph.op("Min", length_a, graph.op("Max", graph.constant((budget + 1) // 2),
                                                    graph.op("Sub", graph.constant(budget), length_b)))
        keep_b = graph.op("Min", length_b, graph.op("Sub", graph.constant(budget), keep_a))
        total = graph.op("Add", graph.op("Add", keep_a, keep_b), graph.constant(3))
    else:
        start_a, keep_a = starts, graph.op("Min", lengths, graph.constant(max_seq_length - 2))
        total = graph.op("Add", keep_a, graph.constant(2))
    longest = graph.op("ReduceMax", graph.op("Concat", total, graph.constant([2]), axis=0), keepdims=0)
    position = graph.op("Unsqueeze", graph.op("Range", graph.constant(0), longest, graph.constant(1)),
                        graph.constant([0]))
    first_sep = graph.op("Add", graph.column(keep_a), graph.constant(1))
    in_a = graph.op("And", graph.op("Greater", position, graph.constant(0)), graph.op("Less", position, first_sep))
    index = graph.op("Where", in_a, graph.op("Add", graph.column(start_a),
                                             graph.op("Sub", position, graph.constant(1))), count)
    is_sep = graph.op("Equal", position, first_sep)
    mask = graph.op("Less", position, graph.column(total))
    types = None
    if pair:
        start = graph.op("Add", first_sep, graph.constant(1))
        second_sep = graph.op("Add", start, graph.column(keep_b))
        in_b = graph.op("And", graph.op("GreaterOrEqual", position, start), graph.op("Less", position, second_sep))
        index = graph.op("Where", in_b, graph.op("Add", graph.column(start_b), graph.op("Sub", position, start)), index)
        is_sep = graph.op("Or", is_sep, graph.op("Equal", position, second_sep))
        types = graph.op("And", graph.op("GreaterOrEqual", position, start), mask)
    input_ids = graph.op("Where", is_sep, graph.constant(tokenizer.sep_token_id), graph.op("Gather", values, index))
    input_ids = graph.op("Where", graph.op("Equal", position, graph.constant(0)),
                         graph.constant(tokenizer.cls_token_id), input_ids)
    types = types or graph.op("And", mask, graph.op("Less", position, graph.constant(0)))  # zeros
    return {name: graph.op("Cast", value, to=6)  # int32
            for name, value in zip(INPUT_NAMES, (input_ids, mask, types))}


def _tokenizer_graph(tokenizer, max_seq_length, text_inputs, prefix="tokenizer/"):
    """`(graph, inputs)`: the nodes that make `INPUT_NAMES` (named so) of the string `[batch]` inputs named
    `text_inputs` (one text, or a text and its pair), and those inputs' value infos."""
    onnx = require("onnx")
    if len(text_inputs) not in (1, 2):
        raise ValueError(f"a text model takes a text or a text and its pair, not {list(text_inputs)}")
    graph = _Graph(prefix)
    texts = graph.op("Concat", graph.constant([""], object), *text_inputs, axis=0)
    texts = _normalized(graph, texts, tokenizer.lowercase, tokenizer.strip_accents)
    ids, splits = _token_ids(graph, texts, tokenizer)
    for name, value in _packed(graph, ids, splits, tokenizer, max_seq_length, len(text_inputs) == 2).items():
        graph.nodes.append(onnx.helper.make_node("Identity", [value], [name], name=prefix + name))
    return graph, [onnx.helper.make_tensor_value_info(name, onnx.TensorProto.STRING, ["batch"]) for name in text_inputs]


def _with_domains(model):
    onnx = require("onnx")
    present = {opset.domain for opset in model.opset_import}
    model.opset_import.extend(onnx.helper.make_opsetid(domain, version) for domain, version in
                              ((EXTENSIONS_DOMAIN, 1), ("ai.onnx.ml", 2)) if domain not in present)
    return model


def tokenizer_model(tokenizer, max_seq_length, text_inputs=("text",)):
    """The tokenizer alone as an ONNX model: string `[batch]` inputs named `text_inputs` in, int32 `input_ids`,
    `attention_mask` and `token_type_ids` `[batch, longest]` out."""
    onnx = require("onnx")
    graph, inputs = _tokenizer_graph(tokenizer, max_seq_length, text_inputs)
    outputs = [onnx.helper.make_tensor_value_info(name, onnx.TensorProto.INT32, ["batch", "sequence"])
               for name in INPUT_NAMES]
    model = onnx.helper.make_model(onnx.helper.make_graph(graph.nodes, "tokenizer", inputs, outputs, graph.constants),
                                   opset_imports=[onnx.helper.make_opsetid("", 17)], ir_version=8)
    return _with_domains(model)


def with_tokenizer(model_bytes, tokenizer, max_seq_length, text_inputs):
    """The bytes of the ONNX model `model_bytes` (token ids in) with the tokenizer in front: `text_inputs` in, its
    outputs and `input_ids`, `attention_mask` out."""
    onnx = require("onnx")
    model = onnx.load_from_string(model_bytes)
    graph, inputs = _tokenizer_graph(tokenizer, max_seq_length, text_inputs)
    ids_inputs = {value.name: value for value in model.graph.input if value.name in INPUT_NAMES}
    others = [value for value in model.graph.input if value.name not in INPUT_NAMES]
    nodes = graph.nodes + list(model.graph.node)
    del model.graph.input[:], model.graph.node[:]
    model.graph.input.extend(inputs + others)
    model.graph.node.extend(nodes)
    model.graph.initializer.extend(graph.constants)
    model.graph.output.extend([ids_inputs["input_ids"], ids_inputs["attention_mask"]])
    return _with_domains(model).SerializeToString()


def session(model):
    """An ONNX Runtime session of a model that uses the extensions' ops (a path, bytes or a `ModelProto`)."""
    onnxruntime, extensions = require("onnxruntime"), require(EXTENSIONS)
    options = onnxruntime.SessionOptions()
    options.register_custom_ops_library(extensions.get_library_path())
    model = model if isinstance(model, (str, bytes)) else model.SerializeToString()
    return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def run_model(model, texts):
    """The outputs (name → numpy array) of a text model (see `session`) on `texts`: input name → strings."""
    runner = session(model)
    names = [output.name for output in runner.get_outputs()]
    return dict(zip(names, runner.run(None, {name: np.asarray(value, dtype=object).reshape(-1)
                                              for name, value in texts.items()})))


def text_model_path(folder):
    """The text model of an ONNX export folder, or None (another export, or one without it)."""
    info_file = os.path.join(folder, INFO_FILE)
    info = read_json(info_file, expect=dict) if os.path.isfile(info_file) else {}
    return os.path.join(folder, info["text_model"]) if info.get("text_model") else None


def query_text_model(folder, *texts, **inputs):
    """`query_export` of an ONNX export with a text model: raw texts in (positionally in the order of its text
    inputs, or by name), its outputs out, with `label` (the label names) beside `label_id` when it has them."""
    info = read_json(os.path.join(folder, INFO_FILE), expect=dict)
    names = info["text_inputs"]
    if texts and inputs or (len(texts) != len(names) if texts else sorted(inputs) != sorted(names)):
        given = [f"{len(texts)} input(s)"] * bool(texts) + [str(sorted(inputs))] * bool(inputs)
        raise ValueError(f"{folder}/{info['text_model']} takes {names}, got {' and '.join(given) or 'none'}")
    columns = {name: _text_column(name, value) for name, value in (zip(names, texts) if texts else inputs.items())}
    if len({len(column) for column in columns.values()}) > 1:
        raise ValueError(f"{' and '.join(columns)} need the same number of rows (one pair per row), got "
                         f"{' and '.join(str(len(column)) for column in columns.values())}")
    outputs = run_model(os.path.join(folder, info["text_model"]), columns)
    if info.get("label_names") and "label_id" in outputs:
        outputs["label"] = np.asarray([info["label_names"][i] for i in outputs["label_id"]], dtype=object)
    return outputs


def _text_column(name, value):
    """The texts of the input `name` (a text, or a list, tuple, 1-D array or other sequence of texts; UTF-8 bytes
    decoded) as a list of str, or a one-line ValueError naming the input, and the row that is no text."""
    rows = [value] if isinstance(value, (str, bytes)) else value
    if isinstance(rows, Mapping) or not isinstance(rows, Iterable) or getattr(rows, "ndim", 1) != 1:
        raise ValueError(f"{name} takes a text or a list of texts, got {value!r:.40} ({type(value).__name__})")
    texts = []
    for row, text in enumerate(rows):
        try:
            texts.append(text.decode("utf-8") if isinstance(text, bytes) else text)
            texts[-1].encode("utf-8")  # (a lone surrogate cannot be sent)
        except UnicodeError as error:
            raise ValueError(f"{name}[{row}] is not UTF-8 text ({error.reason} at position {error.start})") from None
        except AttributeError:
            raise ValueError(f"{name}[{row}] is {text!r:.40} ({type(text).__name__}), not a text") from None
    return texts
