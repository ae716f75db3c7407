//! The legacy SSE parser and `endpoint` resolution, returning plain values so a target can
//! check properties without reaching into the crate's private types.

/// The legacy SSE parser on `chunks` (in order), with its two bounds: the events it
/// dispatched, as `(event type, data)`, or why the stream would end (its first error).
pub fn sse(
    chunks: &[&[u8]],
    max_event: usize,
    max_line: usize,
) -> Result<Vec<(String, String)>, String> {
    let mut parser = crate::transport::sse::Parser::new(max_event, max_line);
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
    let base = url::Url::parse(base).map_err(|e| format!("invalid base `{base}`: {e}"))?;
    crate::transport::sse::resolve_endpoint(data, &base).map(String::from)
}
