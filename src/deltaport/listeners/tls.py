"""TLS settings for uvicorn: given certificate files, or a generated self-signed one."""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from deltaport.config.model import ConfigError, SSLConfig

TLS_CIPHERS = ":".join(
    [
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "ECDHE-RSA-CHACHA20-POLY1305",
    ]
)
"""The TLS 1.2 cipher suites both listeners accept: forward secret and authenticated
encryption only (Mozilla's "intermediate" list without finite-field DHE); TLS 1.3 suites are
OpenSSL's, and Python refuses anything older than TLS 1.2."""


@dataclass(frozen=True)
class TlsFiles:
    certfile: str
    keyfile: str
    password: str | None = None


def tls_files(ssl: SSLConfig, host: str, keys: Path) -> TlsFiles:
    """The certificate and key uvicorn should use; a generated one is written to ``keys``
    (a private directory the caller removes when the server stops)."""
    if ssl.self_signed:
        return self_signed_certificate(host, keys)
    assert ssl.certificate_file and ssl.certificate_key_file  # checked when loading
    password = None
    if ssl.certificate_password_file:
        try:
            password = Path(ssl.certificate_password_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"ssl.certificatePasswordFile: cannot read: {exc.strerror}") from exc
    return TlsFiles(ssl.certificate_file, ssl.certificate_key_file, password)


def self_signed_certificate(host: str, directory: Path) -> TlsFiles:
    """A fresh key and a one-year certificate for ``host``, localhost and 127.0.0.1."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host or "localhost")])
    alt_names: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    ]
    try:
        alt_names.append(x509.IPAddress(ipaddress.ip_address(host)))
    except ValueError:
        if host and host != "localhost":
            alt_names.append(x509.DNSName(host))
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .sign(key, hashes.SHA256())
    )
    certfile = directory / "cert.pem"
    keyfile = directory / "key.pem"
    certfile.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    keyfile.chmod(0o600)
    return TlsFiles(str(certfile), str(keyfile))
