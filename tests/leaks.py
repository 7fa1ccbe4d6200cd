"What the secret-leak tests share: credentials planted in URLs, everything an exception shows, and the leak search."
import base64, traceback

USER, PASSWORD = "user-SECRET-u", "pw-SECRET-789"  # credentials in a URL's user info (http://user:pw@host)


def planted(key: str, url_secret: str, shape: str) -> list[str]:
    "The secrets a test plants for `shape`: the key, plus user, password and their Basic-auth form, or the URL's token."
    return [key] + ([USER, PASSWORD, base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()] if shape == "userinfo" else [url_secret])


def exception_texts(e: BaseException) -> list[str]:
    "Everything an exception shows: str and repr of it and of its whole __cause__/__context__ chain, and its traceback."
    out, seen, x = ["".join(traceback.format_exception(e))], set(), e
    while x is not None and id(x) not in seen:
        seen.add(id(x)); out += [str(x), repr(x)]; x = x.__cause__ or x.__context__
    return out


def leaks(texts: list[str], secrets: list[str]) -> list[tuple[str, str]]:
    "(secret, the first 200 characters of the text) for every secret found in a text."
    return [(s, t[:200]) for t in texts for s in secrets if s in t]
