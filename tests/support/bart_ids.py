"""The ids a BART folder's tokenizer gives a text, by fairseq's own GPT-2 BPE and dictionary and by
Hugging Face's ``tokenizers``, and the texts they are compared on (test helper)."""

from pathlib import Path

TEXTS = [
    "the model reads long papers and writes short notes",
    "Every sentence has its own marker. We study meetings about design!",
    "  leading spaces, trailing spaces  ",
    "Café naïve résumé — 東京 and Zürich; emoji 😀👍 at the end",
    "line one\nline two\n\nline four\r\nwindows",
    "tabs\tand\t\tmore\ttabs, numbers 3.14159 and 2024-01-01",
    "quotes 'single' \"double\" it's we've they'll I'm (brackets) [x] {y} <tag>",
    "ALL CAPS and MiXeD cAsE, punctuation?!... --- ;;",
    "",
    " ",
    "a",
]


def fairseq_ids(folder: Path, text: str):
    """fairseq's GPT-2 BPE + Dictionary over folder's encoder.json / vocab.bpe / dict.txt."""
    from fairseq.data import Dictionary
    from fairseq.data.encoders.gpt2_bpe import GPT2BPE, GPT2BPEConfig

    bpe = GPT2BPE(GPT2BPEConfig(gpt2_encoder_json=str(folder / "encoder.json"),
                                gpt2_vocab_bpe=str(folder / "vocab.bpe")))
    d = Dictionary.load(str(folder / "dict.txt"))
    return d.encode_line(bpe.encode(text), add_if_not_exist=False, append_eos=False).tolist()


def hf_tokenizer(folder: Path):
    """Hugging Face's byte-level BPE over vocab.json / merges.txt, as BartTokenizer encodes text
    (GPT-2's pre-tokenizer, no prefix space), without the <s> ... </s> it adds around it."""
    from tokenizers import Tokenizer
    from tokenizers.models import BPE
    from tokenizers.pre_tokenizers import ByteLevel

    tokenizer = Tokenizer(BPE.from_file(str(folder / "vocab.json"), str(folder / "merges.txt")))
    tokenizer.pre_tokenizer = ByteLevel(add_prefix_space=False)
    return tokenizer
