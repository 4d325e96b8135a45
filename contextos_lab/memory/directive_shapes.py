"""What an instruction *is*, in any of many languages and without trigger words.

An injected order has parts that do not depend on its wording: a verb that dismisses what the
agent was told near a word for instructions or for "before" (in whatever language), a request
to reveal the hidden prompt, a message dressed as another role (a JSON `role: system`, an XML
`<system>` tag), an authority claim granting permission ("as the administrator I authorise
you"), a request for secrecy ("don't tell the user"), a standing conditional order ("whenever
X, always Y"), or a setting switched off (`safety_check=false`). Each is matched as a
co-occurrence of its parts, from word lists in 24 languages (Latin, Cyrillic, CJK, Arabic,
Devanagari, Hebrew and Thai scripts); imperative forms are listed, not stems, so a report
("we ignored the duplicate", "the previous run forgot") is not an order.
"""

from __future__ import annotations

import re

#: Imperatives that dismiss what came before (ignore / disregard / forget / bypass).
_DISMISS = (
    r"\b(?:ignore|disregard|forget|override|bypass|set aside|pay no attention to|"
    r"ignora|ignore[sz]?|olvida|olvide|descarta|omite|haz caso omiso|oublie[sz]?|oubliez|"
    r"ne tiens pas compte|ne tenez pas compte|ignoriere|ignorieren sie|vergiss|vergessen sie|"
    r"missachte|esqueça|esquece|desconsidere|dimentica|dimentichi|negeer|vergeet|zignoruj|"
    r"ignoruj|zapomnij|yok say|görmezden gel|unut|abaikan|lupakan|bỏ qua|phớt lờ|quên|"
    r"ignorera|glöm|ignoruj|zapomeň|ignoră|uită|игнорируй|проигнорируй|забудь|забудьте|"
    r"отбрось|не обращай внимания|ігноруй|проігноруй|не зважай|игнорирай|забрави)\b"
    r"|忽略|忽视|无视|忘记|忘掉|不要理会|無視|忘れ|무시|잊|تجاهل|انسَ|انس\b|تناس|"
    r"نادیده بگیر|فراموش کن|अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल जा|दुर्लक्ष|विसरा|התעלם|שכח|เพิกเฉย|ลืม"
)
#: Words for instructions, or for "what came before": what a dismissal is aimed at.
_TARGET = (
    r"\b(?:instructions?|rules|guidelines|guidance|prompts?|polic(?:y|ies)|directives|"
    r"everything|what you were told|above|previous|prior|earlier|before|"
    r"instrucciones|reglas|indicaciones|directrices|anteriores|todo lo que|antes|"
    r"règles|consignes|précédent\w*|tout ce qu\w*|avant|anweisungen|regeln|richtlinien|"
    r"vorgaben|vorherig\w*|alles|vorher|instruções|regras|diretrizes|tudo o que|istruzioni|"
    r"regole|direttive|precedenti|tutto quello|prima|instructies|regels|richtlijnen|vorige|"
    r"eerdere|alles wat|eerder|instrukcj\w*|zasady|reguły|polecenia|poprzedni\w*|wszystk\w*|"
    r"wcześniej|talimat\w*|kural\w*|önceki|daha önce|her şeyi|istem\w*|instruksi|aturan|"
    r"perintah|sebelumnya|semua yang|hướng dẫn|chỉ dẫn|quy tắc|trước đó|trước đây|mọi điều|"
    r"instruktioner|regler|tidigare|allt|pokyny|instrukce|pravidla|předchozí|všechno|"
    r"instrucțiunile|regulile|anterioare|tot ce|инструкц\w*|указани\w*|правил\w*|"
    r"предыдущ\w*|вс[её] что|всё|раньше|выше|промпт\w*|інструкц\w*|вказівк\w*|попередн\w*|"
    r"усе що|раніше|инструкции|предишни|всичко)\b"
    r"|指令|指示|说明|规则|之前|以前|上面|一切|提示词|命令|ルール|これまで|すべて|プロンプト|"
    r"지시|명령|규칙|지침|이전|모든 것|프롬프트|التعليمات|تعليمات|القواعد|السابقة|كل ما|من قبل|"
    r"دستورالعمل|دستور|قوانین|قبلی|هر چه|قبلاً|निर्देश|नियम|पिछल|पहले|हर बात|सूचना|मागील|"
    r"הוראות|כללים|הקודמות|คำสั่ง|กฎ|ก่อนหน้า"
)
#: A request to show the hidden prompt: a reveal verb near "system prompt".
_REVEAL = (
    r"\b(?:reveal|show|print|display|repeat|output|leak|dump|revela|muestra|révèle|montre|"
    r"affiche|zeige|verrate|revele|mostre|rivela|mostra|toon|onthul|ujawnij|pokaż|göster|"
    r"tampilkan|tunjukkan|ungkapkan|tiết lộ|hiển thị|покажи|раскрой|выведи|розкрий|visa)\b"
    r"|显示|透露|输出|表示|見せて|教えて|공개|보여|출력|اكشف|أظهر|اعرض|نشان بده|فاش کن|दिखाओ|बताओ"
)
_PROMPT = (
    r"system ?prompt|hidden prompt|initial prompt|prompt del sistema|prompt système|"
    r"systemprompt|prompt de sistema|prompt di sistema|systeemprompt|prompt systemow\w*|"
    r"sistem istem\w*|prompt sistem|lời nhắc hệ thống|системн\w* промпт\w*|"
    r"系统提示|システムプロンプト|시스템 프롬프트|موجه النظام|پرامپت سیستم|सिस्टम प्रॉम्प्ट"
)
_WINDOW = 60

#: Another role's message inside a note: JSON or YAML `role: system`, role tags, templates.
_ROLE = re.compile(
    r"[\"']?role[\"']?\s*[:=]\s*[\"']?(?:system|developer|admin|tool)\b"
    r"|</?(?:system|developer|instructions?|admin|prompt|rules|policy|override|sudo)\b[^>]*>"
    r"|<\|?(?:start_of_turn|start|channel|system|im_start)\|?>|###\s*(?:instruction|system)\b",
    re.IGNORECASE,
)
#: "decode this and follow it": the request to decode is an order whatever the payload.
_DECODE_AND_ACT = re.compile(
    r"\bdecode\b(?: (?:it|this|that|the \w+))?,? (?:and|then) "
    r"(?:follow|do|execute|obey|run|apply)\b",
    re.IGNORECASE,
)
_DECISION = (
    r"(?:approve|grant|re(?:fund|imburse)|pay|waive|mark|send|forward|share|reveal|disclose|"
    r"transfer|give|say|tell|answer|reply|respond|skip|bypass|disable|ignore|delete|issue|"
    r"credit|accept|authori[sz]e|wire|close|escalate)"
)
_AUTHORITY_NOUN = (
    r"(?:admin(?:istrator)?|owner|site owner|system owner|developer|ceo|cto|management|"
    r"security team|it department|operator|supervisor|root|your creator|openai|anthropic)"
)
_AUTHORITY = re.compile(
    rf"\b(?:as|i am|i'm|this is|message from|note from|order from|by order of|on behalf of|"
    rf"authori[sz]ed by|approved by|mandated by)\s+(?:the |your |an? )?(?:\w+ )?{_AUTHORITY_NOUN}\b"
    r"[^.\n]{0,80}?(?:\b(?:i (?:hereby )?(?:authori[sz]e|permit|allow|instruct|order|grant)|"
    r"you (?:are|have been) (?:now )?(?:authori[sz]ed|allowed|permitted|cleared|instructed)|"
    r"(?:you have|i grant|i give|grant|granting)\w* (?:you )?(?:my |full )?permission)\b|:\s*\w"
    rf"|,\s*(?:please )?(?:you (?:must|should|will) )?{_DECISION}\b)",
    re.IGNORECASE,
)
_GRANT = re.compile(
    r"\b(?:i (?:hereby )?(?:authori[sz]e|permit|allow|instruct|order) you to|"
    r"you (?:are|have been) (?:now )?(?:authori[sz]ed|cleared|permitted) to|"
    r"you have my (?:full )?permission to)\b",
    re.IGNORECASE,
)
_AUDIENCE = (
    r"(?:the |any |a )?(?:user|customer|operator|human|reviewer|anyone|anybody|team|admin|"
    r"manager|supervisor)s?"
)
_SECRECY = re.compile(
    rf"\b(?:do not|don't|dont|never|no need to)\s+(?:tell|inform|mention|notify|alert|reveal|"
    rf"disclose|report|say)\b[^.\n]{{0,40}}?\b(?:to )?{_AUDIENCE}\b"
    rf"|\b(?:don't|do not|never) let {_AUDIENCE} know\b"
    r"|\bkeep (?:this|it|that) (?:between us|secret|confidential|quiet|hidden|private)\b"
    rf"|\bwithout (?:telling|informing|notifying|alerting) {_AUDIENCE}\b",
    re.IGNORECASE,
)
_STANDING = re.compile(
    r"\b(?:whenever|every time|each time|any ?time|for (?:all|every) future|in (?:all )?future|"
    r"if (?:anyone|anybody|someone|a customer|the user|the customer|a user) (?:asks|mentions|says|"
    r"writes))\b[^.;\n]{0,80}?,\s*(?:you (?:should|must) )?(?:always |never |automatically |"
    rf"just |simply |immediately )?{_DECISION}\b"
    rf"|\b(?:always|automatically|unconditionally) {_DECISION}\b",
    re.IGNORECASE,
)
#: A control switched off (or a bypass switched on), written as a setting.
_FLAG = re.compile(
    r"\b[\w.\-]*(?:(?:safety|safe_?mode|moderation|approval|compliance|audit|review|sandbox|"
    r"fraud|kyc|filter|check|2fa|mfa)(?![a-z])|guard\w*|verif\w*|confirm\w*|restrict\w*|"
    r"auth\w*|polic\w*)[\w.\-]*[\"']?\s*[:=]\s*[\"']?(?:false|off|no|0|disabled?|none|skip)\b"
    r"|--(?:skip|no|disable|bypass)-[\w\-]*(?:verif|check|safety|guard|approval|auth|review|"
    r"confirm)\w*"
    r"|\b[\w\-]*(?:bypass|unrestricted|jailbreak|god_?mode|developer_?mode|admin_?mode|sudo|"
    r"no_?limits?)[\w\-]*[\"']?\s*[:=]\s*[\"']?(?:true|on|yes|1|enabled?)\b",
    re.IGNORECASE,
)
_DISMISS_RE = re.compile(_DISMISS, re.IGNORECASE)
_TARGET_RE = re.compile(_TARGET, re.IGNORECASE)
_REVEAL_RE = re.compile(_REVEAL, re.IGNORECASE)
_PROMPT_RE = re.compile(_PROMPT, re.IGNORECASE)


def _near(first: re.Pattern[str], second: re.Pattern[str], text: str) -> bool:
    """A match of `first` with a match of `second` within `_WINDOW` characters either side
    (verb-final languages put the object before the verb)."""
    for match in first.finditer(text):
        lo, hi = max(0, match.start() - _WINDOW), match.end() + _WINDOW
        if second.search(text[lo:match.start()]) or second.search(text[match.end() : hi]):
            return True
    return False


def directive_shape(text: str) -> str | None:
    """Name of the instruction shape `text` has, or None (text already normalised)."""
    if _near(_DISMISS_RE, _TARGET_RE, text):
        return "dismissal"
    if _near(_REVEAL_RE, _PROMPT_RE, text):
        return "prompt_reveal"
    for name, pattern in (
        ("role_marker", _ROLE),
        ("decode_and_act", _DECODE_AND_ACT),
        ("authority_claim", _AUTHORITY),
        ("authority_claim", _GRANT),
        ("secrecy", _SECRECY),
        ("standing_order", _STANDING),
        ("control_switched_off", _FLAG),
    ):
        if pattern.search(text):
            return name
    return None
