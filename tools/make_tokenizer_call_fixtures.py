"""Writes the fixture of transformers-style tokenizer calls: what Hugging Face's `BertTokenizerFast` returns for
`tokenizer(...)`, `encode`, `decode`, `batch_decode` and the token/id conversions on the fixture vocabulary.

Also the alignment a fast tokenizer gives (`word_ids`, `sequence_ids`, `tokens`,
`token_to_chars`, `char_to_token`, `token_to_word`, `word_to_tokens`,
`word_to_chars`), offsets, `is_split_into_words`, overflow with `stride`
(run_qa.py's call), special tokens written in the text, left padding, `pad()`,
`return_special_tokens_mask`/`return_length`, and the refusals of bad input,
on the English fixture vocabulary and on the Chinese one of the hub cache fixture.

Needs only transformers 4.x, `tokenizers`, `numpy` and `absl-py` (no torch, no
TensorFlow, not this package), e.g. in a side venv:

    python -m venv /tmp/hfapi && /tmp/hfapi/bin/pip install "transformers<5" tokenizers numpy absl-py
    /tmp/hfapi/bin/python tools/make_tokenizer_call_fixtures.py

`tests/transformers/test_tokenizer_calls.py` replays every call on
`electra_tf.transformers.tokenizer.ElectraTokenizer` (which then needs no
transformers). Each call is recorded as `{"setting", "method", "args",
"kwargs"}` with its `output` (NumPy arrays as `{"dtype", "shape", "values"}`;
for "aligned_call" also its `alignment`) or, when transformers raises, its
`error`. The tokenizer is loaded from a copy of the setting's vocabulary with
`model_max_length=512` (the released ELECTRA tokenizers' value, and
`ElectraTokenizer`'s default).
"""

import copy
import json
import os
import shutil
import sys
import tempfile

import numpy as np
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("vocab", "tests/fixtures/tokenizer/vocab.txt", "The English vocab.txt the calls run on.")
flags.DEFINE_string("chinese_vocab", "tests/fixtures/hf_cache/hub/models--hfl--chinese-electra-180g-small-"
                    "discriminator/snapshots/e7d7c28ebe568ed7aba96d32545a5204eabfe13a/vocab.txt",
                    "The Chinese vocab.txt of the 'chinese' setting.")
flags.DEFINE_string("output", "tests/fixtures/tokenizer/call_outputs.json", "Where the recorded calls go.")

MODEL_MAX_LENGTH = 512
SETTINGS = {"uncased": {"lowercase": True, "strip_accents": None},
            "cased": {"lowercase": False, "strip_accents": False},
            "left": {"lowercase": True, "strip_accents": None, "padding_side": "left"},
            "chinese": {"lowercase": True, "strip_accents": None}}

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
    for setting in ("uncased", "cased"):
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
    for setting in ("uncased", "cased"):
        yield setting, "encode", [LONG_A], {"truncation": True, "max_length": 5}
        yield setting, "encode", [LONG_A, LONG_B], {"add_special_tokens": False}
        yield setting, "encode", [SENTENCE], {"return_tensors": "np"}
        yield setting, "tokenize_to_strings", [TEXTS[1]], {}


QUESTIONS = ["Who jumps over the dog?", "What did we see?"]
CONTEXTS = [LONG_A + ". " + LONG_A.upper() + " again, and it was fine.", LONG_B + " in Paris, (France)."]
SPECIAL_TEXTS = ["The [MASK] sat on the mat.", "a[MASK]b [SEP]c[CLS] [PAD][UNK]", "[mask] is lower, [ MASK ] spaced",
                 "[MASK][MASK] [MASK]", "Héllo [MASK]!"]
WORDS = [["Hello", "world", "!"], ["McDonald's", "iPhone", "[MASK]", "résumé"], ["", "a"], ["x y", "中文"]]
CHINESE = ["中文字符 ELECTRA 模型，很好！", "我爱北京天安门。NBA和BERT都是英文。", "３.５亿元，“引号”……结束"]


def aligned_calls():
    """Calls whose alignment (word and sequence ids, offsets, char/token/word maps) is recorded too."""
    for setting in ("uncased", "cased", "chinese"):
        texts = CHINESE if setting == "chinese" else TEXTS[:6] + SPECIAL_TEXTS
        for text in texts:
            yield setting, [text], {"return_offsets_mapping": True}
        yield setting, [texts[:3], texts[3:6]], {"return_offsets_mapping": True, "padding": True}
        yield setting, [WORDS], {"is_split_into_words": True, "return_offsets_mapping": True, "padding": True}
    yield "uncased", [WORDS[1], WORDS[0]], {"is_split_into_words": True, "return_offsets_mapping": True}
    yield "uncased", [SPECIAL_TEXTS[0], SPECIAL_TEXTS[1]], {"return_special_tokens_mask": True}
    # run_qa.py's features: questions and contexts, the context cut into windows that overlap by `stride`.
    for setting, questions, contexts in (("uncased", QUESTIONS, CONTEXTS), ("chinese", CHINESE[:2], CHINESE[1:])):
        for stride in (0, 3):
            yield setting, [questions, contexts], {
                "truncation": "only_second", "max_length": 20, "stride": stride, "return_overflowing_tokens": True,
                "return_offsets_mapping": True, "padding": "max_length"}
    yield "uncased", [CONTEXTS], {"truncation": True, "max_length": 9, "stride": 2, "return_overflowing_tokens": True,
                                  "return_offsets_mapping": True, "return_special_tokens_mask": True,
                                  "return_length": True}
    for truncation in ("longest_first", "only_first", "only_second"):
        for max_length, stride in ((12, 2), (9, 4), (16, 0)):
            yield "uncased", [[LONG_A, LONG_B], [LONG_B, LONG_A]], {
                "truncation": truncation, "max_length": max_length, "stride": stride,
                "return_overflowing_tokens": True, "padding": True}
    yield "uncased", [CONTEXTS[0]], {"truncation": True, "max_length": 8, "stride": 3}  # no overflow asked
    yield "left", [WORDS[:2]], {"is_split_into_words": True, "padding": True, "return_offsets_mapping": True}


def other_calls():
    """The new calls recorded without alignment: padding side, masks and lengths, pad_to_multiple_of, tokenize,
    refusals of bad input and arguments."""
    for setting in ("uncased", "left"):
        yield setting, "__call__", [SHORT], {"padding": True, "return_special_tokens_mask": True, "return_length": True}
        yield setting, "__call__", [SHORT, SHORT[::-1]], {"padding": "max_length", "max_length": 12,
                                                          "return_tensors": "np"}
        yield setting, "__call__", [SHORT], {"padding": True, "padding_side": "right" if setting == "left" else "left"}
        yield setting, "__call__", [SHORT], {"padding": True, "pad_to_multiple_of": 4, "return_length": True}
    yield "uncased", "__call__", [SHORT[0]], {"return_length": True, "return_special_tokens_mask": True}
    yield "uncased", "__call__", [SHORT], {"padding": False, "pad_to_multiple_of": 4}
    yield "uncased", "__call__", [SHORT], {"return_tensors": "np", "padding": True, "return_offsets_mapping": True,
                                           "return_overflowing_tokens": True, "truncation": True, "max_length": 4}
    for setting in ("uncased", "cased", "chinese"):
        for text in (SPECIAL_TEXTS if setting != "chinese" else CHINESE):
            yield setting, "tokenize", [text], {}
            yield setting, "tokenize", [text], {"add_special_tokens": True}
        yield setting, "tokenize", [SENTENCE, LONG_B], {"add_special_tokens": True}
        yield setting, "encode", [SPECIAL_TEXTS[1]], {}
    # Bad input: transformers' refusals (one line each).
    for args, kwargs in (([None], {}), ([123], {}), ([["a", None]], {}), ([["a", "b"], ["c"]], {}),
                         ([[["a", "b"], ["c"]]], {}), ([["a", 1]], {}), ([[]], {}), ([("a", "b")], {}),
                         (["a"], {"text_pair": 5}), ([["a"]], {"is_split_into_words": True, "text_pair": ["b", 3]}),
                         ([SHORT[2]], {"truncation": True, "max_length": 4, "stride": 4,
                                       "return_overflowing_tokens": True}),
                         ([SHORT[2]], {"truncation": True, "max_length": 6, "stride": 5,
                                       "return_overflowing_tokens": True}),
                         ([SHORT[2]], {"padding_side": "middle", "padding": True}),
                         ([SHORT], {"padding": True, "pad_to_multiple_of": 0})):
        yield "uncased", "__call__", args, kwargs


def pad_calls(tokenizer, setting):
    """`pad` on a list of features (as the data collators call it) and on a dict of lists."""
    features = [dict(tokenizer(text)) for text in SHORT]
    features_with_masks = [dict(tokenizer(text, return_special_tokens_mask=True)) for text in SHORT]
    labelled = [{**feature, "label": index} for index, feature in enumerate(features)]
    yield setting, "pad", [features], {}
    yield setting, "pad", [features], {"return_tensors": "np"}
    yield setting, "pad", [features_with_masks], {"padding": "max_length", "max_length": 8}
    yield setting, "pad", [features], {"pad_to_multiple_of": 4, "return_attention_mask": False}
    yield setting, "pad", [labelled], {"return_tensors": "np"}
    yield setting, "pad", [dict(tokenizer(SHORT))], {"padding": "longest"}
    yield setting, "pad", [features[0]], {"padding": "max_length", "max_length": 6}
    yield setting, "pad", [features], {"padding": False}
    yield setting, "pad", [[{"input_ids": feature["input_ids"]} for feature in features]], {"return_tensors": "np"}
    yield setting, "pad", [features], {"padding": True, "padding_side": "left" if setting == "uncased" else "right"}
    yield setting, "pad", [[{"attention_mask": [1]}]], {}


def alignment(encoding):
    """What a fast tokenizer's `BatchEncoding` says about each row: tokens, word and sequence ids, and the maps
    between tokens, words and characters (None where it gives none). (`token_to_word`/`token_to_sequence` are
    `word_ids`/`sequence_ids` read one token at a time: not recorded twice.)"""
    rows = []
    for row in range(len(encoding.encodings)):
        tokens = encoding.tokens(row)
        sequences = sorted({s for s in encoding.sequence_ids(row) if s is not None})
        words = {s: sorted({w for w, q in zip(encoding.word_ids(row), encoding.sequence_ids(row)) if q == s and w is not None})
                 for s in sequences}
        chars = max((end for _, end in encoding[row].offsets), default=0) + 1
        rows.append({
            "tokens": tokens, "word_ids": encoding.word_ids(row), "sequence_ids": encoding.sequence_ids(row),
            "token_to_chars": [maybe_list(encoding.token_to_chars(row, t)) for t in range(len(tokens))],
            "char_to_token": {s: [encoding.char_to_token(row, c, s) for c in range(chars)] for s in sequences},
            "word_to_tokens": {s: [maybe_list(encoding.word_to_tokens(row, w, s)) for w in range(max(words[s], default=-1) + 2)]
                               for s in sequences},
            "word_to_chars": {s: [maybe_list(encoding.word_to_chars(row, w, s)) for w in words[s]] for s in sequences}})
    return rows


def maybe_list(span):
    return None if span is None else list(span)


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
        return {str(key): jsonable(item) for key, item in dict(value).items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    return value


def record(tokenizer, method, args, kwargs):
    if method == "tokenize_to_strings":  # (the calls of the first fixture: `tokenize` on a text)
        function = tokenizer.tokenize
    else:
        function = tokenizer if method in ("__call__", "aligned_call") else getattr(tokenizer, method)
    try:
        output = function(*args, **kwargs)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # recorded: the replay expects the same refusal (Rust panics included)
        return {"error": str(error).split("\n")[0]}
    if method == "aligned_call":
        return {"output": jsonable(output), "alignment": jsonable(alignment(output))}
    return {"output": jsonable(output)}


def main(argv):
    del argv
    import transformers
    from transformers import BertTokenizerFast, ElectraTokenizerFast

    if not transformers.__version__.startswith("4."):
        print(f"transformers {transformers.__version__}: the fixture records transformers 4.x", file=sys.stderr)
        sys.exit(2)
    for path in (FLAGS.vocab, FLAGS.chinese_vocab):
        if not os.path.isfile(path):
            print(f"{path}: no such file", file=sys.stderr)
            sys.exit(2)
    tokenizers = {}
    for name, setting in SETTINGS.items():
        folder = tempfile.mkdtemp()
        shutil.copy(FLAGS.chinese_vocab if name == "chinese" else FLAGS.vocab, os.path.join(folder, "vocab.txt"))
        kind = ElectraTokenizerFast if name == "chinese" else BertTokenizerFast
        tokenizers[name] = kind.from_pretrained(folder, do_lower_case=setting["lowercase"],
                                                strip_accents=setting["strip_accents"],
                                                model_max_length=MODEL_MAX_LENGTH,
                                                padding_side=setting.get("padding_side", "right"))
        shutil.rmtree(folder)
    recorded = []
    every_call = [*calls(), *(call for name in ("uncased", "cased") for call in decode_calls(tokenizers[name], name)),
                  *((setting, "aligned_call", args, kwargs) for setting, args, kwargs in aligned_calls()),
                  *other_calls(), *pad_calls(tokenizers["uncased"], "uncased"), *pad_calls(tokenizers["left"], "left")]
    for setting, method, args, kwargs in every_call:  # (`pad` pads the lists it is given: it gets a copy)
        recorded.append({"setting": setting, "method": method, "args": copy.deepcopy(args), "kwargs": kwargs,
                         **record(tokenizers[setting], method, copy.deepcopy(args), kwargs)})
    uncased = tokenizers["uncased"]
    properties = {name: getattr(uncased, name) for name in (
        "vocab_size", "model_max_length", "all_special_ids", "all_special_tokens", "pad_token", "pad_token_id",
        "unk_token", "unk_token_id", "cls_token", "cls_token_id", "sep_token", "sep_token_id", "mask_token",
        "mask_token_id", "padding_side", "is_fast")}
    properties["len"] = len(uncased)
    fixture = {"generator": f"transformers {transformers.__version__} BertTokenizerFast, ElectraTokenizerFast",
               "settings": SETTINGS, "vocabularies": {"chinese": FLAGS.chinese_vocab},
               "properties": properties, "calls": recorded}
    with open(FLAGS.output, "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False)
    errors = sum("error" in call for call in recorded)
    print(f"{len(recorded)} calls ({errors} refused) → {FLAGS.output}")


if __name__ == "__main__":
    app.run(main)
