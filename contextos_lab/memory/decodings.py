"""What a model would decode: the texts hidden in a note by an encoding, so they are read too.

An order the agent's model would decode and obey is no less an order for being written in
base64, hex, rot13, URL encoding or HTML entities. Candidates are decoded with the standard
library (`base64`, `bytes.fromhex`, `codecs` rot13, `urllib.parse`, `html`), kept when they
decode to readable text (a key or a hash decodes to random bytes and is dropped), and the
detector reads them as it reads the note; nested encodings are followed a few levels down.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import urllib.parse

_BASE64 = re.compile(r"[A-Za-z0-9+/_\-]{16,}={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}(?:[\s:]|\\x)?){8,}")
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_ENTITY = re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[A-Za-z]+);")
_URL = re.compile(r"\b[a-z][a-z0-9+.\-]*://\S+|[?&][\w.\-]+=\S+", re.IGNORECASE)


def readable(raw: bytes) -> str | None:
    """`raw` as text when it is UTF-8 with letters and no control bytes, else None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 6 or any(ord(c) < 32 and c not in "\n\t\r" for c in text):
        return None
    letters = sum(c.isalpha() for c in text)
    return text if letters >= 0.5 * len(text.replace(" ", "")) else None


def _base64(token: str) -> str | None:
    body = token.rstrip("=")
    alt = b"-_" if ("-" in body or "_" in body) else None
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=alt, validate=True)
    except (binascii.Error, ValueError):
        return None
    return readable(raw)


def _hex(token: str) -> str | None:
    digits = re.sub(r"[\s:]|\\x", "", token)
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return readable(bytes.fromhex(digits))
    except ValueError:
        return None


def _query_values(text: str) -> list[str]:
    """Values of URL query parameters (`?q=...&next=...`), decoded as a browser would."""
    out = []
    for match in _URL.finditer(text):
        query = urllib.parse.urlsplit(match.group(0)).query or match.group(0).lstrip("?&")
        out += [f"{k}={v}" for k, v in urllib.parse.parse_qsl(query)]
    return out


def decoded(text: str) -> list[str]:
    """Texts a model would read out of `text`: each encoded run decoded, one level."""
    out: list[str] = []
    if _PERCENT.search(text) or "+" in text:
        out.append(urllib.parse.unquote_plus(text))
    out += _query_values(text)
    if _ENTITY.search(text):
        out.append(html.unescape(text))
    out.append(codecs.encode(text, "rot13"))
    for token in _BASE64.findall(text):
        found = _base64(token)
        if found is not None:
            out.append(found)
    for token in _HEX.findall(text):
        found = _hex(token)
        if found is not None:
            out.append(found)
    return [t for t in dict.fromkeys(out) if t != text]
