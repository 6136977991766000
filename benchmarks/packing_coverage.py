"""How much of a corpus's text the pre-training shards hold: sentence-per-line and paragraph-per-line corpora,
packed with `--long_lines=split` (the default) and `--long_lines=truncate` (the original ELECTRA's rule).

    python benchmarks/packing_coverage.py [--seq_length=128] [--vocab_size=8000]

Both corpora are made from the embedded default corpus: one sentence a line (a blank line between documents),
and the same text one paragraph a line (a docstring's sentences joined; four paragraphs a document), with every
tenth document closed by a line of 2,000+ words (paragraphs joined), as long lines of Wikipedia dumps and books
are. The table gives the tokens read, written (special tokens not counted) and dropped, from `manifest.json`.
"""

import os
import shutil
import tempfile

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_integer("seq_length", 128, "Example length.")
flags.DEFINE_integer("vocab_size", 8000, "Vocabulary learned from the corpus.")
flags.DEFINE_integer("max_documents", None, "Use the first N documents of the default corpus (default: all).")

PARAGRAPHS_PER_DOCUMENT = 4
LONG_LINE_WORDS = 2000
LONG_LINE_EVERY = 10


def paragraph_documents(documents):
    """Documents of paragraph lines from documents of sentences, with a 2,000+-word line every tenth document."""
    paragraphs = [" ".join(sentences) for sentences in documents]
    result = []
    for start in range(0, len(paragraphs), PARAGRAPHS_PER_DOCUMENT):
        lines = paragraphs[start:start + PARAGRAPHS_PER_DOCUMENT]
        if len(result) % LONG_LINE_EVERY == 0:
            long_line, i = [], start
            while len(" ".join(long_line).split()) < LONG_LINE_WORDS:
                long_line.append(paragraphs[i % len(paragraphs)])
                i += 1
            lines.append(" ".join(long_line))
        result.append(lines)
    return result


def write_documents(path, documents):
    with open(path, "w", encoding="utf-8") as f:
        for lines in documents:
            f.write("".join(line + "\n" for line in lines) + "\n")


def main(argv):
    del argv
    from electra_tf.data.default_corpus import default_corpus_documents
    from electra_tf.data.pretraining_data import build_pretraining_shards, packing_totals
    from electra_tf.text.vocabulary import save_vocabulary
    from electra_tf.text.vocabulary_learning import build_vocabulary

    work = tempfile.mkdtemp(prefix="electra_packing_")
    try:
        documents = default_corpus_documents(FLAGS.max_documents)
        corpora = {"sentence a line": documents, "paragraph a line": paragraph_documents(documents)}
        paths = {}
        for name, lines in corpora.items():
            paths[name] = os.path.join(work, name.replace(" ", "_") + ".txt")
            write_documents(paths[name], lines)
        vocab = os.path.join(work, "vocab.txt")
        save_vocabulary(build_vocabulary([paths["sentence a line"]], FLAGS.vocab_size), vocab)
        print(f"sequence length {FLAGS.seq_length}; words a line (median / p90 / max):")
        for name, lines in corpora.items():
            words = sorted(len(line.split()) for document in lines for line in document)
            print(f"  {name}: {words[len(words) // 2]} / {words[len(words) * 9 // 10]} / {words[-1]}")
        print("| corpus | --long_lines | tokens read | written | kept | dropped (reason) |\n|---|---|---|---|---|---|")
        for name, path in paths.items():
            for long_lines in ("split", "truncate"):
                out = os.path.join(work, f"{os.path.basename(path)}.{long_lines}")
                totals = packing_totals(build_pretraining_shards(
                    [path], vocab, out, max_seq_length=FLAGS.seq_length, num_shards=2, long_lines=long_lines))
                dropped = ", ".join(f"{n:,} {reason}" for reason, n in totals["tokens_dropped"].items()) or "0"
                print(f"| {name} | {long_lines} | {totals['tokens']:,} | {totals['tokens_written']:,} | "
                      f"{totals['tokens_written'] / totals['tokens']:.1%} | {dropped} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    app.run(main)
