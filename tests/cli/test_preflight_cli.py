"""Clear one-line errors for what users get wrong first: kubeconfig, cert/key, --opa-url, ports."""

from __future__ import annotations

import gc
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from py_engine.apiclient import KubeError
from py_engine.cli import main
from py_engine.cli.preflight import kube_error_line, tls_pair_problem
from py_engine.sim.tls import CertificateAuthority

NOT_YAML = "clusters: [\n"
NOT_KUBECONFIG = "a: b\n"
NO_CONTEXT = "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n"


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """(cert, key, another CA's key) files."""
    folder = tmp_path_factory.mktemp("tls")
    issued = CertificateAuthority("test-ca").issue(dns_names=["localhost"])
    other = CertificateAuthority("other-ca").issue(dns_names=["localhost"])
    cert, key, wrong = folder / "tls.crt", folder / "tls.key", folder / "other.key"
    cert.write_text(issued.cert_pem)
    key.write_text(issued.key_pem)
    wrong.write_text(other.key_pem)
    return str(cert), str(key), str(wrong)


def one_error(capsys: pytest.CaptureFixture[str], command: str) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    prefix = f"spreadgate {command}: error: "
    assert lines[0].startswith(prefix)
    body = lines[0].removeprefix(prefix)
    assert not body.startswith("0 ")  # a KubeError's status
    assert not any(leak in body for leak in ("ConfigError", "_ssl.c", "Traceback", "FutureWarning"))
    return lines[0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (NOT_YAML, "not a kubeconfig (not valid YAML at line 2, column 1)"),
        (NOT_KUBECONFIG, "not a kubeconfig (no clusters, contexts or users)"),
        (NO_CONTEXT, "cannot load --kubeconfig"),
    ],
)
@pytest.mark.parametrize("command", ["controller", "webhook"])
def test_a_bad_kubeconfig_is_one_line(
    command: str,
    content: str,
    message: str,
    tmp_path: Path,
    pair: tuple[str, str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(content)
    extra = ["--once"] if command == "controller" else ["--cert", pair[0], "--key", pair[1]]
    assert main([command, "--kubeconfig", str(kubeconfig), *extra]) == 2
    line = one_error(capsys, command)
    assert message in line and str(kubeconfig) in line


def test_a_missing_kubeconfig_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["controller", "--kubeconfig", "/nonexistent/kubeconfig", "--once"]) == 2
    assert "--kubeconfig /nonexistent/kubeconfig: no such file" in one_error(capsys, "controller")


def test_a_config_kube_error_loses_its_status_and_newlines() -> None:
    exc = KubeError(0, "ConfigError", "cannot load cluster configuration: while parsing\n  in 'x', line 2")
    assert kube_error_line(exc, "kc") == "cannot load --kubeconfig kc: while parsing in 'x', line 2"
    assert kube_error_line(KubeError(403, "Forbidden", "no\nway"), None) == "no way"


def test_cert_and_key_problems_name_the_file(pair: tuple[str, str, str], tmp_path: Path) -> None:
    cert, key, wrong = pair
    junk = tmp_path / "junk.pem"
    junk.write_text("not a pem\n")
    assert tls_pair_problem(cert, key) is None
    assert tls_pair_problem(str(junk), key) == (
        f"--cert {junk}: not a PEM certificate (expected a -----BEGIN CERTIFICATE----- block)"
    )
    assert tls_pair_problem(cert, str(junk)) == (
        f"--key {junk}: not a PEM private key (expected a -----BEGIN ... PRIVATE KEY----- block)"
    )
    assert tls_pair_problem(cert, cert) is not None  # a certificate is not a key
    assert (
        tls_pair_problem(cert, wrong)
        == f"--key {wrong} is not the private key of the certificate --cert {cert}"
    )
    assert (
        tls_pair_problem(str(tmp_path / "none.crt"), key) == f"--cert {tmp_path / 'none.crt'}: no such file"
    )


def test_the_webhook_refuses_a_bad_pair_before_starting(
    pair: tuple[str, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n")
    assert main(["webhook", "--cert", str(junk), "--key", pair[1]]) == 2
    assert f"--cert {junk}: not a PEM certificate" in one_error(capsys, "webhook")
    assert main(["webhook", "--cert", pair[0], "--key", pair[2]]) == 2
    assert "is not the private key of the certificate" in one_error(capsys, "webhook")


@pytest.mark.parametrize(
    "url", ["localhost:8181", "ftp://opa", "http://", "http://opa:99999", "http://opa/?x=1"]
)
@pytest.mark.parametrize(
    "command",
    [
        ["validate", "x.yaml"],
        ["admit", "--state", "s", "--pod", "p"],
        ["webhook", "--cert", "c", "--key", "k"],
    ],
)
def test_a_bad_opa_url_is_refused_up_front(
    command: list[str], url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*command, "--opa-url", url])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --opa-url: {url!r}" in err and "FutureWarning" not in err


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield int(held.getsockname()[1])


@pytest.mark.parametrize("flag", ["--port", "--webhook-port"])
def test_demo_ports_are_pinned(flag: str, busy_port: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", flag, str(busy_port)]) == 2
    err = capsys.readouterr().err
    assert "spreadgate demo: error: the demo could not run: Address already in use" in err
    assert f"{flag} {busy_port}" in err


def test_demo_ports_must_be_ports(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["demo", "--webhook-port", "70000"])
    assert "argument --webhook-port: 70000 is out of range 0-65535" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--port", "--webhook-port"])
def test_simulate_ports_are_pinned(flag: str, busy_port: int, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = (
        Path(__file__).resolve().parents[2] / "manifests" / "examples" / "scenarios" / "zones-20-20-60.yaml"
    )
    assert main(["simulate", str(scenario), flag, str(busy_port)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "spreadgate simulate: error: the simulation could not start: Address already in use"
    )
    assert f"{flag} {busy_port}" in err and err.count("\n") == 1


def test_a_negative_gc_threshold_is_one_line_and_leaves_the_collector_alone(
    pair: tuple[str, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = gc.get_threshold()
    assert main(["webhook", "--cert", pair[0], "--key", pair[1], "--gc-young-threshold", "-5"]) == 2
    assert "--gc-young-threshold must be 0 (Python's setting) or positive" in one_error(capsys, "webhook")
    assert gc.get_threshold() == before


def test_the_webhook_refuses_a_bad_client_ca_before_starting(
    pair: tuple[str, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "ca.pem"
    junk.write_text("not a certificate\n")
    assert main(["webhook", "--cert", pair[0], "--key", pair[1], "--client-ca", str(junk)]) == 2
    assert f"--client-ca {junk}: not a PEM file of CA certificates" in one_error(capsys, "webhook")
    assert main(["webhook", "--cert", pair[0], "--key", pair[1], "--client-ca", str(tmp_path / "none")]) == 2
    assert f"--client-ca {tmp_path / 'none'}: no such file" in one_error(capsys, "webhook")
    assert main(["webhook", "--cert", pair[0], "--key", pair[1], "--authorization-cache-ttl", "-1"]) == 2
    assert "--authorization-cache-ttl must be between 0 and 300 seconds" in one_error(capsys, "webhook")


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], True),
        (["--authorize-authors"], True),
        (["--authorize-authors=false"], False),
        (["--authorize-authors", "false"], False),
        (["--authorize-authors=True"], True),
    ],
)
def test_the_authorization_check_is_on_unless_turned_off(flags: list[str], expected: bool) -> None:
    from py_engine.cli import build_parser

    args = build_parser().parse_args(["webhook", "--cert", "c", "--key", "k", *flags])
    assert args.authorize_authors is expected


def test_a_bad_authorize_authors_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    from py_engine.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["webhook", "--cert", "c", "--key", "k", "--authorize-authors=maybe"])
    assert "'maybe' is not true or false" in capsys.readouterr().err
