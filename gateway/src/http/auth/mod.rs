//! Front authentication: the bearer tokens a host must present.
//!
//! Tokens come from an environment variable or a file (one per line), never from the command
//! line (other users of the machine can read it). A line `name:token` gives its token a name,
//! the caller's name in the [`Access`](super::Access) policy and in logs; a bearer token
//! (RFC 6750) never holds a `:`, so no token of an older file is read differently, and a line
//! whose part before the `:` is not a name (`[A-Za-z0-9._@-]`, at most 64) is refused rather
//! than guessed at. They are kept as SHA-256 digests; a presented
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
    /// A line `name:token` whose name is not one (`[A-Za-z0-9._@-]{1,64}`) or whose token is
    /// empty; `line` counts from 1 (0 for an environment variable).
    #[error(
        "{from}: line {line}: expected `name:token` with a name of letters, digits, `.`, `_`, `@` or `-` (a bearer token has no `:`)"
    )]
    BadName {
        /// The file or the variable.
        from: String,
        /// The line.
        line: usize,
    },
}

/// The tokens hosts may present, each with its name if it has one. Cheap to clone.
#[derive(Clone, Default)]
pub struct Tokens {
    digests: Vec<[u8; 32]>,
    names: Vec<Option<std::sync::Arc<str>>>,
}

/// The longest token name.
const MAX_NAME: usize = 64;

impl Tokens {
    /// No authentication.
    pub fn none() -> Self {
        Self::default()
    }

    /// These tokens, without names (empty ones are ignored).
    pub fn new<I, S>(tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut all = Self::default();
        for token in tokens {
            all.push(None, token.as_ref());
        }
        all
    }

    /// One token, named `name` (the caller's name in the [`Access`](super::Access) policy).
    pub fn named(name: &str, token: &str) -> Self {
        let mut one = Self::default();
        one.push(Some(name), token);
        one
    }

    fn push(&mut self, name: Option<&str>, token: &str) {
        let token = token.trim();
        if token.is_empty() {
            return;
        }
        self.digests.push(Sha256::digest(token.as_bytes()).into());
        self.names.push(name.map(std::sync::Arc::from));
    }

    /// `line` read: `token`, or `name:token`.
    fn push_line(&mut self, line: &str, from: &str, number: usize) -> Result<(), TokensError> {
        let line = line.trim();
        let Some((name, token)) = line.split_once(':') else {
            self.push(None, line);
            return Ok(());
        };
        let good_name = !name.is_empty()
            && name.len() <= MAX_NAME
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b));
        if !good_name || token.trim().is_empty() {
            return Err(TokensError::BadName {
                from: from.to_owned(),
                line: number,
            });
        }
        self.push(Some(name), token);
        Ok(())
    }

    /// The token in environment variable `var` (`token` or `name:token`).
    pub fn from_env(var: &str) -> Result<Self, TokensError> {
        let value = std::env::var(var).map_err(|_| TokensError::NotSet(var.to_owned()))?;
        let mut tokens = Self::default();
        tokens.push_line(&value, var, 0)?;
        match tokens.is_empty() {
            true => Err(TokensError::Empty(var.to_owned())),
            false => Ok(tokens),
        }
    }

    /// The tokens in a file, one per line, `token` or `name:token` (blank lines and lines
    /// starting with `#` ignored).
    pub fn from_file(path: &Path) -> Result<Self, TokensError> {
        let text = super::bounded::read(path, MAX_TOKEN_FILE).map_err(|e| match e {
            super::bounded::ReadError::Io(source) => TokensError::Read {
                path: path.to_owned(),
                source,
            },
            super::bounded::ReadError::TooLarge => TokensError::TooLarge {
                path: path.to_owned(),
                max: MAX_TOKEN_FILE,
            },
        })?;
        let mut tokens = Self::default();
        let from = path.display().to_string();
        for (index, line) in text.lines().enumerate() {
            if !line.trim_start().starts_with('#') {
                tokens.push_line(line, &from, index + 1)?;
            }
        }
        match tokens.is_empty() {
            true => Err(TokensError::NoToken(path.to_owned())),
            false => Ok(tokens),
        }
    }

    /// Adds `other`'s tokens.
    pub fn and(mut self, other: Tokens) -> Self {
        self.digests.extend(other.digests);
        self.names.extend(other.names);
        self
    }

    /// Whether no token is required.
    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }

    /// The place of `token` among ours, if it is one (invariant 1).
    pub(in crate::http) fn find(&self, token: &[u8]) -> Option<u32> {
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
    }

    /// The name of the token at `index`, if it has one.
    pub(in crate::http) fn name(&self, index: u32) -> Option<&std::sync::Arc<str>> {
        self.names.get(index as usize)?.as_ref()
    }
}

/// The token of an `Authorization: Bearer` header value (at most [`MAX_HEADER`] bytes of it
/// looked at), or none.
pub(in crate::http) fn bearer(header: Option<&[u8]>) -> Option<&[u8]> {
    let header = header?;
    let header = &header[..header.len().min(MAX_HEADER)];
    match header.get(..7) {
        Some(scheme) if scheme.eq_ignore_ascii_case(b"bearer ") => Some(header[7..].trim_ascii()),
        _ => None,
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
mod tests;
