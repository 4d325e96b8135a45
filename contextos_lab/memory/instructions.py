"""Is this text an attempted instruction to the agent? Read after normalisation, in several forms.

A reflection is a past observation; text in it that addresses the agent (seed 004 security
note) is flagged, never obeyed. Disguises are undone before matching, each giving one form:

- `skeleton` (NFKC, zero-width/bidi removed, look-alike letters mapped to Latin), casefolded,
  whitespace collapsed, and line or paragraph separators (U+2028 ...) read as line breaks;
- Unicode tag characters (invisible) read as the ASCII they mirror;
- letters spaced apart (`i g n o r e  a l l`, `I.G.N.O.R.E`) joined back;
- leetspeak digits and symbols read as letters (`1gn0r3`, `@pprove`), `1` both as i and l;
- for non-Latin languages the NFKC text without look-alike mapping (the mapping would turn
  Cyrillic words into a mix of scripts).

Recognised: "ignore / disregard / forget ... instructions (rules, guidance, the above)", role
and system markers at a line start (`SYSTEM:`, `### system`), chat-template tokens
(`<|im_start|>`, `[INST]`, `<<SYS>>`, `<|system|>`), a markdown heading or bold label opening a
new policy, "you are now ...", "from now on", blanket approvals; in English, Russian, Spanish,
German and French (the bundled examples are English; Russian is the issue's probe language).
Beyond these phrases, `directive_shapes` reads what an instruction *is* (a dismissal in 24
languages, a prompt reveal, another role's message, an authority claim, a secrecy request, a
standing order, a control switched off) on these forms and on the text with separators taken
out, and `decodings` hands back what a model would decode (base64, hex, rot13, URL, HTML).
"""

from __future__ import annotations

import re
import unicodedata

from contextos_lab.memory.decodings import decoded
from contextos_lab.memory.directive_shapes import directive_shape
from contextos_lab.memory.skeleton import skeleton

_ANY = r"(?:\w+ ){0,3}"  # up to three filler words ("all of the", "your earlier")
_OBJECT = (
    r"(?:instructions?|rules?|polic(?:y|ies)|guidelines?|guidance|guardrails?|prompts?|"
    r"constraints?|directives?|directions?|restrictions?|orders?|commands?|context|messages?|"
    r"limits?|"
    r"checks?|safeguards?|programming|training)"
)
_ENGLISH = (
    rf"\b(?:ignore|disregard|forget|override|bypass|skip|drop|abandon|stop following|"
    rf"do not follow|don't follow|never follow|pay no attention to) {_ANY}(?:previous|prior|"
    rf"above|earlier|preceding|existing|original|system|safety|current|your|the|all|any)? ?"
    rf"{_ANY}{_OBJECT}\b"
    rf"|\b(?:ignore|disregard|forget) (?:\w+ ){{0,5}}?(?:above|previous|prior|preceding|earlier|"
    rf"before|previously)\b"
    rf"|\byou (?:must|should|will|are required to) (?:now|always|from now on)\b"
    rf"|\byou(?: are|'re) now\b|\byou are no longer\b|\bfrom now on\b|\bhenceforth\b"
    rf"|\b(?:new|updated|revised|real|actual|true|secret|hidden) (?:instructions?|rules?|"
    rf"polic(?:y|ies)|system prompt|directives?|orders?)\s*[:!\-]"
    rf"|\bsystem (?:override|prompt|message|instruction)s?\b"
    rf"|\b(?:act|behave|respond|roleplay) as (?:an? |the )?(?:admin|administrator|root|"
    rf"developer|system|superuser|unrestricted)\b|\bpretend (?:to be|you are)\b"
    rf"|\b(?:developer|god|admin|jailbreak|dan) mode\b|\bdo anything now\b"
    # blanket orders in any domain: a decision verb over every item of a kind
    rf"|\b(?:approve|grant|reimburse|accept|allow|authori[sz]e|pay|issue) (?:all|every|each|any) "
    rf"{_ANY}\w+\b"
    rf"|\b(?:always|unconditionally|automatically) (?:approve|grant|reimburse|pay|escalate|"
    rf"deny|authori[sz]e|accept|reject)\b"
    r"|\b(?:reveal|print|show|repeat|output|leak|dump) (?:\w+ ){0,3}(?:system prompt|hidden "
    r"prompt|initial prompt|instructions|secrets?|api keys?|credentials)\b"
    r"|\bdo not (?:tell|inform|alert|mention (?:this )?to|notify) (?:the )?(?:user|customer|"
    r"operator|human|reviewer)s?\b"
    r"|\b(?:note|message|instructions?|reminder)s? (?:to|for) (?:the |any )?(?:ai|assistant|"
    r"agent|model|llm|bot)s?\b"
    r"|\bimportant(?: instructions?| notice| update)?\s*[:!]+\s*(?:you|the (?:assistant|"
    r"agent|model)|always|never|ignore|disregard|from now)\b"
    r"|\b(?:begin|start) (?:of )?(?:the )?(?:system|new|admin) (?:prompt|instructions?|"
    r"message)\b|\bend of (?:the )?(?:system )?prompt\b"
)
#: Russian, Spanish, German, French: the same intents, by word stems.
_OTHER = (
    r"(?:игнорир|проигнорир|забуд|забыв|отбрось|отмени|пренебреги|не обращай\w* внимани\w* на)"
    r"\w* (?:\w+ ){0,3}(?:инструкц|указани|правил|политик|директив|ограничени|предписани|"
    r"вышесказанн|вышеизложенн|сказанное выше)"
    r"|\b(?:отныне|с этого момента|теперь ты|ты теперь|ты сейчас|вы теперь|теперь вы)\b"
    r"|(?:нов|обновл[её]нн|настоящ)\w* (?:политик|инструкц|правил|системн)\w*\s*[:!\-]"
    r"|\bсистемн\w* (?:сообщени|промпт|инструкц|указани)"
    r"|\bне (?:говори|сообщай|рассказывай|упоминай)\w* (?:об этом )?(?:пользовател|клиент|"
    r"оператор)\w*"
    r"|(?:покажи|выведи|раскрой|повтори)\w* (?:\w+ ){0,2}(?:системн|инструкц|промпт|секрет|"
    r"ключ)\w*"
    r"|(?:одобр|утвер[жд]|возме[сщ]|разреш|оплач)\w* (?:все|всё|каждый|каждую|каждое|любой|любую|"
    r"любые)|\bвсегда (?:одобр|утвер[жд]|возме[сщ]|разреш)"
    r"|\b(?:ignora|olvida|omite|descarta)\w* (?:\w+ ){0,3}(?:instrucciones|reglas|políticas|"
    r"indicaciones)|\ba partir de ahora\b|\bahora eres\b"
    r"|\b(?:ignorier|vergiss|vergessen sie|missachte)\w* (?:\w+ ){0,3}(?:anweisungen|regeln|"
    r"richtlinien|vorgaben)|\bab (?:jetzt|sofort)\b|\bdu bist (?:jetzt|nun)\b"
    r"|\b(?:ignore|oubli|ne tiens pas compte)\w* (?:\w+ ){0,3}(?:instructions|règles|"
    r"consignes|directives)|\bà partir de maintenant\b|\btu es (?:maintenant|désormais)\b"
)
#: Where a marker or heading can open: a line, or a sentence (after `. `, `; `, `: `).
_START = r"(?:^|\n|[.!?;:]\s)\s*"
#: Role and system markers at a line start, chat-template tokens, headings opening a policy.
_MARKERS = (
    rf"{_START}(?:[#>*\-\[(<]+\s*)?(?:system|assistant|developer|admin|administrator|root|"
    r"operator|instruction|instructions|sys|система|системное сообщение)\s*(?:message|prompt|"
    r"note|override|update)?\s*[:\]>)]"
    r"|<\|?\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|"
    r"end_header_id|begin_of_text|im_sep)\s*\|?>|\[/?(?:inst|sys|system)\]|<</?sys>>"
    r"|</?(?:system|instructions?|admin)>"
    rf"|{_START}(?:#{{1,6}}|\*\*|__)\s*(?:\w+ ){{0,2}}(?:polic(?:y|ies)|rules?|instructions?|"
    r"guidelines?|directives?|system prompt|prompt|политик\w*|правил\w*|инструкц\w*)\b"
)
_DIRECTIVE = re.compile("|".join((_ENGLISH, _OTHER, _MARKERS)))

#: Phrases checked on the letters-only form of text whose letters were spaced apart.
_SQUASHED = re.compile(
    r"ignore\w{0,20}(?:instruction|rule|polic|above|previous)|disregard\w{0,20}(?:above|"
    r"instruction|rule|previous|guidance)|forget\w{0,20}(?:instruction|rule|above)|youarenow"
    r"|fromnowon|approve(?:all|every)|systemprompt|newpolicy|newinstruction"
    r"|(?:ignore|disregard|forget|bypass|override)\w{0,30}?(?:instruction|rule|polic|guideline"
    r"|guidance|prompt|above|previous|prior|earlier|before|told)"
)
_BREAKS = re.compile("[\u2028\u2029\u0085\u000b\u000c\r]")
#: Single characters, each followed by one separator: `i g n o r e`, `[.I.N.S.T.]`, `s-y-s`.
#: Three letters or more spaced apart: what makes the letters-only form worth reading.
_SPACED_LETTERS = re.compile(r"(?<![^ \t])(?:[^\W\d_][ .\-·]){2,}[^\W\d_](?![^ \t\n])")
_SPACED = re.compile(r"(?<![^ \t])(?:[^ \t][ .\-·]){1,}[^ \t](?![^ \t\n])")
_LEET = str.maketrans(
    {"0": "o", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "8": "b", "9": "g"}
)


def _collapse(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.split("\n"))


def _despaced(text: str) -> str:
    """Characters spaced apart joined back: `i g n o r e  t h e` -> `ignore the` (every other
    character of a run is its separator, so a spaced `.` or `-` survives; with `.` or `-` as
    the separator, a space between two characters is a word break)."""

    def join(run: str) -> str:
        seps = run[1::2]
        dominant = max(set(seps), key=seps.count)
        gaps = [" " if sep == " " and dominant != " " else "" for sep in seps] + [""]
        return "".join(ch + gap for ch, gap in zip(run[::2], gaps, strict=True))

    return _SPACED.sub(lambda m: join(m.group(0)), text)


def _unleet(text: str, one: str) -> str:
    """Digits and symbols read as the letters they stand for (a form of its own: numbers
    turned into letters form no phrase)."""
    return text.replace("1", one).translate(_LEET)


def _untag(text: str) -> str:
    """Unicode tag characters (U+E0020-E007E, invisible) read as the ASCII they mirror: text
    hidden that way ("ASCII smuggling") is read, not dropped."""
    return "".join(chr(ord(ch) - 0xE0000) if 0xE0020 <= ord(ch) <= 0xE007E else ch for ch in text)


def forms(text: str) -> tuple[str, ...]:
    """Every normalised form the detector reads (see the module docstring)."""
    text = _BREAKS.sub("\n", _untag(text))
    plain = unicodedata.normalize("NFKC", text)
    plain = "".join(ch for ch in plain if ch in "\n\t" or unicodedata.category(ch) != "Cf")
    latin = skeleton(text).casefold()
    joined = _despaced(latin)
    out = [_collapse(plain.casefold()), _collapse(latin), _collapse(joined)]
    out += [_collapse(_unleet(joined, one)) for one in ("i", "l")]
    return tuple(dict.fromkeys(out))


def carries_directive(text: str, *, depth: int = 2) -> bool:
    """True when a text tries to instruct the agent rather than describe what happened: read
    as written, with separators between letters taken out (`i🔥g🔥n🔥o🔥r🔥e`, `ignore_all`),
    for the shapes of an instruction in any listed language (`directive_shapes`), and, `depth`
    levels down, inside what a model would decode from it (`decodings`)."""
    found = forms(text)
    if any(_DIRECTIVE.search(form) for form in found):
        return True
    squashed = ["".join(ch for ch in form if ch.isalpha()) for form in found[2:]]
    if any(_SQUASHED.search(s) for s in squashed) and _has_spacing(text):
        return True
    unseparated = _unseparated(found[0])
    if any(directive_shape(form) for form in (*found, *unseparated)):
        return True
    if any(_DIRECTIVE.search(form) for form in unseparated[1:]):
        return True
    if (_SEPARATED.search(found[0]) or _hidden_inside_words(text)) and _SQUASHED.search(
        "".join(ch for ch in unseparated[0] if ch.isalpha())
    ):
        return True
    return depth > 0 and any(carries_directive(d, depth=depth - 1) for d in decoded(text))


#: Letters with symbols between them (`i🔥g🔥n`, `i.g.n`, `i_g_n`): a separator disguise.
_SEPARATED = re.compile(r"(?:[^\W\d_](?:[^\w\s]|_){1,3}){3,}[^\W\d_]")
_SYMBOLS = re.compile(r"(?:[^\w\s]|_)+")
_INNER_SYMBOLS = re.compile(r"(?<=[^\W_])(?:[^\w\s]|_)+(?=[^\W_])")


_INVISIBLE = re.compile(r"[^\W\d_][\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]+(?=[^\W\d_])")


def _hidden_inside_words(text: str) -> bool:
    """Invisible characters between letters, three times or more: a disguise, so the letters
    are read run together."""
    return len(_INVISIBLE.findall(text)) >= 3


def _unseparated(form: str) -> tuple[str, ...]:
    """`form` with symbols inside words removed, and with every symbol run read as a space
    (then letters spaced apart joined back)."""
    spaced = _collapse(_SYMBOLS.sub(" ", form))
    return (_INNER_SYMBOLS.sub("", form), spaced, _collapse(_despaced(spaced)))


def _has_spacing(text: str) -> bool:
    """Letters spaced apart somewhere (`i g n o r e`): only then is the letters-only form read,
    since run-together words (`you are nowhere`) would match across word boundaries."""
    return bool(_SPACED_LETTERS.search(skeleton(_BREAKS.sub("\n", _untag(text))).casefold()))
