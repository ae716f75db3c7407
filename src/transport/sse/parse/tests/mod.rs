//! The parser against the standard's examples and its bounds; `reference` holds the property
//! tests against a naive reference that decodes the whole input at once, for inputs cut into
//! arbitrary chunks.

mod reference;

use super::*;

/// What a stream yields: the events before the first error, and whether there was one.
type Outcome = (Vec<(String, String)>, bool);

/// Feeds `chunks` to a parser until it fails, then finishes it.
fn parse(chunks: &[&[u8]], max_event: usize, max_line: usize) -> Outcome {
    let mut parser = Parser::new(max_event, max_line);
    let mut events = Vec::new();
    let failed = chunks
        .iter()
        .any(|chunk| parser.push(chunk, &mut events).is_err())
        || parser.finish().is_err();
    let events = events.into_iter().map(|e| (e.event, e.data)).collect();
    (events, failed)
}

fn events(chunks: &[&[u8]]) -> Vec<(String, String)> {
    let (events, failed) = parse(chunks, usize::MAX, usize::MAX);
    assert!(!failed, "{chunks:?}");
    events
}

fn event(event: &str, data: &str) -> (String, String) {
    (event.to_owned(), data.to_owned())
}

#[test]
fn the_standards_examples() {
    let stream = b"data: This is the first message.\n\ndata: This is the second message, it\n\
        data: has two lines.\n\ndata: This is the third message.\n\n";
    assert_eq!(
        events(&[stream]),
        [
            event("message", "This is the first message."),
            event("message", "This is the second message, it\nhas two lines."),
            event("message", "This is the third message."),
        ]
    );
    let stream = b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\n";
    assert_eq!(
        events(&[stream]),
        [event("add", "73857293"), event("remove", "2153")]
    );
    // `data` without a colon is an empty line of data; one space only is dropped; an event
    // without data is not dispatched (and its type does not leak into the next).
    let stream = b": comment\nevent: x\n\ndata\ndata\n\ndata:  two\n\n";
    assert_eq!(
        events(&[stream]),
        [event("message", "\n"), event("message", " two")]
    );
}

#[test]
fn a_crlf_a_bom_and_a_character_split_across_chunks() {
    let chunks: &[&[u8]] = &[
        b"\xef\xbb",
        b"\xbfdata: caf\xc3",
        b"\xa9\r",
        b"\n\r",
        b"\ndata: \xf0\x9f",
        b"\x98\x80\r\r",
    ];
    assert_eq!(
        events(chunks),
        [event("message", "café"), event("message", "😀")]
    );
}

#[test]
fn a_bad_byte_fails_the_chunk_that_brings_it_after_the_events_before_it() {
    let mut parser = Parser::new(usize::MAX, usize::MAX);
    let mut out = Vec::new();
    assert!(parser.push(b"data: ok\n\n", &mut out).is_ok());
    let failed = parser.push(b"data: also\n\ndata: \xffno more\n\n", &mut out);
    assert_eq!(failed, Err(SseError::InvalidUtf8 { offset: 28 }));
    assert_eq!(out.len(), 2);
    // Invariant 4: nothing more is taken.
    assert!(parser.push(b"data: late\n\n", &mut out).is_err());
    assert_eq!(out.len(), 2);
    // A character's first byte alone: the stream ends before its rest.
    let mut parser = Parser::new(usize::MAX, usize::MAX);
    assert!(parser.push(b"data: \xe2\x82", &mut out).is_ok());
    assert_eq!(parser.finish(), Err(SseError::InvalidUtf8 { offset: 6 }));
}

#[test]
fn a_line_is_bounded_and_the_error_names_the_limit_and_where_it_was_crossed() {
    let mut parser = Parser::new(usize::MAX, 16);
    let mut out = Vec::new();
    // An exact fit passes, complete or not.
    assert!(
        parser
            .push(
                b"data: 0123456789
",
                &mut out
            )
            .is_ok()
    );
    assert!(parser.push(b"data: 01234", &mut out).is_ok());
    assert!(parser.push(b"56789", &mut out).is_ok());
    let error = parser.push(b"Xtoo long", &mut out).unwrap_err();
    assert_eq!(
        error.to_string(),
        "an SSE line exceeded limits.max_sse_line_bytes (16 bytes) at stream offset 33 \
         (25 bytes without a line end so far)"
    );
}

#[test]
fn one_event_is_bounded_across_its_lines_and_a_blank_line_resets_the_count() {
    let mut parser = Parser::new(16, usize::MAX);
    let mut out = Vec::new();
    assert!(parser.push(b"data: 0123456\n\n", &mut out).is_ok());
    assert!(
        parser
            .push(b"data: 0123456\r\n\r\ndata: 0123456\n", &mut out)
            .is_ok()
    );
    let error = parser.push(b"data: 0", &mut out).unwrap_err();
    assert!(matches!(
        error,
        SseError::EventTooLarge {
            limit: 16,
            seen: 20,
            offset: 49
        }
    ));
    assert!(
        error
            .to_string()
            .contains("limits.max_sse_event_bytes (16 bytes)")
    );
}

#[test]
fn floods_of_blank_lines_and_comments_keep_no_memory() {
    let mut parser = Parser::new(1024, 64);
    let mut out = Vec::new();
    for _ in 0..1000 {
        assert!(parser.push(&[b'\n'; 4096], &mut out).is_ok());
        assert!(parser.push(b"\r\n\r: ping\r\n", &mut out).is_ok());
    }
    assert!(out.is_empty());
    assert_eq!(parser.line.capacity(), 0);
}

#[test]
fn bytes_past_both_bounds_fail_on_the_bound_their_first_byte_passed_whatever_the_chunks() {
    // The event has 10 bytes left and the line 16: the 11th byte of this line passes the
    // event's bound first, in one chunk as one byte at a time.
    let input = b"data: 0123\ndata: 0123456789abcdef\n";
    for chunks in [vec![&input[..]], input.chunks(1).collect()] {
        let mut parser = Parser::new(20, 16);
        let mut out = Vec::new();
        let error = chunks
            .iter()
            .find_map(|chunk| parser.push(chunk, &mut out).err())
            .unwrap();
        assert!(
            matches!(
                error,
                SseError::EventTooLarge {
                    limit: 20,
                    offset: 21,
                    ..
                }
            ),
            "{error:?}"
        );
    }
    // Passed by the same byte: the line's.
    let mut parser = Parser::new(16, 16);
    let error = parser
        .push(b"data: 0123456789abcdef", &mut Vec::new())
        .unwrap_err();
    assert!(
        matches!(
            error,
            SseError::LineTooLong {
                limit: 16,
                offset: 16,
                ..
            }
        ),
        "{error:?}"
    );
}
