"""Secrets in one line of text, found by detect-secrets' plugins (the maintained scanner).

The plugins are called directly (`analyze_string`), never through detect-secrets' global
settings: nothing is verified over the network and nothing is read from a baseline file. The
line is scanned as written and as its `skeleton` (NFKC, invisible characters removed, look-alike
letters mapped to Latin), so a zero-width space or a Cyrillic letter inside a token hides nothing.

Plugins: AWS, GitHub, JWT, private-key headers, Slack, Stripe, URL basic auth, the keyword
detector (in its config-file form: `password: value` needs no quotes in a log) and the Base64
high-entropy detector over bare tokens. Entropy hits pass detect-secrets' own heuristic filters
(UUIDs, sequential strings, templated values, indirect references) so ids and paths stay; hex
strings are never scanned for entropy alone, since a git hash or a digest is public (a hex
secret is caught by its key instead); base64 that decodes to readable text is data, not a
key. Kit patterns (`redaction.py`), the vendor token design (`token_shapes`) and CredSweeper
(`credsweeper_scan`) are layered beside it: each alone misses what another catches.
"""

from __future__ import annotations

import base64
import math
import re
from functools import lru_cache

from detect_secrets.filters import heuristic
from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import BasePlugin
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import CONFIG_DENYLIST_REGEX_TO_GROUP
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from contextos_lab.memory.skeleton import skeleton

#: Plugin -> the name a redaction marker carries.
_NAMES: dict[type[BasePlugin], str] = {
    AWSKeyDetector: "aws_access_key",
    GitHubTokenDetector: "github_token",
    JwtTokenDetector: "jwt",
    PrivateKeyDetector: "private_key",
    SlackDetector: "slack_token",
    StripeDetector: "stripe_key",
    BasicAuthDetector: "url_credentials",
    OpenAIDetector: "openai_key",
    GitLabTokenDetector: "gitlab_token",
    NpmDetector: "npm_token",
    PypiTokenDetector: "pypi_token",
    SendGridDetector: "sendgrid_key",
    TwilioKeyDetector: "twilio_key",
    DiscordBotTokenDetector: "discord_token",
    TelegramBotTokenDetector: "telegram_token",
    MailchimpDetector: "mailchimp_key",
    ArtifactoryDetector: "artifactory_token",
    AzureStorageKeyDetector: "azure_storage_key",
    SquareOAuthDetector: "square_oauth",
}
#: The plugins that match a token's shape alone: what a secret split across two argv
#: elements is checked with once they are joined.
TOKEN_PLUGINS = tuple(cls for cls in _NAMES if cls is not BasicAuthDetector)
#: A bare token long and mixed enough to be a key; shorter ones are words and numbers.
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{20,}={0,2}")
#: Public high-entropy data: subresource-integrity and digest prefixes, base64 file headers
#: (PNG, JPEG, GIF, PDF, ZIP/Office) that logs print.
_PUBLIC_DATA = re.compile(
    r"^(?:sha(?:1|224|256|384|512)[-:_]|md5[-:]|iVBORw0KGgo|/9j/|R0lGOD|JVBERi|UEsDB)"
)
#: A value that stands for a secret without being one: masks, templates, references.
_MASKED = re.compile(
    r"^(?:[*•xX#.]{3,}|<[^>]*>|\$\{[^}]*\}|\{\{.*\}\}|\$\w+|%\(\w+\)s|\[redacted[^\]]*\]"
    r"|(?:none|null|nil|true|false|redacted|changeme|required|optional|empty|\*)\b)",
    re.IGNORECASE,
)
_VALUE = re.compile(r"[:=]+\s*[\"'`]?\s*(\S+)")
_HEX = re.compile(r"[0-9a-fA-F\-]+")
#: A bare token is random enough to be a key when its Shannon entropy (detect-secrets'
#: measure) reaches this share of the most a string of its length can have (log2 of its
#: length): random 20-64 character keys score 0.82-0.97, camel-case identifiers and paths
#: 0.75-0.81 (and a key needs an upper and a lower case letter and a digit; a long token with
#: three digits or more counts from 0.72, identifiers seldom carry digits; a long one without
#: digits from 0.86). A fixed limit in bits would miss short keys or flag long identifiers.
ENTROPY_SHARE = 0.80


@lru_cache(maxsize=1)
def _plugins() -> tuple[BasePlugin, ...]:
    return tuple(cls() for cls in _NAMES)


@lru_cache(maxsize=1)
def _entropy() -> Base64HighEntropyString:
    return Base64HighEntropyString()


def _keyword_hit(line: str) -> bool:
    """A secret-sounding key with a value (detect-secrets' keyword detector, config form).

    The detector's own regexes are run so the key can be checked too: a keyword that runs on
    into a lower-case word (`secretary: Ann`, `passwords: 3`) is prose, not a key.
    """
    if heuristic.is_indirect_reference(line):
        return False
    for regex, group in CONFIG_DENYLIST_REGEX_TO_GROUP.items():
        for match in regex.finditer(line):
            after = line[match.end(1) : match.end(1) + 1]
            if (after.isalpha() and after.islower()) or is_metadata_key(match.group(0)):
                continue
            value = match.group(group).strip()
            if (
                len(value) >= 3
                and not heuristic.is_templated_secret(value)
                and not heuristic.is_prefixed_with_dollar_sign(value)
                and not _MASKED.match(value)
            ):
                return True
    return False


#: A key *about* a secret, not holding one: `password_min_length = 12`, `token_ttl: 3600`.
_METADATA = re.compile(
    r"\b(?:len(?:gth)?|count|min|max|size|age|expir\w*|timeout|ttl|rounds|attempts|policy|reset"
    r"|hint|file|path|url|field|column|label|prompt|strength|header|name|type|limit|budget)\b",
    re.IGNORECASE,
)
_KEY_PART = re.compile(r"^[\s\"'{\[,]*([\w.\-]+)")


def is_metadata_key(assignment: str) -> bool:
    """The key of `assignment` (`key = value`) names a property of a secret (its length, file,
    expiry), whose value is no secret."""
    key = _KEY_PART.match(assignment)
    return bool(key and _METADATA.search(key.group(1).replace("_", " ").replace("-", " ")))


def plain_assignment(line: str, start: int) -> bool:
    """The assignment starting at `start` holds a literal value: not a metadata key, not an
    indirect reference (`secret = os.environ["X"]`, `token = get_token()`, detect-secrets' own
    heuristic), not a mask, template or variable (`********`, `<redacted>`, `${DB_PASS}`)."""
    rest = line[start:]
    value = _VALUE.search(rest)
    if value is not None and _MASKED.match(value.group(1)):
        return False
    return not (is_metadata_key(rest) or heuristic.is_indirect_reference(rest))


def _entropy_hit(line: str) -> bool:
    """A bare token with the entropy of a key that no heuristic explains away."""
    plugin = _entropy()
    for token in _TOKEN.findall(line):
        if _HEX.fullmatch(token) or heuristic.is_potential_uuid(token):
            continue  # hashes, digests and ids are public
        if _PUBLIC_DATA.match(token):
            continue
        if heuristic.is_sequential_string(token):
            continue  # `ABCDEF...`
        if encodes_text(token):
            continue  # base64 of a sentence is data: a key decodes to random bytes
        if not (any(c.isupper() for c in token) and any(c.islower() for c in token)):
            continue
        most = math.log2(min(len(token), 64))
        share = plugin.calculate_shannon_entropy(token) / most
        digits = sum(c.isdigit() for c in token)
        long = len(token) >= 24
        if (
            (digits and share >= ENTROPY_SHARE)
            or (share >= 0.72 and digits >= 3 and long)
            or (share >= 0.86 and long)  # no digit: identifiers stay near 0.80
        ):
            return True
    return False


_PROSE = re.compile(r"[\w\s.,;:!?'\"()\-]+")


def encodes_text(token: str) -> bool:
    """`token` is base64 (standard or URL-safe) of readable text: words and spaces, as a
    sentence or a log line encodes to; a key or a hash decodes to random bytes."""
    body = token.rstrip("=")
    try:
        raw = base64.b64decode(
            body + "=" * (-len(body) % 4),
            altchars=b"-_" if "-" in body or "_" in body else None,
            validate=True,
        )
        text = raw.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    return len(text) >= 12 and " " in text and bool(_PROSE.fullmatch(text))


def token_hit(text: str) -> str | None:
    """Name of the shape-only plugin (AWS, GitHub, JWT, Stripe, ...) matching `text`, or None."""
    for plugin in _plugins():
        if type(plugin) in TOKEN_PLUGINS and next(iter(plugin.analyze_string(text)), None):
            return _NAMES[type(plugin)]
    return None


def scanner_hit(line: str) -> str | None:
    """Name of the detect-secrets plugin that finds a secret in `line` (as written or as its
    skeleton), or None."""
    forms = (line,) if (normal := skeleton(line)) == line else (line, normal)
    for form in forms:
        for plugin in _plugins():
            if next(iter(plugin.analyze_string(form)), None) is not None:
                return _NAMES[type(plugin)]
        if _keyword_hit(form):
            return "secret_keyword"
        if _entropy_hit(form):
            return "high_entropy"
    return None
