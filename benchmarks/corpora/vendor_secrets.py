# ruff: noqa: E501  (a table of one-line formats reads best unwrapped)
"""Vendor token formats, password-in-argv forms and benign look-alikes, written for hardening pass 4.

Each vendor entry is the token shape its documentation states (prefix, alphabet, length); the
values are drawn at run time from a seeded RNG, so no fixture holds a real-looking credential
(nothing here for a push-protection scanner to find) and every seed is a fresh set of values.
A token is shown in one of several surroundings a command record really holds: printed bare
on its own line, in prose ("key X rejected"), in a traceback, in an env assignment, in a header
or in JSON. Argv forms are the documented ways of CLIs that take a password after a short flag.
Benign look-alikes are public strings of the same alphabets (hashes, ids, digests, package
names, base64 of ordinary text) that must not be redacted.

Used by benchmarks/leak_corpus.py and tests/harness/test_vendor_secrets.py. The probe type,
the alphabets and the seeded drawing are tests/harness/secret_shapes.py's (one source).
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable

from tests.harness.secret_shapes import ALNUM, B64, HEX, UPPER_NUM, Probe, seeded_lines
from tests.harness.secret_shapes import draw as _r

LOWER_NUM = string.ascii_lowercase + string.digits
URLSAFE = ALNUM + "-_"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
DIGITS = string.digits


def _uuid(rng: random.Random) -> str:
    h = _r(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


Part = str | tuple[str, int]  # a literal, or (alphabet, length)

#: Vendor -> the parts of its documented token format.
VENDORS: dict[str, tuple[Part, ...]] = {
    "github_classic_pat": ("ghp_", (ALNUM, 36)),
    "github_fine_grained_pat": ("github_pat_", (ALNUM, 22), "_", (ALNUM, 59)),
    "gitlab_pat": ("glpat-", (URLSAFE, 20)),
    "slack_bot": ("xoxb-", (DIGITS, 11), "-", (DIGITS, 12), "-", (ALNUM, 24)),
    "stripe_webhook_secret": ("whsec_", (ALNUM, 32)),
    "google_oauth_client_secret": ("GOCSPX-", (URLSAFE, 28)),
    "anthropic": ("sk-ant-api03-", (URLSAFE, 93), "AA"),
    "npm": ("npm_", (ALNUM, 36)),
    "pypi": ("pypi-AgEIcHlwaS5vcmc", (URLSAFE, 70)),
    "sendgrid": ("SG.", (URLSAFE, 22), ".", (URLSAFE, 43)),
    "twilio_api_key": ("SK", (HEX, 32)),
    "mailchimp": ((HEX, 32), "-us", (DIGITS, 2)),
    "mailgun": ("key-", (HEX, 32)),
    "shopify": ("shpat_", (HEX, 32)),
    "digitalocean": ("dop_v1_", (HEX, 64)),
    "doppler": ("dp.pt.", (ALNUM, 43)),
    "hashicorp_vault": ("hvs.", (URLSAFE, 90)),
    "terraform_cloud": ((ALNUM, 14), ".atlasv1.", (ALNUM, 67)),
    "hugging_face": ("hf_", (string.ascii_letters, 34)),
    "databricks": ("dapi", (HEX, 32)),
    "atlassian": ("ATATT3xFfGF0", (URLSAFE, 170), "=", (HEX.upper(), 8)),
    "linear": ("lin_api_", (ALNUM, 40)),
    "notion": ("ntn_", (DIGITS, 11), (ALNUM, 35)),
    "postman": ("PMAK-", (HEX, 24), "-", (HEX, 34)),
    "pulumi": ("pul-", (HEX, 40)),
    "grafana_service_account": ("glsa_", (ALNUM, 32), "_", (HEX, 8)),
    "new_relic": ("NRAK-", (UPPER_NUM, 27)),
    "sentry_user": ("sntryu_", (HEX, 64)),
    "dynatrace": ("dt0c01.", (UPPER_NUM, 24), ".", (UPPER_NUM, 64)),
    "heroku": ("HRKU-AA", (URLSAFE, 58)),
    "fly_io": ("fo1_", (URLSAFE, 43)),
    "netlify": ("nfp_", (ALNUM, 36)),
    "supabase": ("sbp_", (HEX, 40)),
    "planetscale": ("pscale_tkn_", (URLSAFE, 43)),
    "figma": ("figd_", (URLSAFE, 40)),
    "discord_bot": ("M", (ALNUM, 25), ".", (URLSAFE, 6), ".", (URLSAFE, 38)),
    "telegram_bot": ((DIGITS, 10), ":AA", (URLSAFE, 33)),
    "square": ("EAAA", (URLSAFE, 60)),
    "adafruit_io": ("aio_", (ALNUM, 28)),
    "age": ("AGE-SECRET-KEY-1", (BECH32, 58)),
    "alibaba": ("LTAI", (ALNUM, 20)),
    "azure_ad_client_secret": ((ALNUM, 3), "8Q~", (ALNUM + "_~.-", 34)),
    "clojars": ("CLOJARS_", (LOWER_NUM, 60)),
    "contentful": ("CFPAT-", (URLSAFE, 43)),
    "dropbox": ("sl.", (URLSAFE, 135)),
    "duffel": ("duffel_live_", (URLSAFE, 43)),
    "easypost": ("EZAK", (ALNUM, 54)),
    "flutterwave": ("FLWSECK-", (HEX, 32), "-X"),
    "prefect": ("pnu_", (ALNUM, 36)),
    "readme": ("rdme_", (LOWER_NUM, 70)),
    "rubygems": ("rubygems_", (HEX, 48)),
    "shippo": ("shippo_live_", (HEX, 40)),
    "sourcegraph": ("sgp_", (HEX, 16), "_", (HEX, 40)),
    "typeform": ("tfp_", (ALNUM, 44), "_", (ALNUM, 14)),
    "onepassword_service_account": ("ops_eyJ", (B64, 240)),
    "airtable": ("pat", (ALNUM, 14), ".", (HEX, 64)),
    "bitbucket": ("ATBB", (ALNUM, 32)),
    "buildkite": ("bkua_", (HEX, 40)),
    "circleci": ("CCIPAT_", (ALNUM, 22), "_", (HEX, 40)),
    "docker_hub": ("dckr_pat_", (URLSAFE, 27)),
    "mapbox": ("sk.eyJ1Ijoi", (ALNUM, 30), ".", (URLSAFE, 22)),
    "replicate": ("r8_", (ALNUM, 37)),
    "groq": ("gsk_", (ALNUM, 52)),
    "perplexity": ("pplx-", (ALNUM, 48)),
    "xai": ("xai-", (ALNUM, 80)),
    "openrouter": ("sk-or-v1-", (HEX, 64)),
    "langsmith": ("lsv2_pt_", (HEX, 32), "_", (HEX, 10)),
    "jfrog": ("AKCp", (ALNUM, 69)),
    "octopus_deploy": ("API-", (UPPER_NUM, 26)),
    "tailscale": ("tskey-auth-k", (ALNUM, 11), "-", (ALNUM, 33)),
    "private_packagist": ("packagist_uut_", (HEX, 68)),
    "razorpay": ("rzp_live_", (ALNUM, 14)),
    "braintree": ("access_token$production$", (LOWER_NUM, 16), "$", (HEX, 32)),
    "resend": ("re_", (ALNUM, 8), "_", (ALNUM, 24)),
    "brevo": ("xkeysib-", (HEX, 64), "-", (ALNUM, 16)),
    "elevenlabs": ("sk_", (HEX, 48)),
    "render": ("rnd_", (ALNUM, 32)),
    "neon": ("napi_", (LOWER_NUM, 64)),
    "firebase_cloud_messaging": ("AAAA", (URLSAFE, 7), ":APA91b", (URLSAFE, 134)),
    "sonarqube": ("squ_", (HEX, 40)),
    "nvidia": ("nvapi-", (URLSAFE, 64)),
    "pinecone": ("pcsk_", (ALNUM, 5), "_", (ALNUM, 63)),
    "cerebras": ("csk-", (LOWER_NUM, 48)),
    "posthog_personal": ("phx_", (ALNUM, 43)),
    "honeybadger": ("hbp_", (ALNUM, 36)),
    "clickup": ("pk_", (DIGITS, 8), "_", (UPPER_NUM, 32)),
    "tencent_cloud": ("AKID", (ALNUM, 32)),
    "mercado_pago": ("APP_USR-", (DIGITS, 16), "-", (DIGITS, 6), "-", (HEX, 32), "-", (DIGITS, 9)),
    "defined_networking": ("dnkey-", (UPPER_NUM, 26), "-", (UPPER_NUM, 52)),
    "zoho": ("1000.", (HEX, 32), ".", (HEX, 32)),
    "scalingo": ("tk-us-", (URLSAFE, 48)),
    "harness": ("pat.", (URLSAFE, 22), ".", (HEX, 24), ".", (ALNUM, 20)),
    "infracost": ("ico-", (ALNUM, 32)),
    "frame_io": ("fio-u-", (URLSAFE, 64)),
    "tavily": ("tvly-", (ALNUM, 32)),
    "riot_games": ("RGAPI-", (HEX, 8), "-", (HEX, 4), "-", (HEX, 4), "-", (HEX, 4), "-", (HEX, 12)),
    "cloudflare_origin_ca": ("v1.0-", (HEX, 24), "-", (HEX, 146)),
    "nuget": ("oy2", (LOWER_NUM, 43)),
    "yandex_cloud": ("AQVN", (URLSAFE, 36)),
    "deepseek": ("sk-", (HEX, 32)),
}

#: Written after the redactor's rules were frozen and run once, unseen during development:
#: the held-out check of whether the rules express formats rather than this corpus.
HELDOUT_VENDORS: dict[str, tuple[Part, ...]] = {
    "stripe_restricted": ("rk_live_", (ALNUM, 99)),
    "gitlab_deploy_token": ("gldt-", (URLSAFE, 20)),
    "github_oauth": ("gho_", (ALNUM, 36)),
    "github_refresh": ("ghr_", (ALNUM, 36)),
    "slack_app_level": ("xapp-1-", (UPPER_NUM, 11), "-", (DIGITS, 13), "-", (HEX, 64)),
    "shopify_shared_secret": ("shpss_", (HEX, 32)),
    "hashicorp_vault_batch": ("hvb.", (URLSAFE, 138)),
    "anthropic_admin": ("sk-ant-admin01-", (URLSAFE, 93), "AA"),
    "new_relic_insert": ("NRII-", (URLSAFE, 32)),
    "planetscale_password": ("pscale_pw_", (URLSAFE, 43)),
    "mailersend": ("mlsn.", (HEX, 64)),
    "google_oauth_access": ("ya29.", (URLSAFE, 120)),
    "square_oauth_secret": ("sq0csp-", (URLSAFE, 43)),
    "nightfall": ("NF-", (ALNUM, 32)),
    "dbt_cloud": ("dbtc_", (URLSAFE, 40)),
    "openai_service_account": ("sk-svcacct-", (URLSAFE, 74), "T3BlbkFJ", (URLSAFE, 74)),
    "gitlab_runner": ("glrt-", (URLSAFE, 20)),
    "supabase_secret": ("sb_secret_", (URLSAFE, 31)),
}


def token(rng: random.Random, vendor: str) -> str:
    """A fresh value of `vendor`'s documented shape."""
    parts = VENDORS.get(vendor) or HELDOUT_VENDORS[vendor]
    return "".join(p if isinstance(p, str) else _r(rng, *p) for p in parts)


#: Where a token shows up in a command record; the bare forms are what detect-secrets misses.
_SURROUNDINGS: tuple[Callable[[random.Random, str], str], ...] = (
    lambda r, t: t,
    lambda r, t: f"  {t}",
    lambda r, t: f"{r.choice(['created', 'rotated', 'using', 'loaded'])} {r.choice(['key', 'credential', 'client'])} {t} for {r.choice(['upload', 'deploy', 'sync'])}",
    lambda r, t: f"ValueError: invalid value '{t}' (expired?)",
    lambda r, t: f"export {r.choice(['SERVICE', 'UPSTREAM', 'CI', 'APP'])}_{r.choice(['TOKEN', 'KEY', 'CRED', 'AUTH'])}={t}",
    lambda r, t: f'{{"{r.choice(["token", "key", "value", "auth"])}": "{t}", "ok": true}}',
    lambda r, t: f"X-Api-Key: {t}",
    lambda r, t: f"response: 401 for {t}",
)


def vendor_probes(seed: int, per_vendor: int = 3, *, heldout: bool = False) -> list[Probe]:
    """`per_vendor` fresh tokens of every vendor (of the held-out set with `heldout`), each
    in a surrounding drawn by seed."""
    rng = random.Random(seed)
    out = []
    for _ in range(per_vendor):
        for vendor in HELDOUT_VENDORS if heldout else VENDORS:
            value = token(rng, vendor)
            out.append(Probe(vendor, rng.choice(_SURROUNDINGS)(rng, value), (value,)))
    return out


def password(rng: random.Random) -> str:
    """A generated password: letters, digits and a symbol, 10-20 long."""
    return _r(rng, ALNUM, rng.randint(8, 16)) + rng.choice("!#%^*_-.~+") + _r(rng, DIGITS, 2)


def _user(rng: random.Random) -> str:
    return rng.choice(["admin", "root", "svc", "deploy", "backup", "ci", "ops.jane"])


def _host(rng: random.Random) -> str:
    return rng.choice(["db1.internal", "10.1.2.3", "files.corp.example", "cache.local"])


#: CLI -> argv with the password `p`, as their manuals document it.
ARGV_FORMS: dict[str, Callable[[random.Random, str], tuple[str, ...]]] = {
    "sshpass_p": lambda r, p: ("sshpass", "-p", p, "ssh", f"{_user(r)}@{_host(r)}"),
    "sshpass_p_attached": lambda r, p: ("sshpass", f"-p{p}", "scp", "a.tgz", f"{_host(r)}:/tmp"),
    "docker_login_p": lambda r, p: ("docker", "login", "-u", _user(r), "-p", p, "registry.example.com"),
    "podman_login_password": lambda r, p: ("podman", "login", "--username", _user(r), "--password", p, "quay.io"),
    "mysql_p_attached": lambda r, p: ("mysql", "-h", _host(r), "-u", _user(r), f"-p{p}", "shop"),
    "mysqldump_password_eq": lambda r, p: ("mysqldump", f"--password={p}", "-u", _user(r), "shop"),
    "htpasswd_b": lambda r, p: ("htpasswd", "-b", "/etc/nginx/.htpasswd", _user(r), p),
    "htpasswd_bc": lambda r, p: ("htpasswd", "-bc", ".htpasswd", _user(r), p),
    "openssl_pass": lambda r, p: ("openssl", "enc", "-aes-256-cbc", "-in", "x.tar", "-out", "x.enc", "-pass", f"pass:{p}"),
    "openssl_passout": lambda r, p: ("openssl", "pkcs12", "-export", "-in", "c.pem", "-passout", f"pass:{p}"),
    "curl_u": lambda r, p: ("curl", "-u", f"{_user(r)}:{p}", "https://files.example.com/x"),
    "wget_password_eq": lambda r, p: ("wget", f"--user={_user(r)}", f"--password={p}", "https://files.example.com/x"),
    "wget_http_password": lambda r, p: ("wget", "--http-user", _user(r), "--http-password", p, "https://x.example/f"),
    "psql_url": lambda r, p: ("psql", f"postgresql://{_user(r)}:{p}@{_host(r)}:5432/app"),
    "psql_conninfo": lambda r, p: ("psql", f"host={_host(r)} user={_user(r)} password={p} dbname=app"),
    "redis_cli_a": lambda r, p: ("redis-cli", "-h", _host(r), "-a", p, "ping"),
    "mongo_p": lambda r, p: ("mongo", "--host", _host(r), "-u", _user(r), "-p", p, "--authenticationDatabase", "admin"),
    "mongosh_password": lambda r, p: ("mongosh", "--username", _user(r), "--password", p),
    "smbclient_U": lambda r, p: ("smbclient", f"//{_host(r)}/share", "-U", f"{_user(r)}%{p}"),
    "ldapsearch_w": lambda r, p: ("ldapsearch", "-x", "-D", "cn=admin,dc=example,dc=org", "-w", p, "-b", "dc=example,dc=org"),
    "sqlcmd_P": lambda r, p: ("sqlcmd", "-S", _host(r), "-U", "sa", "-P", p, "-Q", "SELECT 1"),
    "keytool_storepass": lambda r, p: ("keytool", "-list", "-keystore", "ks.jks", "-storepass", p),
    "zip_P": lambda r, p: ("zip", "-P", p, "out.zip", "report.csv"),
    "unzip_P": lambda r, p: ("unzip", "-P", p, "in.zip"),
    "7z_p_attached": lambda r, p: ("7z", "a", f"-p{p}", "out.7z", "data/"),
    "ipmitool_P": lambda r, p: ("ipmitool", "-I", "lanplus", "-H", _host(r), "-U", _user(r), "-P", p, "power", "status"),
    "lftp_u": lambda r, p: ("lftp", "-u", f"{_user(r)},{p}", f"sftp://{_host(r)}"),
    "sqlplus_slash": lambda r, p: ("sqlplus", f"{_user(r)}/{p}@{_host(r)}:1521/ORCL"),
    "xfreerdp_p": lambda r, p: ("xfreerdp", f"/u:{_user(r)}", f"/p:{p}", f"/v:{_host(r)}"),
    "mount_cifs": lambda r, p: ("mount", "-t", "cifs", f"//{_host(r)}/s", "/mnt", "-o", f"username={_user(r)},password={p}"),
    "env_pgpassword": lambda r, p: ("env", f"PGPASSWORD={p}", "psql", "-h", _host(r)),
    "net_use": lambda r, p: ("net", "use", "Z:", f"\\\\{_host(r)}\\share", f"/user:{_user(r)}", p),
}


def argv_probes(seed: int, per_form: int = 3) -> list[Probe]:
    """`per_form` argv of every CLI form, each with a fresh password."""
    rng = random.Random(seed)
    out = []
    for _ in range(per_form):
        for form, make in ARGV_FORMS.items():
            secret = password(rng)
            out.append(Probe(form, make(rng, secret), (secret,)))
    return out


_WORDS = ("invoice", "refund", "worker", "shipment", "cache", "ledger", "report", "queue")
_SENTENCES = (
    "The refund was issued after the customer sent the receipt.",
    "Deploy finished; three workers restarted and the queue drained.",
    "Please find the quarterly report attached for your review.",
    "Order 1182 shipped from the north warehouse on Tuesday.",
)

#: Public strings in the alphabets tokens use; none of them may be redacted.
LOOKALIKES: tuple[Callable[[random.Random], str], ...] = (
    lambda r: _r(r, HEX, 40),
    lambda r: f"HEAD is now at {_r(r, HEX, 7)} {r.choice(_WORDS)}: tidy",
    lambda r: _uuid(r),
    lambda r: f"{r.choice(_WORDS)}_id={_uuid(r)}",
    lambda r: f"{r.choice(['numpy', 'pandas', 'scikit_learn', 'torch'])}-{r.randint(1, 3)}.{r.randint(0, 30)}.{r.randint(0, 9)}-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    lambda r: f"{r.choice(_WORDS)}_latency_p95_ms={r.random() * 900:.3f} count={r.randint(1, 10**6)}",
    lambda r: base64.b64encode(r.choice(_SENTENCES).encode()).decode(),
    lambda r: f"payload: {base64.b64encode(r.choice(_SENTENCES).encode()).decode()}",
    lambda r: f"sha256:{_r(r, HEX, 64)}",
    lambda r: f"blake2b-{_r(r, HEX, 64)}",
    lambda r: f"{r.choice(_WORDS)}-{_r(r, LOWER_NUM, 10)}-{_r(r, LOWER_NUM, 5)}",  # a pod name
    lambda r: f"arn:aws:iam::{_r(r, DIGITS, 12)}:role/{r.choice(_WORDS)}-runner",
    lambda r: f"s3://{r.choice(_WORDS)}-bucket/{r.randint(2020, 2026)}/{_uuid(r)}.parquet",
    lambda r: f"{r.choice(_WORDS)}Service{r.choice(_WORDS).capitalize()}HandlerFactoryImpl",
    lambda r: f"test_{r.choice(_WORDS)}_{r.choice(_WORDS)}_returns_{r.choice(_WORDS)}_when_empty",
    lambda r: f"v{r.randint(0, 9)}.{r.randint(0, 40)}.{r.randint(0, 9)}-rc.{r.randint(1, 5)}+build.{_r(r, HEX, 7)}",
    lambda r: f"color: #{_r(r, HEX, 6)}; background: #{_r(r, HEX, 6)}",
    lambda r: f"fe80::{_r(r, HEX, 4)}:{_r(r, HEX, 4)}:{_r(r, HEX, 4)}:{_r(r, HEX, 4)}",
    lambda r: f"/var/lib/{r.choice(_WORDS)}/{_r(r, HEX, 2)}/{_r(r, HEX, 38)}",
    lambda r: f"{r.choice(_WORDS)}.{r.choice(_WORDS)}@example.com replied at {r.randint(10, 23)}:{r.randint(10, 59)}",
    lambda r: f"ETag: \"{_r(r, HEX, 32)}\"",
    lambda r: f"req_{_r(r, DIGITS, 6)} took {r.randint(1, 900)} ms",
    lambda r: f"run {r.randint(10**9, 10**10)} attempt {r.randint(1, 3)} finished",
    lambda r: f"{r.choice(_WORDS)}_{r.choice(_WORDS)}_{r.choice(_WORDS)}_total{{shard=\"{r.randint(0, 9)}\"}} {r.randint(0, 10**7)}",
    lambda r: f"ssh -p {r.randint(1024, 65535)} {_user(r)}@{_host(r)}",
    lambda r: f"mkdir -p /srv/{r.choice(_WORDS)}/{r.randint(1, 99)}",
    lambda r: f"pytest -k {r.choice(_WORDS)}_{r.choice(_WORDS)} -p no:cacheprovider",
    lambda r: f"grep -w {r.choice(_WORDS).capitalize()} app.log",
    lambda r: f"git log -p -{r.randint(1, 9)} -- src/{r.choice(_WORDS)}.py",
    lambda r: f"data:image/png;base64,iVBORw0KGgo{base64.b64encode(r.randbytes(30)).decode()}",
)


def lookalike_lines(seed: int, n: int) -> list[str]:
    """`n` benign look-alike lines."""
    return seeded_lines(LOOKALIKES, seed, n)
