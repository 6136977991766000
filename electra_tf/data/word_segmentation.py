"""Word boundaries of CJK text for whole-word masking, found by a word segmenter (jieba) when shards are built.

BERT's tokenizer makes every CJK ideograph a word of its own, so the `##` pieces that whole-word masking groups
never join Chinese characters: a Chinese word is only known to a segmenter. As Hugging Face's
`run_mlm_wwm.py` (`chinese_ref`) and Chinese-BERT-wwm do, the shard builder segments the text and stores, with
each example, which tokens continue the previous token's word (`continues_word`); masking then stays in-graph
(`electra_tf.pretraining.masking`).

A line is cut into runs of CJK ideographs and the text between them (`word_runs`). BERT's tokenizer splits
around every ideograph, so tokenizing the runs one by one gives the line's tokens, one token per ideograph: the
run's marks are its characters' marks. A character continues a word when the segmenter put it in the same word
as the character before it, in a word made of ideographs only (as `chinese_ref`). The segmenter runs in worker
processes of its own (`electra_tf.data.word_cutting`).

Example:
>>> word_runs("我们去Beijing看长城。", ["我们", "去", "Beijing", "看", "长城", "。"])
[('我们去', [0, 1, 0]), ('Beijing', None), ('看长城', [0, 0, 1]), ('。', None)]
"""

import re

from electra_tf.data.sentences import IDEOGRAPH

_IDEOGRAPHS = re.compile(f"{IDEOGRAPH}+")


def has_cjk(text):
    """Whether `text` holds a CJK ideograph (as BERT's tokenizer counts them).

    >>> has_cjk("ELECTRA 中文"), has_cjk("ELECTRA")
    (True, False)
    """
    return _IDEOGRAPHS.search(text) is not None


def cjk_share(texts):
    """The share of CJK ideographs among the non-space characters of `texts` (0.0 for none).

    >>> cjk_share(["ab 中", "文"])
    0.5
    """
    characters = "".join("".join(text.split()) for text in texts)
    return sum(len(run) for run in _IDEOGRAPHS.findall(characters)) / len(characters) if characters else 0.0


def word_runs(text, words):
    """`text` as consecutive runs `(run, marks)`: a run of ideographs with its characters' marks (1: the
    character continues the word of the one before it, by `words`, the segmenter's words of `text`), or the
    text between two such runs with None."""
    continues = [0] * len(text)
    start = 0
    for word in words:
        if len(word) > 1 and _IDEOGRAPHS.fullmatch(word):
            continues[start + 1:start + len(word)] = [1] * (len(word) - 1)
        start += len(word)
    if start != len(text):
        raise ValueError(f"the word segmenter's words do not make up the text: {text[:50]!r}")
    runs, end = [], 0
    for match in _IDEOGRAPHS.finditer(text):
        if match.start() > end:
            runs.append((text[end:match.start()], None))
        runs.append((match.group(), continues[match.start():match.end()]))
        end = match.end()
    if end < len(text):
        runs.append((text[end:], None))
    return runs
