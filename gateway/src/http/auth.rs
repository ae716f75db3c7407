//! Front authentication: the bearer tokens a host must present.
//!
//! Tokens come from an environment variable or a file (one per line), never from the command
//! line (other users of the machine can read it). They are kept as SHA-256 digests; a presented
//! token is hashed and compared with every digest in constant time, so the time an answer takes
//! says nothing about how much of a token was right. A host's `Authorization` header is never
//! sent upstream: the upstreams' own authorization is their configuration's.
//!
//! # Invariants
//!
//! 1. Comparing a token takes the same work whatever it is and whichever token it matches.
//! 2. No token, and no digest, is ever logged or shown.

use std::{fmt, path::Path};

use sha2::{Digest, Sha256};

/// The most bytes a token file may have.
const MAX_TOKEN_FILE: u64 = 1024 * 1024;
/// The most bytes of an `Authorization` header that are looked at.
const MAX_HEADER: usize = 8 * 1024;

/// Why [`Tokens::from_env`] or [`Tokens::from_file`] found no tokens.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokensError {
    /// The environment variable is not set, or not UTF-8.
    #[error("{0} is not set (or not UTF-8)")]
    NotSet(String),
    /// The environment variable holds no token.
    #[error("{0} is empty")]
    Empty(String),
    /// The file could not be read.
    #[error("{}: cannot read it", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is over the bound on a token file.
    #[error("{}: over {max} bytes", path.display())]
    TooLarge {
        /// The file.
        path: std::path::PathBuf,
        /// The bound.
        max: u64,
    },
    /// The file holds no token (only blank lines and comments).
    #[error("{}: no token in it", .0.display())]
    NoToken(std::path::PathBuf),
}

/// The tokens hosts may present. Cheap to clone.
#[derive(Clone, Default)]
pub struct Tokens {
    digests: Vec<[u8; 32]>,
}

/// Which token a host presented: a token's place in [`Tokens`], or none (no authentication).
/// Sessions are counted per key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(in crate::http) struct TokenKey(pub(in crate::http) Option<u32>);

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::http) enum Refused {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token that is not one of ours.
    Invalid,
}

impl Tokens {
    /// No authentication.
    pub fn none() -> Self {
        Self::default()
    }

    /// These tokens (empty ones are ignored).
    pub fn new<I, S>(tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let digests = tokens
            .into_iter()
            .map(|t| t.as_ref().trim().to_owned())
            .filter(|t| !t.is_empty())
            .map(|t| Sha256::digest(t.as_bytes()).into())
            .collect();
        Self { digests }
    }

    /// The token in environment variable `var`.
    pub fn from_env(var: &str) -> Result<Self, TokensError> {
        let value = std::env::var(var).map_err(|_| TokensError::NotSet(var.to_owned()))?;
        let tokens = Self::new([value]);
        match tokens.is_empty() {
            true => Err(TokensError::Empty(var.to_owned())),
            false => Ok(tokens),
        }
    }

    /// The tokens in a file, one per line (blank lines and lines starting with `#` ignored).
    pub fn from_file(path: &Path) -> Result<Self, TokensError> {
        use std::io::Read;
        // Read through the bound, not a size looked up first: a FIFO or a growing file has no
        // size to trust.
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_TOKEN_FILE + 1).read_to_string(&mut text))
            .map_err(|source| TokensError::Read {
                path: path.to_owned(),
                source,
            })?;
        if text.len() as u64 > MAX_TOKEN_FILE {
            return Err(TokensError::TooLarge {
                path: path.to_owned(),
                max: MAX_TOKEN_FILE,
            });
        }
        let tokens = Self::new(
            text.lines()
                .filter(|line| !line.trim_start().starts_with('#')),
        );
        match tokens.is_empty() {
            true => Err(TokensError::NoToken(path.to_owned())),
            false => Ok(tokens),
        }
    }

    /// Adds `other`'s tokens.
    pub fn and(mut self, other: Tokens) -> Self {
        self.digests.extend(other.digests);
        self
    }

    /// Whether no token is required.
    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }

    /// Checks an `Authorization` header value.
    pub(in crate::http) fn check(&self, header: Option<&[u8]>) -> Result<TokenKey, Refused> {
        if self.is_empty() {
            return Ok(TokenKey(None));
        }
        let header = header.ok_or(Refused::Missing)?;
        let header = &header[..header.len().min(MAX_HEADER)];
        let token = match header.get(..7) {
            Some(scheme) if scheme.eq_ignore_ascii_case(b"bearer ") => header[7..].trim_ascii(),
            _ => return Err(Refused::Missing),
        };
        let presented: [u8; 32] = Sha256::digest(token).into();
        let mut found = None;
        for (index, digest) in self.digests.iter().enumerate() {
            // Every digest is compared whole, matched or not (invariant 1).
            let same = constant_time_eq(&presented, digest);
            if same && found.is_none() {
                found = Some(index as u32);
            }
        }
        found
            .map(|index| TokenKey(Some(index)))
            .ok_or(Refused::Invalid)
    }
}

/// Whether `a` and `b` are equal, looking at every byte whatever the first difference.
fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let difference = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tokens({} configured)", self.digests.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_configured_bearer_token_passes_and_none_is_needed_without_tokens() {
        let tokens = Tokens::new(["alpha", "  beta  ", ""]);
        assert_eq!(tokens.check(Some(b"Bearer alpha")), Ok(TokenKey(Some(0))));
        assert_eq!(tokens.check(Some(b"bearer beta")), Ok(TokenKey(Some(1))));
        assert_eq!(tokens.check(Some(b"Bearer gamma")), Err(Refused::Invalid));
        assert_eq!(tokens.check(Some(b"Bearer alph")), Err(Refused::Invalid));
        assert_eq!(tokens.check(Some(b"Basic alpha")), Err(Refused::Missing));
        assert_eq!(tokens.check(None), Err(Refused::Missing));
        assert_eq!(Tokens::none().check(None), Ok(TokenKey(None)));
        assert!(!format!("{tokens:?}").contains("alpha"));
    }

    #[test]
    fn a_token_file_takes_one_token_per_line_and_skips_comments() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("tokens");
        std::fs::write(&path, "# hosts\none\n\ntwo\n").expect("write");
        let tokens = Tokens::from_file(&path).expect("tokens");
        assert_eq!(tokens.check(Some(b"Bearer two")), Ok(TokenKey(Some(1))));
        std::fs::write(&path, "# nothing\n").expect("write");
        assert!(matches!(
            Tokens::from_file(&path),
            Err(TokensError::NoToken(p)) if p == path
        ));
    }

    #[test]
    fn a_token_file_over_the_bound_is_refused_after_reading_at_most_the_bound() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("tokens");
        let at_bound = "t".repeat(MAX_TOKEN_FILE as usize);
        std::fs::write(&path, &at_bound).expect("write");
        assert!(
            Tokens::from_file(&path).is_ok(),
            "exactly the bound is read"
        );
        std::fs::write(&path, at_bound + "t").expect("write");
        let refused = Tokens::from_file(&path).expect_err("refused");
        assert!(
            matches!(
                refused,
                TokensError::TooLarge {
                    max: MAX_TOKEN_FILE,
                    ..
                }
            ),
            "{refused:?}"
        );
        assert!(
            refused.to_string().ends_with(": over 1048576 bytes"),
            "{refused}"
        );
    }
}
