//! The SSE event stream format (the HTML standard's "event stream interpretation") in one
//! pass, with bounded memory.
//!
//! Lines end with CR, LF or CRLF (a CRLF split across chunks included); a leading BOM is
//! dropped; a line that starts with `:` is a comment; `name: value` drops one space after the
//! colon, and a line without a colon is a field with an empty value. `data` appends its value
//! and a LF, `event` names the event, a blank line dispatches it (nothing when no `data` came).
//! `id` (without a NUL) and `retry` (digits only) are kept for reconnection: the last of each
//! seen so far ([`Parser::last_id`], [`Parser::retry`]); legacy SSE never reconnects (its
//! invariant 4), Streamable HTTP resumes with them. Other fields are ignored.
//!
//! # Invariants
//!
//! 1. Linear: each byte is validated (twice: as it arrives, and as part of its line),
//!    scanned for a line end once, and copied at most twice (into the line buffer when its
//!    line spans chunks, into the event's data). Nothing is rescanned or shifted, whatever the
//!    shape of the lines.
//! 2. Bounded: the line buffer holds at most `max_line` bytes, the current event's lines
//!    (line ends excluded, comments included) at most `max_event`. The first byte past either
//!    bound is an error before it is stored, which names the bound that byte passed (the
//!    line's when it passes both), however the bytes were chunked.
//! 3. Bad bytes are an error at once: the chunk that brings the first byte that cannot be
//!    UTF-8 fails, after the events completed before that byte.
//! 4. After an error the parser takes nothing more: every later call returns it again.

mod event;

pub(crate) use event::{Event, SseError};

use super::utf8::Utf8Check;
use crate::transport::{BOM, LINE_BUFFER_KEEP};

/// The parser's state between chunks.
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub struct Parser {
    max_event: usize,
    max_line: usize,
    utf8: Utf8Check,
    /// Stream offset of the next byte the line layer takes.
    pos: u64,
    /// The start of a line that spans chunks (at most `max_line` bytes).
    line: Vec<u8>,
    /// The last line ended with CR: a LF that follows belongs to it.
    after_cr: bool,
    /// No line has ended yet (the first may begin with a BOM).
    first: bool,
    /// Bytes of the current event's lines so far.
    event_bytes: usize,
    name: String,
    data: String,
    /// The last `id` field seen (its value, if it held no NUL).
    last_id: Option<String>,
    /// The last `retry` field seen that was all digits, in milliseconds.
    retry: Option<u64>,
    failed: Option<SseError>,
}

impl Parser {
    /// A parser for a new stream, with its two bounds in bytes.
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn new(max_event: usize, max_line: usize) -> Self {
        Parser {
            max_event,
            max_line,
            utf8: Utf8Check::default(),
            pos: 0,
            line: Vec::new(),
            after_cr: false,
            first: true,
            event_bytes: 0,
            name: String::new(),
            data: String::new(),
            last_id: None,
            retry: None,
            failed: None,
        }
    }

    /// The last event id the stream set (for `Last-Event-ID`), if any.
    pub(in crate::transport) fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The last reconnection time the stream asked for (`retry:`, in milliseconds), if any.
    pub(in crate::transport) fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Starts from what an earlier stream set (a resumption continues its stream).
    pub(in crate::transport) fn carry(&mut self, last_id: Option<String>, retry: Option<u64>) {
        self.last_id = last_id;
        self.retry = retry;
    }

    /// Takes the next chunk; the events it completes go to `out`, in order, also when it fails.
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn push(&mut self, chunk: &[u8], out: &mut impl Extend<Event>) -> Result<(), SseError> {
        if let Some(failed) = &self.failed {
            return Err(failed.clone());
        }
        let valid = self.utf8.push(chunk);
        let mut result = self.lines(valid.head(), out);
        result = result.and_then(|()| self.lines(valid.body, out));
        if let (Ok(()), Some(offset)) = (&result, valid.invalid) {
            result = Err(SseError::InvalidUtf8 { offset });
        }
        if let Err(e) = &result {
            self.failed = Some(e.clone());
        }
        result
    }

    /// At the end of the stream: a character left incomplete is invalid UTF-8. An event
    /// without its blank line is dropped, as the standard says.
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn finish(&mut self) -> Result<(), SseError> {
        if let Some(failed) = &self.failed {
            return Err(failed.clone());
        }
        match self.utf8.finish() {
            Some(offset) => Err(SseError::InvalidUtf8 { offset }),
            None => Ok(()),
        }
    }

    /// Splits valid UTF-8 into lines (invariant 1).
    fn lines(&mut self, mut bytes: &[u8], out: &mut impl Extend<Event>) -> Result<(), SseError> {
        while let Some(&first) = bytes.first() {
            if std::mem::take(&mut self.after_cr) && first == b'\n' {
                bytes = &bytes[1..];
                self.pos += 1;
                continue;
            }
            if self.line.is_empty() && self.data.is_empty() && self.name.is_empty() {
                // A run of blank lines with nothing pending dispatches nothing: skip it whole,
                // so a flood of bare newlines costs a scan, not a dispatch per byte.
                let run = bytes.iter().take_while(|b| is_end(**b)).count();
                if run > 0 {
                    self.after_cr = bytes[run - 1] == b'\r';
                    (self.first, self.event_bytes) = (false, 0);
                    self.pos += run as u64;
                    bytes = &bytes[run..];
                    continue;
                }
            }
            let end = memchr::memchr2(b'\n', b'\r', bytes);
            let piece = &bytes[..end.unwrap_or(bytes.len())];
            self.bound(piece.len())?;
            self.pos += piece.len() as u64;
            let Some(end) = end else {
                self.line.extend_from_slice(piece);
                return Ok(());
            };
            self.after_cr = bytes[end] == b'\r';
            self.pos += 1;
            if self.line.is_empty() {
                self.complete(piece, out)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(piece);
                let done = self.complete(&line, out);
                line.clear();
                if line.capacity() <= LINE_BUFFER_KEEP {
                    self.line = line;
                }
                done?;
            }
            bytes = &bytes[end + 1..];
        }
        Ok(())
    }

    /// Checks that `more` bytes can join the current line (invariant 2).
    fn bound(&self, more: usize) -> Result<(), SseError> {
        let line = self.line.len() + more;
        let event = self.event_bytes + line;
        // When these bytes pass both bounds, the error is the one the first byte past a bound
        // crossed: the same as when they come one at a time (the line's on a tie).
        let event_first = event > self.max_event
            && self.max_event.saturating_sub(self.event_bytes) < self.max_line;
        if line > self.max_line && !event_first {
            let start = self.pos - self.line.len() as u64;
            return Err(SseError::LineTooLong {
                limit: self.max_line,
                seen: line,
                offset: start + self.max_line as u64,
            });
        }
        if event > self.max_event {
            let room = self
                .max_event
                .saturating_sub(self.event_bytes + self.line.len());
            return Err(SseError::EventTooLarge {
                limit: self.max_event,
                seen: event,
                offset: self.pos + room as u64,
            });
        }
        Ok(())
    }

    /// One complete line (its line end excluded).
    fn complete(&mut self, raw: &[u8], out: &mut impl Extend<Event>) -> Result<(), SseError> {
        let mut line = raw;
        if std::mem::take(&mut self.first) {
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        // Already validated as it arrived; checked again to have it as text.
        let Ok(line) = std::str::from_utf8(line) else {
            let start = self.pos.saturating_sub(1 + raw.len() as u64);
            return Err(SseError::InvalidUtf8 { offset: start });
        };
        if line.is_empty() {
            self.event_bytes = 0;
            self.dispatch(out);
            return Ok(());
        }
        self.event_bytes += raw.len();
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "event" => {
                self.name.clear();
                self.name.push_str(value);
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry = value.parse().ok().or(Some(u64::MAX));
            }
            _ => {}
        }
        Ok(())
    }

    /// A blank line: the pending event, if it has data.
    fn dispatch(&mut self, out: &mut impl Extend<Event>) {
        let name = std::mem::take(&mut self.name);
        if self.data.is_empty() {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        let event = match name.is_empty() {
            true => "message".to_owned(),
            false => name,
        };
        out.extend(Some(Event { event, data }));
    }
}

fn is_end(byte: u8) -> bool {
    byte == b'\n' || byte == b'\r'
}

#[cfg(test)]
mod tests;
