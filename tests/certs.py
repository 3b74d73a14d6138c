"""Certificates for TLS tests, made by the ``openssl`` command: a CA, and a server certificate it signed.

The server certificate names ``IP:127.0.0.1`` and ``DNS:localhost`` in its
subjectAltName, so a client's hostname check passes for either URL.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

#: what the server certificate is good for: checked by clients that verify it (Python's default context does)
SERVER_EXTENSIONS = """\
subjectAltName = IP:127.0.0.1, DNS:localhost
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
"""
_EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def _openssl(*args: str, cwd: pathlib.Path) -> None:
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")


def make_certs(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path, pathlib.Path]:
    """Make ``(ca.pem, server.pem, server.key)`` in ``tmp_path``; skips the test when openssl is missing.

    >>> ca, cert, key = make_certs(tmp_path)                     # doctest: +SKIP
    >>> ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)  # doctest: +SKIP
    >>> ctx.load_cert_chain(cert, key)                           # doctest: +SKIP
    """
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    ca, ca_key = tmp_path / "ca.pem", tmp_path / "ca.key"
    cert, key, csr = tmp_path / "server.pem", tmp_path / "server.key", tmp_path / "server.csr"
    (tmp_path / "server.ext").write_text(SERVER_EXTENSIONS)
    _openssl("req", "-x509", *_EC_KEY, "-keyout", ca_key.name, "-out", ca.name, "-days", "2",
             "-subj", "/CN=mars test CA", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=tmp_path)
    _openssl("req", *_EC_KEY, "-keyout", key.name, "-out", csr.name, "-subj", "/CN=localhost", cwd=tmp_path)
    _openssl("x509", "-req", "-in", csr.name, "-CA", ca.name, "-CAkey", ca_key.name, "-CAcreateserial",
             "-out", cert.name, "-days", "2", "-extfile", "server.ext", cwd=tmp_path)
    return ca, cert, key
