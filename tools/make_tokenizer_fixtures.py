"""Writes the tokenizer parity fixture: Hugging Face `BertTokenizerFast` ids on real English text.

Needs `transformers` (pip install -e ".[fixtures]"); the tests that read the
fixture do not. Run from the repository root:

    python -m electra_tf.tools.make_tokenizer_fixtures --output_dir=tests/fixtures/tokenizer

It learns a small cased vocabulary from the default corpus (so it holds upper
case and accented pieces), then records `BertTokenizerFast`'s ids for the
corpus's first sentences and for hand-written hard cases (punctuation,
symbols, accents, digits, mixed case, CJK, emoji, control and zero-width
characters, over-long words), in three settings: uncased (lower-case + strip
accents), cased, and lower-case keeping accents.
"""

import json
import os

from absl import flags

from electra_tf.tools.common import run_tool

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", "tests/fixtures/tokenizer", "Where vocab.txt and the ids go.")
flags.DEFINE_integer("num_corpus_sentences", 300, "Sentences of the default corpus to include.")
flags.DEFINE_integer("vocab_size", 2500, "Size of the learned vocabulary.")

SETTINGS = {
    "uncased": {"lowercase": True, "strip_accents": None},
    "cased": {"lowercase": False, "strip_accents": False},
    "lowercase_keep_accents": {"lowercase": True, "strip_accents": False},
}

HARD_CASES = [
    "Héllo, Wörld! Ångström café naïve façade résumé.",
    "McDonald's iPhone XML-RPC HTTPServer getattr() __init__",
    "Prices: $5.99, €10, £3; 50% off (e.g. 1,000.25 or 3.14e-10).",
    "a+b=c <x> a|b ~x ^y `z` {k: v} [i] @user #tag & * \\ /path/to/file",
    "“Smart quotes” — em dash – en dash … ellipsis ‘single’",
    "中文字符 and 日本語のテキスト mixed with English.",
    "Emoji 👍🏽 and symbols ☃ ✓ ∑ √ ≠ ≤",
    "Tab\there, newline\nthere, bell\x07, nbsp\u00a0here, zero\u200bwidth, soft\u00adhyphen.",
    "Straße ΣΑΣ Ελληνικά İstanbul ǅemal ﬁne ﬂow",
    "x" * 60 + " " + "y" * 120 + " " + "é" * 101 + " ok",
    "UPPER lower MiXeD 123abc abc123 1st 2nd 3rd",
    "",
    "   leading and trailing spaces   ",
    "Ünïcödé accents: àáâãäå ÀÁÂÃÄÅ çÇ ñÑ øØ",
]


def corpus_sentences(limit):
    from electra_tf.data.default_corpus import default_corpus_documents
    sentences = [s for document in default_corpus_documents(max_documents=limit) for s in document]
    return sentences[:limit]


def main(argv):
    del argv
    from transformers import BertTokenizerFast

    from electra_tf.text.vocabulary import save_vocabulary
    from electra_tf.text.vocabulary_learning import build_vocabulary

    os.makedirs(FLAGS.output_dir, exist_ok=True)
    texts = corpus_sentences(FLAGS.num_corpus_sentences) + HARD_CASES
    corpus_file = os.path.join(FLAGS.output_dir, "vocab_source.txt.tmp")
    with open(corpus_file, "w", encoding="utf-8") as f:
        f.writelines(t.replace("\n", " ") + "\n" for t in texts + corpus_sentences(3000))
    vocab_file = os.path.join(FLAGS.output_dir, "vocab.txt")
    save_vocabulary(build_vocabulary([corpus_file], FLAGS.vocab_size, lowercase=False, strip_accents=False),
                    vocab_file)
    os.remove(corpus_file)

    ids = {}
    vocab_size = sum(1 for _ in open(vocab_file, encoding="utf-8"))
    for name, setting in SETTINGS.items():
        # transformers 5 ignores a `vocab_file=` argument; load the folder as users do.
        tokenizer = BertTokenizerFast.from_pretrained(
            FLAGS.output_dir, do_lower_case=setting["lowercase"], strip_accents=setting["strip_accents"],
            tokenize_chinese_chars=True)
        if len(tokenizer.get_vocab()) != vocab_size:
            raise RuntimeError(f"transformers loaded {len(tokenizer.get_vocab())} tokens, not {vocab_size}")
        ids[name] = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    fixture = {"generator": "transformers.BertTokenizerFast", "settings": SETTINGS, "texts": texts, "ids": ids}
    with open(os.path.join(FLAGS.output_dir, "bert_tokenizer_fast.json"), "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False)
    print(f"{len(texts)} texts, vocabulary of {vocab_size} → {FLAGS.output_dir}")


def run():
    run_tool(main)


if __name__ == "__main__":
    run()
