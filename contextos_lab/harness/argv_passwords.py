"""Passwords in argv: the CLIs whose manual puts a password after a short flag, and the shape.

A keyword scanner sees `-p Xk2...` as a flag and a word. What makes it a password is the
program: `sshpass -p`, `mysql -pVALUE`, `redis-cli -a`, `ldapsearch -w`, `sqlcmd -P`,
`zip -P`, `htpasswd -b FILE USER PASS`, `smbclient -U user%pass`, `lftp -u user,pass`,
`sqlplus user/pass@db`, `xfreerdp /p:`, `net use ... /user:NAME PASS`, `openssl -pass pass:`.
The table below holds what the manuals document; a program not in it is still covered by the
shape rule: after `-p`, `-P`, `-w`, `-a` or `-k`, a value of 8+ characters mixing three of
upper case, lower case, digits and symbols that is no path, URL or file name (`ssh -p 2222`,
`mkdir -p a/b`, `grep -w Word`, `pytest -k test_x` stay).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from contextos_lab.memory.skeleton import skeleton

#: program -> flags whose value (the next element, or the rest of the element when attached
#: like `-pVALUE`) is a password. `login` subcommands of container tools count the same.
_FLAGS: dict[str, frozenset[str]] = {
    "sshpass": frozenset({"-p"}),
    "redis-cli": frozenset({"-a", "--pass", "--askpass"}),
    "ldapsearch": frozenset({"-w"}),
    "ldapadd": frozenset({"-w"}),
    "ldapmodify": frozenset({"-w"}),
    "ldapdelete": frozenset({"-w"}),
    "ldapwhoami": frozenset({"-w"}),
    "ldappasswd": frozenset({"-w", "-s"}),
    "sqlcmd": frozenset({"-P"}),
    "bcp": frozenset({"-P"}),
    "ipmitool": frozenset({"-P"}),
    "zip": frozenset({"-P"}),
    "unzip": frozenset({"-P"}),
    "7z": frozenset({"-p"}),
    "7za": frozenset({"-p"}),
    "rar": frozenset({"-p"}),
    "unrar": frozenset({"-p"}),
    "keytool": frozenset({"-storepass", "-keypass", "-srcstorepass", "-deststorepass"}),
    "snmpwalk": frozenset({"-A", "-X"}),
    "snmpget": frozenset({"-A", "-X"}),
    "influx": frozenset({"-password"}),
}
#: Programs whose `-p` is a password only in their `login` subcommand.
_LOGIN = frozenset({"docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras", "az"})
_MONGO = re.compile(r"^mongo(?:sh|dump|restore|export|import|stat|top)?$")
_MYSQL = re.compile(r"^(?:mysql\w*|mariadb\w*)$")
_ATTACHED = frozenset({"sshpass", "7z", "7za", "rar", "unrar"})
#: Values that carry the password inside: `pass:X` (openssl), `user%pass` after `-U`
#: (Samba), `user,pass` after `-u` (lftp), `user/pass@db` (sqlplus), `/p:X` (xfreerdp).
_INLINE = re.compile(
    r"^(?:pass:.+|/p(?:assword)?:.+|(?:.*,)?pass(?:word)?=.+)$",
    re.IGNORECASE,
)
#: Oracle tools take `user/password@db` as their first operand.
_ORACLE = frozenset({"sqlplus", "rman", "expdp", "impdp", "sqlldr", "exp", "imp"})
_ORACLE_LOGIN = re.compile(r"^[\w.\-$#]+/[^@/\s]+(?:@\S+)?$")
_SHAPE_FLAGS = frozenset({"-p", "-P", "-w", "-a", "-k"})
_FILEISH = re.compile(r"[/\\]|^\w+:|\.[A-Za-z]{1,5}$|^\d[\d:.,\-]*$")


def _classes(value: str) -> int:
    return sum(
        (
            any(c.isupper() for c in value),
            any(c.islower() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def looks_like_password(value: str) -> bool:
    """8+ characters mixing three character classes, and not a path, URL, port or file."""
    return len(value) >= 8 and _classes(value) >= 3 and not _FILEISH.search(value)


def password_spans(argv: Sequence[str]) -> dict[int, str]:
    """Index -> `password` for each argv element that is, or holds, a password."""
    words = [skeleton(a) for a in argv]
    names = [PurePosixPath(w).name.lower().removesuffix(".exe") for w in words]
    flags: set[str] = set()
    for name in names:
        flags |= _FLAGS.get(name, frozenset())
        if _MONGO.match(name):
            flags |= {"-p", "--password"}
    if "login" in names and _LOGIN.intersection(names):
        flags |= {"-p", "--password"}
    attached = bool(_ATTACHED.intersection(names)) or any(_MYSQL.match(n) for n in names)
    oracle = bool(_ORACLE.intersection(names))
    out: dict[int, str] = {}
    for i, word in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else None
        if word in flags and nxt is not None:
            out[i + 1] = "password"
        elif attached and re.match(r"^-p[^\s-].*", word) and not word.startswith("--"):
            out[i] = "password"
        elif word in _SHAPE_FLAGS and nxt is not None and looks_like_password(nxt):
            out[i + 1] = "password"
        if _INLINE.match(word):
            out[i] = "password"
        if oracle and _ORACLE_LOGIN.match(word):
            out[i] = "password"
        if word == "-U" and nxt is not None and "%" in nxt:
            out[i + 1] = "password"
        if word == "-u" and nxt is not None and "," in nxt:
            out[i + 1] = "password"
    if "htpasswd" in names:
        out.update(_htpasswd(words))
    if "net" in names and "use" in names:
        out.update(_net_use(words))
    return out


def _htpasswd(words: Sequence[str]) -> dict[int, str]:
    """`htpasswd -b[c...] FILE USER PASSWORD`: with `b` among the flags, the third operand."""
    start = next(i for i, w in enumerate(words) if PurePosixPath(w).name == "htpasswd")
    rest = list(enumerate(words))[start + 1 :]
    if not any(w.startswith("-") and "b" in w for _, w in rest):
        return {}
    operands = [i for i, w in rest if not w.startswith("-")]
    return {operands[2]: "password"} if len(operands) >= 3 else {}


def _net_use(words: Sequence[str]) -> dict[int, str]:
    """`net use DRIVE SHARE [PASSWORD] /user:NAME [PASSWORD]`: an operand that is no drive,
    share or switch after the share."""
    out = {}
    start = next(i for i, w in enumerate(words) if w.lower() == "use")
    for i, w in list(enumerate(words))[start + 1 :]:
        if w.startswith(("\\\\", "/")) or re.fullmatch(r"[A-Za-z]:|\*|net|use", w, re.I):
            continue
        out[i] = "password"
    return out
