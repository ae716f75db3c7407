//! A legacy SSE stream (`chunking max_event max_line stream`), cut into chunks three ways,
//! through our parser, and its events' data through `endpoint` resolution.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::sse_stream(data));
