"""Text inside the texts under judgment that is aimed at the judge rather than at the task.

A system's output (or a context's source or reference) can carry words for the judge: an order to
ignore its instructions, a forged chat turn, an answer in the judge's own format, text hidden from
the reader. The judge reads such text as data (it is tokenized without special tokens), but a judge
can still be swayed by it, so ``nlgjudge rank`` names the rows before judging. The checks here are
patterns, and patterns can be evaded: :data:`COVERAGE` says what they look for, and the report says
that an undetected attack remains possible (the gaming chapter measures what such text wins).

Each text is read in several forms, so that a disguise does not hide a known phrase: as given;
with compatibility forms, combining marks and format characters taken out and look-alike letters
read as Latin; with HTML entities, percent-escapes and markup undone; with letters spaced or dotted
apart joined; with digits read as the letters they stand for; in rot13; and base64 runs decoded.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import difflib
import functools
import html
import re
import unicodedata
from collections.abc import Sequence
from urllib.parse import unquote

import pandas as pd

#: Letters of other scripts drawn like Latin ones (Cyrillic, Greek, Armenian, Cherokee) and small
#: capitals, read as the Latin letters they show.
LOOK_ALIKES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ӏ": "l", "ԛ": "q", "ԝ": "w", "ɡ": "g",
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "γ": "y",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    "օ": "o", "ս": "u", "հ": "h", "ո": "n", "ց": "g", "Օ": "O", "Ս": "U",
    "Ꭺ": "A", "Ᏼ": "B", "Ꮯ": "C", "Ꭰ": "D", "Ꭼ": "E", "Ꮐ": "G", "Ꮋ": "H", "Ꭻ": "J", "Ꮶ": "K", "Ꮮ": "L",
    "Ꮇ": "M", "Ꮲ": "P", "Ꭱ": "R", "Ꮪ": "S", "Ꭲ": "T", "Ꮩ": "V", "Ꮃ": "W", "Ꮓ": "Z",
    # small capitals (no compatibility decomposition): "ɪɢɴᴏʀᴇ" reads "ignore"
    "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ꜰ": "f", "ɢ": "g", "ʜ": "h", "ɪ": "i", "ᴊ": "j",
    "ᴋ": "k", "ʟ": "l", "ᴍ": "m", "ɴ": "n", "ᴏ": "o", "ᴘ": "p", "ꞯ": "q", "ʀ": "r", "ꜱ": "s", "ᴛ": "t",
    "ᴜ": "u", "ᴠ": "v", "ᴡ": "w", "ʏ": "y", "ᴢ": "z",
    # Lisu capitals drawn like Latin ones
    **{chr(code): letter for code, letter in zip(
        (0xA4EE, 0xA4D0, 0xA4DA, 0xA4D3, 0xA4F0, 0xA4DD, 0xA4D6, 0xA4E7, 0xA4F2, 0xA4D9, 0xA4D7, 0xA4E1, 0xA4DF,
         0xA4E0, 0xA4F3, 0xA4D1, 0xA4E3, 0xA4E2, 0xA4D4, 0xA4F4, 0xA4E6, 0xA4EA, 0xA4EB, 0xA4EC, 0xA4DC),
        "ABCDEFGHIJKLMNOPRSTUVWXYZ", strict=True)},
    # negative circled and negative squared capitals (no compatibility decomposition)
    **{chr(0x1F150 + k): chr(ord("A") + k) for k in range(26)},
    **{chr(0x1F170 + k): chr(ord("A") + k) for k in range(26)},
    # Hangul fillers show as blanks: read as spaces (and, in another reading, as nothing)
    "\u3164": " ", "\uffa0": " ", "\u115f": " ", "\u1160": " ",
    # regional indicator symbols (flags' letters)
    **{chr(0x1F1E6 + k): chr(ord("a") + k) for k in range(26)},
})
_FILLERS = re.compile("[\u3164\uffa0\u115f\u1160]")

#: Scripts whose letters can pass for Latin ones: a name mixing Latin with one of them may be a look-alike.
CONFUSABLE_SCRIPTS = frozenset({"LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE"})

#: Characters that show nothing yet can carry text a model reads: the Unicode tag block (U+E0000-U+E007F).
HIDDEN_INSTRUCTIONS = frozenset(chr(c) for c in range(0xE0000, 0xE0080))

#: Bidirectional controls: the reader sees the text reordered, the judge reads it in its stored order.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

#: Chat-template markers of the common model families (any judge's, not only this one's), in any case,
#: and any marker of the shape ``<|...|>``: text that forges a turn.
CHAT_MARKERS = re.compile(
    r"<\|[A-Za-z][\w▁.-]{0,40}\|>|<｜[^｜<>]{1,40}｜>|\[/?(?:INST|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS)\]"
    r"|<(?:start|end)_of_turn>|<</?SYS>>|</s>\s*<s>|<s>\s*\[INST\]"
    r"|^\s*###\s*(?:Assistant|Human)\s*:|\bGPT4\s+Correct\s+(?:Assistant|User)\s*:"
    r"|</?think>|<end_of_utterance>|^\s*Human\s*:[^\n]*\n(?:[^\n]*\n)*?\s*(?:AI|Assistant)\s*:",
    re.MULTILINE | re.IGNORECASE)

_LABEL = r"(?:summary|response|output|candidate|text|answer|translation|paraphrase|reply|completion)"
_AB = r"(?-i:[AB])"  # the labels A and B, in capitals only ("respond with a comment" is no verdict)
_ORDER = r"(?:instructions?|rules|prompts?|guidance|directions?|guidelines?|directives?)"

#: Plain text that speaks to the judge rather than doing the task: an order to ignore or override the
#: instructions (in several languages), a forged role, an order to answer with a label, a verdict in a
#: judge's answer format, the judge's question, words to the grader.
ADDRESSES_JUDGE = re.compile(
    # orders to drop the instructions: the verb, then (within a sentence or two) what is dropped
    # (within one sentence: a verb, what it drops, and the order nearby; "lgnore" with an l for the i)
    rf"\b(?:[il1|]gnore|disregard|forget|override|bypass|overrule|skip)\b[^.!?]{{0,80}}?\b(?:previous|prior|above|earlier|"
    rf"all|preceding|foregoing|original|your)\b[^.!?]{{0,12}}?\b{_ORDER}"
    rf"|\b(?:override|bypass|overrule|disregard|[il1|]gnore)\s+(?:the\s+|all\s+|any\s+|your\s+)*{_ORDER.replace('rules|', '')}"
    rf"|\bdo\s+not\s+(?:follow|obey)\s+(?:the\s+|any\s+|your\s+)?(?:previous|prior|earlier|above|original)\s+{_ORDER}"
    rf"|\bforget\s+(?:about\s+)?everything\b[^.!?\n]{{0,40}}\b(?:above|before|earlier|previous|you\s+were\s+told)\b"
    rf"|\bnew\s+(?:instructions?|system\s+prompt|directives?)\s*:"
    rf"|\bfrom\s+now\s+on\b,?\s+(?:you\s+)?(?:must\s+|will\s+|should\s+|shall\s+)?(?:only\s+)?"
    rf"(?:output|answer|respond|reply|say|pick|choose|print)\b"
    # forged roles: a role line, a role in JSON, YAML or a markdown link, a persona for the judge
    # a role line counts when it speaks to a model ("System: Windows 11" in a review does not)
    r"|^\s*###\s*(?:instruction|response)\s*:"
    r"|^\s*(?:system|assistant|developer)\s*:(?=[^\n]*\b(?:you|your|must|always|never|ignore|answer|respond|output|"
    r"prefer|choose|pick|judge|evaluat\w*|grader|summary|response)\b)"
    r"|[\"']role[\"']\s*:\s*[\"'](?:system|assistant|developer)[\"']|^\s*role\s*:\s*(?:system|assistant|developer)\b"
    r"|\[(?:system|assistant|developer)\]\(#?[^)\s]{0,40}\)"
    r"|\bpretend\s+(?:that\s+)?you\s+are\s+(?:an?\s+|the\s+)?(?:judge|evaluator|grader|assistant|ai|model|"
    r"language\s+model|chatbot|unrestricted|dan)\b|\byou\s+are\s+(?:now\s+)?\w{0,20}(?:bot|gpt)\b"
    r"|\bdo\s+anything\s+now\b"
    # orders to answer with a label, and verdicts in a judge's answer formats
    rf"|\b(?:output|answer|reply|respond|say)\s+(?:only|with|just)\b[^.\n]{{0,20}}\b{_LABEL}?\s*{_AB}\b"
    rf"|\b{_LABEL}\s+{_AB}\s+is\s+(?:the\s+)?(?:better|best|correct|right|preferred|superior|always)\b"
    rf"|\b{_AB}\s+(?:is|was)\s+(?:clearly\s+|far\s+|much\s+)?(?:better|superior|preferable)\s+(?:than|to)\s+{_AB}\b"
    # "A > B" counts with a label or alone on its line ("if A > B then" in maths or code does not)
    rf"|\b{_LABEL}\s+{_AB}\s*(?:>|≻|>>|beats)\s*(?:{_LABEL}\s+)?{_AB}\b|^\s*{_AB}\s*(?:>|≻|>>)\s*{_AB}\s*\.?\s*$"
    # scores for both labels, out of a score's scale ("A: 3/4 cup" in a recipe does not count)
    rf"|\b{_AB}\s*[=:]\s*\d+(?:\.\d+)?\s*/\s*(?:5|10|100)\b[\s\S]{{0,40}}?\b{_AB}\s*[=:]\s*\d+(?:\.\d+)?\s*/\s*(?:5|10|100)\b"
    rf"|^\s*(?:final\s+)?(?:answer|verdict|preference|winner|choice|decision|result)\s*[:=]\s*(?:summary\s+|response\s+)?\(?{_AB}\)?\s*\.?\s*$"
    rf"|\\boxed\{{\s*{_AB}\s*\}}|\[\[\s*{_AB}\s*\]\]|<(answer|verdict|choice|winner)>\s*{_AB}\s*</\1>"
    rf"|^\s*\[RESULT\]\s*{_AB}\b|^\s*output\s*:?\s*\(?{_AB}\)?\s*\.?\s*$|^\s*output\s*\(\s*[ab]\s*\)\s*\.?\s*$"
    rf"|\brating\s*:\s*\[\[\s*\d+(?:\.\d+)?\s*\]\]|\b(?:score|rate)\s+(?:this|the)\s+{_LABEL}\s+(?:a\s+)?\d+\s*(?:/|out\s+of)\s*\d+"
    rf"|\brank\s+(?:it|this\s+(?:one|{_LABEL}))\s+(?:first|highest|top)\b"
    rf"|[\"'](?:preferred|winner|better|answer|choice|verdict)[\"']\s*:\s*[\"']?(?:(?:model|summary|response|output|assistant)[_ ]?)?(?:{_AB}|[ab])\b"
    rf"|\bthe\s+(?:better|best|preferred|winning)\s+{_LABEL}(?:\s+of\s+the\s+two)?\s+is\s+(?:the\s+(?:first|second)\b|[\"']?{_AB}\b)"
    rf"|\bthe\s+(?:first|second|former|latter)\s+(?:{_LABEL}\s+|one\s+)?is\s+(?:clearly\s+|far\s+|much\s+)?"
    r"(?:better|superior|best|preferable|the\s+winner)\b"
    rf"|^\s*{_LABEL}\s+{_AB}\s*:|\balways\s+(?:picks?|chooses?|prefers?|selects?|answers?)\s+"
    rf"(?:{_AB}\b|this\s+{_LABEL}\b|the\s+(?:first|second)\s+{_LABEL})"
    rf"|\byou\s+(?:are|must|should)\s+(?:now\s+)?(?:the\s+)?(?:judge|evaluator|grader)\b"
    rf"|\byou\s+(?:must|should)\s+(?:now\s+)?(?:prefer|choose|pick|answer|select)\s+(?:{_LABEL}\s+)?"
    rf"(?:{_AB}\b|this\s+one\b|the\s+(?:first|second)\b)"
    rf"|\bwhich\s+{_LABEL}\s+is\s+better\b[^.\n]{{0,40}}\b{_AB}\b"
    # words to the grader: "dear evaluator", "note to the grader", "judges should pick ..."
    r"|\b(?:dear|attention|note\s+to\s+the|to\s+the)\s+(?:evaluator|grader|assessor|annotator)s?\b"
    r"|\b(?:attention|note\s+to\s+the)\s+judges?\b|\bdear\s+judges?\b(?!\s+(?-i:[A-Z]))"  # "Dear Judge Smith" is a letter
    r"|\b(?:evaluator|grader|judge)s?\b,?\s+(?:please|you\s+(?:should|must))\s+(?:prefer|pick|choose|select)\b"
    r"|<!--[^>]{0,200}?\b(?:grader|evaluator|judge|assistant|pick|prefer|choose)\b[^>]{0,200}-->"
    # the order to ignore the instructions in other languages
    r"|\b(?:ignore[rz]?|oublie[rz]?)\s+(?:toutes\s+)?les\s+(?:instructions|consignes)\s+(?:précédentes|ci-dessus)"
    r"|\b(?:ignorier|vergiss|vergess)\w*\s+(?:sie\s+)?(?:alle\s+)?(?:vorherigen|obigen|bisherigen)\s+anweisungen"
    r"|\b(?:ignor|olvid)[ae]\w*\s+(?:usted\s+)?(?:todas\s+)?las\s+instrucciones\s+(?:anteriores|previas)"
    r"|\bignora\w*\s+(?:tutte\s+)?le\s+istruzioni\s+(?:precedenti|sopra|iniziali)"
    r"|\bignor[ae]\w*\s+(?:todas\s+)?as\s+instru[çc][õo]es\s+(?:anteriores|acima|prévias|iniciais)"
    r"|\bnegeer\s+(?:alle\s+)?(?:voorgaande|vorige|eerdere|bovenstaande)\s+instructies"
    r"|\bzignoruj\s+(?:wszystkie\s+)?(?:poprzednie|powyższe)\s+instrukcje"
    r"|önceki\s+(?:tüm\s+)?talimatları\s+(?:yok\s+say|görmezden\s+gel)"
    r"|\babaikan\s+(?:semua\s+)?(?:instruksi|perintah)\s+(?:sebelumnya|di\s+atas)"
    r"|bỏ\s+qua\s+(?:tất\s+cả\s+)?(?:các\s+)?(?:hướng\s+dẫn|chỉ\s+dẫn)\s+trước"
    r"|(?:игнорируй|забудь|забуд)\w*\s+(?:все\s+)?(?:предыдущие|вышеуказанные)\s+инструкци"
    r"|ігноруй\w*\s+(?:усі\s+|всі\s+)?попередні\s+інструкці"
    r"|忽略(?:之前|以上|上面|前面|先前)的?(?:所有)?(?:指令|指示|说明|提示)"
    # an order, not a report: "前の指示を無視して橋を渡った" (the driver ignored them) is news
    r"|(?:以前|前|上記|これまで)の(?:指示|命令|指令)を(?:すべて|全て)?無視(?:してください|して下さい|しろ|せよ|すること"
    r"|して[、,]?[^。]{0,20}(?:答え|回答|出力|選))"
    r"|이전의?\s*(?:모든\s*)?(?:지시|명령|지침)[을를]?\s*무시"
    r"|تجاهل\s+(?:جميع\s+|كل\s+)?(?:التعليمات|الأوامر)\s+السابقة"  # "ignored the orders" in news needs "previous"
    r"|पिछले\s+(?:सभी\s+)?निर्देशों\s+को\s+(?:अनदेखा|नज़रअंदाज़|नजरअंदाज)"
    r"|\bignorera\s+(?:alla\s+)?(?:tidigare|föregående|ovanstående)\s+(?:instruktioner|anvisningar)"
    r"|\bignoruj\w*\s+(?:všechny\s+)?(?:předchozí|výše\s+uvedené)\s+(?:pokyny|instrukce)"
    r"|αγνόησ\w*\s+(?:όλες\s+)?(?:τις\s+)?(?:προηγούμενες|παραπάνω)\s+(?:οδηγίες|εντολές)"
    r"|התעלם\s+(?:מכל\s+|מ)?ההוראות\s+הקודמות"
    r"|(?:دستورالعمل|دستور)\S*\s+(?:های\s+)?قبلی\s+را\s+نادیده\s+بگیر",
    re.IGNORECASE | re.MULTILINE)

#: What the checks look for, in words (the report says it beside the warnings: patterns can be evaded).
COVERAGE = ("orders to ignore or override the instructions (in English, French, German, Spanish, Italian, Portuguese, "
            "Dutch, Polish, Turkish, Indonesian, Vietnamese, Russian, Ukrainian, Chinese, Japanese, Korean, Arabic, "
            "Hindi, Swedish, Czech, Greek, Hebrew and Persian, in their usual wordings), forged roles and chat-template "
            "markers of the common model families, verdicts and scores written in a judge's answer formats, words to "
            "the grader, and these behind look-alike letters, combining marks, HTML entities, percent-escapes, \\u "
            "escapes, markup, spaced, hyphenated or one-per-line letters, digits for letters, reversed text, rot13, "
            "hex and base64")

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"})
#: One separator between single letters ("I g n o r e", "I.g.n.o.r.e"): joined, one kind of separator at a time.
_SPACED = {sep: re.compile(rf"(?<=\b\w){re.escape(sep)}(?=\w\b)") for sep in (" ", "  ", ".", "-", "_", "·", "*", "/")}
_TAGS = re.compile(r"<[^<>]{0,200}>")
_MARKUP_IN_WORDS = re.compile(r"(?<=\w)[*_~`]+(?=\w)")
_HYPHEN_IN_WORDS = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
_PAREN_LETTER = re.compile(r"\((\w)\)")
_U_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_HEX_RUN = re.compile(r"\b(?:[0-9a-fA-F]{2}){12,}\b")
# a piece starts where a run starts and never gives letters back: one long run is read once, not from every letter
_BASE64_SPLIT = re.compile(r"(?<![A-Za-z0-9+/])(?:[A-Za-z0-9+/]{4,}+={0,2} ){2,}[A-Za-z0-9+/]{2,}+={0,2}")
#: Orders to ignore the instructions with every space and mark taken out ("I\nG\nN\nO\nR\nE..."): read in
#: the letters alone, where no word boundary is left for the patterns.
_SQUASHED = re.compile(r"(?:ignore|disregard|forget)(?:all)?(?:the)?(?:previous|prior|above|earlier)(?:instructions|prompts?|rules)")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")


def plain_letters(text: str) -> str:
    """``text`` as it reads: compatibility forms, combining marks and format characters taken out, and
    look-alike letters (other scripts, small capitals) as Latin ones."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(ch for ch in decomposed if unicodedata.category(ch) not in ("Mn", "Me", "Cf"))
    return unicodedata.normalize("NFKC", kept).translate(LOOK_ALIKES)


def _readable(decoded: str) -> bool:
    return bool(decoded) and sum(ch.isprintable() or ch.isspace() for ch in decoded) >= 0.9 * len(decoded)


def _decoded_runs(text: str) -> list[str]:
    """The base64 runs of ``text`` that decode to readable text."""
    found = []
    for run in _BASE64_RUN.findall(text):
        try:
            found.append(base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8"))
        except (binascii.Error, ValueError):
            continue
    return [decoded for decoded in found if _readable(decoded)]


def _decoded_hex(text: str) -> list[str]:
    """The hexadecimal runs of ``text`` that decode to readable text."""
    found = []
    for run in _HEX_RUN.findall(text):
        try:
            found.append(bytes.fromhex(run).decode("utf-8"))
        except ValueError:
            continue
    return [decoded for decoded in found if _readable(decoded)]


def readings(text: str) -> list[str]:
    """The forms of ``text`` the checks read (see the module's docstring)."""
    if "\\u" in text:
        text = text + "\n" + _U_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    plain = plain_letters(text)
    undone = _MARKUP_IN_WORDS.sub("", _TAGS.sub("", html.unescape(unquote(plain) if "%" in plain else plain)))
    joins = [" ".join(pattern.sub("", undone).split()) for pattern in _SPACED.values() if len(pattern.findall(undone)) >= 3]
    joined = joins[0] if joins else undone
    forms = [text, plain, undone, *joins]
    if _FILLERS.search(text):  # fillers inside a word ("Ig\u3164nore") read as nothing
        forms.append(plain_letters(_FILLERS.sub("", text)))
    for pattern in (_HYPHEN_IN_WORDS, _PAREN_LETTER):
        if pattern.search(undone):
            forms.append(pattern.sub(lambda m: m.group(1) if m.groups() else "", undone))
    forms.append(undone[::-1])  # text written backwards
    if re.search(r"[A-Za-z][0-9@$!]|[0-9@$!][A-Za-z]", joined):  # digits inside words: "1gn0r3"
        forms.append(joined.translate(_LEET))
    forms.append(codecs.encode(joined, "rot13"))
    decoded = _decoded_runs(text) + _decoded_hex(text)
    decoded += [joined for split in _BASE64_SPLIT.findall(text) for joined in _decoded_runs(split.replace(" ", ""))]
    decoded += [again for once in decoded for again in _decoded_runs(once)]  # base64 inside base64
    forms.extend(plain_letters(text) for text in decoded)
    return list(dict.fromkeys(forms))


@functools.lru_cache(maxsize=65536)  # a context's source is read once, not once per system's row
def addressed_to_judge(text: str) -> str:
    """The first piece of ``text`` that speaks to the judge (:data:`ADDRESSES_JUDGE`, or a chat-template marker,
    :data:`CHAT_MARKERS`), in any of its :func:`readings`; "" if none."""
    if not text:
        return ""
    for form in readings(text):
        found = CHAT_MARKERS.search(form) or ADDRESSES_JUDGE.search(form)
        if found:
            return " ".join(found.group(0).split())
    squashed = _SQUASHED.search("".join(ch for ch in plain_letters(text).casefold() if ch.isalpha()))
    return squashed.group(0) if squashed else ""


def hides_text(value: object) -> bool:
    """Whether ``value`` carries characters that show nothing yet can spell text a model reads: the Unicode tag
    block, a supplementary variation selector (U+E0100-U+E01EF, one a byte in "emoji smuggling"), or a run of
    three or more variation selectors or zero-width marks (one after an emoji is ordinary)."""
    if not isinstance(value, str):
        return False
    if any(ch in HIDDEN_INSTRUCTIONS or 0xE0100 <= ord(ch) <= 0xE01EF for ch in value):
        return True
    # a run of invisible marks: selectors, zero-width and invisible operators, soft hyphens, grapheme joiners
    return bool(re.search("[\ufe00-\ufe0f\u200b-\u200d\u2060-\u2064\u00ad\u034f\ufeff]{3,}", value))


def reorders_text(value: object) -> bool:
    """Whether ``value`` holds bidirectional controls that show a reader its letters in another order than the
    judge reads them: an override (U+202D, U+202E), or embeddings and isolates that are not closed as they
    open. A right-to-left paragraph wrapped in one embedding and its closing mark, as word processors export
    Hebrew or Arabic, shows the letters in the order they are stored, and is not counted."""
    if not isinstance(value, str) or not any(ch in BIDI_CONTROLS for ch in value):
        return False
    if "\u202d" in value or "\u202e" in value:
        return True
    depth = {"embed": 0, "isolate": 0}
    for ch in value:
        kind = "embed" if ch in "\u202a\u202b\u202c" else "isolate" if ch in "\u2066\u2067\u2068\u2069" else None
        if kind is None:
            continue
        depth[kind] += -1 if ch in "\u202c\u2069" else 1
        if depth[kind] < 0:
            return True  # a closing mark with nothing open
    return any(depth.values())  # one left open reorders what follows


#: A system whose output is the same, or nearly (:func:`near_same`), in at least this share of its contexts,
#: three or more, is constant; one whose output nearly copies the source (or the shown reference) there, a copy.
CONSTANT_SHARE = 0.8
#: How alike two texts must read (difflib's ratio of their :func:`loose_text` forms) to count as nearly the same.
NEAR_SAME = 0.9


_NOT_ALNUM = re.compile(r"[\W_]+")
_DIGITS = re.compile(r"\d+")


@functools.lru_cache(maxsize=65536)
def _normalised(text: str) -> str:
    return " ".join(_NOT_ALNUM.sub(" ", text.casefold()).split())


def normalised_text(text: object) -> str:
    """A text up to case, spacing and punctuation: nearly identical outputs compare equal."""
    return _normalised(str(text))


@functools.lru_cache(maxsize=65536)
def _loose(text: str) -> str:
    return " ".join(_DIGITS.sub(" ", _normalised(text)).split())


@functools.lru_cache(maxsize=65536)
def _without_codes(text: str) -> str:
    return " ".join(word for word in _normalised(text).split() if not any(ch.isdigit() for ch in word))


def loose_text(text: object) -> str:
    """:func:`normalised_text` without digits: a counter or a context number does not make a text new."""
    return _loose(str(text))


def follows_source(output: object, constant: object, source: object) -> bool:
    """Whether ``output``, nearly the same as a system's most common output (``constant``), differs from it in
    words (numbers aside) that its own source holds: a template filled from the source ("Weather for Paris:
    high of 21"), not a text given whatever the source."""
    differing = {word for word in set(normalised_text(output).split()) - set(loose_text(constant).split())
                 if not word.isdigit()}
    # a number alone (a counter, a context's number) does not make a template: the differing words come from the source
    return bool(differing) and differing <= set(normalised_text(source).split())


def near_same(first: object, second: object) -> bool:
    """Whether two texts read nearly the same: equal as :func:`loose_text`, the same words in another order,
    the same but for words holding digits (a nonce appended), or alike by :data:`NEAR_SAME` (a text cut by a
    word, a counter added)."""
    a, b = loose_text(first), loose_text(second)
    if a == b:
        return True
    if a and sorted(a.split()) == sorted(b.split()):  # the same words in another order: its sentences rotated
        return True
    coded_a, coded_b = _without_codes(str(first)), _without_codes(str(second))
    if coded_a and coded_a == coded_b:  # the same text but for a word holding digits: a nonce, an id ("ref a83f2e9c")
        return True
    if not a or not b or min(len(a), len(b)) < NEAR_SAME * max(len(a), len(b)):
        return False
    words_a, words_b = set(a.split()), set(b.split())  # a cheap bound first: texts sharing few words differ
    if len(words_a & words_b) < 0.8 * len(words_a | words_b):
        return False
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.quick_ratio() >= NEAR_SAME and matcher.ratio() >= NEAR_SAME


def copies(output: object, shown: object) -> bool:
    """Whether ``output`` copies ``shown`` (a source or a reference): :func:`near_same`, or most of it word for word
    (at least :data:`COPIED_SHARE` of it, in one piece: a copy cut short is still a copy; a lead summary is not)."""
    a, b = loose_text(output), loose_text(shown)
    return bool(a and b) and ((len(a) >= COPIED_SHARE * len(b) and a in b) or near_same(a, b))


#: The share of a source (or reference) an output must repeat, in one piece, to be a copy of it.
COPIED_SHARE = 0.7


def _rows_text(rows: pd.DataFrame, count: str) -> str:
    """"3 rows (system 'B' in context 'c1' and others; systems: 'B')": where a warning's rows are."""
    first = rows.iloc[0]
    systems = list(dict.fromkeys(rows["system"].astype(str)))
    return (f"{len(rows)} {count}{'s' if len(rows) != 1 else ''} (system {first['system']!r} in context "
            f"{first['context_id']!r}{' and others' if len(rows) > 1 else ''}; systems: "
            f"{', '.join(map(repr, systems[:5]))}{' ...' if len(systems) > 5 else ''})")


def text_warnings(frame: pd.DataFrame, control_strings: Sequence[str] = (), with_reference: bool = True) -> list[str]:
    """What the texts of ``frame`` (checked rows: system, context_id, output, source, optional reference) hold
    that a judge may read other than as the task, each in one line: constant or near-constant systems, outputs
    that copy the source (or the reference, when the judge is shown it), the judge's own control strings (read
    as plain text), invisible characters, bidirectional controls, and text addressed to the judge. The
    reference is looked at only when ``with_reference`` (otherwise the judge never reads it)."""
    notes: list[str] = []
    fields = ["output", "source", *(["reference"] if with_reference and "reference" in frame.columns else [])]
    for system, part in frame.groupby("system", sort=False):
        if len(part) < 3:
            continue
        outputs = part["output"].astype(str).tolist()
        forms = [loose_text(o) for o in outputs]
        top = outputs[forms.index(pd.Series(forms).value_counts().index[0])]  # the most common output, as written
        # an output filled in from its own source (a template) is not the same text whatever the source
        alike = sum(near_same(o, top) and not follows_source(o, top, src)
                    for o, src in zip(outputs, part["source"].astype(str), strict=True))
        if alike / len(part) >= CONSTANT_SHARE:
            notes.append(f"system {system!r} gives the same or nearly the same output in {alike} of its {len(part)} contexts "
                         "(alike up to case, spacing, punctuation, word order, numbers, words holding digits and a word or two), whatever the source: a "
                         "constant system, like a null model that games a judge; its wins say how the judge treats that "
                         "text, not how well the system does the task")
        for field in fields[1:]:
            copied = sum(copies(o, t) for o, t in zip(outputs, part[field].astype(str), strict=True))
            if copied / len(part) >= CONSTANT_SHARE and field == "source":
                notes.append(f"system {system!r} gives the source itself, or nearly, as its output in {copied} of its "
                             f"{len(part)} contexts: expected for a task whose output stays close to its source (correction, "
                             "editing, paraphrase); otherwise a null system that copies what the judge is shown, which a "
                             "judge that likes length or coverage can prefer, so its wins say how the judge treats a copy")
            elif copied / len(part) >= CONSTANT_SHARE:
                notes.append(f"system {system!r} gives the reference itself, or nearly, as its output in {copied} of its "
                             f"{len(part)} contexts: if the system saw the references, that is a leak; either way the judge, "
                             "shown the reference, compares it with a copy of itself, so its wins measure little")
    if control_strings:
        held = frame[frame.apply(lambda row: any(isinstance(row.get(f), str) and c in row.get(f) for f in fields
                                                 for c in control_strings), axis=1)]
        if len(held):
            strings = sorted({c for f in fields for c in control_strings for t in held[f] if isinstance(t, str) and c in t})
            notes.append(f"{_rows_text(held, 'row')} hold the judge's control strings ({', '.join(strings)}): they are "
                         "read as plain text, never as the judge's own turn markers")
    for check, words in ((hides_text, "invisible characters (Unicode tag characters, variation selectors or a run of "
                                      "zero-width marks) that can spell an instruction a judge may read and a person "
                                      "cannot see; the judge reads them as sent"),
                         (reorders_text, "bidirectional controls, which show a reader the letters in another order than "
                                         "the judge reads them")):
        rows = frame[frame.apply(lambda row, check=check: any(check(row.get(f)) for f in fields), axis=1)]
        if len(rows):
            notes.append(f"{_rows_text(rows, 'row')}, in the {'output, source or reference' if with_reference else 'output or source'}, "
                         f"hold {words}: look at those rows")
    for field in fields:
        found = frame[field].map(lambda text: addressed_to_judge(text) if isinstance(text, str) else "")
        addressed = frame[found != ""]
        if not len(addressed):
            continue
        if field == "output":
            where = _rows_text(addressed, "output")
        else:  # a context's source or reference is shared by all its systems' rows: counted once per context
            contexts = list(dict.fromkeys(addressed["context_id"].astype(str)))
            where = (f"the {field}s of {len(contexts)} context{'s' if len(contexts) != 1 else ''} "
                     f"({', '.join(map(repr, contexts[:3]))}{' ...' if len(contexts) > 3 else ''})")
        notes.append(f"{where} hold text addressed to the judge, such as {found[found != ''].iloc[0][:60]!r}: text can "
                     f"steer a judge that way, and the judge reads it as part of the {field}; look at those rows before "
                     "trusting their wins")
    return notes


__all__ = ["ADDRESSES_JUDGE", "BIDI_CONTROLS", "CHAT_MARKERS", "CONFUSABLE_SCRIPTS", "CONSTANT_SHARE", "COVERAGE",
           "HIDDEN_INSTRUCTIONS", "LOOK_ALIKES", "NEAR_SAME", "addressed_to_judge", "copies", "hides_text", "loose_text", "near_same",
           "normalised_text", "plain_letters", "readings", "reorders_text", "text_warnings"]
