"""Writes the fixture of transformers-style tokenizer calls: what Hugging Face's `BertTokenizerFast` returns for
`tokenizer(...)`, `encode`, `decode`, `batch_decode` and the token/id conversions on the fixture vocabulary.

Needs only `transformers`, `tokenizers`, `numpy` and `absl-py` (no torch, no
TensorFlow, not this package), e.g. in a side venv:

    python -m venv /tmp/hfapi && /tmp/hfapi/bin/pip install transformers tokenizers numpy absl-py
    /tmp/hfapi/bin/python tools/make_tokenizer_call_fixtures.py

`tests/transformers/test_tokenizer_calls.py` replays every call on `ElectraTokenizer`
(which then needs no transformers). Each call is recorded as
`{"setting", "method", "args", "kwargs"}` with its `output` (NumPy arrays as
`{"dtype", "shape", "values"}`) or, when transformers raises, its `error`. The
tokenizer is loaded from a copy of `--vocab` with `model_max_length=512` (the
released ELECTRA tokenizers' value, and `ElectraTokenizer`'s default), cased and
uncased.
"""

import json
import os
import shutil
import sys
import tempfile

import numpy as np
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("vocab", "tests/fixtures/tokenizer/vocab.txt", "The vocab.txt the calls run on.")
flags.DEFINE_string("output", "tests/fixtures/tokenizer/call_outputs.json", "Where the recorded calls go.")

MODEL_MAX_LENGTH = 512
SETTINGS = {"uncased": {"lowercase": True, "strip_accents": None},
            "cased": {"lowercase": False, "strip_accents": False}}

SENTENCE = "I love natural language processing!"
TEXTS = [
    SENTENCE,
    "Hello, world! It's (a) don't test; isn't it? We're sure: they've gone.",
    "Héllo Wörld, café naïve façade résumé. Ångström ÀÉÎÕÜ",
    "中文字符 and 日本語のテキスト mixed with English.",
    "Emoji 👍🏽 and symbols ☃ ✓ ∑, $5.99 (e.g. 1,000.25).",
    "McDonald's iPhone XML-RPC HTTPServer __init__",
    "",
    "   ",
]
SHORT = ["a b", "c", "d e f g h"]
LONG_A = "the quick brown fox jumps over the lazy dog and runs"  # 11 words
LONG_B = "we saw it"
LONG = "one two three " * 250  # > 512 pieces: truncation=True cuts it at model_max_length


def calls():
    """(setting, method, args, kwargs) of every recorded call."""
    for setting in SETTINGS:
        for text in TEXTS:
            yield setting, "__call__", [text], {}
        yield setting, "__call__", [TEXTS], {}
        yield setting, "__call__", [TEXTS[:3], TEXTS[3:6]], {"padding": True}
        yield setting, "encode", [TEXTS[1]], {}
        yield setting, "encode", [TEXTS[2], TEXTS[3]], {}
    yield "uncased", "__call__", [SENTENCE], {"return_tensors": "np"}
    yield "uncased", "__call__", [SHORT], {"padding": True, "return_tensors": "np"}
    for padding in (False, True, "longest", "max_length", "do_not_pad"):
        yield "uncased", "__call__", [SHORT], {"padding": padding, "max_length": 9}
        yield "uncased", "__call__", [SHORT, ["x y z", "", "w"]], {"padding": padding}
    yield "uncased", "__call__", [SHORT[2]], {"padding": "max_length", "max_length": 4}
    yield "uncased", "__call__", [SHORT], {"padding": "max_length", "truncation": True, "max_length": 5}
    yield "uncased", "__call__", [LONG], {"truncation": True}
    yield "uncased", "__call__", [[LONG, SHORT[0]]], {"truncation": True, "padding": "max_length"}
    yield "uncased", "__call__", [LONG, LONG_B], {"truncation": "longest_first"}
    for truncation in (True, "longest_first", "only_first", "only_second"):
        for max_length in range(0, 18):
            yield "uncased", "__call__", [LONG_A], {"truncation": truncation, "max_length": max_length}
            for first, second in ((LONG_A, LONG_B), (LONG_B, LONG_A), (LONG_A, LONG_A), (LONG_B, "")):
                yield "uncased", "__call__", [first, second], {"truncation": truncation, "max_length": max_length}
            yield "uncased", "__call__", [LONG_A, LONG_B], {"truncation": truncation, "max_length": max_length,
                                                            "add_special_tokens": False}
    yield "uncased", "__call__", [[LONG_A, LONG_B], [LONG_B, LONG_A]], {"truncation": True, "max_length": 10,
                                                                        "padding": True}
    yield "uncased", "__call__", [[[LONG_A, LONG_B], [SHORT[0], SHORT[1]]]], {"truncation": True, "max_length": 9}
    yield "uncased", "__call__", [LONG_A], {"max_length": 6}
    yield "uncased", "__call__", [LONG_A], {"max_length": 6, "padding": True}
    yield "uncased", "__call__", [LONG_A], {"max_length": 6, "padding": "max_length"}
    yield "uncased", "__call__", [SHORT], {"add_special_tokens": False, "padding": True}
    yield "uncased", "__call__", [SHORT, SHORT[::-1]], {"add_special_tokens": False}
    yield "uncased", "__call__", [SHORT], {"return_attention_mask": False, "padding": True}
    yield "uncased", "__call__", [SHORT], {"return_token_type_ids": False}
    yield "uncased", "__call__", [SHORT[0], SHORT[1]], {"return_token_type_ids": True,
                                                       "return_attention_mask": True}
    yield "uncased", "__call__", [], {"text": SHORT[2], "text_pair": SHORT[0]}
    for setting in SETTINGS:
        yield setting, "encode", [LONG_A], {"truncation": True, "max_length": 5}
        yield setting, "encode", [LONG_A, LONG_B], {"add_special_tokens": False}
        yield setting, "encode", [SENTENCE], {"return_tensors": "np"}
        yield setting, "tokenize_to_strings", [TEXTS[1]], {}


def decode_calls(tokenizer, setting):
    """decode / batch_decode / conversions on the ids the tokenizer gives the texts (with and without
    specials), on ids that begin with a suffix piece and on unknown pieces."""
    batch = tokenizer(TEXTS, TEXTS[::-1])["input_ids"]
    # (Not a "##" + whitespace entry: transformers reads "##\xa0" as "##", we keep the vocab.txt line.)
    suffix = [i for token, i in sorted(tokenizer.get_vocab().items()) if token.startswith("##") and len(token) > 2][:3]
    sequences = batch + [suffix + batch[1][1:6], [tokenizer.unk_token_id, 5, tokenizer.pad_token_id] * 2, []]
    for ids in sequences:
        for skip in (False, True):
            yield setting, "decode", [ids], {"skip_special_tokens": skip}
            for clean_up in (False, True):
                yield setting, "decode", [ids], {"skip_special_tokens": skip,
                                                 "clean_up_tokenization_spaces": clean_up}
    yield setting, "decode", [batch[0][1]], {}
    yield setting, "batch_decode", [batch], {}
    yield setting, "batch_decode", [batch], {"skip_special_tokens": True}
    yield setting, "convert_ids_to_tokens", [batch[1]], {}
    yield setting, "convert_ids_to_tokens", [batch[1]], {"skip_special_tokens": True}
    yield setting, "convert_ids_to_tokens", [batch[1][1]], {}
    tokens = tokenizer.convert_ids_to_tokens(batch[2])
    yield setting, "convert_tokens_to_ids", [tokens + ["no-such-token", "[MASK]"]], {}
    yield setting, "convert_tokens_to_ids", [tokens[1]], {}


def jsonable(value):
    if isinstance(value, np.ndarray):
        return {"dtype": str(value.dtype), "shape": list(value.shape), "values": value.tolist()}
    if isinstance(value, dict) or hasattr(value, "data") and isinstance(value.data, dict):
        return {key: jsonable(item) for key, item in dict(value).items()}
    return value


def record(tokenizer, method, args, kwargs):
    if method == "tokenize_to_strings":  # transformers' `tokenize`: our `convert_ids_to_tokens(encode(...))`
        function = tokenizer.tokenize
    else:
        function = tokenizer if method == "__call__" else getattr(tokenizer, method)
    try:
        return {"output": jsonable(function(*args, **kwargs))}
    except Exception as error:  # recorded: the replay expects the same refusal
        return {"error": str(error)}


def main(argv):
    del argv
    import transformers
    from transformers import BertTokenizerFast

    if not os.path.isfile(FLAGS.vocab):
        print(f"--vocab={FLAGS.vocab}: no such file", file=sys.stderr)
        sys.exit(2)
    folder = tempfile.mkdtemp()
    shutil.copy(FLAGS.vocab, os.path.join(folder, "vocab.txt"))
    tokenizers = {name: BertTokenizerFast.from_pretrained(folder, do_lower_case=setting["lowercase"],
                                                          strip_accents=setting["strip_accents"],
                                                          model_max_length=MODEL_MAX_LENGTH)
                  for name, setting in SETTINGS.items()}
    shutil.rmtree(folder)
    recorded = []
    for setting, method, args, kwargs in [*calls(), *(call for name, tokenizer in tokenizers.items()
                                                      for call in decode_calls(tokenizer, name))]:
        recorded.append({"setting": setting, "method": method, "args": args, "kwargs": kwargs,
                         **record(tokenizers[setting], method, args, kwargs)})
    uncased = tokenizers["uncased"]
    properties = {name: getattr(uncased, name) for name in (
        "vocab_size", "model_max_length", "all_special_ids", "all_special_tokens", "pad_token", "pad_token_id",
        "unk_token", "unk_token_id", "cls_token", "cls_token_id", "sep_token", "sep_token_id", "mask_token",
        "mask_token_id")}
    properties["len"] = len(uncased)
    fixture = {"generator": f"transformers {transformers.__version__} BertTokenizerFast", "settings": SETTINGS,
               "properties": properties, "calls": recorded}
    with open(FLAGS.output, "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False)
    errors = sum("error" in call for call in recorded)
    print(f"{len(recorded)} calls ({errors} refused) → {FLAGS.output}")


if __name__ == "__main__":
    app.run(main)
