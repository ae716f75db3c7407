//! A stdio child's whole stdout, through rmcp's line codec and what we do with each message.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::stdio_output(data));
