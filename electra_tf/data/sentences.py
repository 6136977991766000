"""A simple sentence splitter for English-like and CJK prose (the rules: docs/pretraining.md), by hand because no
splitter is a dependency (tensorflow-text's `StateBasedSentenceBreaker` breaks `3.14` apart). It errs on the side
of splitting: the packer only uses it to cut a line too long for an example, at word boundaries for BERT's
tokenizer, so the tokens are the line's.

Example:
>>> split_sentences("It rained. We stayed in! Did you? (Yes.) version 3.14 is out.")
['It rained.', 'We stayed in!', 'Did you?', '(Yes.) version 3.14 is out.']
>>> split_sentences("他说：“下雨了。”我们没出门！真的吗?当然……好吧")
['他说：“下雨了。”', '我们没出门！', '真的吗?', '当然……', '好吧']
"""

import re

from electra_tf.text.cjk import PYTHON_CJK_IDEOGRAPH as IDEOGRAPH

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")
_CJK_SENTENCE_END = re.compile(rf"(?:[。！？；｡]|(?<={IDEOGRAPH})[!?;…])[。！？；｡!?;…]*[”’」』）》〉】〕\"')\]]*")


def split_sentences(text):
    """The sentences of `text`, stripped, empty ones dropped."""
    sentences = []
    for part in _SENTENCE_END.split(text):
        start = 0
        for end in _CJK_SENTENCE_END.finditer(part):
            sentences.append(part[start:end.end()])
            start = end.end()
        sentences.append(part[start:])
    return [sentence.strip() for sentence in sentences if sentence.strip()]
