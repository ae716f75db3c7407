//! The parser against the standard's examples, its bounds, and (property tests) a naive
//! reference that decodes the whole input at once, for inputs cut into arbitrary chunks.

use rand::{Rng, SeedableRng, rngs::StdRng};

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

/// The naive reference: the whole input decoded at once, line ends normalized, split on LF.
fn reference(input: &[u8], max_event: usize, max_line: usize) -> Outcome {
    let (text, bad) = match std::str::from_utf8(input) {
        Ok(text) => (text, false),
        // Whatever follows the first bad byte is never read.
        Err(e) => (
            std::str::from_utf8(&input[..e.valid_up_to()]).unwrap(),
            true,
        ),
    };
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines: Vec<&str> = text.split('\n').collect();
    let unterminated = lines.pop().unwrap_or_default();
    let (mut events, mut name, mut data, mut event_bytes) = (Vec::new(), "", None, 0);
    for (i, raw) in lines.iter().enumerate() {
        if raw.len() > max_line || event_bytes + raw.len() > max_event {
            return (events, true);
        }
        let line = match i {
            0 => raw.strip_prefix('\u{feff}').unwrap_or(raw),
            _ => raw,
        };
        if line.is_empty() {
            if let Some(data) = data.take() {
                let event = if name.is_empty() { "message" } else { name };
                events.push((event.to_owned(), data));
            }
            (name, event_bytes) = ("", 0);
            continue;
        }
        event_bytes += raw.len();
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "data" => match &mut data {
                None => data = Some(value.to_owned()),
                Some(data) => *data = format!("{data}\n{value}"),
            },
            "event" => name = value,
            _ => {}
        }
    }
    let over = unterminated.len() > max_line || event_bytes + unterminated.len() > max_event;
    (events, bad || over)
}

/// Pieces that make interesting streams: every field, line end and width of character, a
/// BOM, and bytes that are never UTF-8 or only begin a character.
const PIECES: &[&[u8]] = &[
    b"data",
    b"data:",
    b"data: ",
    b"data:  x",
    b"event:",
    b"event: ping",
    b"id: 7",
    b"retry: 10",
    b":",
    b": keep-alive",
    b"x",
    b"{\"a\":1}",
    b" ",
    b"\n",
    b"\n",
    b"\r",
    b"\r\n",
    b"\r\n",
    b"\n\n",
    "\u{feff}".as_bytes(),
    "é".as_bytes(),
    "€".as_bytes(),
    "😀".as_bytes(),
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
    b"\xed\xa0\x80",
];

fn random_input(rng: &mut StdRng) -> Vec<u8> {
    let mut input = Vec::new();
    let bad = rng.random_bool(0.3);
    for _ in 0..rng.random_range(0..40) {
        let piece = PIECES[rng.random_range(0..PIECES.len())];
        if !bad && std::str::from_utf8(piece).is_err() {
            continue;
        }
        input.extend_from_slice(piece);
    }
    input
}

fn random_cuts<'a>(rng: &mut StdRng, input: &'a [u8]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = (0..rng.random_range(0..8))
        .map(|_| rng.random_range(0..=input.len()))
        .collect();
    cuts.extend([0, input.len()]);
    cuts.sort_unstable();
    cuts.windows(2).map(|w| &input[w[0]..w[1]]).collect()
}

#[test]
fn agrees_with_a_naive_reference_whatever_the_chunks() {
    let mut rng = StdRng::seed_from_u64(0x55e_2024_1105);
    for case in 0..20_000 {
        let input = random_input(&mut rng);
        let chunks = random_cuts(&mut rng, &input);
        let (max_event, max_line) = match rng.random_range(0..3) {
            0 => (usize::MAX, usize::MAX),
            1 => (rng.random_range(0..64), usize::MAX),
            _ => (usize::MAX, rng.random_range(0..32)),
        };
        assert_eq!(
            parse(&chunks, max_event, max_line),
            reference(&input, max_event, max_line),
            "case {case}: {chunks:?}, max_event {max_event}, max_line {max_line}"
        );
    }
}

#[test]
fn one_byte_at_a_time_is_the_same_stream() {
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..2_000 {
        let input = random_input(&mut rng);
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(
            parse(&bytes, 48, 24),
            reference(&input, 48, 24),
            "{input:?}"
        );
    }
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
