//! TLS for the remote modes ([`MockOptions::tls`], `--tls CERT KEY`): https on the same port,
//! with ALPN offering `h2` and `http/1.1` (`http/1.1` alone with
//! [`MockOptions::http1_only`]), so that a client negotiates HTTP/2 as it would with a real
//! server. Under TLS every wire fault and count holds as over plain TCP: the `PING` tap reads
//! the decrypted bytes. rustls on aws-lc-rs, the TLS the workspace already builds.
//!
//! [`MockOptions::tls`]: super::options::MockOptions::tls
//! [`MockOptions::http1_only`]: super::options::MockOptions::http1_only

use std::{io, path::Path, sync::Arc};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};

/// A certificate chain and its key, PEM-encoded, for the mock's https.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockTls {
    /// The server's certificate, then its chain, PEM.
    pub cert_pem: Vec<u8>,
    /// The certificate's private key, PEM (PKCS #8, PKCS #1 or SEC1).
    pub key_pem: Vec<u8>,
}

impl MockTls {
    /// Reads the PEM files `cert` and `key`.
    pub fn from_files(cert: &Path, key: &Path) -> io::Result<Self> {
        Ok(Self {
            cert_pem: std::fs::read(cert)?,
            key_pem: std::fs::read(key)?,
        })
    }

    /// The acceptor of the server's connections: ALPN `h2` then `http/1.1`, or `http/1.1`
    /// alone when `http1_only`.
    pub(crate) fn acceptor(&self, http1_only: bool) -> io::Result<tokio_rustls::TlsAcceptor> {
        let certs = CertificateDer::pem_slice_iter(&self.cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| invalid(format!("the TLS certificate: {e}")))?;
        if certs.is_empty() {
            return Err(invalid(
                "the TLS certificate file holds no certificate".to_owned(),
            ));
        }
        let key = PrivateKeyDer::from_pem_slice(&self.key_pem)
            .map_err(|e| invalid(format!("the TLS key: {e}")))?;
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(io::Error::other)?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| invalid(format!("the TLS certificate and key: {e}")))?;
        config.alpn_protocols = match http1_only {
            true => vec![b"http/1.1".to_vec()],
            false => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        };
        Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}
