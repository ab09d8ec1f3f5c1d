"""English prose inside a Chinese answer: runs of English words outside names, flags, units and code.

    english_runs(text) -> ["weights need 61.0 GiB per GPU, more than the 43.9 GiB free: ...", ...]

A Chinese answer may carry names (Qwen2.5-7B, NVIDIA Tesla V100 SXM2 32GB, vLLM, HCCPNV5, p.n1v100.2xlarge), flags
(--max-model-len), units (GiB, tokens/s, ms), identifiers (max_model_len), paths, URLs, commands, and the software's
own output quoted (in backticks, a code block or Chinese quotation marks: 报错“CUDA out of memory”) and a line's
sources after 来源：(references, named as they are); what it may not carry is an English sentence of ours. A run is a stretch of ASCII text between two Chinese characters (or Chinese
punctuation) holding at least MIN_WORDS lower-case English words that are not units, one of them a function word
(the, of, than, need ...): 'weights need 61.0 GiB per GPU, more than the ...' is prose; a name is capitalised or
carries a digit, a dot, a slash or a hyphen, so 'LoRA r8 + DDP' and 'amp-bf16' hold no words, and
'nvidia-smi dmon / dcgmi dmon' holds words but no function word.
"""

from __future__ import annotations

import re

MIN_WORDS = 3
_FENCED = re.compile(r"```.*?```", re.S)
_INLINE = re.compile(r"`[^`\n]*`")
# the software's words quoted (a quote cut short by '…' ends there); a line's sources, named as they are
_QUOTED = re.compile(r"“[^”]*”|“[^”…]*…|「[^」]*」", re.S)
_SOURCES = re.compile(r"(?:来源|出处)[：:][^\n]*")
_LINKS = re.compile(r"https?://[^\s)>，。；）]+|\]\([^)]*\)|<[^>\s]*>")
_ASCII_RUN = re.compile(r"[\x20-\x7e]+")
# a lower-case word standing alone: not part of a path, a flag, an identifier, a dotted or hyphenated name
_WORD = re.compile(r"(?<![\w\-./@:#=])[a-z][a-z']+(?![\w\-/@=]|\.\w)")
# units and symbols a Chinese answer writes in English (GiB, GB and the like are capitalised: names already)
UNITS = frozenset({"tokens", "token", "ms", "vs"})
# the words English prose cannot do without
FUNCTION_WORDS = frozenset({
    "the", "a", "an", "of", "to", "in", "on", "at", "by", "for", "with", "from", "than", "and", "or", "but", "not",
    "no", "is", "are", "was", "be", "been", "has", "have", "had", "do", "does", "can", "cannot", "will", "would",
    "should", "must", "need", "needs", "it", "its", "this", "that", "these", "those", "which", "when", "where",
    "more", "less", "per", "into", "use", "set", "add", "raise", "try", "please", "your", "you", "we", "our"})


def english_runs(text: str) -> list[str]:
    """The runs of English prose in `text` (module docstring), each as written (stripped)."""
    plain = _LINKS.sub(" ", _SOURCES.sub(" ", _QUOTED.sub(" ", _INLINE.sub(" ", _FENCED.sub(" ", text)))))
    out: list[str] = []
    for run in _ASCII_RUN.findall(plain):
        words = [w for w in _WORD.findall(run) if w not in UNITS]
        if len(words) >= MIN_WORDS and FUNCTION_WORDS.intersection(words):
            out.append(run.strip())
    return out
