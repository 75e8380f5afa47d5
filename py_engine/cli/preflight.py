"""Checks the commands run on their arguments before starting anything, each failure one line.

What a user gets wrong most often is caught here with a message naming the flag
or the file, instead of surfacing later from a library as `0 ConfigError: ...`
over three lines, `[SSL] PEM lib (_ssl.c:3926)` or a urllib3 FutureWarning:

* `opa_url`: the argparse type of every `--opa-url`: an `http` or `https` URL with
  a host (and a valid port), nothing else;
* `kubeconfig_problem`: a `--kubeconfig` file that is missing, unreadable, not YAML
  (line and column) or not a kubeconfig;
* `kube_error_line`: a `KubeError` from loading the configuration, on one line;
* `tls_pair_problem`: `--cert`/`--key` files that are not a PEM certificate, not an
  unencrypted PEM private key, or not a pair;
* `port`: the argparse type of a TCP port flag (0 picks a free one).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

OPA_EXAMPLE = "http://localhost:8181"


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines included) made one space."""
    return " ".join(str(text).split())


def opa_url(text: str) -> str:
    """argparse type: an OPA server's base URL (http or https, with a host)."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a valid URL ({exc}); e.g. {OPA_EXAMPLE}") from None
    if parts.scheme not in ("http", "https"):
        raise argparse.ArgumentTypeError(f"{text!r} must start with http:// or https://, e.g. {OPA_EXAMPLE}")
    if not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} has no host, e.g. {OPA_EXAMPLE}")
    if port == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: port 0 is not a server's port")
    if parts.query or parts.fragment:
        raise argparse.ArgumentTypeError(f"{text!r}: give the server's base URL, without ?query or #fragment")
    return text


def port(text: str) -> int:
    """argparse type: a TCP port, 0 meaning "a free one"."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is out of range 0-65535")
    return value


def kubeconfig_problem(path: str) -> str | None:
    """Why `path` cannot be a kubeconfig, or None when it looks like one."""
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return f"--kubeconfig {path}: no such file"
    except IsADirectoryError:
        return f"--kubeconfig {path}: is a directory"
    except UnicodeDecodeError:
        return f"--kubeconfig {path}: not a kubeconfig (not UTF-8 text)"
    except OSError as exc:
        return f"--kubeconfig {path}: cannot read: {exc.strerror or exc}"
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        return f"--kubeconfig {path}: not a kubeconfig (not valid YAML{where})"
    if not isinstance(document, dict) or not any(
        key in document for key in ("clusters", "contexts", "users")
    ):
        return f"--kubeconfig {path}: not a kubeconfig (no clusters, contexts or users)"
    return None


def kube_error_line(exc: Any, kubeconfig: str | None) -> str:
    """A configuration `KubeError` as one line naming the file (its status and reason left out)."""
    message = one_line(getattr(exc, "message", None) or str(exc))
    if getattr(exc, "status", None) == 0 and getattr(exc, "reason", "") == "ConfigError":
        where = f"--kubeconfig {kubeconfig}" if kubeconfig else "the cluster configuration"
        message = message.removeprefix("cannot load cluster configuration: ")
        return f"cannot load {where}: {message}"
    return message


def tls_pair_problem(cert_file: str, key_file: str) -> str | None:
    """Why `cert_file`/`key_file` cannot serve TLS, or None when they are a PEM certificate and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    def read(path: str, flag: str) -> bytes | str:
        try:
            return Path(path).read_bytes()
        except FileNotFoundError:
            return f"{flag} {path}: no such file"
        except OSError as exc:
            return f"{flag} {path}: cannot read: {exc.strerror or exc}"

    cert_data, key_data = read(cert_file, "--cert"), read(key_file, "--key")
    if isinstance(cert_data, str):
        return cert_data
    if isinstance(key_data, str):
        return key_data
    try:
        cert = x509.load_pem_x509_certificate(cert_data)
    except ValueError:
        return f"--cert {cert_file}: not a PEM certificate (expected a -----BEGIN CERTIFICATE----- block)"
    try:
        key = serialization.load_pem_private_key(key_data, password=None)
    except TypeError:
        return f"--key {key_file}: the private key is encrypted; give an unencrypted PEM key"
    except ValueError:
        return f"--key {key_file}: not a PEM private key (expected a -----BEGIN ... PRIVATE KEY----- block)"
    spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if cert.public_key().public_bytes(*spki) != key.public_key().public_bytes(*spki):
        return f"--key {key_file} is not the private key of the certificate --cert {cert_file}"
    return None
