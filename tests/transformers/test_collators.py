"""transformers 4.x's data collators on electra_tf: every recorded call (tests/fixtures/transformers_data/
collators.json, written by tools/make_transformers_data_fixtures.py with transformers 4.57) gives transformers'
batch, and the random masking keeps transformers' rules and rates on our own generator."""

import json
from pathlib import Path

import numpy as np
import pytest

from electra_tf.transformers import collators
from electra_tf.transformers.collators import (
    DataCollatorForLanguageModeling,
    DataCollatorForMultipleChoice,
    DataCollatorForWholeWordMask,
    DataCollatorWithPadding,
    DefaultDataCollator,
    offset_words,
)
from electra_tf.transformers.tokenizer import ElectraTokenizer

FIXTURES = Path(__file__).parents[1] / "fixtures"
RECORDED = json.loads((FIXTURES / "transformers_data" / "collators.json").read_text(encoding="utf-8"))
VOCAB = str(FIXTURES / "tokenizer" / "vocab.txt")
CHINESE_VOCAB = str(next((FIXTURES / "hf_cache" / "hub" / "models--hfl--chinese-electra-180g-small-discriminator"
                          / "snapshots").glob("*/vocab.txt")))


def tokenizer_of(vocab=VOCAB, **settings):
    return ElectraTokenizer(vocab, **settings)


def test_our_tokenizer_gives_the_recorded_features():
    features = next(case for case in RECORDED["cases"] if case["name"] == "token_classification")["features"]
    ours = tokenizer_of()(RECORDED["texts"])
    assert ours["input_ids"] == [feature["input_ids"] for feature in features]
    assert ours["token_type_ids"] == [feature["token_type_ids"] for feature in features]


@pytest.mark.parametrize("case", RECORDED["cases"], ids=lambda case: f"{case['name']}-{case['return_tensors']}")
def test_every_recorded_collator_call_gives_transformers_batch(case):
    collator_class = getattr(collators, case["collator"])
    tokenizer = {} if collator_class is DefaultDataCollator else {"tokenizer": tokenizer_of(**case["tokenizer"])}
    collator = collator_class(**tokenizer, return_tensors=case["return_tensors"], **case["arguments"])
    batch = collator(case["features"])
    expected = case["output"]
    assert sorted(batch) == sorted(expected)
    for key, value in batch.items():
        value = np.asarray(value)
        assert value.dtype.name == expected[key]["dtype"], key
        np.testing.assert_array_equal(value, np.array(expected[key]["values"]), err_msg=key)


def test_multiple_choice_as_numpy_equals_its_tensors():
    # (transformers 4.57's DataCollatorForMultipleChoice has no numpy path; ours gives the same values)
    case = next(case for case in RECORDED["cases"] if case["name"] == "multiple_choice")
    batch = DataCollatorForMultipleChoice(tokenizer_of(), return_tensors="np")(case["features"])
    for key, expected in case["output"].items():
        assert batch[key].dtype == np.int64
        np.testing.assert_array_equal(batch[key], expected["values"])


@pytest.mark.parametrize("index", range(len(RECORDED["whole_words"])))
def test_whole_words_are_chosen_as_transformers_chooses_them(index, monkeypatch):
    """With the random order of the words left out (tried in order), the same positions: English `##` pieces,
    Chinese characters joined by `chinese_ref`, each budget."""
    case = RECORDED["whole_words"][index]
    tokenizer = tokenizer_of(CHINESE_VOCAB if case["chinese_ref"] else VOCAB)
    collator = DataCollatorWithoutShuffle(tokenizer, mlm_probability=case["mlm_probability"])
    ids = tokenizer.convert_tokens_to_ids(case["tokens"])
    assert collator._chosen_positions(ids, case["chinese_ref"]) == case["mask_labels"]


class DataCollatorWithoutShuffle(DataCollatorForWholeWordMask):
    def _permutation(self, count):
        return np.arange(count)


def test_words_from_offsets_are_transformers():
    case = RECORDED["offset_words"]
    special = np.array(case["special_tokens_mask"]["values"], bool)
    words, word_start = offset_words(np.array(case["offset_mapping"]["values"]), special)
    np.testing.assert_array_equal(words, case["word_ids"]["values"])
    np.testing.assert_array_equal(~word_start, case["not_word_start"]["values"])


def random_rows(rows=300, length=60, seed=0):
    tokenizer = tokenizer_of()
    ids = np.random.default_rng(seed).integers(5, len(tokenizer), (rows, length))
    ids[:, 0], ids[:, -1] = tokenizer.cls_token_id, tokenizer.sep_token_id
    return tokenizer, [row.tolist() for row in ids]


def test_masked_lm_chooses_15_percent_and_replaces_80_10_10():
    tokenizer, rows = random_rows()
    batch = DataCollatorForLanguageModeling(tokenizer, seed=3, return_tensors="np")(rows)
    original = np.array(rows)
    chosen = batch["labels"] != -100
    np.testing.assert_array_equal(batch["labels"][chosen], original[chosen])
    assert not chosen[:, [0, -1]].any()  # [CLS], [SEP]: never
    assert abs(chosen.mean() / (58 / 60) - 0.15) < 0.01
    masked = batch["input_ids"][chosen] == tokenizer.mask_token_id
    kept = batch["input_ids"][chosen] == original[chosen]
    assert abs(masked.mean() - 0.8) < 0.03 and abs(kept.mean() - 0.1) < 0.02
    assert abs((~masked & ~kept).mean() - 0.1) < 0.02
    np.testing.assert_array_equal(batch["input_ids"][~chosen], original[~chosen])
    again = DataCollatorForLanguageModeling(tokenizer, seed=3, return_tensors="np")(rows)
    np.testing.assert_array_equal(again["input_ids"], batch["input_ids"])  # a seed: the same masks


def test_whole_word_masking_masks_whole_words_of_about_the_rate():
    tokenizer = tokenizer_of()
    rows = tokenizer(["The unbelievably tokenized McDonald's iPhone and the unbelievable rest"] * 200)["input_ids"]
    collator = DataCollatorForWholeWordMask(tokenizer, seed=0, return_tensors="np")
    batch = collator(rows)
    tokens = tokenizer.convert_ids_to_tokens(rows[0])
    words = collators.word_positions(tokens)
    for chosen in batch["labels"] != -100:
        assert all(chosen[word].all() or not chosen[word].any() for word in words)
        assert 1 <= chosen.sum() <= round(len(tokens) * 0.15)
    assert len({tuple(chosen) for chosen in batch["labels"] != -100}) > 10  # words in random order


def test_masked_lm_whole_word_mask_takes_words_from_offsets():
    tokenizer = tokenizer_of()
    features = tokenizer(["The unbelievably tokenized McDonald's iPhone"] * 100, return_offsets_mapping=True,
                         return_special_tokens_mask=True)
    features = [{key: features[key][i] for key in features} for i in range(100)]
    with pytest.warns(UserWarning, match="replaces every chosen token by"):
        collator = DataCollatorForLanguageModeling(tokenizer, whole_word_mask=True, mlm_probability=0.3, seed=1)
    batch = collator(features, return_tensors="np")
    words, _ = offset_words(np.array([features[0]["offset_mapping"]]), np.array([features[0]["special_tokens_mask"]],
                                                                                 bool))
    chosen = batch["labels"] != -100
    for row in chosen:
        assert all(row[words[0] == word].all() or not row[words[0] == word].any() for word in set(words[0]) - {-1})
    assert (batch["input_ids"][chosen] == tokenizer.mask_token_id).all() and 0.1 < chosen.mean() < 0.5


def test_bad_arguments_are_refused_in_one_line():
    tokenizer = tokenizer_of()
    with pytest.raises(ValueError, match=r"^return_tensors='pt': electra_tf's collators give 'tf' or 'np'$"):
        DataCollatorWithPadding(tokenizer, return_tensors="pt")
    with pytest.raises(ValueError, match=r"^return_tensors='pt': electra_tf's collators give 'tf' or 'np'$"):
        DefaultDataCollator()([{"input_ids": [2, 3]}], return_tensors="pt")
    with pytest.raises(ValueError, match=r"^mlm_probability=1.5: a probability between 0 and 1 is needed$"):
        DataCollatorForLanguageModeling(tokenizer, mlm_probability=1.5)
    with pytest.raises(ValueError, match=r"^mask_replace_prob \+ random_replace_prob = 1.1: they must not exceed 1$"):
        DataCollatorForLanguageModeling(tokenizer, mask_replace_prob=1.0)
    with pytest.raises(ValueError, match=r"^whole_word_mask=True needs mlm=True"):
        DataCollatorForLanguageModeling(tokenizer, mlm=False, whole_word_mask=True)
    with pytest.raises(ValueError, match=r"^whole_word_mask=True: the features need 'offset_mapping'"):
        DataCollatorForLanguageModeling(tokenizer, whole_word_mask=True, mask_replace_prob=1.0,
                                        random_replace_prob=0.0)([{"input_ids": [2, 3]}])
    with pytest.raises(ValueError, match=r"^features: the 'input_ids' of the examples differ in length; "
                                         r"DefaultDataCollator stacks only what is of one length"):
        DefaultDataCollator()([{"input_ids": [2, 3]}, {"input_ids": [2, 5, 3]}])
    with pytest.raises(ValueError, match=r"^features: a non-empty list of dicts \(one per example\) is needed$"):
        DataCollatorWithPadding(tokenizer)([])
    with pytest.raises(ValueError, match=r"^features: every example needs the same number of choices"):
        DataCollatorForMultipleChoice(tokenizer)([{"input_ids": [[2, 3], [2, 3]], "attention_mask": [[1, 1]]}])
