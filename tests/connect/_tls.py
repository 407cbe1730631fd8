"""A throwaway certificate authority for tests: a CA, a server certificate for some names, the two TLS contexts."""

from __future__ import annotations

import datetime
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["Certificates", "make_certificates"]


@dataclass(frozen=True)
class Certificates:
    """PEM text of a CA and of a server certificate (with its key) that the CA signed."""

    ca: bytes
    cert: bytes
    key: bytes

    def client_context(self) -> ssl.SSLContext:
        """Verifies servers against this CA only, names checked as in production."""
        context = ssl.create_default_context(cadata=self.ca.decode("ascii"))
        context.check_hostname = True
        return context

    def server_context(self, folder: Path, on_name: list[str | None] | None = None) -> ssl.SSLContext:
        """Serves the certificate (written to `folder`); each server name a client sends (SNI) goes to `on_name`."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        cert, key = self.write(folder)
        context.load_cert_chain(cert, key)
        if on_name is not None:

            def record(_socket: ssl.SSLObject, name: str | None, _context: ssl.SSLContext) -> None:
                on_name.append(name)

            context.sni_callback = record
        return context

    def write(self, folder: Path) -> tuple[Path, Path]:
        """The certificate and key as files (for a server in another process)."""
        folder.mkdir(parents=True, exist_ok=True)
        cert, key = folder / "server.pem", folder / "server.key"
        cert.write_bytes(self.cert)
        key.write_bytes(self.key)
        key.chmod(0o600)
        return cert, key


def make_certificates(*names: str) -> Certificates:
    """A new CA and a server certificate for the DNS `names`, valid for a day."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mcpyard test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name) for name in names]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    return Certificates(
        ca=ca.public_bytes(serialization.Encoding.PEM),
        cert=cert.public_bytes(serialization.Encoding.PEM),
        key=key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )
