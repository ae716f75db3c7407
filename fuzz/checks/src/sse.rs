//! The legacy SSE parser and `endpoint` resolution, returning plain values so a target can
//! check properties without reaching into the crate's private types.

use url::Url;

use mcp_resilient::fuzzing::{Parser, resolve_endpoint};

/// The SSE URLs an `endpoint` is resolved against: one with an explicit port, one with its
/// scheme's default port and a deeper path.
const BASES: [&str; 2] = [
    "http://127.0.0.1:8080/sse",
    "https://mcp.example.com/v1/sse",
];

/// The legacy SSE parser on `chunks` (in order), with its two bounds: the events it
/// dispatched, as `(event type, data)`, or why the stream would end (its first error).
pub fn sse(
    chunks: &[&[u8]],
    max_event: usize,
    max_line: usize,
) -> Result<Vec<(String, String)>, String> {
    let mut parser = Parser::new(max_event, max_line);
    let mut events = Vec::new();
    for chunk in chunks {
        parser.push(chunk, &mut events).map_err(|e| e.to_string())?;
    }
    parser.finish().map_err(|e| e.to_string())?;
    Ok(events.into_iter().map(|e| (e.event, e.data)).collect())
}

/// A legacy SSE `endpoint` event's `data` resolved against the SSE URL `base`: the URL the
/// client would POST to, or why it refuses (an invalid URL, another origin).
pub fn sse_endpoint(data: &str, base: &str) -> Result<String, String> {
    let base = Url::parse(base).map_err(|e| format!("invalid base `{base}`: {e}"))?;
    resolve_endpoint(data, &base).map(String::from)
}

/// `data` is `chunking \0? max_event max_line stream`: its first byte chooses how the stream
/// is cut, the next two the bounds (small ones mostly), the rest is the stream. The parser's
/// promises (`transport/sse/parse/mod.rs`): never panics; the events and the first error (its
/// kind and stream offset) are those of the format read at once, whatever the chunks (one,
/// one byte each, or sizes the first byte chooses), so also: no event's data is longer than
/// `max_event`, a line longer than `max_line` or a byte that is not UTF-8 ends the stream,
/// the error is at the first byte past a bound, and after it the parser takes nothing more.
/// Every event's data, and the stream as text, resolved as an `endpoint`, is refused or on the
/// SSE URL's origin (scheme, host, port).
pub fn sse_stream(data: &[u8]) {
    let (head, stream) = data.split_at(data.len().min(3));
    let byte = |i: usize| head.get(i).copied().unwrap_or(0);
    let (max_event, max_line) = (bound(byte(1)), bound(byte(2)));

    let whole = run(&[stream], max_event, max_line);
    assert_eq!(
        whole,
        reference(stream, max_event, max_line),
        "one chunk, max_event {max_event}, max_line {max_line}"
    );
    let chunks = cut(stream, byte(0));
    assert_eq!(
        run(&chunks, max_event, max_line),
        whole,
        "cut as {chunks:?}, max_event {max_event}, max_line {max_line}"
    );
    let bytes: Vec<&[u8]> = stream.chunks(1).collect();
    assert_eq!(
        run(&bytes, max_event, max_line),
        whole,
        "one byte at a time, max_event {max_event}, max_line {max_line}"
    );

    // The bounds and UTF-8, stated directly (the reference implies them).
    for (_, data) in &whole.events {
        assert!(data.len() <= max_event, "{} bytes of data", data.len());
    }
    if stream
        .split(|b| matches!(b, b'\n' | b'\r'))
        .any(|line| line.len() > max_line)
    {
        assert!(whole.error.is_some(), "a line past {max_line} bytes passed");
    }
    if std::str::from_utf8(stream).is_err() {
        assert!(whole.error.is_some(), "bytes that are not UTF-8 passed");
    }
    // The entry point the regression tests use says the same.
    let expected = whole.error.is_none().then(|| whole.events.clone());
    assert_eq!(sse(&[stream], max_event, max_line).ok(), expected);

    for (_, data) in &whole.events {
        endpoint(data);
    }
    endpoint(&String::from_utf8_lossy(stream));
}

/// A bound from one byte: mostly 0..64, sometimes the default event bound, sometimes none.
fn bound(byte: u8) -> usize {
    match byte {
        0xff => usize::MAX,
        0xf0..=0xfe => 4096,
        _ => usize::from(byte % 64),
    }
}

/// `stream` cut into chunks of sizes drawn from `seed` (an empty chunk included: a body can
/// yield one).
fn cut(stream: &[u8], seed: u8) -> Vec<&[u8]> {
    const SIZES: [usize; 9] = [0, 1, 1, 2, 3, 4, 7, 16, 64];
    let mut state = u32::from(seed) | 0x100;
    let (mut chunks, mut rest) = (Vec::new(), stream);
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let size = SIZES[state as usize % SIZES.len()].min(rest.len());
        let (chunk, tail) = rest.split_at(size);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Line,
    Event,
    Utf8,
}

/// What a stream yields: the events dispatched before its first error, and that error's kind
/// and stream offset (its "so far" count is how much the chunk at hand brought, so it is not
/// compared).
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    events: Vec<(String, String)>,
    error: Option<(Kind, u64)>,
}

/// The parser on `chunks` until it fails, then finished; after a failure it takes nothing more
/// (its invariant 4).
fn run(chunks: &[&[u8]], max_event: usize, max_line: usize) -> Outcome {
    let mut parser = Parser::new(max_event, max_line);
    let mut events = Vec::new();
    let mut error = chunks
        .iter()
        .find_map(|chunk| parser.push(chunk, &mut events).err());
    if error.is_none() {
        error = parser.finish().err();
    }
    if let Some(error) = &error {
        let dispatched = events.len();
        assert_eq!(
            parser.push(b"data: more\n\n", &mut events),
            Err(error.clone())
        );
        assert_eq!(parser.finish(), Err(error.clone()));
        assert_eq!(events.len(), dispatched, "events after the error");
    }
    Outcome {
        events: events.into_iter().map(|e| (e.event, e.data)).collect(),
        error: error.map(|e| kind_and_offset(&e.to_string())),
    }
}

fn kind_and_offset(error: &str) -> (Kind, u64) {
    let kind = if error.starts_with("an SSE line exceeded") {
        Kind::Line
    } else if error.starts_with("an SSE event exceeded") {
        Kind::Event
    } else if error.starts_with("invalid UTF-8") {
        Kind::Utf8
    } else {
        panic!("an error of no known kind: {error}")
    };
    let offset = error
        .split_once("at stream offset ")
        .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("an error without its offset: {error}"));
    (kind, offset)
}

/// The format as the parser (`transport/sse/parse/mod.rs`) documents it, on the whole stream at once: lines end with CR, LF
/// or CRLF; the first may begin with a BOM; a line longer than `max_line`, or an event whose
/// lines (comments included, line ends excluded) pass `max_event`, fails at the first byte past
/// the bound (the line's, if both are passed at the same byte); a byte that cannot be UTF-8
/// fails where it is, unless a bound failed before it.
fn reference(stream: &[u8], max_event: usize, max_line: usize) -> Outcome {
    let (valid, bad) = match std::str::from_utf8(stream) {
        Ok(_) => (stream, None),
        Err(e) => (&stream[..e.valid_up_to()], Some(e.valid_up_to() as u64)),
    };
    let mut events = Vec::new();
    let (mut name, mut data, mut event_bytes) = (String::new(), None::<String>, 0);
    let (mut start, mut first) = (0, true);
    loop {
        let end = valid[start..]
            .iter()
            .position(|b| matches!(b, b'\n' | b'\r'))
            .map(|at| start + at);
        let len = end.unwrap_or(valid.len()) - start;
        let past_line = (len > max_line).then_some((Kind::Line, max_line));
        let past_event =
            (event_bytes + len > max_event).then(|| (Kind::Event, max_event - event_bytes));
        if let Some((kind, at)) = [past_line, past_event]
            .into_iter()
            .flatten()
            .min_by_key(|&(_, at)| at)
        {
            let error = Some((kind, (start + at) as u64));
            return Outcome { events, error };
        }
        let Some(end) = end else { break };
        let raw = std::str::from_utf8(&valid[start..end]).expect("cut at an ASCII byte");
        let line = match std::mem::take(&mut first) {
            true => raw.strip_prefix('\u{feff}').unwrap_or(raw),
            false => raw,
        };
        if line.is_empty() {
            if let Some(data) = data.take() {
                let event = if name.is_empty() {
                    "message".into()
                } else {
                    name.clone()
                };
                events.push((event, data));
            }
            (name, event_bytes) = (String::new(), 0);
        } else {
            event_bytes += raw.len();
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                _ if line.starts_with(':') => {}
                "data" => match &mut data {
                    None => data = Some(value.to_owned()),
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                },
                "event" => name = value.to_owned(),
                _ => {}
            }
        }
        start = end + 1;
        if valid[end] == b'\r' && valid.get(start) == Some(&b'\n') {
            start += 1;
        }
    }
    let error = bad.map(|offset| (Kind::Utf8, offset));
    Outcome { events, error }
}

/// `data` as an `endpoint` event's: refused, or a URL on the SSE URL's origin (the transport's
/// invariant 1), which the string entry point returns too.
fn endpoint(data: &str) {
    for base in BASES {
        let sse_url = Url::parse(base).expect("a valid base");
        let resolved = resolve_endpoint(data, &sse_url);
        if let Ok(url) = &resolved {
            assert_eq!(
                (url.scheme(), url.host_str(), url.port_or_known_default()),
                (
                    sse_url.scheme(),
                    sse_url.host_str(),
                    sse_url.port_or_known_default()
                ),
                "endpoint {data:?} on {base} resolved to {url}"
            );
        }
        assert_eq!(
            sse_endpoint(data, base),
            resolved.map(String::from),
            "{data:?} on {base}"
        );
    }
}
