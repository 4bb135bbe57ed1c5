"""HTTP to an OpenAI-compatible server: one request, retried, timed, with one-line errors.

What it guarantees: a request either returns the server's JSON or raises :class:`ServerError`
whose message is one line naming the server (scheme, host and port only) and what went wrong,
with any key, token or password the server quotes in its error text replaced by ``***``
(:func:`scrub`); a URL with credentials or a query string is refused (:func:`base_url`); 429, 5xx, timeouts and connection
errors are retried with exponential backoff (``retries`` extra tries) before giving up; each
try has its own timeout; the API key comes only from ``$NLGJUDGE_SERVER_API_KEY`` and is sent
as a bearer header, never logged or stored.
"""

from __future__ import annotations

import base64
import codecs
import json
import logging
import math
import os
import re
import threading
import time
import unicodedata
from typing import Any
from urllib.parse import unquote, urlsplit

from nlgjudge.json_objects import DuplicateKeyError, unique_keys

log = logging.getLogger(__name__)

URL_ENV = "NLGJUDGE_SERVER_URL"
API_KEY_ENV = "NLGJUDGE_SERVER_API_KEY"
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
#: The longest wait a server's Retry-After is honoured for; a longer one ends the run with its message.
MAX_RETRY_AFTER_S = 60.0


class ServerError(RuntimeError):
    """The server cannot do what the judge asked (down, wrong model, missing feature, failures)."""


class ServerUnavailableError(ServerError):
    """Nothing answers at the server's address (or it kept failing after the retries)."""


def base_url(url: str | None) -> str:
    """The API root (``.../v1``) from ``url`` or ``$NLGJUDGE_SERVER_URL``; ``/v1`` added when absent.

    Refused, in one line that never repeats a secret: a URL that cannot be parsed (``http://[::1/v1``,
    a port out of range), credentials in the URL (they would silently replace the API key, which comes
    only from ``$NLGJUDGE_SERVER_API_KEY``), and a query string or fragment (the operations' paths are
    appended to the URL, so ``/v1?api_key=K`` would become ``/v1?api_key=K/v1/models``)."""
    text = (url or os.environ.get(URL_ENV, "")).strip()
    if not text:
        raise ServerError(f"backend='server' needs server_url=... or ${URL_ENV} (e.g. http://127.0.0.1:8000/v1)")
    odd = next(((i, ch) for i, ch in enumerate(text) if ch.isspace() or not ch.isprintable()), None)
    if odd is not None:  # a control character or a space: no URL holds one (a newline would even start a header)
        raise ServerError(f"server_url holds {'a space' if odd[1] == ' ' else 'a control character'} ({odd[1]!r}, "
                          f"character {odd[0] + 1}); write it as http://HOST:PORT/v1 with no spaces or control "
                          "characters, e.g. http://127.0.0.1:8000/v1")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - a port out of range or not a number fails here, not at the first request
    except ValueError as error:
        raise ServerError(f"server_url {redact(text)!r} is not a valid URL ({error}); "
                          "write it as http://HOST:PORT/v1, e.g. http://127.0.0.1:8000/v1") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServerError(f"server_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {redact(text)!r}")
    if parts.username is not None or parts.password is not None:
        raise ServerError(f"server_url {redact(text)!r} carries credentials before its host (user "
                          f"and password): write the URL without them and put the API key in ${API_KEY_ENV}")
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise ServerError(f"server_url {redact(text)!r} has a query string or fragment ('?...' or '#...'): pass only "
                          f"scheme, host, port and path, e.g. http://127.0.0.1:8000/v1; an API key goes in ${API_KEY_ENV}")
    text = text.rstrip("/")
    endpoint = re.search(r"/v1/(chat/completions|completions|models|embeddings)$", text)
    if endpoint:  # an operation's own address: the operations' paths are appended to the root
        raise ServerError(f"server_url {redact(text)!r} names the /{endpoint.group(1)} endpoint; pass the API root, "
                          f"ending in /v1 (here {redact(text[:endpoint.start() + 3])!r})")
    return text if text.endswith("/v1") else text + "/v1"


#: Secrets as servers quote them in error text: bearer tokens, OpenAI-style keys, key=value pairs.
_SECRET_PATTERNS = (
    # a scheme word, then a credential: 8 characters or more with a digit, a symbol or an inner capital
    # (so that "Basic LSTM" or "basic tier" stay words)
    re.compile(r"\b((?i:bearer|basic))\s+(?=[^\s,;'\")]*(?:[0-9+/=_\-.]|(?<=[A-Za-z0-9])[A-Z]))[^\s,;'\")]{8,}"),
    # an OpenAI-style key: issued keys carry digits, so a name such as "sk-learn-baseline" stays a name
    re.compile(r"\bsk-(?=[A-Za-z0-9_\-*.]*[0-9])[A-Za-z0-9_\-*.]{8,}"),
    # (the client's own wording "{token: log-probability}", naming a field's expected shape, is not a secret)
    re.compile(r"(?i)\b(api[_-]?key|apikey|access[_-]?token|token|password|passwd|secret)(\s*[=:]\s*)(?!log-probability\})[^\s,;&'\")]+"),
    re.compile(r"(?i)(https?://)[^/\s@]+@"),
)


def scrub(text: str) -> str:
    """``text`` with API keys, bearer tokens, ``key=value`` secrets and URL credentials replaced by
    ``***``: a server's error message may quote what it was sent, and messages are printed and logged."""
    text = _SECRET_PATTERNS[0].sub(lambda m: f"{m.group(1)} ***", text)
    text = _SECRET_PATTERNS[1].sub("sk-***", text)
    text = _SECRET_PATTERNS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)
    text = _SECRET_PATTERNS[3].sub(lambda m: f"{m.group(1)}***@", text)
    key = os.environ.get(API_KEY_ENV, "").strip()
    if len(key) >= 4:  # the key itself, however the server quoted it
        text = text.replace(key, "***")
    if len(key) >= 2 * KEY_FRAGMENT:  # and any piece of it a server quoted (a "last 10 characters" is still a secret),
        for form in _key_forms(key):  # in any case, reversed, or base64-encoded (which decodes to the key)
            text = _mask_fragments(text, form)
    if len(key) >= 2 * KEY_FRAGMENT and _key_encoded_in(text, key):
        return KEY_HIDDEN
    return text


#: What :func:`scrub` returns for a text that holds the API key in a form it cannot cut out.
KEY_HIDDEN = "(the server's text held the API key in an encoded form, so it is not shown)"


def _key_encoded_in(text: str, key: str) -> bool:
    """Whether ``text`` holds ``key`` in a form a server may write it that cannot be masked in place:
    hex (of its UTF-8 or UTF-16 bytes), base32 or ROT13 (which decode to it), ``\\uXXXX`` escapes, fullwidth
    or other compatibility forms, its bytes as a list of numbers, or its characters spaced or dotted apart."""
    raw = key.encode("utf-8", "surrogateescape")
    unescaped = re.sub(r"\\u([0-9A-Fa-f]{4})", lambda m: chr(int(m.group(1), 16)), text)
    unescaped = unicodedata.normalize("NFKC", unescaped)  # fullwidth "ｓｋ－..." reads as "sk-..."
    folded = re.sub(r"[^0-9a-z]", "", unescaped.casefold())
    bare_key = re.sub(r"[^0-9a-z]", "", key.casefold())
    forms = {bare_key, codecs.encode(bare_key, "rot13"), raw.hex(), key.encode("utf-16-be", "surrogatepass").hex(),
             key.encode("utf-16-le", "surrogatepass").hex(), base64.b32encode(raw).decode("ascii").rstrip("=").casefold()}
    if any(len(form) >= 2 * KEY_FRAGMENT and form[:-2] in folded for form in forms):
        return True
    # the key's bytes written as numbers ("115, 107, 45, ..." or "0x73 0x6b ..."): read every number in order
    numbers = [int(n, 16) if n[:2].lower() == "0x" else int(n) for n in re.findall(r"0[xX][0-9A-Fa-f]{1,2}|\d{1,3}", unescaped)]
    wanted = list(raw[:-2])
    return len(wanted) >= 2 * KEY_FRAGMENT and any(numbers[i:i + len(wanted)] == wanted for i, n in enumerate(numbers)
                                                   if n == wanted[0])


def _key_forms(key: str) -> list[str]:
    """The forms in which a server may echo ``key``: as it is, reversed, and base64-encoded (standard and
    URL-safe) at each of the three byte alignments a longer encoded text may put it at (the characters
    that depend only on the key's own bytes)."""
    raw = key.encode("utf-8", "surrogateescape")
    forms = [key, key[::-1]]
    for shift in range(3):
        encoded = base64.b64encode(bytes(shift) + raw).decode("ascii")
        stable = encoded[(4 if shift else 0):len(encoded) - 4]  # the first and last groups mix in other bytes
        forms += [stable, stable.replace("+", "-").replace("/", "_")]
    return [form for form in forms if len(form) >= KEY_FRAGMENT]


#: The shortest run of an API key's characters that :func:`scrub` hides when a server quotes a piece of it.
KEY_FRAGMENT = 6


def _mask_fragments(text: str, key: str) -> str:
    """``text`` with every run of at least :data:`KEY_FRAGMENT` consecutive characters of ``key`` replaced by
    ``***``, in any case (a server may upper-case what it quotes)."""
    folded_key, folded = key.casefold(), text.casefold()
    if len(folded) != len(text) or len(folded_key) != len(key):  # a character whose case fold changes length
        folded_key, folded = key, text
    pieces = {folded_key[i:i + KEY_FRAGMENT] for i in range(len(folded_key) - KEY_FRAGMENT + 1)}
    out, i = [], 0
    while i < len(text):
        if folded[i:i + KEY_FRAGMENT] in pieces:
            j = i + KEY_FRAGMENT
            while j < len(text) and folded[i:j + 1] in folded_key:
                j += 1
            out.append("***")
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def check_api_key(key: str) -> None:
    """Refuse, without repeating it, a key that cannot travel in an HTTP header: a line break or other
    control character inside it, or a character outside printable ASCII (an HTTP header is ASCII), and one that
    starts with "Bearer ", which the header adds itself."""
    if key[:7].casefold() == "bearer ":
        raise ServerError(f"${API_KEY_ENV} starts with the name of the authorization scheme and a space (its value "
                          "is not shown), which the request's header adds itself; set it to the key alone, without that first word")
    for position, ch in enumerate(key, start=1):
        if ch in "\r\n" or ord(ch) < 32 or ord(ch) == 127:
            raise ServerError(f"${API_KEY_ENV} holds a line break or control character at character {position} of "
                              f"{len(key)} (its value is not shown); set it to the key alone, on one line")
        if ord(ch) > 126:
            raise ServerError(f"${API_KEY_ENV} holds a character outside printable ASCII at character {position} of "
                              f"{len(key)} (its value is not shown), which an HTTP header cannot carry; a quote or "
                              "dash may have been changed by copying it: set it to the key as the server issued it")


#: Prefixes of issued keys and tokens (OpenAI, Hugging Face, GitHub, Slack, AWS, JWT).
_KEY_PREFIXES = ("sk-", "hf_", "ghp_", "gho_", "github_pat_", "xox", "AKIA", "eyJ")


#: A path segment that names a secret and gives its value ("key=abc", "api_key:abc", "token=abc").
_NAMED_SECRET = re.compile(r"(?i)(api[_-]?key|apikey|key|access[_-]?token|token|auth|password|passwd|pass|secret)\s*[=:]\s*\S")


def _looks_secret(segment: str) -> bool:
    """A URL path segment that looks like a key or token: an issued key's prefix, a ``name=value`` whose
    name is a secret's, a long hex string, or a long random-looking run of letters and digits (model
    and route names are words)."""
    if len(segment) >= 12 and segment.startswith(_KEY_PREFIXES):
        return True
    if _NAMED_SECRET.search(segment):  # "key=...", "token:..." as a path segment, however short its value
        return True
    if len(segment) >= 32 and all(ch in "0123456789abcdefABCDEF" for ch in segment):
        return True
    # a run of 16+ hex digits inside a name ("tok_9f8e...") or a UUID: an issued token, not a route's word
    if re.search(r"(?<![0-9A-Za-z])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![0-9A-Za-z])",
                 segment):
        return True
    run = re.search(r"[0-9A-Fa-f]{16,}", segment)
    if run and re.search(r"[0-9]", run.group(0)) and re.search(r"[A-Fa-f]", run.group(0)):
        return True
    if len(segment) < 20 or not re.fullmatch(r"[A-Za-z0-9_\-]+", segment):
        return False
    if not (re.search(r"[0-9]", segment) and re.search(r"[A-Za-z]", segment)):
        return False
    counts = [segment.count(ch) / len(segment) for ch in set(segment)]
    entropy = -sum(p * math.log2(p) for p in counts)
    return entropy >= 0.85 * math.log2(min(len(segment), 62))


def _mask_path(path: str) -> str:
    # a segment is judged as it decodes too ("key%3DPw4short" is "key=Pw4short"), and by the pieces its
    # punctuation joins ("@sk-...", "v1;sk-..."): a key stays a key behind a sign
    def secret(part: str) -> bool:
        return any(_looks_secret(piece) for form in (part, unquote(part))
                   for piece in (form, *re.split(r"[@:;,~!$&'()*+=]", form)) if piece)
    return "/".join("***" if secret(part) else part for part in path.split("/"))


#: An issued token inside a text ("fp-hf_AbC...", "ghp_...") as a word of its own.
_ISSUED_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?:sk-|hf_|ghp_|gho_|github_pat_|xox[abprs]-|AKIA|eyJ)[A-Za-z0-9_\-.]{8,}")


def holds_secret(text: str) -> bool:
    """Whether ``text`` holds something :func:`scrub` hides, an issued token (a Hugging Face or GitHub
    token, a JWT), or a URL with a token in its path."""
    if scrub(text) != text or _ISSUED_TOKEN.search(text):
        return True
    for word in re.findall(r"(?i)https?://\S+", text):
        try:
            path = urlsplit(word).path
        except ValueError:
            continue
        if _mask_path(path) != path:  # the same test redact() hides by
            return True
    return False


def redact(url: str) -> str:
    """``url`` without user, password, query, fragment or a path segment that looks like a token: what
    may appear in a message."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # unparseable: keep what cannot be a secret (no credentials, query or fragment)
        return scrub(url.split("@")[-1].split("?")[0].split("#")[0])
    if ":" in host:  # an IPv6 address keeps its brackets, so that the port can be told from it
        host = f"[{host}]"
    if port:
        host += f":{port}"
    if not parts.scheme or not parts.netloc:  # "127.0.0.1:8000": no scheme; echo it, less any secret
        return scrub(url.split("@")[-1].split("?")[0].split("#")[0])
    return scrub(f"{parts.scheme}://{host}{_mask_path(parts.path)}")  # and the key itself, wherever it stands


class ServerClient:
    """JSON over HTTP to one server; thread-safe (one pooled ``httpx.Client`` shared by the workers)."""

    def __init__(self, url: str | None, *, timeout: float = 120.0, retries: int = 3, backoff: float = 0.5,
                 pool: int = 8) -> None:
        import httpx

        self.url = base_url(url)
        self.where = redact(self.url)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(API_KEY_ENV, "").strip()
        if key:
            check_api_key(key)
            headers["Authorization"] = f"Bearer {key}"
        limits = httpx.Limits(max_connections=pool, max_keepalive_connections=pool)
        self._http = httpx.Client(headers=headers, timeout=self.timeout, limits=limits, trust_env=False)
        # set on Ctrl-C: a request thread waiting to ask again (a back-off, a server's Retry-After) stops at once
        self._cancelled = threading.Event()

    def close(self) -> None:
        self._http.close()

    def cancel(self) -> None:
        """Stop every wait between tries now (the run is being interrupted); requests in flight end
        with their own timeout."""
        self._cancelled.set()

    def get(self, path: str) -> Any:
        return self._request("GET", path, None)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self._request("POST", path, body)

    def _fetch(self, method: str, url: str, body: dict[str, Any] | None, path: str) -> Any:
        """One request, its answer read whole within the timeout (a server that sends a byte every few
        seconds is not waited for without end) and at most :data:`MAX_ANSWER_BYTES` once decompressed
        (a compressed answer that expands to gigabytes is refused, not held in memory)."""
        import httpx

        deadline = time.monotonic() + self.timeout
        with self._http.stream(method, url, json=body) as streamed:
            chunks, size = [], 0
            for chunk in streamed.iter_bytes():
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise ServerError(f"{self.where}{path} answered more than {MAX_ANSWER_BYTES // 2**20} MiB (once "
                                      "decompressed), far more than any answer this client asks for; check the server")
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the whole answer took longer than the timeout")
                chunks.append(chunk)
            # the answer as read (decompressed): its encoding headers no longer apply
            headers = [(k, v) for k, v in streamed.headers.items()
                       if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
            return httpx.Response(streamed.status_code, headers=headers, content=b"".join(chunks), request=streamed.request)

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        import httpx

        url = self.url + path
        problem = ""
        wait: float | None = None
        for attempt in range(self.retries + 1):
            if attempt and self._cancelled.wait(self.backoff * 2 ** (attempt - 1) if wait is None else wait):
                raise ServerUnavailableError(f"{self.where}{path}: the run was interrupted while waiting to ask again")
            wait = None
            try:
                response = self._fetch(method, url, body, path)
            except httpx.TimeoutException:
                problem = f"no answer within the {self.timeout:g} s timeout"
                if attempt < self.retries:  # said at once, not only after every try has timed out
                    log.warning("%s%s: %s (try %d of %d); waiting for it and asking again", self.where, path, problem,
                                attempt + 1, self.retries + 1)
                continue
            except (httpx.RemoteProtocolError, httpx.DecodingError) as err:
                # It answered, but not with readable HTTP (a broken chunked body, a body not in its encoding).
                problem = f"answered with a broken HTTP response ({' '.join(str(err).split())[:160]})"
                continue
            except httpx.TransportError as err:
                problem = (f"the server took the connection and then dropped it before answering ({type(err).__name__}); "
                           "check that it is an OpenAI-compatible server and look at its log"
                           if isinstance(err, httpx.ReadError) else f"cannot connect ({type(err).__name__})")
                if (attempt == 0 and isinstance(err, httpx.ConnectError) and self.url.startswith("https://")
                        and "WRONG_VERSION_NUMBER" in str(err)):
                    # TLS spoken to a plain-HTTP server: it answers, in the other protocol
                    raise ServerUnavailableError(
                        f"the server at {self.where} speaks plain HTTP, not HTTPS: write its URL with http:// "
                        f"(in --server-url or ${URL_ENV})") from None
                if attempt == 0 and isinstance(err, httpx.ConnectError):
                    # Nothing listening: retrying a refused connection only delays the message.
                    raise ServerUnavailableError(
                        f"no inference server answers at {self.where} ({err}); start it or fix server_url / ${URL_ENV}"
                    ) from None
                continue
            if response.status_code in RETRY_STATUSES:
                problem = f"HTTP {response.status_code} {_detail(response)}"
                wait = retry_after(response.headers.get("Retry-After"))
                if wait is not None and wait > MAX_RETRY_AFTER_S:
                    raise ServerUnavailableError(
                        f"{self.where}{path} is busy ({problem}) and asks to be asked again in {wait:,.0f} s, longer "
                        f"than the {MAX_RETRY_AFTER_S:g} s this client waits; run the same command later "
                        "(finished comparisons are kept)")
                log.info("%s %s: %s (try %d of %d)", method, path, problem, attempt + 1, self.retries + 1)
                continue
            if 300 <= response.status_code < 400:
                target = redact(scrub(response.headers.get("Location", "")))[:200] or "an address it does not give"
                raise ServerError(
                    f"{self.where}{path} redirects (HTTP {response.status_code}) to {target}; this client does not follow "
                    f"redirects: set server_url / ${URL_ENV} to the server's own address")
            if response.status_code >= 400:
                raise ServerError(f"{self.where}{path} refused the request: HTTP {response.status_code} {_detail(response)}"
                                  + _status_hint(response.status_code, path))
            try:  # a key given twice in one object is ambiguous (which one scores?): refused, never silently the last
                answer = json.loads(response.content, object_pairs_hook=unique_keys)
            except DuplicateKeyError as repeated:
                raise ServerError(f"{self.where}{path} answered an object that names {scrub(repr(str(repeated)))} twice; "
                                  "the answer is ambiguous, so it is not used: check the server") from None
            except (ValueError, RecursionError):
                raise ServerError(f"{self.where}{path} answered with something that is not JSON {_not_json(response)}; is "
                                  "the URL the API's base (ending in /v1) rather than a web page, a login portal or a "
                                  "proxy?") from None
            if isinstance(answer, dict) and "error" in answer and not any(k in answer for k in ("choices", "data")):
                # an error sent with status 200: the server's own reason, not a shape complaint
                raise ServerError(f"{self.where}{path} answered with an error instead of a result {_detail(response)}")
            return answer
        raise ServerUnavailableError(f"{self.where}{path} failed after {self.retries + 1} tries: {problem}")


def _status_hint(status: int, path: str) -> str:
    """What to do about a refusal this client can say something about."""
    if status in (401, 403):
        if os.environ.get(API_KEY_ENV, "").strip():  # a key was sent: it is this key the server refuses
            return (f"; it refused the key in {API_KEY_ENV}: check that it is the key this server expects "
                    "(and that it has not expired)")
        return (f"; the server wants an API key: put it in the environment variable {API_KEY_ENV} "
                "(never on the command line)")
    if status == 404 and path.rstrip("/").endswith("/models"):
        return ("; there is no /models endpoint at this URL, so it is probably not the API's base: check that the URL "
                "ends in /v1 (e.g. http://host:8000/v1), with /v1 neither missing nor doubled")
    if status == 404 and path.rstrip("/").endswith("/completions") and "chat" not in path:
        return ("; the judge needs the server's completions endpoint with log-probabilities (OpenAI's legacy "
                "/v1/completions, as vLLM and llama.cpp's server offer it), not only chat completions")
    return ""


def retry_after(value: str | None) -> float | None:
    """A Retry-After header in seconds (delay-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():  # "²" is a digit to str.isdigit, not to float()
        return float(text)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


#: The largest answer, decompressed, a server may send (a judge's answers are kilobytes).
MAX_ANSWER_BYTES = 64 * 2**20




def _not_json(response: Any) -> str:
    """What came back instead of JSON, in brackets: an empty body, or its type and first visible words."""
    kind = response.headers.get("Content-Type", "").split(";")[0].strip() or "no content type"
    text = scrub(" ".join(re.sub(r"<[^>]*>", " ", response.text).split()))[:80]
    return f"(an empty body, {kind})" if not response.content.strip() else f"({kind}: {text!r})"


def _detail(response: Any) -> str:
    """The server's error message, shortened to one line."""
    try:
        data = response.json()
        message = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(message, dict):
            message = message.get("message", message)
        text = str(message)
    except (ValueError, RecursionError):  # not JSON, or JSON nested too deep to read: its raw text, cut below
        text = response.text
    text = scrub(" ".join(text.split()))
    return f"({text[:200]})" if text else ""
