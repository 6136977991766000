"""BERT's CJK ideographs as a regular-expression class for RE2 (TensorFlow) and Python's `re`; free of
TensorFlow, so that processes which only segment text start without it.

>>> import re
>>> re.findall(PYTHON_CJK_IDEOGRAPH, "ELECTRA 中文")
['中', '文']
"""

import re

# The CJK Unified Ideograph blocks of BERT's `_is_chinese_char`.
CJK_IDEOGRAPH = (r"[\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2B73F}"
                 r"\x{2B740}-\x{2B81F}\x{2B820}-\x{2CEAF}\x{F900}-\x{FAFF}\x{2F800}-\x{2FA1F}]")
# The same class for Python's `re` (RE2's `\x{...}` written as the characters themselves).
PYTHON_CJK_IDEOGRAPH = re.sub(r"\\x\{([0-9A-F]+)\}", lambda match: chr(int(match.group(1), 16)), CJK_IDEOGRAPH)
