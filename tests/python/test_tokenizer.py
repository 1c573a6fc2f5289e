"""C++ byte-level BPE (`svqa tokenize`) against Hugging Face `tokenizers` on a Qwen2-style
tokenizer.json trained here: same ids on every string, and decode(encode(s)) == s."""

import json
import random
import subprocess

import pytest
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

# Qwen2's pre-tokenisation regex, as in its tokenizer.json.
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
VISION_SPECIALS = ["<|vision_start|>", "<|vision_end|>", "<|video_pad|>", "<|image_pad|>", "<|box_start|>"]

PIECES = [
    "Hello world", "The QUICK brown fox's tail", "I'm sure they'll say we've", "don't", "DON'T", "It'S",
    "视频中的人在做什么？", "東京タワーは333メートル", "한국어 문장입니다", "emoji 🎥🍕👩‍👩‍👧 mix", "👍🏽",
    "def f(x):\n    return x**2  # square", "for (int i = 0; i < n; ++i) { a[i] += b[i]; }",
    "1234567890", "3.14159", "2026-11-21T23:59:59Z", "$1,000,000", "x1y22z333",
    "   leading spaces", "trailing spaces   ", "tabs\t\tand\ttabs", "\n\n\nnewlines\n", "\r\nwindows\r\n",
    "mixed \n \t \n  whitespace", "café naïve résumé", "e\u0301 combining (NFC → é)", "Ｆｕｌｌｗｉｄｔｈ",
    "Ελληνικά και русский", "עברית ערבית عربى", "a" * 40, "!!!???...", "<html><body>text</body></html>",
    "Best option: (", "(A) red (B) blue (C) green", "00:12:45", "—–-‐", "\u00a0non-breaking\u00a0space",
]


def corpus():
    rng = random.Random(0)
    lines = []
    for _ in range(400):
        lines.append(" ".join(rng.sample(PIECES, 4)))
    return lines


def train_tokenizer(path, merges_as_strings=False):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=900,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer)
    tok.add_special_tokens(VISION_SPECIALS)
    tok.save(str(path))
    if merges_as_strings:  # older tokenizer.json files store merges as "a b"
        data = json.loads(path.read_text())
        data["model"]["merges"] = [" ".join(m) if isinstance(m, list) else m for m in data["model"]["merges"]]
        path.write_text(json.dumps(data))
    return Tokenizer.from_file(str(path))


def make_strings():
    rng = random.Random(1)
    strings = list(PIECES)
    strings += [s for s in SPECIALS + VISION_SPECIALS]
    strings += [f"<|im_start|>user\n{p}<|im_end|>\n<|im_start|>assistant\n" for p in PIECES]
    strings += [f"<|vision_start|>{'<|video_pad|>' * 3}<|vision_end|>{p}" for p in PIECES[:10]]
    for _ in range(120):
        k = rng.randint(1, 4)
        sep = rng.choice(["", " ", "\n", "  ", "\t", "<|endoftext|>"])
        strings.append(sep.join(rng.sample(PIECES, k)))
    strings += ["", " ", "\n", "<|im_end", "<|im_end|", "<<|im_end|>>", "9" * 25, "x" + " " * 10 + "y"]
    return strings


STRINGS = make_strings()


def run_svqa(svqa_bin, root, args, lines):
    r = subprocess.run(
        [str(svqa_bin), "tokenize", *args],
        cwd=root, input="".join(json.dumps(x) + "\n" for x in lines), capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


@pytest.mark.parametrize("merges_as_strings", [False, True])
def test_ids_equal_hugging_face(svqa_bin, root, tmp_path, merges_as_strings):
    assert len(STRINGS) >= 200
    hf = train_tokenizer(tmp_path / "tokenizer.json", merges_as_strings)
    ours = run_svqa(svqa_bin, root, [str(tmp_path)], STRINGS)
    mismatches = [(s, o, hf.encode(s).ids) for s, o in zip(STRINGS, ours) if o != hf.encode(s).ids]
    assert not mismatches, f"{len(mismatches)} of {len(STRINGS)} differ, first: {mismatches[0]}"
    # Every special token is one id.
    for special in SPECIALS + VISION_SPECIALS:
        assert run_svqa(svqa_bin, root, [str(tmp_path)], [special]) == [[hf.token_to_id(special)]]


def test_decode_round_trips(svqa_bin, root, tmp_path):
    hf = train_tokenizer(tmp_path / "tokenizer.json")
    ids = [hf.encode(s).ids for s in STRINGS]
    decoded = run_svqa(svqa_bin, root, [str(tmp_path / "tokenizer.json"), "--decode"], ids)
    for s, d, i in zip(STRINGS, decoded, ids):
        assert d == hf.decode(i, skip_special_tokens=False)


def test_malformed_tokenizer_is_one_clear_error(svqa_bin, root, tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"model": {"type": "Unigram"}}')
    r = subprocess.run([str(svqa_bin), "tokenize", str(bad)], cwd=root, input="", capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr == f'svqa tokenize: error: {bad}: model.type: expected "BPE"\n'
    r = subprocess.run([str(svqa_bin), "tokenize", str(tmp_path / "nope")], cwd=root, input="",
                       capture_output=True, text=True)
    assert r.returncode == 1 and "no tokenizer.json" in r.stderr


def byte_token_ids(hf):
    """Id of the single-byte token of every byte value (GPT-2's byte-to-unicode alphabet)."""
    alphabet = {}
    chars = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    extra = 0
    for b in range(256):
        alphabet[b] = chr(b) if b in chars else chr(256 + extra)
        extra += b not in chars
    return {b: hf.token_to_id(c) for b, c in alphabet.items()}


def test_decode_of_text_cut_mid_character_is_hugging_faces(svqa_bin, root, tmp_path):
    """An answer cut by max_new_tokens mid-character is not valid UTF-8: HF reads it lossily
    (each maximal invalid subsequence → U+FFFD); so does svqa, and the JSON it prints stays valid."""
    hf = train_tokenizer(tmp_path / "tokenizer.json")
    byte_ids = byte_token_ids(hf)
    text = "视频中🎥 naïve".encode()
    cases = [[byte_ids[b] for b in text[:n]] for n in range(1, len(text) + 1)]  # every cut
    cases += [[byte_ids[b] for b in text[n:]] for n in range(1, 8)]             # starts mid-character
    rng = random.Random(2)
    cases += [[byte_ids[rng.randrange(256)] for _ in range(rng.randint(1, 12))] for _ in range(300)]
    cases += [hf.encode("视频").ids[:1] + [byte_ids[0xE8]] + hf.encode("<|im_end|>").ids]  # cut before a special
    decoded = run_svqa(svqa_bin, root, [str(tmp_path / "tokenizer.json"), "--decode"], cases)
    mismatches = [(ids, d, hf.decode(ids, skip_special_tokens=False)) for ids, d in zip(cases, decoded)
                  if d != hf.decode(ids, skip_special_tokens=False)]
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ, first: {mismatches[0]}"
    assert sum("\ufffd" in d for d in decoded) > 100


def test_long_words_give_hugging_faces_ids(svqa_bin, root, tmp_path):
    """The heap-based merge (O(n log n) in the word length) on words of 20k–60k characters."""
    hf = train_tokenizer(tmp_path / "tokenizer.json")
    rng = random.Random(3)
    words = ["a" * 20000, "ab" * 15000, "视频中的人" * 4000,
             "".join(rng.choice("thequickbrownfoxjumps") for _ in range(60000))]
    ours = run_svqa(svqa_bin, root, [str(tmp_path)], words)
    for w, o in zip(words, ours):
        assert o == hf.encode(w).ids, w[:20]


def test_merge_of_a_token_outside_the_vocabulary_is_refused(svqa_bin, root, tmp_path):
    path = tmp_path / "tokenizer.json"
    train_tokenizer(path)
    data = json.loads(path.read_text())
    data["model"]["merges"][3] = ["Ġ", "nowhere"]
    path.write_text(json.dumps(data))
    r = subprocess.run([str(svqa_bin), "tokenize", str(path)], cwd=root, input='"x"\n', capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr == f'svqa tokenize: error: {path}: model.merges[3]: token "nowhere" is not in model.vocab\n'
