//! Property tests: the parser against a naive reference that decodes the whole input at once,
//! for random streams of interesting pieces cut into random chunks.

use rand::{Rng, SeedableRng, rngs::StdRng};

use super::{Outcome, parse};

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
