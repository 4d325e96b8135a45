"""Content signals of one turn or one run, read from the text alone (no model, no network).

Each signal is a pattern a failure researcher looks for when reading a log: an execution error
(traceback, non-zero exit code, an exception name), the orchestrator's own progress ledger
saying it is looping or not progressing, a stall/replan statement, a round or time limit, the
run's termination (TERMINATE, a transfer to a human), a fallback to made-up or sample data, and
an action repeated verbatim. The patterns are about how agent frameworks write logs (AutoGen,
Magentic-One, tool-calling agents), never about a data set's agents or tasks.
Patterns searched for anywhere in a turn are `Prefiltered`: the regex runs only in texts that
hold one of its literals (`prefilter`), the same answers many times faster; `.match` patterns
stay plain.
"""

from __future__ import annotations

import re

from contextos_lab.insights.attribution.prefilter import Prefiltered

ERROR = Prefiltered(
    re.compile(
        r"Traceback \(most recent call last\)|exitcode:\s*[1-9]|execution failed|"
        r"\b[A-Z][A-Za-z]*(?:Error|Exception)\b|\berror:|status code [45]\d\d|"
        r"\b[45]\d\d (?:client|server) error",
        re.I,
    )
)
EXCEPTION_NAME = re.compile(r"\b([A-Z][A-Za-z]*(?:Error|Exception))\b")
#: A turn that reports an execution rather than speaks (a code executor, a terminal, a tool).
TOOL_OUTPUT = re.compile(
    r"^\s*(?:exitcode:|Code output:|There is no code from the last|"
    r"\[?tool(?: result| output)?\]?:)",
    re.I,
)
#: Matched against a speaker name's *head word* (its last word, see `name_head`), so that
#: `Computer_terminal`, `ComputerTerminal` and `code_executor` are tools but an expert whose name
#: merely contains such a word (`WomenInComputerScienceHistory_Expert`, `Task_Manager_Expert`)
#: is not: in a compound name the last word says what the speaker is.
TOOL_NAME = re.compile(r"^(?:terminal|executor|interpreter|computer|tool|exec)$", re.I)
ORCHESTRATOR_NAME = re.compile(r"^(?:orchestrator|manager|planner|coordinator|supervisor)$", re.I)
LEDGER = Prefiltered(
    re.compile(r'"(?:is_request_satisfied|is_progress_being_made|is_in_loop|next_speaker)"')
)
LOOP = Prefiltered(
    re.compile(
        r'"is_in_loop"\s*:\s*(?:true|\{[^{}]*"answer"\s*:\s*true)|'
        r"\b(?:we are|I am|is) (?:stuck )?in a loop\b",
        re.I,
    )
)
NO_PROGRESS = Prefiltered(
    re.compile(r'"is_progress_being_made"\s*:\s*(?:false|\{[^{}]*"answer"\s*:\s*false)', re.I)
)
STALL = Prefiltered(
    re.compile(
        r"\bstall(?:ed|ing)?\b|\bre-?plan(?:ning)?\b|\bnew plan\b|\bupdated? (?:the )?plan\b", re.I
    )
)
LIMIT = Prefiltered(
    re.compile(
        r"\b(?:max(?:imum)?[ _](?:rounds?|turns?|steps?|iterations?)|round limit|turn limit|"
        r"time ?limit|timed? ?out|exceeded the (?:maximum|limit))\b",
        re.I,
    )
)
#: An agent framework's end-of-run token (AutoGen TERMINATE, tau-bench's user ###STOP###).
TERMINATE = Prefiltered(re.compile(r"\bTERMINATE\b|###STOP###"))
TRANSFER = Prefiltered(re.compile(r"transfer(?:red)?[_ ]to[_ ](?:human|agent)", re.I))
#: The agent gives up on getting the data and proceeds with assumed, sample or invented values.
WORKAROUND = Prefiltered(
    re.compile(
        r"\bmanual(?:ly)?\b|\binstead\b|\bsample (?:data|dataset)\b|\bdemonstrat|"
        r"\bplaceholder|\bsimulat|\bmock\b|\bhypothetical|\bassum(?:e|ed|ing|ption)|\bdummy\b|"
        r"\bfor illustration\b",
        re.I,
    )
)
CODE = re.compile(r"```")
#: A turn that checks someone else's work, hedges its claim, or states a conclusion: generic
#: wording of a verifier, of a guess presented as a result, and of the answer being fixed.
VERIFY = Prefiltered(re.compile(r"\bverif|\bconfirm|\bdouble-check", re.I))
HEDGE = Prefiltered(
    re.compile(
        r"\bassum|\bapproximat|\bestimat|\blikely\b|\bprobably\b|\bseems?\b|\bhypothetic", re.I
    )
)
#: Another speaker disputes what was said: generic wording of a correction or disagreement.
CONTRADICT = Prefiltered(
    re.compile(
        r"\bincorrect\b|\bnot correct\b|\bmistake|\berror in\b|\bdiscrepanc|\binconsisten|"
        r"\bwrong\b|\bdoes not match\b|\bmisinterpret|\boverlook",
        re.I,
    )
)
ANSWER = Prefiltered(
    re.compile(r"final answer|the answer is|\bresult is\b|\btherefore\b|\bin conclusion", re.I)
)
#: Verbs of state-changing tool calls (book_, cancel_, update_, send_, ...): the kind of step a
#: tool-using agent's failure is decided at. `name_free.call_verb` also finds them in
#: `createOrder` or `reservation.cancel`.
WRITE_VERBS = frozenset(
    {
        "book", "cancel", "update", "modify", "send", "exchange", "return", "create", "delete",
        "add", "remove", "set", "write", "post", "put", "submit", "transfer",
    }
)  # fmt: skip
#: A state-changing tool call by its name's `verb_` prefix.
WRITE_CALL = re.compile(rf"^(?:{'|'.join(sorted(WRITE_VERBS))})_", re.I)


_PARENTHESES = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
#: Words frameworks append to every speaker (`CodeExecutorAgent`, `planner_bot`, `user_proxy`):
#: they say nothing of the role, so the head word is the last word before them.
_GENERIC_SUFFIX = frozenset({"agent", "bot", "assistant", "proxy"})


def name_head(name: str) -> str:
    """The last word of a speaker name, parenthesised asides and a generic trailing word
    removed (`Orchestrator (-> Coder)` is the orchestrator, `CodeExecutorAgent` an executor,
    `Data_Analysis_Expert` an expert, `ComputerTerminal` a terminal)."""
    words = [w.lower() for w in _WORD.findall(_PARENTHESES.sub(" ", name))]
    while len(words) > 1 and words[-1] in _GENERIC_SUFFIX:
        words.pop()
    return words[-1] if words else name.strip().lower()


def is_error(text: str) -> bool:
    return bool(ERROR.search(text))


def error_type(text: str) -> str | None:
    """The exception class named in an error output, else "non-zero exit" / "error"."""
    if not is_error(text):
        return None
    names = EXCEPTION_NAME.findall(text)
    if names:
        return names[-1]  # a traceback's last exception is the one raised
    return "non-zero exit" if re.search(r"exitcode:\s*[1-9]", text) else "error"


#: Coarse families of error types, so clusters group by what went wrong, not by spelling.
ERROR_FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "a missing file or module",
        re.compile(r"FileNotFound|ModuleNotFound|ImportError|NoSuchFile", re.I),
    ),
    (
        "an undefined name or attribute",
        re.compile(r"NameError|AttributeError|KeyError|IndexError|UnboundLocal", re.I),
    ),
    (
        "a type or value error",
        re.compile(r"TypeError|ValueError|SyntaxError|IndentationError|ZeroDivision", re.I),
    ),
    (
        "a network or access error",
        re.compile(r"HTTP|Connection|Timeout|SSL|Request|URLError|Permission|40\d|50\d", re.I),
    ),
)


def error_family(kind: str | None) -> str | None:
    if kind is None:
        return None
    for family, pattern in ERROR_FAMILIES:
        if pattern.search(kind):
            return family
    return "an execution error"


__all__ = [
    "ANSWER",
    "CODE",
    "CONTRADICT",
    "ERROR",
    "HEDGE",
    "LEDGER",
    "LIMIT",
    "LOOP",
    "NO_PROGRESS",
    "ORCHESTRATOR_NAME",
    "STALL",
    "TERMINATE",
    "TOOL_NAME",
    "TOOL_OUTPUT",
    "TRANSFER",
    "VERIFY",
    "WORKAROUND",
    "WRITE_CALL",
    "WRITE_VERBS",
    "error_family",
    "error_type",
    "is_error",
    "name_head",
]
