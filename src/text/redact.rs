//! URLs without their credentials: [`redact`] for any text, [`redact_url`] for a [`Url`].

use std::borrow::Cow;

use url::Url;

/// What stands in place of a redacted part.
pub(crate) const REDACTED: &str = "REDACTED";

/// `url` with its credentials replaced: the userinfo by `REDACTED`, every query value and the
/// fragment by `REDACTED`. Scheme, host, port, path and query keys stay.
/// For example `https://me:pw@mcp.example.com/mcp?api_key=s3cret&v=2#tok` becomes
/// `https://REDACTED@mcp.example.com/mcp?api_key=REDACTED&v=REDACTED#REDACTED`.
pub fn redact_url(url: &Url) -> Url {
    let mut out = url.clone();
    if !url.username().is_empty() || url.password().is_some() {
        // Both fail only for URLs that cannot have userinfo, which then have none to hide.
        let _ = out.set_password(None);
        let _ = out.set_username(REDACTED);
    }
    if let Some(query) = url.query() {
        out.set_query(Some(&redact_pairs(query)));
    }
    if url.fragment().is_some_and(|f| !f.is_empty()) {
        out.set_fragment(Some(REDACTED));
    }
    out
}

/// `text` with every `scheme://…` URL in it redacted as [`redact_url`] does, wherever it stands
/// (an error's `for url (…)`, a log line, a JSON string). A URL ends at whitespace, a quote, `<`,
/// `>`, a backslash or a backtick; trailing `.,;:!` and an unbalanced `)` or `]` are taken as the
/// sentence's, not the URL's.
///
/// For example `error sending request for url (http://127.0.0.1:9/mcp?api_key=s3cret&x=1)`
/// becomes `error sending request for url (http://127.0.0.1:9/mcp?api_key=REDACTED&x=REDACTED)`.
pub fn redact(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut from = 0;
    let mut changed = false;
    while let Some(found) = text[from..].find("://") {
        let sep = from + found;
        let start = scheme_start(text, from, sep);
        let end = url_end(text, sep + 3);
        from = end.max(sep + 3);
        let Some(start) = start else { continue };
        let url = &text[start..end];
        let redacted = redact_one(url, sep + 3 - start);
        if redacted != url {
            out.push_str(&text[copied..start]);
            out.push_str(&redacted);
            copied = end;
            changed = true;
        }
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Where the scheme ending at `sep` (the index of `://`) starts, not before `floor`: letters,
/// digits, `+`, `-`, `.`, beginning with a letter. `None` when there is no scheme.
fn scheme_start(text: &str, floor: usize, sep: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut start = sep;
    while start > floor
        && matches!(bytes[start - 1], b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'+' | b'-' | b'.')
    {
        start -= 1;
    }
    while start < sep && !bytes[start].is_ascii_alphabetic() {
        start += 1;
    }
    (start < sep).then_some(start)
}

/// The end of the URL whose authority starts at `from`.
fn url_end(text: &str, from: usize) -> usize {
    let rest = &text[from..];
    let mut end = from
        + rest
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '\\' | '`'))
            .unwrap_or(rest.len());
    loop {
        let url = &text[from..end];
        let unbalanced = |open: char, close: char| {
            url.ends_with(close) && url.matches(close).count() > url.matches(open).count()
        };
        if url.ends_with(['.', ',', ';', ':', '!']) || unbalanced('(', ')') || unbalanced('[', ']')
        {
            end -= 1;
        } else {
            return end;
        }
    }
}

/// One URL, `authority` the index where its authority begins.
fn redact_one(url: &str, authority: usize) -> String {
    let rest = &url[authority..];
    let authority_end = authority + rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let mut out = String::with_capacity(url.len());
    out.push_str(&url[..authority]);
    let host = match url[authority..authority_end].rfind('@') {
        Some(at) => {
            out.push_str(REDACTED);
            authority + at
        }
        None => authority,
    };
    let tail = &url[authority_end..];
    let (before_fragment, fragment) = match tail.find('#') {
        Some(hash) => (&tail[..hash], Some(&tail[hash + 1..])),
        None => (tail, None),
    };
    out.push_str(&url[host..authority_end]);
    match before_fragment.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            out.push_str(&redact_pairs(query));
        }
        None => out.push_str(before_fragment),
    }
    match fragment {
        Some("") => out.push('#'),
        Some(_) => {
            out.push('#');
            out.push_str(REDACTED);
        }
        None => {}
    }
    out
}

/// `a=1&b&c=3` → `a=REDACTED&b&c=REDACTED`: keys stay, values go.
fn redact_pairs(query: &str) -> String {
    let mut out = String::with_capacity(query.len());
    for (i, pair) in query.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((key, value)) if !value.is_empty() => {
                out.push_str(key);
                out.push('=');
                out.push_str(REDACTED);
            }
            _ => out.push_str(pair),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_query_values_and_fragments_are_redacted_in_text() {
        let cases = [
            (
                "GET http://user:pass@127.0.0.1:8/sse?api_key=SECRET123&x=1 failed",
                "GET http://REDACTED@127.0.0.1:8/sse?api_key=REDACTED&x=REDACTED failed",
            ),
            (
                "for url (https://h.example/mcp?token=abc)",
                "for url (https://h.example/mcp?token=REDACTED)",
            ),
            (
                "\"url\":\"http://h/p?k=v\"",
                "\"url\":\"http://h/p?k=REDACTED\"",
            ),
            ("see http://h/p#frag.", "see http://h/p#REDACTED."),
            (
                "http://tok@h and ws://a:b@h/?q=",
                "http://REDACTED@h and ws://REDACTED@h/?q=",
            ),
            (
                "http://[::1]:8/x?flag&k=v]",
                "http://[::1]:8/x?flag&k=REDACTED]",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn text_without_credentials_is_returned_as_it_is() {
        for text in [
            "no url here",
            "http://127.0.0.1:8/mcp answered HTTP 404",
            "a :// alone",
            "://h?x=1 has no scheme",
        ] {
            assert!(
                matches!(redact(text), Cow::Borrowed(t) if t == text),
                "{text}"
            );
        }
    }

    #[test]
    fn redaction_is_idempotent_and_never_panics_on_odd_text() {
        let odd = [
            "http://",
            "x://@",
            "é://é@é?é=é#é",
            "1http://a@b",
            "http://a?b=c&&=d&e=",
        ];
        for text in odd {
            let once = redact(text).into_owned();
            assert_eq!(redact(&once), once, "{text}");
        }
        assert_eq!(redact("1http://a@b"), "1http://REDACTED@b");
    }

    #[test]
    fn a_url_keeps_scheme_host_port_path_and_keys() {
        let url = Url::parse("http://user:pass@127.0.0.1:9/a/b?api_key=SECRET123&x=1").unwrap();
        assert_eq!(
            redact_url(&url).as_str(),
            "http://REDACTED@127.0.0.1:9/a/b?api_key=REDACTED&x=REDACTED"
        );
        let plain = Url::parse("https://example.com/mcp").unwrap();
        assert_eq!(redact_url(&plain), plain);
        assert_eq!(redact(url.as_str()), redact_url(&url).as_str());
    }
}
