"""A simple sentence splitter for English-like prose: a sentence ends at `.`, `!` or `?` followed by
whitespace and a capital letter, an opening quote or bracket.

Written by hand because no sentence splitter is a dependency (tensorflow-text's `StateBasedSentenceBreaker`
breaks `3.14` and `e.g.` apart); it is the rule the embedded default corpus has always used. It errs on the
side of splitting (`Dr. Smith` is two pieces): the pre-training packer only uses it to cut a line too long
for one example into consecutive pieces, so a wrong split just moves a segment boundary. The pieces are cut
at whitespace, so tokenizing them one by one gives the same tokens as tokenizing the line.

Example:
>>> split_sentences("It rained. We stayed in! Did you? (Yes.) version 3.14 is out.")
['It rained.', 'We stayed in!', 'Did you?', '(Yes.) version 3.14 is out.']
"""

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")


def split_sentences(text):
    """The sentences of `text`, stripped, empty ones dropped."""
    return [sentence.strip() for sentence in _SENTENCE_END.split(text) if sentence.strip()]
