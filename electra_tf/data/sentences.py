"""A simple sentence splitter for English-like and CJK prose.

- English-like: a sentence ends at `.`, `!` or `?` followed by whitespace and a capital letter, an opening quote
  or bracket.
- CJK: a sentence ends after `。`, `！`, `？`, `；` (and the half-width `｡`), or after `!`, `?`, `;` or `…` right
  after a CJK ideograph (`……` too), with the closing quotes and brackets that follow (`。”`, `！』`, `？）`);
  no whitespace is needed (Chinese and Japanese put none).

Written by hand because no sentence splitter is a dependency (tensorflow-text's `StateBasedSentenceBreaker`
breaks `3.14` and `e.g.` apart); the English rule is the one the embedded default corpus has always used. It errs
on the side of splitting (`Dr. Smith` is two pieces): the pre-training packer only uses it to cut a line too long
for one example into consecutive pieces, so a wrong split just moves a segment boundary. The pieces are cut at
whitespace or right after punctuation, both word boundaries for BERT's tokenizer, so tokenizing them one by one
gives the same tokens as tokenizing the line.

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
