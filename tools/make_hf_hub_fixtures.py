"""Writes the Hugging Face cache fixture: tiny random models under real hub ids, as `huggingface_hub` caches them.

Needs `transformers`, CPU `torch` and `huggingface_hub` (no TensorFlow); the tests that read the fixture need
none of them but `huggingface_hub`. Run by path from the repository root, in a venv of its own:

    python3 -m venv /work/venvs/hf && /work/venvs/hf/bin/pip install torch transformers safetensors \\
        huggingface_hub numpy absl-py
    /work/venvs/hf/bin/python tools/make_hf_hub_fixtures.py

Each model is made with `transformers` (hidden 32, 2 layers; random weights with `initializer_range=0.2`, in
eval mode), saved with `save_pretrained` beside its tokenizer, and put in the cache by `huggingface_hub`'s own
`snapshot_download` from a loopback hub serving those folders (`tools/local_hub.py`): `--output_dir` then holds
`hub/models--<owner>--<name>/{blobs,refs,snapshots,trees}` exactly as a download writes it, and a test points
`HF_HOME` at a copy. The repositories:

- `google/electra-small-discriminator` (`ElectraForPreTraining`) and `google/electra-small-generator`
  (`ElectraForMaskedLM`, sharing the discriminator's embeddings as the released pair does), with the English
  fixture vocabulary (`tests/fixtures/tokenizer/vocab.txt`, lower-cased as Google's);
- one fine-tuned model per head, under the ids of well-known fine-tuned ELECTRAs, with their label names;
- `hfl/chinese-electra-180g-small-discriminator` and `-generator`, with a BERT-Chinese-style vocabulary (the
  special tokens, punctuation, about 500 common characters, and U+2028 as a token of its own at the line
  where the real file has it, which a loader splitting at every line break would break);
- a repository holding only `pytorch_model.bin` (which electra_tf refuses, never unpickling it).

transformers' outputs on fixed texts (English, a padded batch, a question/context pair for QA, Chinese), with
and without labels (their losses), go to `--outputs_dir` (`outputs.npz`, and `README.json` with the texts),
not into the cache.
"""

import json
import os
import shutil
import sys
import tempfile

from absl import app, flags, logging

try:  # installed: python -m electra_tf.tools.make_hf_hub_fixtures
    from electra_tf.tools.local_hub import LocalHub
except ImportError:  # run by path in the fixtures' venv, without TensorFlow (hence without electra_tf)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from local_hub import LocalHub

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", "tests/fixtures/hf_cache", "The cache fixture (HF_HOME): hub/models--… go here.")
flags.DEFINE_string("outputs_dir", "tests/fixtures/hf_cache_outputs", "transformers' outputs on the fixed texts.")
flags.DEFINE_string("english_vocab", "tests/fixtures/tokenizer/vocab.txt", "The English models' vocabulary.")
flags.DEFINE_integer("seed", 0, "Seed of the random weights.")

SIZES = dict(embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=48,
             max_position_embeddings=64, initializer_range=0.2)
GENERATOR_SIZES = dict(SIZES, hidden_size=16, num_attention_heads=1, intermediate_size=64)
EMOTIONS = ["sadness", "joy", "love", "anger", "fear", "surprise"]
CONLL = ["O", "B-MISC", "I-MISC", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]
DISCRIMINATOR, GENERATOR = "google/electra-small-discriminator", "google/electra-small-generator"
CHINESE_DISCRIMINATOR = "hfl/chinese-electra-180g-small-discriminator"
CHINESE_GENERATOR = "hfl/chinese-electra-180g-small-generator"
PICKLE_ONLY = "legacy-user/electra-small-pytorch-only"
# repo id: (class, sizes, labels or None, language)
REPOSITORIES = {
    DISCRIMINATOR: ("ElectraForPreTraining", SIZES, None, "en"),
    GENERATOR: ("ElectraForMaskedLM", GENERATOR_SIZES, None, "en"),
    "bhadresh-savani/electra-base-emotion": ("ElectraForSequenceClassification", SIZES, EMOTIONS, "en"),
    "dbmdz/electra-large-discriminator-finetuned-conll03-english": ("ElectraForTokenClassification", SIZES, CONLL,
                                                                    "en"),
    "deepset/electra-base-squad2": ("ElectraForQuestionAnswering", SIZES, None, "en"),
    "LIAMF-USP/electra-small-swag": ("ElectraForMultipleChoice", SIZES, None, "en"),
    CHINESE_DISCRIMINATOR: ("ElectraForPreTraining", SIZES, None, "zh"),
    CHINESE_GENERATOR: ("ElectraForMaskedLM", GENERATOR_SIZES, None, "zh"),
    PICKLE_ONLY: ("ElectraForPreTraining", SIZES, None, "en"),
}
SHARES_EMBEDDINGS = {GENERATOR: DISCRIMINATOR, CHINESE_GENERATOR: CHINESE_DISCRIMINATOR}

ENGLISH = "The model returns the number of items in the queue."
BATCH = ["Hello, world!", "Read the file and return its lines, one string for each line."]
MASKED = "The function returns the [MASK] of the list."
QUESTION, CONTEXT = "What does the function return?", "The function returns the sum of the values in the list."
PROMPT, CHOICES = "The function reads a file.", ["It returns its lines.", "It paints the wall green."]
CHINESE = ["江泽民主席在北京会见了克林顿。", "今天天气很好！我们去公园吧。"]
# Common characters of Chinese text (the test texts' among them); the vocabulary keeps the first 500 distinct.
CHINESE_CHARACTERS = (
    "江泽民主席在北京会见了克林顿今天气很好我们去公园吧的一是不人这中大来上国个到说为子和你地出道也时年得就那要下以生"
    "自着之过家学对可她里后小么心多而能都然没日于起还发成事只作当想看文无开手十用行方又如前所本经头面同三已老从动两长"
    "知样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几业最间新什打便位因重被"
    "走电四第门相次东政海口使教西再平真听世信少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华"
    "报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及京务制解各任至清物台象记边共风"
    "战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变"
    "联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告语英基派满式李息写呢识极令"
    "黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读"
    "志飞观争究包组造落视济喜离虽坏兴急纪装照围州圳顿克林会席泽")
CHINESE_PUNCTUATION = "，。！？；：、“”‘’《》（）…—"


def chinese_vocabulary():
    """BERT-Chinese's layout in small: [PAD], [unused1-9], [UNK], [CLS], [SEP], [MASK], ASCII punctuation and
    digits, U+2028 (the real file's line 344 holds it), letters, CJK punctuation, characters, `##` pieces."""
    characters = list(dict.fromkeys(CHINESE_CHARACTERS))[:500]
    ascii_marks = [chr(code) for code in range(33, 127) if not chr(code).isalpha()]
    return (["[PAD]", *[f"[unused{i}]" for i in range(1, 10)], "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<S>", "<T>",
             *ascii_marks[:20], "\u2028", *ascii_marks[20:], *"abcdefghijklmnopqrstuvwxyz",
             *CHINESE_PUNCTUATION, *characters, *[f"##{c}" for c in characters[:40]], "##\u2028"])


def write_vocabulary(tokens, path):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(token + "\n" for token in tokens)


def make_model(transformers, torch, class_name, sizes, labels, vocab_size, embeddings_of=None):
    config = transformers.ElectraConfig(vocab_size=vocab_size, **sizes, **(
        {"id2label": dict(enumerate(labels)), "label2id": {name: i for i, name in enumerate(labels)}}
        if labels else {}))
    config._attn_implementation = "eager"
    model = getattr(transformers, class_name)(config).eval()
    if embeddings_of is not None:  # the released pairs share the embedding block
        with torch.no_grad():
            shared = dict(embeddings_of.named_parameters())
            for name, parameter in model.named_parameters():
                if name.startswith("electra.embeddings."):
                    parameter.copy_(shared[name])
    return model


def save_repository(transformers, torch, model, repo_id, vocabulary_file, folder):
    """The repository's files as the hub holds them: `save_pretrained`'s model and tokenizer, and vocab.txt."""
    os.makedirs(folder)
    tokenizer = load_tokenizer(transformers, vocabulary_file)
    tokenizer.save_pretrained(folder)
    shutil.copyfile(vocabulary_file, os.path.join(folder, "vocab.txt"))
    if repo_id == PICKLE_ONLY:  # as pre-safetensors uploads: the pickled state dict only
        model.config.save_pretrained(folder)
        torch.save(model.state_dict(), os.path.join(folder, "pytorch_model.bin"))
    else:
        model.save_pretrained(folder)
    return tokenizer


def load_tokenizer(transformers, vocabulary_file):
    folder = tempfile.mkdtemp()
    shutil.copyfile(vocabulary_file, os.path.join(folder, "vocab.txt"))
    return transformers.BertTokenizerFast.from_pretrained(folder, do_lower_case=True)


def outputs_of(torch, model, tokenizer, repo_id, class_name, language):
    """`{case/name: array}`: the inputs (as transformers' tokenizer gives them), outputs and, with labels, losses."""
    import numpy as np

    cases = {"text": tokenizer([ENGLISH] if language == "en" else CHINESE[:1], return_tensors="pt"),
             "batch": tokenizer(BATCH if language == "en" else CHINESE, padding=True, return_tensors="pt")}
    if class_name == "ElectraForMaskedLM":  # (its logits span the vocabulary: the batch covers the text's case)
        del cases["text"]
        if language == "en":
            cases["masked"] = tokenizer([MASKED], return_tensors="pt")
    if class_name == "ElectraForQuestionAnswering":
        cases = {"pair": tokenizer([QUESTION, "What does it read?"], [CONTEXT, PROMPT], padding=True,
                                   return_tensors="pt")}
    if class_name == "ElectraForMultipleChoice":
        encoded = tokenizer([PROMPT] * len(CHOICES), CHOICES, padding=True, return_tensors="pt")
        cases = {"choices": {key: value[None] for key, value in encoded.items()}}
    results = {}
    generator = torch.Generator().manual_seed(1)
    for case, inputs in cases.items():
        inputs = dict(inputs)
        shape = inputs["input_ids"].shape
        labels = {"ElectraForSequenceClassification": lambda: {"labels": torch.arange(shape[0]) % model.num_labels},
                  "ElectraForMultipleChoice": lambda: {"labels": torch.tensor([0])},
                  "ElectraForQuestionAnswering": lambda: {"start_positions": torch.tensor([11, 9]),
                                                          "end_positions": torch.tensor([13, 10])},
                  "ElectraForPreTraining": lambda: {"labels": torch.randint(0, 2, shape, generator=generator)},
                  "ElectraForTokenClassification": lambda: {"labels": torch.where(
                      inputs["attention_mask"].bool(), torch.randint(0, model.num_labels, shape, generator=generator),
                      -100)},
                  "ElectraForMaskedLM": lambda: {"labels": torch.where(
                      inputs["input_ids"] == tokenizer.mask_token_id, torch.tensor(7), -100)
                      if case == "masked" else torch.where(inputs["attention_mask"].bool(), inputs["input_ids"],
                                                            -100)}}[class_name]()
        with torch.no_grad():
            outputs = model(**inputs, **labels, output_hidden_states=True)
        for name, value in {**inputs, **labels}.items():
            results[f"{repo_id}/{case}/{name}"] = value.numpy().astype(np.int32)
        results[f"{repo_id}/{case}/hidden_states"] = torch.stack(outputs.hidden_states, dim=1).numpy()
        for key in ("loss", "logits", "start_logits", "end_logits"):
            if getattr(outputs, key, None) is not None:
                results[f"{repo_id}/{case}/{key}"] = getattr(outputs, key).numpy().astype(np.float32)
    return results


def main(argv):
    del argv
    import huggingface_hub
    import numpy as np
    import torch
    import transformers

    logging.set_verbosity(logging.WARNING)  # not every HTTP request of the download
    torch.manual_seed(FLAGS.seed)
    work = tempfile.mkdtemp()
    vocabularies = {"en": os.path.join(work, "vocab_en.txt"), "zh": os.path.join(work, "vocab_zh.txt")}
    shutil.copyfile(FLAGS.english_vocab, vocabularies["en"])
    write_vocabulary(chinese_vocabulary(), vocabularies["zh"])
    folders, models, outputs = {}, {}, {}
    for repo_id, (class_name, sizes, labels, language) in REPOSITORIES.items():
        with open(vocabularies[language], encoding="utf-8") as f:
            vocab_size = f.read().count("\n")
        model = models[repo_id] = make_model(transformers, torch, class_name, sizes, labels, vocab_size,
                                             models.get(SHARES_EMBEDDINGS.get(repo_id)))
        folders[repo_id] = os.path.join(work, "repositories", repo_id)
        tokenizer = save_repository(transformers, torch, model, repo_id, vocabularies[language], folders[repo_id])
        if repo_id != PICKLE_ONLY:
            outputs.update(outputs_of(torch, model, tokenizer, repo_id, class_name, language))
        print(f"{repo_id}: {class_name}")
    shutil.rmtree(FLAGS.output_dir, ignore_errors=True)
    cache = os.path.join(FLAGS.output_dir, "hub")
    with LocalHub(folders) as hub:
        for repo_id in REPOSITORIES:
            huggingface_hub.snapshot_download(repo_id, cache_dir=cache, endpoint=hub.endpoint)
    shutil.rmtree(os.path.join(cache, ".locks"), ignore_errors=True)  # empty lock files of the download
    os.makedirs(FLAGS.outputs_dir, exist_ok=True)
    np.savez_compressed(os.path.join(FLAGS.outputs_dir, "outputs.npz"), **outputs)
    with open(os.path.join(FLAGS.outputs_dir, "README.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "tools/make_hf_hub_fixtures.py", "transformers": transformers.__version__,
                   "torch": torch.__version__, "huggingface_hub": huggingface_hub.__version__, "seed": FLAGS.seed,
                   "repositories": {repo_id: spec[0] for repo_id, spec in REPOSITORIES.items()},
                   "texts": {"english": ENGLISH, "batch": BATCH, "masked": MASKED, "question": QUESTION,
                             "context": CONTEXT, "prompt": PROMPT, "choices": CHOICES, "chinese": CHINESE}},
                  f, indent=2, ensure_ascii=False)
        f.write("\n")
    shutil.rmtree(work)
    total = sum(os.path.getsize(os.path.join(root, name)) for folder in (FLAGS.output_dir, FLAGS.outputs_dir)
                for root, _, names in os.walk(folder) for name in names
                if not os.path.islink(os.path.join(root, name)))
    print(f"total {total / 1e6:.2f} MB")


if __name__ == "__main__":
    app.run(main)
