# ruff: noqa: E501  (a table of one-line templates reads best unwrapped)
"""Seeded corpora for redaction: secret shapes that must not leak, benign lines that must stay.

Every shape is a template filled from a seeded RNG (fresh values, key names, separators,
quoting and surrounding text per seed), so a new seed is a fresh variant of each shape, not the
same strings again. A probe is a text (possibly several lines) or an argv, with the secret
values that must not appear in what is recorded. Used by tests/harness/test_leak_corpus.py and
benchmarks/leak_corpus.py; the one source of the probe type, alphabets and seeded drawing that
benchmarks/corpora/vendor_secrets.py builds on.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER_NUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


@dataclass(frozen=True)
class Probe:
    shape: str  # shape name, vendor or argv form
    payload: str | tuple[str, ...]  # text, or an argv
    secrets: tuple[str, ...]


def draw(rng: random.Random, alphabet: str, n: int) -> str:
    """`n` characters drawn from `alphabet`: a random body, as a generator makes one."""
    return "".join(rng.choice(alphabet) for _ in range(n))


_r = draw  # the short name the one-line tables below read best with


def seeded_lines(templates: Sequence[Callable[[random.Random], str]], seed: int, n: int) -> list[str]:
    """`n` lines, each from a template picked and filled by one RNG seeded with `seed`: how
    every benign corpus (these lines, the pass-4 look-alikes) is drawn."""
    rng = random.Random(seed)
    return [rng.choice(templates)(rng) for _ in range(n)]


def password(rng: random.Random) -> str:
    """A password a person or a generator picks: letters, digits, a symbol, 10-22 long."""
    core = _r(rng, ALNUM, rng.randint(8, 18)) + rng.choice("!#%^*_-.~") + _r(rng, string.digits, 2)
    return rng.choice([core, core.capitalize(), rng.choice(["Summer", "Tr0ub4dor", "Kx"]) + core])


def _user(rng: random.Random) -> str:
    return rng.choice(["admin", "root", "svc_deploy", "bob", "ci-bot", "app", "alice.w"])


def _host(rng: random.Random) -> str:
    return rng.choice(["db.internal", "10.0.3.7", "api.example.com", "cache-1.prod.local"])


def _b64url(rng: random.Random, obj: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def jwt(rng: random.Random) -> str:
    head = _b64url(rng, {"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"})
    body = _b64url(rng, {"sub": str(rng.randint(1, 10**6)), "iat": rng.randint(10**9, 2 * 10**9)})
    return f"{head}.{body}.{_r(rng, ALNUM + '-_', 43)}"


def aws_id(rng: random.Random) -> str:
    return rng.choice(["AKIA", "ASIA"]) + _r(rng, UPPER_NUM, 16)


def pem_body(rng: random.Random, lines: int) -> list[str]:
    return [_r(rng, B64, 64) for _ in range(lines)]


def _kv(rng: random.Random, key: str, value: str) -> str:
    sep = rng.choice(["=", ": ", " = ", ":", "=", " := "])
    quote = rng.choice(["", '"', "'"])
    return f"{key}{sep}{quote}{value}{quote}"


def _around(rng: random.Random, line: str) -> str:
    before = rng.choice(["", "  ", "2024-05-01T10:00:00Z INFO ", "+ ", "$ ", "DEBUG env: "])
    return before + line


Shape = Callable[[random.Random], Probe]
SHAPES: dict[str, Shape] = {}


def shape(name: str) -> Callable[[Shape], Shape]:
    def register(fn: Shape) -> Shape:
        SHAPES[name] = fn
        return fn

    return register


def _text(name: str, make: Callable[[random.Random, str], str], value: Callable = password):
    """A one-value text shape: `make(rng, secret)` is the text."""

    def build(rng: random.Random) -> Probe:
        secret = value(rng)
        return Probe(name, make(rng, secret), (secret,))

    SHAPES[name] = build


_PW_KEYS = ["password", "Password", "PASSWORD", "db_password", "DB_PASSWORD", "passwd", "pwd",
            "DB_PASS", "SMTP_PASS", "redis_pass", "admin_passphrase", "PGPASSWORD"]
_SECRET_KEYS = ["client_secret", "SECRET_KEY", "app_secret", "secret", "jwt_secret",
                "access_token", "refresh_token", "AUTH_TOKEN", "api_key", "API_KEY", "apikey",
                "x-api-key", "private_key", "secret_key_base", "SLACK_SIGNING_SECRET"]

_text("kv_password", lambda r, s: _around(r, _kv(r, r.choice(_PW_KEYS), s)))
_text("kv_secret_key", lambda r, s: _around(r, _kv(r, r.choice(_SECRET_KEYS), s)))
_text("export_db_pass", lambda r, s: f"export {r.choice(['DB_PASS', 'MYSQL_PWD', 'PGPASSWORD'])}={s}")
_text("json_password", lambda r, s: json.dumps({"user": _user(r), r.choice(_PW_KEYS): s}))
_text("json_token", lambda r, s: json.dumps({r.choice(_SECRET_KEYS): s, "ttl": 3600}))
_text("yaml_password", lambda r, s: f"db:\n  {r.choice(_PW_KEYS)}: {s}\n  port: 5432")
_text("env_prefix_cmd", lambda r, s: f"env DB_PASS={s} ./migrate --up")
_text("url_password", lambda r, s: f"{r.choice(['postgres', 'mysql', 'amqp', 'mongodb+srv', 'https'])}://{_user(r)}:{s}@{_host(r)}:{r.randint(1000, 9999)}/app")
_text("url_password_slash", lambda r, s: f"redis://{_user(r)}:{s[:4]}/{s[4:]}@{_host(r)}/0", )
_text("url_no_scheme", lambda r, s: f"DATABASE_HOST={_user(r)}:{s}@{_host(r)}:5432")
_text("url_no_user", lambda r, s: f"redis://:{s}@{_host(r)}:6379/0")
_text("curl_u", lambda r, s: f"curl -s -u {_user(r)}:{s} https://{_host(r)}/v1/items")
_text("curl_user_eq", lambda r, s: f"curl --user={_user(r)}:{s} https://{_host(r)}/")
_text("mysql_p", lambda r, s: f"mysql -h {_host(r)} -u{_user(r)} -p{s} app_db")
_text("mysqldump_p", lambda r, s: f"mysqldump -u {_user(r)} -p'{s}' --all-databases")
_text("netrc_line", lambda r, s: f"machine {_host(r)} login {_user(r)} password {s}")
_text("netrc_multiline", lambda r, s: f"machine {_host(r)}\n  login {_user(r)}\n  password {s}")
_text("backslash_continued", lambda r, s: f"export {r.choice(_PW_KEYS)}=\\\n  {s}")
_text("backslash_cmd", lambda r, s: f"psql \\\n  --host {_host(r)} \\\n  --password \\\n  {s}")
_text("yaml_block", lambda r, s: f"{r.choice(['password', 'secret', 'token'])}: {r.choice(['|', '>', '|-', '>-'])}\n  {s}\nnext: 1")
_text("bare_key_next_line", lambda r, s: f"{r.choice(['password=', 'api_key:', 'token =', 'Authorization: Bearer'])}\n{s}\nok")
_text("fullwidth_key", lambda r, s: f"ｐａｓｓｗｏｒｄ={s}")
_text("zero_width_key", lambda r, s: f"pass\u200bword={s}")
_text("cyrillic_key", lambda r, s: f"раssword: {s}")
_text("bearer", lambda r, s: f"Authorization: Bearer {s}", lambda r: _r(r, ALNUM + "-._~", r.randint(24, 48)))
_text("bearer_zero_width", lambda r, s: f"Authorization: Bearer\u200b {s}", lambda r: _r(r, ALNUM, 32))
_text("bearer_header_curl", lambda r, s: f"curl -H 'Authorization: Bearer {s}' https://{_host(r)}", lambda r: _r(r, ALNUM, 40))
_text("authorization_basic", lambda r, s: f"Authorization: Basic {s}", lambda r: base64.b64encode(f"{_user(r)}:{password(r)}".encode()).decode())
_text("authorization_token", lambda r, s: f"Authorization: token {s}", lambda r: "ghp_" + _r(r, ALNUM, 36))
_text("authorization_lowercase", lambda r, s: f"authorization: {r.choice(['bearer', 'Token', 'Bearer'])} {s}", lambda r: _r(r, ALNUM, 30))
_text("x_api_key_header", lambda r, s: f"X-Api-Key: {s}", lambda r: _r(r, HEX, 32))
_text("ghp_bare", lambda r, s: f"using {s} for the push", lambda r: r.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + _r(r, ALNUM, 36))
_text("github_pat", lambda r, s: f"GH_TOKEN {s}", lambda r: "github_pat_" + _r(r, ALNUM + "_", 82))
_text("github_remote_url", lambda r, s: f"git remote add origin https://{s}@github.com/org/repo.git", lambda r: "ghp_" + _r(r, ALNUM, 36))
_text("github_x_access_token", lambda r, s: f"https://x-access-token:{s}@github.com/o/r", lambda r: "ghs_" + _r(r, ALNUM, 36))
_text("jwt_bare", lambda r, s: f"token issued: {s}", jwt)
_text("jwt_set_cookie", lambda r, s: f"Set-Cookie: session={s}; Path=/; HttpOnly; Secure", jwt)
_text("jwt_cookie", lambda r, s: f"Cookie: theme=dark; auth={s}; lang=en", jwt)
_text("stripe_live", lambda r, s: f"stripe.api_key = {s}", lambda r: r.choice(["sk_live_", "rk_live_"]) + _r(r, ALNUM, 24))
_text("stripe_bare", lambda r, s: f"charging with {s}", lambda r: "sk_live_" + _r(r, ALNUM, r.randint(24, 99)))
_text("google_api_key", lambda r, s: f"maps?key={s}&q=x", lambda r: "AIza" + _r(r, ALNUM + "_-", 35))
_text("google_api_key_bare", lambda r, s: f"GOOGLE {s}", lambda r: "AIza" + _r(r, ALNUM + "_-", 35))
_text("aws_key_id", lambda r, s: f"aws_access_key_id={s}", aws_id)
_text("aws_key_id_bare", lambda r, s: f"creds {s} loaded", aws_id)
_text("aws_mixed_case", lambda r, s: f"id {s}", lambda r: "Akia" + _r(r, UPPER_NUM + string.ascii_lowercase, 16))
_text("aws_secret", lambda r, s: f"aws_secret_access_key = {s}", lambda r: _r(r, ALNUM + "/+", 40))
_text("slack_bot", lambda r, s: f"SLACK {s}", lambda r: f"xoxb-{r.randint(10**10, 10**11)}-{r.randint(10**10, 10**11)}-{_r(r, ALNUM, 24)}")
_text("slack_webhook", lambda r, s: f"POST {s}", lambda r: f"https://hooks.slack.com/services/T{_r(r, UPPER_NUM, 8)}/B{_r(r, UPPER_NUM, 8)}/{_r(r, ALNUM, 24)}")
_text("openai_key", lambda r, s: f"OPENAI {s}", lambda r: "sk-" + _r(r, ALNUM, 20) + "T3BlbkFJ" + _r(r, ALNUM, 20))
_text("openai_proj_key", lambda r, s: f"client = OpenAI(api_key=\"{s}\")", lambda r: "sk-proj-" + _r(r, ALNUM + "_-", 48))
_text("gitlab_pat", lambda r, s: f"PRIVATE-TOKEN: {s}", lambda r: "glpat-" + _r(r, ALNUM + "_-", 20))
_text("sendgrid", lambda r, s: f"mail via {s}", lambda r: "SG." + _r(r, ALNUM + "_-", 22) + "." + _r(r, ALNUM + "_-", 43))
_text("npm_token", lambda r, s: f"//registry.npmjs.org/:_authToken={s}", lambda r: "npm_" + _r(r, ALNUM, 36))
_text("high_entropy_bare", lambda r, s: f"value {s} end", lambda r: _r(r, ALNUM + "+/", 40))
_text("high_entropy_quoted", lambda r, s: f'cfg["k"] = "{s}"', lambda r: _r(r, ALNUM, 32))
_text("azure_conn", lambda r, s: f"DefaultEndpointsProtocol=https;AccountName=x;AccountKey={s};EndpointSuffix=core.windows.net", lambda r: _r(r, ALNUM + "+/", 86) + "==")
_text("docker_password_flag", lambda r, s: f"docker login --password {s} registry.io")
_text("prose_password", lambda r, s: f"{r.choice(['the', 'my', 'new', 'Your'])} {r.choice(['password', 'passphrase'])} {r.choice(['is', 'was'])} {s}")
_text("pgpass_line", lambda r, s: f"{_host(r)}:5432:app:{_user(r)}:{s}")
_text("sshpass", lambda r, s: f"sshpass -p {s} ssh {_user(r)}@{_host(r)}")
_text("redis_cli_a", lambda r, s: f"redis-cli -h {_host(r)} -a {s} ping")
_text("docker_login_p", lambda r, s: f"docker login -u {_user(r)} -p {s} registry.example.com")
_text("openssl_passin", lambda r, s: f"openssl rsa -in key.pem -passin pass:{s}")
_text("npmrc_auth", lambda r, s: f"_auth={s}", lambda r: base64.b64encode(f"{_user(r)}:{password(r)}".encode()).decode())
_text("k8s_secret_yaml", lambda r, s: f"apiVersion: v1\nkind: Secret\ndata:\n  {r.choice(['password', 'db-password', 'api-token'])}: {s}", lambda r: base64.b64encode(password(r).encode()).decode())
_text("json_escaped_pem", lambda r, s: json.dumps({"private_key": f"-----BEGIN PRIVATE KEY-----\n{s}\n-----END PRIVATE KEY-----\n"}), lambda r: _r(r, B64, 64))


def _pem(kind: str) -> Shape:
    def build(rng: random.Random) -> Probe:
        body = pem_body(rng, rng.randint(2, 5))
        text = "\n".join([f"-----BEGIN {kind}PRIVATE KEY-----", *body, f"-----END {kind}PRIVATE KEY-----"])
        return Probe(f"pem_{kind.strip().lower() or 'pkcs8'}", f"key:\n{text}\ndone", tuple(body))

    return build


for _kind in ("RSA ", "OPENSSH ", "EC ", "", "DSA "):
    SHAPES[f"pem_{_kind.strip().lower() or 'pkcs8'}"] = _pem(_kind)


def _argv(name: str, make: Callable[[random.Random, str], tuple[str, ...]], value: Callable = password):
    def build(rng: random.Random) -> Probe:
        secret = value(rng)
        return Probe(name, make(rng, secret), (secret,))

    SHAPES[name] = build


_argv("argv_password_flag", lambda r, s: ("tool", r.choice(["--password", "--db-password", "--passphrase", "--token", "--api-key", "--client-secret"]), s, "--verbose"))
_argv("argv_flag_eq", lambda r, s: ("tool", f"{r.choice(['--password', '--token', '--api-key'])}={s}"))
_argv("argv_bearer_next", lambda r, s: ("curl", "-H", r.choice(["Authorization: Bearer", "Authorization: Bearer ", "authorization: token"]), s, "https://api.example.com"), lambda r: _r(r, ALNUM, 32))
_argv("argv_header_whole", lambda r, s: ("curl", "-H", f"Authorization: Bearer {s}", "https://x.io"), lambda r: _r(r, ALNUM, 32))
_argv("argv_curl_u", lambda r, s: ("curl", r.choice(["-u", "--user"]), f"{_user(r)}:{s}", "https://x.io"))
_argv("argv_mysql_p", lambda r, s: (r.choice(["mysql", "/usr/bin/mysql", "mysqldump"]), "-h", _host(r), "-uroot", f"-p{s}", "app"))
_argv("argv_env_assign", lambda r, s: ("env", f"{r.choice(_PW_KEYS)}={s}", "./run"))
_argv("argv_url", lambda r, s: ("psql", f"postgresql://{_user(r)}:{s}@{_host(r)}/db"))
_argv("argv_docker_login", lambda r, s: ("docker", "login", "-u", _user(r), "-p", s, "registry.io"))
_argv("argv_sshpass", lambda r, s: ("sshpass", "-p", s, "ssh", f"{_user(r)}@{_host(r)}"))
_argv("argv_redis_cli", lambda r, s: ("redis-cli", "-h", _host(r), "-a", s))
_argv("argv_header_three_parts", lambda r, s: ("curl", "-H", "Authorization:", "Bearer", s, "https://x.io"), lambda r: _r(r, ALNUM, 32))
_argv("argv_jwt", lambda r, s: ("http", "GET", "x.io", f"Cookie:session={s}"), jwt)


@shape("argv_split_aws")
def _split_aws(rng: random.Random) -> Probe:
    key = aws_id(rng)
    cut = rng.randint(6, 14)
    return Probe("argv_split_aws", ("aws", "--key", key[:cut], key[cut:], "s3", "ls"), (key, key[:cut], key[cut:]))


@shape("argv_split_ghp")
def _split_ghp(rng: random.Random) -> Probe:
    key = "ghp_" + _r(rng, ALNUM, 36)
    cut = rng.randint(10, 30)
    return Probe("argv_split_ghp", ("git", "push", key[:cut], key[cut:]), (key, key[:cut], key[cut:]))


def secret_probes(seed: int, per_shape: int = 1) -> list[Probe]:
    """`per_shape` fresh variants of every shape."""
    rng = random.Random(seed)
    return [make(rng) for _ in range(per_shape) for make in SHAPES.values()]


# --- benign lines -------------------------------------------------------------------------

_WORDS = ("request", "cache", "worker", "retry", "order", "refund", "policy", "timeout", "user",
          "session", "queue", "batch", "tokens", "latency", "model", "build", "deploy", "index")


def _uuid(rng: random.Random) -> str:
    h = _r(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


_BENIGN: tuple[Callable[[random.Random], str], ...] = (
    lambda r: f"2024-0{r.randint(1, 9)}-1{r.randint(0, 9)}T0{r.randint(0, 9)}:12:03Z INFO {r.choice(_WORDS)} done in {r.randint(1, 999)} ms",
    lambda r: f"commit {_r(r, HEX, 40)}",
    lambda r: f"Merge: {_r(r, HEX, 7)} {_r(r, HEX, 7)}",
    lambda r: f"request_id={_uuid(r)} status=200 bytes={r.randint(10, 99999)}",
    lambda r: f"sha256:{_r(r, HEX, 64)}",
    lambda r: f"    for {r.choice(_WORDS)} in self.{r.choice(_WORDS)}s:",
    lambda r: f"def {r.choice(_WORDS)}_{r.choice(_WORDS)}(x: int) -> float:",
    lambda r: f"  File \"/usr/lib/python3.11/site-packages/{r.choice(_WORDS)}/core.py\", line {r.randint(1, 900)}, in run",
    lambda r: f"{r.random():.6f},{r.random():.6f},{r.randint(0, 10**6)}",
    lambda r: f"tokens: {r.randint(1, 4096)}",
    lambda r: f"max_tokens={r.randint(1, 4096)} temperature={r.random():.2f}",
    lambda r: f"GET /api/v1/{r.choice(_WORDS)}s/{r.randint(1, 9999)}?page={r.randint(1, 9)} HTTP/1.1",
    lambda r: f"https://docs.example.com/{r.choice(_WORDS)}/{r.choice(_WORDS)}#section-{r.randint(1, 9)}",
    lambda r: f"git clone git@github.com:{r.choice(_WORDS)}/{r.choice(_WORDS)}.git",
    lambda r: f"SELECT id, {r.choice(_WORDS)} FROM {r.choice(_WORDS)}s WHERE id = {r.randint(1, 999)};",
    lambda r: f"user {r.randint(1, 999)} requested a password reset at {r.randint(10, 23)}:{r.randint(10, 59)}",
    lambda r: f"the {r.choice(_WORDS)} secretary: {r.choice(['Ann', 'Bo', 'Kim'])}",
    lambda r: f"passes: {r.randint(1, 9)}",
    lambda r: f"export PATH=/opt/{r.choice(_WORDS)}/bin:$PATH",
    lambda r: f"image: registry.example.com/{r.choice(_WORDS)}:{r.randint(1, 9)}.{r.randint(0, 20)}.{r.randint(0, 9)}",
    lambda r: f"{r.choice(_WORDS).upper()}_TIMEOUT_MS={r.randint(100, 90000)}",
    lambda r: f"pytest tests/{r.choice(_WORDS)} -x -q --maxfail={r.randint(1, 3)}",
    lambda r: f"ok: [{r.choice(_WORDS)}-{r.randint(1, 30)}] => changed={r.choice(['true', 'false'])}",
    lambda r: f"case {_uuid(r)} scored {r.random():.3f} (policy ok, safety ok)",
    lambda r: f"{r.randint(1, 99)} passed, {r.randint(0, 5)} skipped in {r.random() * 90:.2f}s",
    lambda r: f"Downloading {r.choice(_WORDS)}-{r.randint(1, 9)}.{r.randint(0, 20)}.0-py3-none-any.whl ({r.randint(1, 900)} kB)",
    lambda r: f"password_min_length = {r.randint(8, 16)}",
    lambda r: f"if token is None: raise ValueError(\"missing {r.choice(_WORDS)}\")",
    lambda r: f"secret = os.environ[\"{r.choice(_WORDS).upper()}_SECRET\"]",
    lambda r: f"    \"version\": \"{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)}\",",
    lambda r: f"[{r.choice(['WARN', 'ERROR', 'INFO'])}] {r.choice(_WORDS)} {r.choice(_WORDS)} exceeded by {r.randint(1, 50)}%",
    lambda r: f"docker run --rm -p {r.randint(1000, 9999)}:80 nginx:1.{r.randint(20, 27)}",
    lambda r: f"checksum {_r(r, HEX, 32)}  {r.choice(_WORDS)}.tar.gz",
    lambda r: f"trace_id={_r(r, HEX, 32)} span_id={_r(r, HEX, 16)}",
    lambda r: f"mkdir -p /tmp/{r.choice(_WORDS)}/{r.randint(1, 99)}",
    lambda r: f"ssh-keygen -t ed25519 -C {r.choice(_WORDS)}@example.com",
    lambda r: f"{r.choice(_WORDS)}Manager.handle{r.choice(_WORDS).capitalize()}Event(event, context)",
    lambda r: f"integrity sha512-{base64.b64encode(r.randbytes(64)).decode()}",
    lambda r: f"{r.choice(['password', 'api_key', 'token'])}: {r.choice(['********', '<redacted>', '${DB_PASSWORD}', 'null', '[redacted]'])}",
    lambda r: f"GET /oauth/callback?state={_r(r, HEX, 8)}&token_type=bearer HTTP/1.1",
    lambda r: f"export AWS_REGION={r.choice(['us-east-1', 'eu-west-2', 'ap-south-1'])}",
    lambda r: f"thumbnail: iVBORw0KGgoAAAANSUhEUgAA{base64.b64encode(r.randbytes(48)).decode()}",
    lambda r: f"the Bearer token expired after {r.randint(1, 60)} minutes",
    lambda r: f"docker pull ghcr.io/{r.choice(_WORDS)}/app@sha256:{_r(r, HEX, 64)}",
    lambda r: f"X-Request-Id: {_uuid(r)}",
    lambda r: f"password is {r.choice(['required', 'incorrect', 'too short', 'expired'])} for user {r.randint(1, 999)}",
    lambda r: f"docker run -p {r.randint(1000, 9999)}:80 -e MODE=dev app:{r.randint(1, 9)}",
    lambda r: f"redis-cli -h {_host(r)} ping",
    lambda r: f"ssh -p {r.randint(1000, 9999)} {_user(r)}@{_host(r)}",
    lambda r: f"12:30:45.{r.randint(100, 999)} {r.choice(_WORDS)}:{r.randint(1, 99)}:{r.choice(_WORDS)}:ok",
)


def benign_lines(seed: int, n: int) -> list[str]:
    """`n` ordinary log, code, number, hash and id lines (no secret among them)."""
    return seeded_lines(_BENIGN, seed, n)
